//! wl_output and xdg-output: the one virtual output as clients see it, set up
//! once at start.

use smithay::delegate_output;
use smithay::wayland::output::OutputHandler;

use crate::state::State;

impl OutputHandler for State {}
delegate_output!(State);
