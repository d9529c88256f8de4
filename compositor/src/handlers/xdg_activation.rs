//! xdg-activation: a client asking to bring one of its windows forward gets it
//! raised and focused.

use smithay::delegate_xdg_activation;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::wayland::xdg_activation::{
    XdgActivationHandler, XdgActivationState, XdgActivationToken, XdgActivationTokenData,
};

use crate::state::State;

impl XdgActivationHandler for State {
    fn activation_state(&mut self) -> &mut XdgActivationState {
        &mut self.protocols.xdg_activation_state
    }

    /// Honoured as a desktop would for the app a person just used: the window is
    /// raised and focused, except that an app launched in the background may
    /// not take the focus from another app this way.
    fn request_activation(
        &mut self,
        _token: XdgActivationToken,
        _data: XdgActivationTokenData,
        surface: WlSurface,
    ) {
        if let Some(id) = self.rig.windows.id_for_surface(&surface) {
            if !self.would_steal_focus(id) {
                self.activate(id);
            }
        }
    }
}
delegate_xdg_activation!(State);
