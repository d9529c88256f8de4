//! What drivers and clients do to windows through the seat: activate, move,
//! resize, minimize, maximize, restore and close, with keyboard focus following.
//!
//! Mapping, unmapping and destruction move the focus the same way.

use smithay::desktop::{PopupKind, PopupManager, Window};
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::reexports::wayland_server::backend::protocol::ProtocolError;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Resource;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::shell::xdg::ToplevelSurface;
use wayrig_host::launch;
use wayrig_host::{HostError, HostResult, WindowCommand, WindowHandle, WindowInfo};

use crate::rig::windows::{Mapping, Surface};
use crate::state::State;

impl State {
    /// Give the keyboard to `surface`, or to nothing.
    pub fn focus_keyboard(&mut self, surface: Option<WlSurface>) {
        if let Some(kb) = self.seat.get_keyboard() {
            kb.set_focus(self, surface, SERIAL_COUNTER.next_serial());
        }
    }

    /// Raise a toplevel, give it keyboard focus and mark it activated.
    pub fn activate(&mut self, id: u64) {
        let Some(window) = self.rig.windows.activate(id) else {
            return;
        };
        let surface = window.toplevel().map(|t| t.wl_surface().clone());
        self.focus_keyboard(surface);
        self.rig.windows.sync_space();
    }

    /// Focus the front-most shown toplevel, or nothing.
    pub fn focus_front_window(&mut self) {
        match self.rig.windows.front_toplevel() {
            Some(id) => self.activate(id),
            None => self.focus_keyboard(None),
        }
    }

    /// Called on each commit of a toplevel's root surface: a window that maps
    /// is activated, unless its app was launched in the background while
    /// another window has the focus; one that unmaps hands the focus on.
    pub fn toplevel_committed(&mut self, id: u64) {
        let Some(mapping) = self.rig.windows.toplevel_committed(id) else {
            return;
        };
        match mapping {
            Mapping::Mapped if self.would_steal_focus(id) => {
                self.rig.windows.registry.lower(id);
            }
            Mapping::Mapped => self.activate(id),
            Mapping::Unmapped => self.focus_front_window(),
            Mapping::Unchanged => {}
        }
        self.rig.windows.sync_space();
    }

    /// Whether focusing window `id` would take the focus from another app
    /// while its own app was launched in the background.
    pub fn would_steal_focus(&self, id: u64) -> bool {
        let Some(wl) = self
            .rig
            .windows
            .registry
            .get(id)
            .map(|rec| rec.surface.surface.wl_surface())
        else {
            return false;
        };
        let pid = self.rig.clients.of_surface(&wl).and_then(|c| c.pid);
        let focus_elsewhere = self
            .keyboard_focus()
            .is_some_and(|f| f.is_alive() && f.client() != wl.client());
        pid.is_some_and(|pid| self.rig.apps.in_background(pid)) && focus_elsewhere
    }

    /// A toplevel or popup surface was destroyed.
    pub fn forget_window(&mut self, surface: &WlSurface) {
        if !self.rig.forget_window(surface) {
            return;
        }
        let focus_lost = self
            .keyboard_focus()
            .is_none_or(|f| !f.is_alive() || f == *surface);
        if focus_lost {
            self.focus_front_window();
        }
        self.rig.windows.sync_space();
    }

    pub fn window_command(
        &mut self,
        handle: WindowHandle,
        cmd: WindowCommand,
    ) -> HostResult<Option<WindowInfo>> {
        let (id, surface) = self.rig.windows.resolve_surface(handle)?;
        match (&surface, cmd) {
            (_, WindowCommand::ForceClose) => {
                let wl = surface.wl_surface();
                let pid = self.rig.clients.record(&wl).and_then(|c| c.pid);
                if let Some(client) = wl.client() {
                    client.kill(
                        &self.rig.display_handle,
                        ProtocolError {
                            code: 0,
                            object_id: 0,
                            object_interface: "wl_display".into(),
                            message: "force-closed by wayrig".into(),
                        },
                    );
                }
                // An app we launched ends with its whole process group (the
                // helpers it started); another client's process alone.
                if let Some(pid) = pid.filter(|p| *p != std::process::id()) {
                    match self.rig.apps.launched_group_of(pid) {
                        Some(group) => launch::signal_group(group, libc::SIGKILL),
                        None => launch::signal_process(pid, libc::SIGKILL),
                    }
                }
                self.forget_window(&wl);
                return Ok(None);
            }
            (Surface::Popup(p), WindowCommand::Close) => {
                self.pointer_off_popup(p.wl_surface());
                if let PopupKind::Xdg(x) = &**p {
                    x.send_popup_done();
                }
            }
            (Surface::Popup(_), other) => {
                return Err(HostError::InvalidRequest(format!(
                    "{other:?} applies to top-level windows, not to popup {handle}"
                )))
            }
            (Surface::Toplevel(w), cmd) => {
                let top = w.toplevel().cloned().ok_or(HostError::NoWindow(handle))?;
                self.toplevel_command(id, &top, w, cmd)?;
            }
        }
        self.refresh_windows();
        Ok(self
            .rig
            .windows
            .registry
            .get(id)
            .and_then(|r| r.announced().cloned()))
    }

