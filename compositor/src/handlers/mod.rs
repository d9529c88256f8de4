//! Smithay protocol handlers, one small impl per protocol with its delegate
//! macro; the logic they call lives in `state.rs`.

mod compositor;
mod xdg_shell;

pub use compositor::ClientState;

use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::reexports::wayland_protocols::xdg::decoration::zv1::server::zxdg_toplevel_decoration_v1::Mode as DecorationMode;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::wayland::compositor::with_states;
use smithay::wayland::fractional_scale::{with_fractional_scale, FractionalScaleHandler};
use smithay::utils::{Logical, Rectangle};
use smithay::wayland::input_method::{InputMethodHandler, PopupSurface as ImPopupSurface};
use smithay::wayland::output::OutputHandler;
use smithay::wayland::selection::data_device::{
    set_data_device_focus, ClientDndGrabHandler, DataDeviceHandler, DataDeviceState, ServerDndGrabHandler,
};
use smithay::wayland::selection::primary_selection::{
    set_primary_focus, PrimarySelectionHandler, PrimarySelectionState,
};
use smithay::wayland::selection::SelectionHandler;
use smithay::wayland::shell::xdg::decoration::XdgDecorationHandler;
use smithay::wayland::shell::xdg::ToplevelSurface;
use smithay::wayland::tablet_manager::TabletSeatHandler;
use smithay::wayland::xdg_activation::{
    XdgActivationHandler, XdgActivationState, XdgActivationToken, XdgActivationTokenData,
};
use smithay::{
    delegate_cursor_shape, delegate_data_device, delegate_input_method_manager, delegate_text_input_manager, delegate_fractional_scale, delegate_output,
    delegate_presentation, delegate_primary_selection, delegate_seat, delegate_single_pixel_buffer,
    delegate_viewporter, delegate_xdg_activation, delegate_xdg_decoration,
};

use crate::config::Decorations;
use crate::state::State;

impl SeatHandler for State {
    type KeyboardFocus = WlSurface;
    type PointerFocus = WlSurface;
    type TouchFocus = WlSurface;

    fn seat_state(&mut self) -> &mut SeatState<State> {
        &mut self.seat_state
    }

    fn focus_changed(&mut self, seat: &Seat<Self>, focused: Option<&WlSurface>) {
        let client = focused.and_then(smithay::reexports::wayland_server::Resource::client);
        set_data_device_focus(&self.display_handle, seat, client.clone());
        set_primary_focus(&self.display_handle, seat, client);
    }
}
delegate_seat!(State);

impl SelectionHandler for State {
    type SelectionUserData = ();
}

impl DataDeviceHandler for State {
    fn data_device_state(&self) -> &DataDeviceState {
        &self.data_device_state
    }
}
impl ClientDndGrabHandler for State {}
impl ServerDndGrabHandler for State {}
delegate_data_device!(State);

impl PrimarySelectionHandler for State {
    fn primary_selection_state(&self) -> &PrimarySelectionState {
        &self.primary_selection_state
    }
}
delegate_primary_selection!(State);

impl OutputHandler for State {}
delegate_output!(State);

/// The xdg-decoration mode every toplevel gets, whatever it asks for.
pub fn decoration_mode(decorations: Decorations) -> DecorationMode {
    match decorations {
        Decorations::Client => DecorationMode::ClientSide,
        Decorations::Server => DecorationMode::ServerSide,
    }
}

impl State {
    fn impose_decoration_mode(&mut self, toplevel: &ToplevelSurface) {
        let mode = decoration_mode(self.config.decorations);
        toplevel.with_pending_state(|s| s.decoration_mode = Some(mode));
        if toplevel.is_initial_configure_sent() {
            toplevel.send_pending_configure();
        }
    }
}

impl XdgDecorationHandler for State {
    fn new_decoration(&mut self, toplevel: ToplevelSurface) {
        self.impose_decoration_mode(&toplevel);
    }

    fn request_mode(&mut self, toplevel: ToplevelSurface, _mode: DecorationMode) {
        self.impose_decoration_mode(&toplevel);
    }

    fn unset_mode(&mut self, toplevel: ToplevelSurface) {
        self.impose_decoration_mode(&toplevel);
    }
}
delegate_xdg_decoration!(State);

impl XdgActivationHandler for State {
    fn activation_state(&mut self) -> &mut XdgActivationState {
        &mut self.xdg_activation_state
    }

    /// Honoured as a desktop would for the app a person just used: the window is
    /// raised and focused. Tests drive one session, so there is no focus stealing.
    fn request_activation(
        &mut self,
        _token: XdgActivationToken,
        _data: XdgActivationTokenData,
        surface: WlSurface,
    ) {
        if let Some(id) = self.window_id_for_surface(&surface) {
            self.activate(id);
        }
    }
}
delegate_xdg_activation!(State);

impl FractionalScaleHandler for State {
    fn new_fractional_scale(&mut self, surface: WlSurface) {
        let scale = self.config.scale;
        with_states(&surface, |states| {
            with_fractional_scale(states, |fs| fs.set_preferred_scale(scale));
        });
    }
}
delegate_fractional_scale!(State);

impl InputMethodHandler for State {
    fn new_popup(&mut self, _surface: ImPopupSurface) {}
    fn dismiss_popup(&mut self, _surface: ImPopupSurface) {}
    fn popup_repositioned(&mut self, _surface: ImPopupSurface) {}

    fn parent_geometry(&self, parent: &WlSurface) -> Rectangle<i32, Logical> {
        self.window_id_for_surface(parent)
            .and_then(|id| self.content_rect(id))
            .map(|r| Rectangle::new((r.x, r.y).into(), (r.width, r.height).into()))
            .unwrap_or_default()
    }
}
delegate_input_method_manager!(State);
delegate_text_input_manager!(State);

delegate_presentation!(State);
delegate_viewporter!(State);
delegate_single_pixel_buffer!(State);
impl TabletSeatHandler for State {}
delegate_cursor_shape!(State);
