//! wl_compositor and wl_subcompositor: commits feed the window registry and the
//! frame accounting.

use smithay::backend::renderer::utils::on_commit_buffer_handler;
use smithay::delegate_compositor;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Client;
use smithay::wayland::compositor::{
    is_sync_subsurface, CompositorClientState, CompositorHandler, CompositorState,
};

use crate::rig::clients::ClientState;
use crate::rig::windows::{root_surface, Surface};
use crate::state::State;

impl CompositorHandler for State {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.protocols.compositor_state
    }

    fn client_compositor_state<'a>(&self, client: &'a Client) -> &'a CompositorClientState {
        &client
            .get_data::<ClientState>()
            .expect("client inserted by wayrig")
            .compositor_state
    }

    fn commit(&mut self, surface: &WlSurface) {
        on_commit_buffer_handler::<Self>(surface);
        if is_sync_subsurface(surface) {
            return;
        }
        let root = root_surface(surface);
        self.rig.windows.popups.commit(surface);
        let Some(id) = self.rig.windows.id_for_surface(&root) else {
            return;
        };
        let kind = self
            .rig
            .windows
            .registry
            .get(id)
            .map(|r| r.surface.surface.clone());
        match kind {
            Some(Surface::Toplevel(_)) => self.toplevel_committed(id),
            Some(Surface::Popup(popup)) => self.rig.windows.popup_committed(id, &popup),
            None => {}
        }
        self.rig.note_commit(id);
    }
}
delegate_compositor!(State);
