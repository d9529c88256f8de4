//! What the compositor keeps with a selection (clipboard or primary): nothing,
//! since it never offers one of its own.

use smithay::wayland::selection::SelectionHandler;

use crate::state::State;

impl SelectionHandler for State {
    type SelectionUserData = ();
}
