//! xdg-decoration: every toplevel gets the session's decoration mode, whatever
//! it asks for, so every run looks the same.

use smithay::delegate_xdg_decoration;
use smithay::reexports::wayland_protocols::xdg::decoration::zv1::server::zxdg_toplevel_decoration_v1::Mode as DecorationMode;
use smithay::wayland::shell::xdg::decoration::XdgDecorationHandler;
use smithay::wayland::shell::xdg::ToplevelSurface;

use crate::rig::windows::decoration_mode;
use crate::state::State;

impl State {
    fn impose_decoration_mode(&mut self, toplevel: &ToplevelSurface) {
        let mode = decoration_mode(self.rig.config.decorations);
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
