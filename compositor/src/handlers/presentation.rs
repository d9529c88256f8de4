//! wp-presentation: feedback on when a frame was shown, sent with the frame
//! callbacks of the virtual output.

use smithay::delegate_presentation;

use crate::state::State;

delegate_presentation!(State);
