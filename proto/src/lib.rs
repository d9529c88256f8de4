//! Wayrig's wire types, one module per protocol, shared by the servers (the
//! faces), their clients (the agent CLI), the tests and the benchmarks.
//!
//! Plain serde data: nothing here knows a session, a compositor or a bus.

pub mod abp;
pub mod mygo;
/// The blocking MyGo client, for clients and tests (feature `client`).
#[cfg(feature = "client")]
pub mod mygo_client;