    fn toplevel_command(
        &mut self,
        id: u64,
        top: &ToplevelSurface,
        window: &Window,
        cmd: WindowCommand,
    ) -> HostResult<()> {
        let output_rect = self.rig.windows.output_rect();
        let (ow, oh) = (output_rect.width, output_rect.height);
        let current_size = window.geometry().size;
        match cmd {
            WindowCommand::Activate => self.activate(id),
            WindowCommand::Move { x, y } => {
                if let Some(rec) = self.rig.windows.registry.get_mut(id) {
                    rec.location = (x, y);
                }
                self.rig.windows.sync_space();
            }
            WindowCommand::Resize { width, height } => {
                if width <= 0 || height <= 0 {
                    return Err(HostError::InvalidRequest(format!(
                        "resize needs a positive size, got {width}x{height}"
                    )));
                }
                top.with_pending_state(|s| s.size = Some((width, height).into()));
                top.send_pending_configure();
            }
            WindowCommand::Minimize => {
                if let Some(rec) = self.rig.windows.registry.get_mut(id) {
                    rec.minimized = true;
                }
                if self
                    .keyboard_focus()
                    .is_some_and(|f| f == *top.wl_surface())
                {
                    self.focus_keyboard(None);
                    if window.set_activated(false) {
                        top.send_pending_configure();
                    }
                }
                self.rig.windows.sync_space();
            }
            WindowCommand::Maximize | WindowCommand::Fullscreen => {
                let state = if cmd == WindowCommand::Maximize {
                    xdg_toplevel::State::Maximized
                } else {
                    xdg_toplevel::State::Fullscreen
                };
                if let Some(rec) = self.rig.windows.registry.get_mut(id) {
                    if rec.surface.restore_size.is_none() {
                        rec.surface.restore_size = Some(current_size);
                    }
                    rec.minimized = false;
                    rec.location = (0, 0);
                }
                let output = self.rig.output.clone();
                top.with_pending_state(|s| {
                    s.states.unset(xdg_toplevel::State::Maximized);
                    s.states.unset(xdg_toplevel::State::Fullscreen);
                    s.states.set(state);
                    s.size = Some((ow, oh).into());
                    // A client that is going away has no output to be put on.
                    s.fullscreen_output = (state == xdg_toplevel::State::Fullscreen)
                        .then(|| top.wl_surface().client())
                        .flatten()
                        .and_then(|client| output.client_outputs(&client).next());
                });
                top.send_pending_configure();
                self.activate(id);
            }
            WindowCommand::Restore => {
                let restore = self.rig.windows.registry.get_mut(id).and_then(|rec| {
                    rec.minimized = false;
                    rec.surface.restore_size.take()
                });
                top.with_pending_state(|s| {
                    s.states.unset(xdg_toplevel::State::Maximized);
                    s.states.unset(xdg_toplevel::State::Fullscreen);
                    s.fullscreen_output = None;
                    if let Some(size) = restore {
                        s.size = Some(size);
                    }
                });
                top.send_pending_configure();
                if restore.is_some() {
                    let loc = self
                        .rig
                        .windows
                        .placement_for_size(restore.unwrap_or(current_size));
                    if let Some(rec) = self.rig.windows.registry.get_mut(id) {
                        rec.location = loc;
                    }
                }
                self.activate(id);
            }
            WindowCommand::Close => {
                // A person closes a window by clicking away from its open
                // menu first, which dismisses it: a GTK app whose modal
                // window went with a popover still open took no more input
                // in its other windows.
                for (popup, _) in PopupManager::popups_for_surface(top.wl_surface()) {
                    let _ = PopupManager::dismiss_popup(top.wl_surface(), &popup);
                }
                top.send_close()
            }
            WindowCommand::ForceClose => unreachable!("handled by window_command"),
        }
        Ok(())
    }
}
