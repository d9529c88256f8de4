//! Wayrig's own input method: a Wayland client inside the compositor process,
//! bound to zwp_input_method_v2, so that text-input-v3 is live for apps.
//!
//! Smithay drops every text-input request while no input method is connected;
//! with this one present, `input.rs` commits text to the focused field directly.
//! It notes whether the field is a terminal's, which takes keys instead.

use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use smithay::reexports::wayland_server::DisplayHandle;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{delegate_noop, Connection, Dispatch, QueueHandle};
use wayland_protocols::wp::text_input::zv3::client::zwp_text_input_v3::ContentPurpose;
use wayland_protocols_misc::zwp_input_method_v2::client::{
    zwp_input_method_manager_v2::ZwpInputMethodManagerV2,
    zwp_input_method_v2::{self, ZwpInputMethodV2},
};

use crate::rig::clients::ClientState;

/// Connect the input method over a socket pair and serve it on a thread of its
/// own; the thread ends when the compositor closes the connection. It sets
/// `terminal` while the active field says its purpose is a terminal's.
pub fn start(display: &mut DisplayHandle, terminal: Arc<AtomicBool>) -> Result<(), String> {
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("socket pair: {e}"))?;
    display
        .insert_client(ours, Arc::new(ClientState::internal()))
        .map_err(|e| format!("cannot connect the input method: {e}"))?;
    std::thread::Builder::new()
        .name("wayrig-input-method".into())
        .spawn(move || {
            if let Err(e) = serve(theirs, terminal) {
                tracing::debug!(%e, "input method ended");
            }
        })
        .map_err(|e| format!("cannot start the input method: {e}"))?;
    Ok(())
}

/// The active field's purpose as the input method learns it: the pending
/// one (since the last activate) is applied at done.
struct InputMethod {
    pending_terminal: bool,
    terminal: Arc<AtomicBool>,
}

fn serve(stream: UnixStream, terminal: Arc<AtomicBool>) -> Result<(), String> {
    let conn = Connection::from_socket(stream).map_err(|e| e.to_string())?;
    let (globals, mut queue) =
        registry_queue_init::<InputMethod>(&conn).map_err(|e| e.to_string())?;
    let qh: QueueHandle<InputMethod> = queue.handle();
    let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=1, ()).map_err(|e| e.to_string())?;
    let manager: ZwpInputMethodManagerV2 =
        globals.bind(&qh, 1..=1, ()).map_err(|e| e.to_string())?;
    let _input_method = manager.get_input_method(&seat, &qh, ());
    let mut state = InputMethod {
        pending_terminal: false,
        terminal,
    };
    loop {
        queue
            .blocking_dispatch(&mut state)
            .map_err(|e| e.to_string())?;
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for InputMethod {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

// No event needs an answer: the compositor commits text itself, in order with
// the other input it sends. A field's purpose is noted.
impl Dispatch<ZwpInputMethodV2, ()> for InputMethod {
    fn event(
        state: &mut Self,
        _: &ZwpInputMethodV2,
        event: zwp_input_method_v2::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            zwp_input_method_v2::Event::Activate => state.pending_terminal = false,
            zwp_input_method_v2::Event::Deactivate => {
                state.pending_terminal = false;
                state.terminal.store(false, Ordering::Relaxed);
            }
            zwp_input_method_v2::Event::ContentType { purpose, .. } => {
                state.pending_terminal =
                    purpose.into_result().ok() == Some(ContentPurpose::Terminal);
            }
            zwp_input_method_v2::Event::Done => {
                state
                    .terminal
                    .store(state.pending_terminal, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

delegate_noop!(InputMethod: ignore wl_seat::WlSeat);
delegate_noop!(InputMethod: ZwpInputMethodManagerV2);
