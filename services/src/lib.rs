//! Wayrig's services: the one model of windows and elements, the AT-SPI client
//! behind the `access` trait, and the session that joins a host with them.
//!
//! Faces use this crate only; it reaches the compositor through `wayrig_host::Host`.

pub mod a11y;
pub mod access;
mod accessibility_off;
pub mod bus;
mod gtk_menus;
mod menu_labels;
/// The one vocabulary, from its own pure crate.
pub use wayrig_model as model;
pub mod session;
pub mod sockets;

pub use access::AnnouncementsRead;
pub use bus::PrivateBus;
pub use model::{Checked, Error, Node, Role, States, Tree};
pub use session::{
    encode_capture, is_hidden, offered, prefer_controls, reading_order, ActOptions, ActReport,
    Action, AppIdentity, AppSpec, Area, Buses, ClipboardText, CloseOutcome, Delivery, Element,
    ElementClick, ElementClicked, ElementRef, ImageFormat, Launch, Launched, LogicalRect, Menu,
    MenuPath, MenuRow, Offered, OpenMenu, OpenTarget, Path, Placement, Query, ReadOptions,
    Screenshot, Session, ShotRequest, ShotSource, Snapshot, StateFlag, Step, StepReport,
    WindowFilter, WindowOp, WindowPick, CLIPBOARD_TEXT_LIMIT, QUEUE_LIMIT, STOP_GRACE,
};
pub use session::{unsettled_in_ascii, verdicts, PassVerdicts, CLICK_DISTANCE};
