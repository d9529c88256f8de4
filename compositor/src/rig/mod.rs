//! The rig, the compositor's own model apart from Smithay's protocol globals and
//! the output backend: windows, clients, the frame clock and its waiters, input,
//! apps, the clipboard's owner.

pub mod clients;
pub mod clipboard;
pub mod damage;
pub mod frame_clock;
pub mod input_queue;
pub mod pixels;
pub mod windows;

use std::time::Duration;

use smithay::output::{Mode as OutputMode, Output, PhysicalProperties, Scale, Subpixel};
use smithay::reexports::calloop::LoopSignal;
use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::DisplayHandle;
use smithay::reexports::wayland_server::Resource;
use smithay::utils::Transform;
use tokio::sync::oneshot;
use wayrig_host::{FrameWait, HostResult, Settled, Stepped, WindowHandle};

use crate::config::Config;
use clients::Clients;
use clipboard::Clipboard;
use frame_clock::FrameClock;
use input_queue::InputQueue;
use wayrig_host::launch::Apps;
use windows::Windows;

/// The name of the one virtual output.
pub const OUTPUT_NAME: &str = "WAYRIG-1";

/// The one virtual output as the configuration sets it up; its global is the
/// caller's to create.
pub fn virtual_output(config: &Config) -> Output {
    let output = Output::new(
        OUTPUT_NAME.into(),
        PhysicalProperties {
            // As a 96 DPI monitor, so toolkits that read DPI pick the usual sizes.
            size: (
                (config.width as f64 * 25.4 / 96.0).round() as i32,
                (config.height as f64 * 25.4 / 96.0).round() as i32,
            )
                .into(),
            subpixel: Subpixel::Unknown,
            make: "Wayrig".into(),
            model: "Virtual".into(),
        },
    );
    let mode = OutputMode {
        size: (
            (config.width as f64 * config.scale).round() as i32,
            (config.height as f64 * config.scale).round() as i32,
        )
            .into(),
        refresh: config.refresh_mhz as i32,
    };
    output.change_current_state(
        Some(mode),
        Some(Transform::Normal),
        Some(Scale::Fractional(config.scale)),
        Some((0, 0).into()),
    );
    output.set_preferred(mode);
    output
}

/// The compositor's model, served on the calloop thread.
pub struct Rig {
    pub config: Config,
    pub display_handle: DisplayHandle,
    loop_signal: LoopSignal,
    /// Cleared by `stop`; the event loop ends once it is.
    pub running: bool,
    pub output: Output,
    pub windows: Windows,
    pub clients: Clients,
    pub frames: FrameClock,
    pub input_queue: InputQueue,
    pub apps: Apps,
    pub clipboard: Clipboard,
}

impl Rig {
    pub fn new(
        config: Config,
        display_handle: DisplayHandle,
        loop_signal: LoopSignal,
        output: Output,
        app_env: Vec<(String, String)>,
    ) -> Result<Self, String> {
        Ok(Rig {
            windows: Windows::new(&config, &output),
            frames: FrameClock::new(&config),
            input_queue: InputQueue::new()?,
            config,
            display_handle,
            loop_signal,
            running: true,
            output,
            clients: Clients::default(),
            apps: Apps::new(app_env),
            clipboard: Clipboard::default(),
        })
    }

    pub fn stop(&mut self) {
        self.running = false;
        self.loop_signal.stop();
    }

    /// Learn a client's pid from its socket credentials, else from the app we launched.
    pub fn note_client(&mut self, surface: &WlSurface) {
        // Without credentials, the newest app we launched is the best-known owner.
        let launched = self.apps.running().last().copied();
        self.clients
            .note_client(&self.display_handle, surface, launched);
    }

    /// Send a ping to the client of `surface` unless one is in flight.
    pub fn ping_client_of(&mut self, surface: &WlSurface) {
        let shell = self.windows.shell_client_of(surface);
        self.clients.ping(surface, shell);
    }

    /// A root surface of record `id` committed.
    pub fn note_commit(&mut self, id: u64) {
        self.frames
            .note_commit(&mut self.windows, &mut self.clients, &self.output, id);
    }

    /// The accounting clock's tick, before the output is drawn.
    pub fn tick(&mut self) {
        let moment = self.clients.moment();
        self.frames
            .tick(&mut self.windows, &mut self.clients, &self.output, moment);
    }

    /// A toplevel or popup surface was destroyed; returns whether it was a window.
    pub fn forget_window(&mut self, surface: &WlSurface) -> bool {
        let Some(id) = self.windows.forget(surface) else {
            return false;
        };
        self.frames.forget_window(id);
        true
    }

    /// Keep frame callbacks from the client of `handle` for `hold` (zero:
    /// give them again). Input queued for the window keeps its frames
    /// coming: its text waits on them.
    pub fn hold_frames(&mut self, handle: WindowHandle, hold: Duration) -> HostResult<()> {
        let (id, surface) = self.windows.resolve_surface(handle)?;
        let Some(client) = surface.wl_surface().client() else {
            return Ok(());
        };
        let inputs = self.input_queue.jobs.iter().any(|job| job.window == id);
        let hold = if inputs { Duration::ZERO } else { hold };
        self.frames.hold(client.id(), hold);
        Ok(())
    }

    pub fn add_frame_waiter(
        &mut self,
        handle: WindowHandle,
        until: FrameWait,
        timeout: Duration,
        reply: oneshot::Sender<HostResult<Settled>>,
    ) {
        self.frames.add_frame_waiter(
            &mut self.windows,
            &mut self.clients,
            handle,
            until,
            timeout,
            reply,
        );
    }

    /// Answer every settle waiter whose window settled or whose time ran out.
    pub fn check_settle_waiters(&mut self) {
        self.frames
            .check_settle_waiters(&self.windows, &mut self.clients);
    }

    pub fn start_step(&mut self, frames: u32, reply: oneshot::Sender<HostResult<Stepped>>) {
        self.frames.start_step(
            &self.windows,
            &mut self.clients,
            &self.output,
            frames,
            reply,
        );
    }

    /// A client answered a ping sent at moment `answered`: the step stops
    /// waiting on its windows if that ping came after the frame.
    pub fn step_pong(&mut self, client: &ClientId, answered: u64) {
        self.frames.step_pong(
            &self.windows,
            &mut self.clients,
            &self.output,
            client,
            answered,
        );
    }
}
