//! Wayrig's own input method: a Wayland client inside the compositor process,
//! bound to zwp_input_method_v2, so that text-input-v3 is live for apps.
//!
//! Smithay drops every text-input request while no input method is connected;
//! with this one present, `input.rs` commits text to the focused field directly.

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use smithay::reexports::wayland_server::DisplayHandle;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{delegate_noop, Connection, Dispatch, QueueHandle};
use wayland_protocols_misc::zwp_input_method_v2::client::{
    zwp_input_method_manager_v2::ZwpInputMethodManagerV2, zwp_input_method_v2::ZwpInputMethodV2,
};

use crate::rig::clients::ClientState;

/// Connect the input method over a socket pair and serve it on a thread of its
/// own; the thread ends when the compositor closes the connection.
pub fn start(display: &mut DisplayHandle) -> Result<(), String> {
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("socket pair: {e}"))?;
    display
        .insert_client(ours, Arc::new(ClientState::internal()))
        .map_err(|e| format!("cannot connect the input method: {e}"))?;
    std::thread::Builder::new()
        .name("wayrig-input-method".into())
        .spawn(move || {
            if let Err(e) = serve(theirs) {
                tracing::debug!(%e, "input method ended");
            }
        })
        .map_err(|e| format!("cannot start the input method: {e}"))?;
    Ok(())
}

struct InputMethod;

fn serve(stream: UnixStream) -> Result<(), String> {
    let conn = Connection::from_socket(stream).map_err(|e| e.to_string())?;
    let (globals, mut queue) =
        registry_queue_init::<InputMethod>(&conn).map_err(|e| e.to_string())?;
    let qh: QueueHandle<InputMethod> = queue.handle();
    let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=1, ()).map_err(|e| e.to_string())?;
    let manager: ZwpInputMethodManagerV2 =
        globals.bind(&qh, 1..=1, ()).map_err(|e| e.to_string())?;
    let _input_method = manager.get_input_method(&seat, &qh, ());
    let mut state = InputMethod;
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

// Activation, surrounding text and done events need no answer: the compositor
// commits text itself, in order with the other input it sends.
delegate_noop!(InputMethod: ignore wl_seat::WlSeat);
delegate_noop!(InputMethod: ZwpInputMethodManagerV2);
delegate_noop!(InputMethod: ignore ZwpInputMethodV2);
