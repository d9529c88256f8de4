//! zwp_text_input_v3: apps' text fields, which Smithay connects to the input
//! method; nothing of the compositor's own.

use smithay::delegate_text_input_manager;

use crate::state::State;

delegate_text_input_manager!(State);
