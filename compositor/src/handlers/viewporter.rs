//! wp-viewporter: surfaces cropped and scaled by their client, handled by
//! Smithay alone.

use smithay::delegate_viewporter;

use crate::state::State;

delegate_viewporter!(State);
