//! xdg-shell: toplevels and popups enter the window registry; client requests
//! to maximize, fullscreen or minimize go through the same commands a driver uses.
//!
//! A popup's grab (`xdg_popup.grab`) holds the seat's pointer and keyboard
//! until its last popup is dismissed or destroyed, and is given back then.

use smithay::delegate_xdg_shell;
use smithay::desktop::{PopupGrab, PopupKeyboardGrab, PopupPointerGrab};
use smithay::desktop::{PopupKind, Window};
use smithay::input::pointer::Focus;
use smithay::reexports::wayland_server::protocol::{wl_output, wl_seat};
use smithay::reexports::wayland_server::Resource;
use smithay::utils::{Serial, SERIAL_COUNTER};
use smithay::wayland::shell::xdg::{
    PopupSurface, PositionerState, ShellClient, ToplevelSurface, XdgShellHandler, XdgShellState,
};
use wayrig_host::WindowCommand;

use crate::rig::windows::{Surface, WindowData};
use crate::state::State;

/// A popup grab the seat's pointer and keyboard were given, under the serial
/// they were set with.
pub struct HeldPopupGrab {
    grab: PopupGrab<State>,
    serial: Serial,
}

impl State {
    /// Give the seat back once the popups of the grab it holds are gone.
    ///
    /// Smithay's popup grabs notice their end only at the next event and
    /// then drop it: a motion would be lost, the pointer's focus restored
    /// where it was, and the next button pressed there (on the button that
    /// opened the menu, which opens it again). Ending the grab as soon as
    /// the popup goes lets the next motion and press go where they are sent.
    pub fn end_finished_popup_grab(&mut self) {
        if self
            .popup_grab
            .as_ref()
            .is_none_or(|held| !held.grab.has_ended())
        {
            return;
        }
        let Some(held) = self.popup_grab.take() else {
            return;
        };
        if let Some(pointer) = self.seat.get_pointer() {
            if pointer.has_grab(held.serial) {
                let time = self.event_time();
                pointer.unset_grab(self, SERIAL_COUNTER.next_serial(), time);
            }
        }
        if let Some(keyboard) = self.seat.get_keyboard() {
            if keyboard.has_grab(held.serial) {
                keyboard.unset_grab(self);
                // The keys go back to the window the popups belonged to.
                if self.keyboard_focus().is_none_or(|f| !f.is_alive()) {
                    let root = held.grab.current_grab().filter(|r| r.is_alive());
                    keyboard.set_focus(self, root, SERIAL_COUNTER.next_serial());
                }
            }
        }
    }

    /// Run a client's own request as the matching window command.
    fn client_request(&mut self, surface: &ToplevelSurface, cmd: WindowCommand) {
        let windows = &self.rig.windows;
        let Some(id) = windows.id_for_surface(surface.wl_surface()) else {
            return;
        };
        let Some(handle) = windows
            .registry
            .get(id)
            .filter(|r| r.is_live())
            .map(|r| r.handle())
        else {
            return;
        };
        if let Err(e) = self.window_command(handle, cmd) {
            tracing::debug!(%e, "client request refused");
        }
    }
}

impl XdgShellHandler for State {
    fn xdg_shell_state(&mut self) -> &mut XdgShellState {
        &mut self.protocols.xdg_shell_state
    }

    fn new_toplevel(&mut self, surface: ToplevelSurface) {
        self.rig.note_client(surface.wl_surface());
        let window = Window::new_wayland_window(surface);
        self.rig
            .windows
            .registry
            .insert(WindowData::new(Surface::Toplevel(window)));
    }

    fn new_popup(&mut self, surface: PopupSurface, _positioner: PositionerState) {
        self.rig.note_client(surface.wl_surface());
        let kind = PopupKind::Xdg(surface.clone());
        let windows = &mut self.rig.windows;
        if let Err(e) = windows.popups.track_popup(kind.clone()) {
            tracing::debug!(?e, "popup died before tracking");
            return;
        }
        windows.unconstrain_popup(&surface);
        windows
            .registry
            .insert(WindowData::new(Surface::Popup(Box::new(kind))));
    }

    fn reposition_request(
        &mut self,
        surface: PopupSurface,
        positioner: PositionerState,
        token: u32,
    ) {
        surface.with_pending_state(|state| {
            state.geometry = positioner.get_geometry();
            state.positioner = positioner;
        });
        self.rig.windows.unconstrain_popup(&surface);
        surface.send_repositioned(token);
    }

    fn grab(&mut self, surface: PopupSurface, _seat: wl_seat::WlSeat, serial: Serial) {
        let kind = PopupKind::Xdg(surface.clone());
        let windows = &mut self.rig.windows;
        if let Some(id) = windows.id_for_surface(surface.wl_surface()) {
            if let Some(rec) = windows.registry.get_mut(id) {
                rec.surface.grabbed = true;
            }
        }
        let Ok(root) = smithay::desktop::find_popup_root_surface(&kind) else {
            return;
        };
        let seat = self.seat.clone();
        let mut grab = match self
            .rig
            .windows
            .popups
            .grab_popup(root, kind, &seat, serial)
        {
            Ok(grab) => grab,
            Err(e) => {
                tracing::debug!(?e, "popup grab refused");
                return;
            }
        };
        if let Some(keyboard) = seat.get_keyboard() {
            if keyboard.is_grabbed()
                && !(keyboard.has_grab(serial)
                    || keyboard.has_grab(grab.previous_serial().unwrap_or(serial)))
            {
                grab.ungrab(smithay::desktop::PopupUngrabStrategy::All);
                return;
            }
            keyboard.set_focus(self, grab.current_grab(), serial);
            keyboard.set_grab(self, PopupKeyboardGrab::new(&grab), serial);
        }
        if let Some(pointer) = seat.get_pointer() {
            if pointer.is_grabbed()
                && !(pointer.has_grab(serial)
                    || pointer.has_grab(grab.previous_serial().unwrap_or_else(|| grab.serial())))
            {
                grab.ungrab(smithay::desktop::PopupUngrabStrategy::All);
                return;
            }
            pointer.set_grab(self, PopupPointerGrab::new(&grab), serial, Focus::Keep);
        }
        self.popup_grab = Some(HeldPopupGrab { grab, serial });
    }

    fn maximize_request(&mut self, surface: ToplevelSurface) {
        self.client_request(&surface, WindowCommand::Maximize);
    }

    fn unmaximize_request(&mut self, surface: ToplevelSurface) {
        self.client_request(&surface, WindowCommand::Restore);
    }

    fn fullscreen_request(
        &mut self,
        surface: ToplevelSurface,
        _output: Option<wl_output::WlOutput>,
    ) {
        self.client_request(&surface, WindowCommand::Fullscreen);
    }

    fn unfullscreen_request(&mut self, surface: ToplevelSurface) {
        self.client_request(&surface, WindowCommand::Restore);
    }

    fn minimize_request(&mut self, surface: ToplevelSurface) {
        self.client_request(&surface, WindowCommand::Minimize);
    }

    fn client_pong(&mut self, client: ShellClient) {
        self.pong(&client);
    }

    fn toplevel_destroyed(&mut self, surface: ToplevelSurface) {
        self.forget_window(surface.wl_surface());
    }

    fn popup_destroyed(&mut self, surface: PopupSurface) {
        self.forget_window(surface.wl_surface());
    }
}
delegate_xdg_shell!(State);
