//! zwp_input_method_v2: the global only Wayrig's own input method binds, through
//! which text is committed to the focused field; it shows no popups.

use smithay::delegate_input_method_manager;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Rectangle};
use smithay::wayland::input_method::{InputMethodHandler, PopupSurface as ImPopupSurface};

use crate::state::State;

impl InputMethodHandler for State {
    fn new_popup(&mut self, _surface: ImPopupSurface) {}
    fn dismiss_popup(&mut self, _surface: ImPopupSurface) {}
    fn popup_repositioned(&mut self, _surface: ImPopupSurface) {}

    fn parent_geometry(&self, parent: &WlSurface) -> Rectangle<i32, Logical> {
        let windows = &self.rig.windows;
        windows
            .id_for_surface(parent)
            .and_then(|id| windows.content_rect(id))
            .map(|r| Rectangle::new((r.x, r.y).into(), (r.width, r.height).into()))
            .unwrap_or_default()
    }
}
delegate_input_method_manager!(State);
