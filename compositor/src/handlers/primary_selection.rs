//! zwp_primary_selection: the middle-click selection between clients, handled
//! by Smithay alone.

use smithay::delegate_primary_selection;
use smithay::wayland::selection::primary_selection::{
    PrimarySelectionHandler, PrimarySelectionState,
};

use crate::state::State;

impl PrimarySelectionHandler for State {
    fn primary_selection_state(&self) -> &PrimarySelectionState {
        &self.protocols.primary_selection_state
    }
}
delegate_primary_selection!(State);
