//! What the compositor keeps with a selection: the text it offers as the
//! clipboard's owner; an app's new clipboard moves the generation on.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use smithay::input::Seat;
use smithay::wayland::selection::{SelectionHandler, SelectionSource, SelectionTarget};

use crate::state::State;
use wayrig_host::clipboard_pipe::send_text;

impl SelectionHandler for State {
    type SelectionUserData = Arc<str>;

    fn new_selection(
        &mut self,
        target: SelectionTarget,
        source: Option<SelectionSource>,
        _seat: Seat<Self>,
    ) {
        // The primary selection is the apps' own business.
        if target == SelectionTarget::Clipboard {
            self.app_set_clipboard(source.map(|s| s.mime_types()));
        }
    }

    fn send_selection(
        &mut self,
        _target: SelectionTarget,
        _mime_type: String,
        fd: OwnedFd,
        _seat: Seat<Self>,
        text: &Arc<str>,
    ) {
        // Only offered in text types, all of which get the UTF-8 text.
        send_text(text.clone(), fd);
    }
}
