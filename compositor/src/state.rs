//! The compositor's state on its calloop thread: the output backend, Smithay's
//! protocol globals and seat, and the rig, the compositor's own model.
//!
//! Smithay's handler traits are implemented on `State` in `handlers/`; what goes
//! through the seat is in `window_commands.rs` (focus) and `input.rs` (input).

use smithay::input::{Seat, SeatState};
use smithay::reexports::calloop::LoopSignal;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::DisplayHandle;
use smithay::wayland::compositor::CompositorState;
use smithay::wayland::cursor_shape::CursorShapeManagerState;
use smithay::wayland::fractional_scale::FractionalScaleManagerState;
use smithay::wayland::input_method::InputMethodManagerState;
use smithay::wayland::output::OutputManagerState;
use smithay::wayland::presentation::PresentationState;
use smithay::wayland::selection::data_device::DataDeviceState;
use smithay::wayland::selection::primary_selection::PrimarySelectionState;
use smithay::wayland::shell::xdg::decoration::XdgDecorationState;
use smithay::wayland::shell::xdg::{ShellClient, XdgShellState};
use smithay::wayland::shm::ShmState;
use smithay::wayland::single_pixel_buffer::SinglePixelBufferState;
use smithay::wayland::text_input::TextInputManagerState;
use smithay::wayland::viewporter::ViewporterState;
use smithay::wayland::xdg_activation::XdgActivationState;
use wayrig_host::{HostError, HostResult, WindowHandle};

use crate::backend::Backend;
use crate::capture::Pixels;
use crate::config::Config;
use crate::recorder::OutputRecorder;
use crate::rig::clients::ClientState;
use crate::rig::windows::Surface;
use crate::rig::{self, Rig};

/// Smithay's protocol states, one per global the compositor offers.
pub struct Protocols {
    pub compositor_state: CompositorState,
    pub xdg_shell_state: XdgShellState,
    pub shm_state: ShmState,
    pub seat_state: SeatState<State>,
    pub data_device_state: DataDeviceState,
    pub primary_selection_state: PrimarySelectionState,
    pub xdg_activation_state: XdgActivationState,
    // Globals that only need to stay alive.
    _output_manager_state: OutputManagerState,
    _xdg_decoration_state: XdgDecorationState,
    _fractional_scale_state: FractionalScaleManagerState,
    _presentation_state: PresentationState,
    _viewporter_state: ViewporterState,
    _single_pixel_buffer_state: SinglePixelBufferState,
    _cursor_shape_state: CursorShapeManagerState,
    _input_method_state: InputMethodManagerState,
    _text_input_state: TextInputManagerState,
}

impl Protocols {
    fn new(dh: &DisplayHandle) -> Self {
        Protocols {
            compositor_state: CompositorState::new::<State>(dh),
            xdg_shell_state: XdgShellState::new::<State>(dh),
            shm_state: ShmState::new::<State>(dh, vec![]),
            seat_state: SeatState::new(),
            data_device_state: DataDeviceState::new::<State>(dh),
            primary_selection_state: PrimarySelectionState::new::<State>(dh),
            xdg_activation_state: XdgActivationState::new::<State>(dh),
            _output_manager_state: OutputManagerState::new_with_xdg_output::<State>(dh),
            _xdg_decoration_state: XdgDecorationState::new::<State>(dh),
            _fractional_scale_state: FractionalScaleManagerState::new::<State>(dh),
            _presentation_state: PresentationState::new::<State>(dh, libc::CLOCK_MONOTONIC as u32),
            _viewporter_state: ViewporterState::new::<State>(dh),
            _single_pixel_buffer_state: SinglePixelBufferState::new::<State>(dh),
            _cursor_shape_state: CursorShapeManagerState::new::<State>(dh),
            // Only Wayrig's own input method may bind the input method global.
            _input_method_state: InputMethodManagerState::new::<State, _>(dh, |client| {
                client.get_data::<ClientState>().is_some_and(|c| c.internal)
            }),
            _text_input_state: TextInputManagerState::new::<State>(dh),
        }
    }
}

/// What the event loop and the Display serve: Smithay's handlers run on it.
pub struct State {
    pub protocols: Protocols,
    pub seat: Seat<State>,
    pub rig: Rig,
    pub backend: Backend,
    /// The popup grab the seat holds for a client, while it lasts.
    pub popup_grab: Option<crate::handlers::xdg_shell::HeldPopupGrab>,
    /// What the compositor adds to the session's recording, if recorded.
    pub recorder: Option<OutputRecorder>,
}

impl State {
    pub fn new(
        config: Config,
        display_handle: DisplayHandle,
        loop_signal: LoopSignal,
        app_env: Vec<(String, String)>,
    ) -> Result<Self, String> {
        let dh = &display_handle;
        let mut protocols = Protocols::new(dh);
        let mut seat = protocols.seat_state.new_wl_seat(dh, "seat0");
        seat.add_keyboard(crate::keys::session_xkb_config(), 600, 25)
            .map_err(|e| format!("cannot load the keymap (is xkb-data installed?): {e}"))?;
        seat.add_pointer();
        let output = rig::virtual_output(&config);
        output.create_global::<State>(dh);
        let backend = Backend::headless()?;
        let recorder = config.record.clone();
        let rig = Rig::new(config, display_handle, loop_signal, output, app_env)?;
        let recorder = recorder.map(|r| OutputRecorder::new(r, rig.windows.events.subscribe()));
        Ok(State {
            protocols,
            seat,
            rig,
            backend,
            popup_grab: None,
            recorder,
        })
    }

    pub fn keyboard_focus(&self) -> Option<WlSurface> {
        self.seat.get_keyboard().and_then(|k| k.current_focus())
    }

    /// Recompute every window's state, announce what changed, keep the space in
    /// step with the registry's stacking. Runs after every dispatch.
    pub fn refresh_windows(&mut self) {
        let focus = self.keyboard_focus();
        self.rig.windows.refresh(focus.as_ref(), &self.rig.clients);
        self.end_finished_popup_grab();
    }

    /// One tick of the output's frame clock: frame accounting, the output
    /// drawn where it is shown, then every waiter's deadline.
    pub fn tick(&mut self) {
        self.rig.tick();
        self.backend
            .render(&self.rig.windows.space, &self.rig.output);
        self.record_tick();
        self.rig.check_settle_waiters();
        self.rig.frames.check_step_deadline();
        self.check_input_deadline();
        self.resume_input_once_drawn();
    }

    /// A client answered our ping.
    pub fn pong(&mut self, shell: &ShellClient) {
        let Some(client) = self.rig.windows.client_of_shell(shell) else {
            return;
        };
        let Some(answered) = self.rig.clients.pong(&client) else {
            return;
        };
        self.input_pong(&client, answered);
        self.rig.step_pong(&client, answered);
        self.rig.check_settle_waiters();
    }

    pub fn capture_window(&mut self, handle: WindowHandle) -> HostResult<Pixels> {
        let (_, surface) = self.rig.windows.resolve_surface(handle)?;
        let scale = self.rig.config.scale;
        match &surface {
            Surface::Toplevel(window) => self.backend.capture_window(window, scale),
            Surface::Popup(popup) => self.backend.capture_popup(popup, scale),
        }
        .map_err(HostError::Failed)
    }

    pub fn capture_output(&mut self) -> HostResult<Pixels> {
        self.backend
            .capture_output(&self.rig.windows.space, &self.rig.output)
            .map_err(HostError::Failed)
    }
}
