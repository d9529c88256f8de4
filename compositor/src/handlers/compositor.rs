//! wl_compositor and wl_subcompositor: commits feed the window registry and the
//! frame accounting.

use smithay::backend::renderer::utils::on_commit_buffer_handler;
use smithay::delegate_compositor;
use smithay::reexports::wayland_server::backend::{ClientData, ClientId, DisconnectReason};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Client;
use smithay::wayland::compositor::{
    is_sync_subsurface, CompositorClientState, CompositorHandler, CompositorState,
};

use crate::state::{State, Surface};

/// Per-client data Smithay needs.
#[derive(Default)]
pub struct ClientState {
    pub compositor_state: CompositorClientState,
    /// Wayrig's own client (its input method), not an app under test.
    pub internal: bool,
}

impl ClientState {
    pub fn internal() -> Self {
        ClientState {
            internal: true,
            ..Default::default()
        }
    }
}

impl ClientData for ClientState {
    fn initialized(&self, _client_id: ClientId) {}
    fn disconnected(&self, _client_id: ClientId, _reason: DisconnectReason) {}
}

impl CompositorHandler for State {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.compositor_state
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
        let root = State::root_surface(surface);
        self.popups.commit(surface);
        let Some(id) = self.window_id_for_surface(&root) else {
            return;
        };
        let kind = self.windows.get(id).map(|r| r.surface.surface.clone());
        match kind {
            Some(Surface::Toplevel(_)) => self.toplevel_committed(id),
            Some(Surface::Popup(popup)) => self.popup_committed(id, &popup),
            None => {}
        }
        self.note_commit(id);
    }
}
delegate_compositor!(State);
