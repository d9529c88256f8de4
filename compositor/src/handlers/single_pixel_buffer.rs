//! wp-single-pixel-buffer: one-colour buffers some toolkits fill backgrounds
//! with, handled by Smithay alone.

use smithay::delegate_single_pixel_buffer;

use crate::state::State;

delegate_single_pixel_buffer!(State);
