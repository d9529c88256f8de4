//! The MixOS Bus face: Wayrig as the ABP broker for the apps it hosts, every
//! hosted app answering the MixOS drive verbs under its own Bus name.
//!
//! `broker` owns the WebSocket listener, registration and routing; `apps` names
//! the apps and queues each one's requests; `names` the
//! Bus's naming rule; `verbs` turns drive verbs into session calls; `roles`
//! and `keys` map the one model and egui's key names to the wire's words;
//! `captures` confines where `ui.capture` writes.

mod apps;
mod broker;
mod captures;
mod keys;
pub mod names;
pub mod roles;
mod verbs;

pub use broker::{bind, serve, BusListener};
pub use names::{name_from_app_id, valid_name};
pub use verbs::describe;
