//! The MixOS Bus face: Wayrig as the ABP broker for the apps it hosts, or on
//! another broker's Bus, every hosted app answering the drive verbs under its own name.
//!
//! `broker` owns the WebSocket listener, registration and routing; `connector`
//! registers the apps with another broker instead; `apps` names the apps and
//! queues each one's requests for both; `names` the
//! Bus's naming rule; `verbs` turns drive verbs into session calls; `roles`
//! and `keys` map the one model and egui's key names to the wire's words;
//! `captures` confines where `ui.capture` writes; `access` says who may connect.

mod access;
mod apps;
mod broker;
mod captures;
mod connector;
mod keys;
pub mod names;
pub mod roles;
mod verbs;

pub use access::Access;
pub use broker::{bind, serve, BusListener};
pub use connector::{check_url, connect, Notice};
pub use names::{name_from_app_id, valid_name};
pub use verbs::describe;
