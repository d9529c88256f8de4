//! wp-cursor-shape: clients name their cursor instead of drawing it; the
//! output draws no cursor, so the shapes are only accepted.

use smithay::delegate_cursor_shape;
use smithay::wayland::tablet_manager::TabletSeatHandler;

use crate::state::State;

// Cursor shapes apply to tablet tools too, so Smithay's cursor-shape global needs this.
impl TabletSeatHandler for State {}
delegate_cursor_shape!(State);
