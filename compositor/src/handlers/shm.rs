//! wl_shm and wl_buffer: the shared-memory buffers clients draw into; a
//! destroyed buffer needs nothing of the compositor.

use smithay::delegate_shm;
use smithay::reexports::wayland_server::protocol::wl_buffer;
use smithay::wayland::buffer::BufferHandler;
use smithay::wayland::shm::{ShmHandler, ShmState};

use crate::state::State;

impl BufferHandler for State {
    fn buffer_destroyed(&mut self, _buffer: &wl_buffer::WlBuffer) {}
}

impl ShmHandler for State {
    fn shm_state(&self) -> &ShmState {
        &self.protocols.shm_state
    }
}
delegate_shm!(State);
