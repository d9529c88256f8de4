//! Wayrig's services: the one model of windows and elements, the AT-SPI mirror
//! and the session that joins a host with its apps' accessibility.
//!
//! Faces use this crate only; it reaches the compositor through `wayrig_host::Host`.

pub mod a11y;
pub mod actions;
pub mod bus;
mod facts;
pub mod menus;
pub mod model;
pub mod mygo;
pub mod session;

pub use actions::{Action, Path};
pub use bus::PrivateBus;
pub use model::{Error, Node, Role, States, Tree};
pub use session::Session;
