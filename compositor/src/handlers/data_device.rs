//! wl_data_device: the clipboard and drag and drop between clients, handled by
//! Smithay; the compositor's own clipboard text is in `selection.rs`.

use smithay::delegate_data_device;
use smithay::wayland::selection::data_device::{
    ClientDndGrabHandler, DataDeviceHandler, DataDeviceState, ServerDndGrabHandler,
};

use crate::state::State;

impl DataDeviceHandler for State {
    fn data_device_state(&self) -> &DataDeviceState {
        &self.protocols.data_device_state
    }
}
impl ClientDndGrabHandler for State {}
impl ServerDndGrabHandler for State {}
delegate_data_device!(State);
