//! Smithay protocol handlers, one file per protocol with its delegate macro;
//! the logic they call lives in the rig and in `State`'s own methods.

mod compositor;
mod cursor_shape;
mod data_device;
mod fractional_scale;
mod input_method;
mod output;
mod presentation;
mod primary_selection;
mod seat;
mod selection;
mod shm;
mod single_pixel_buffer;
mod text_input;
mod viewporter;
mod xdg_activation;
mod xdg_decoration;
pub mod xdg_shell;
