//! Wayrig's own compositor: a Smithay compositor, headless or nested, that hosts
//! apps under test and is the authority on their windows, frames and pixels.
//!
//! Start one with [`CompositorHost::start`] and use it through the
//! [`wayrig_host::Host`] trait; nothing of Smithay leaks out of this crate.

mod backend;
mod capture;
mod clipboard;
mod config;
mod handlers;
mod host;
mod input;
mod input_method;
mod keys;
mod recorder;
mod registry;
mod rig;
mod runtime_dir;
mod settle;
mod state;
mod window_commands;

pub use config::{Config, Decorations, Pacing};
pub use host::{CompositorHost, SessionInfo};
pub use runtime_dir::RuntimeDir;
