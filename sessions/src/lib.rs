//! Sessions made by one recipe (a private directory, a private bus, the
//! compositor with that bus's environment, the `Session` over both), each
//! owning everything it started, and `Sessions` keeping many of them by id.
//!
//! `wayrig run`, `wayrig attach`, the tests and the benches all make their
//! sessions here; a face that serves many sessions resolves them by id.

mod live;
mod recipe;

pub use live::{Live, SessionId, Sessions, SessionsFull};
pub use recipe::{BusAddresses, Spec, Staged, StartError};
