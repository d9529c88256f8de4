//! The compositor as a `Host`: a calloop thread owning all Smithay state, reached
//! by commands over a channel, each answered on a oneshot.
//!
//! `CompositorHost::start` returns once the Wayland socket listens; dropping the
//! host (or `shutdown`) ends every app it launched and removes its runtime dir.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use smithay::backend::winit::WinitEvent;
use smithay::reexports::calloop::channel::{self, Channel, Event as ChannelEvent};
use smithay::reexports::calloop::generic::Generic;
use smithay::reexports::calloop::timer::{TimeoutAction, Timer};
use smithay::reexports::calloop::{EventLoop, Interest, Mode, PostAction};
use smithay::reexports::wayland_server::{Display, ListeningSocket};
use tokio::sync::oneshot;
use wayrig_host::devtools::{self, PageDebuggers};
use wayrig_host::{
    AppInfo, Capabilities, Capture, ClipboardText, Damage, DisplayInfo, FrameWait, Host, HostError,
    HostResult, InputEvent, InputOptions, InputReport, LaunchSpec, PointerState, Rect, Settled,
    Stepped, WindowCommand, WindowHandle, WindowInfo, WindowWatch,
};

use crate::backend::nested::Nested;
use crate::capture::Pixels;
use crate::clipboard::ClipboardRead;
use crate::config::Config;
use crate::rig::clients::ClientState;
use crate::rig::OUTPUT_NAME;
use crate::runtime_dir::RuntimeDir;
use crate::state::State;
use wayrig_record::Recording;

/// Time launched apps get to exit after SIGTERM at shutdown.
const APP_GRACE: Duration = Duration::from_secs(2);
/// Bytes of events a client may leave unread before it is disconnected
/// (the library's default is 4 KiB past its socket's buffer): an app busy,
/// or starved of CPU, while a long text is typed to it in one go (each
/// character two key events) reads it late, but it reads it.
const CLIENT_EVENTS_MOST: usize = 16 << 20;

/// What the outside world asks of the compositor thread.
pub enum Command {
    Windows(oneshot::Sender<Vec<WindowInfo>>),
    Watch(oneshot::Sender<WindowWatch>),
    Launch(LaunchSpec, oneshot::Sender<HostResult<AppInfo>>),
    Window(
        WindowHandle,
        WindowCommand,
        oneshot::Sender<HostResult<Option<WindowInfo>>>,
    ),
    WaitFrames(
        WindowHandle,
        FrameWait,
        Duration,
        oneshot::Sender<HostResult<Settled>>,
    ),
    Step(u32, oneshot::Sender<HostResult<Stepped>>),
    Commits(WindowHandle, oneshot::Sender<HostResult<u64>>),
    HoldFrames(WindowHandle, Duration, oneshot::Sender<HostResult<()>>),
    Damage(
        WindowHandle,
        u64,
        oneshot::Sender<HostResult<(Damage, u64)>>,
    ),
    Input(
        WindowHandle,
        Vec<InputEvent>,
        InputOptions,
        oneshot::Sender<HostResult<InputReport>>,
    ),
    CaptureWindow(WindowHandle, oneshot::Sender<HostResult<Pixels>>),
    CaptureOutput(oneshot::Sender<HostResult<Pixels>>),
    Record(Option<Arc<Recording>>, oneshot::Sender<()>),
    Pointer(oneshot::Sender<PointerState>),
    WindowAt(
        WindowHandle,
        f64,
        f64,
        oneshot::Sender<HostResult<WindowHandle>>,
    ),
    PointerToDesktop(f64, f64, oneshot::Sender<HostResult<PointerState>>),
    Clipboard(oneshot::Sender<HostResult<ClipboardRead>>),
    SetClipboard(String, oneshot::Sender<u64>),
    AppExited(u32, Option<i32>),
    Shutdown,
}

/// How long the compositor's loop may take to answer a request that waits on
/// no app; one that does not answer in that time is stuck.
const ANSWER_LIMIT: Duration = Duration::from_secs(20);
/// The same for input and steps, which wait on apps within limits of their
/// own (input lasts at most a minute).
const WAITING_ANSWER_LIMIT: Duration = Duration::from_secs(90);

/// Where the session's apps find the compositor.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub runtime_dir: PathBuf,
    pub socket_name: String,
    /// The environment every launched app gets.
    pub app_env: Vec<(String, String)>,
}

/// Handle to a running compositor; implements `Host`.
pub struct CompositorHost {
    commands: channel::Sender<Command>,
    /// Disconnects when the compositor loop has ended and its apps are gone.
    stopped: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
    info: SessionInfo,
    /// The one virtual output, fixed for the compositor's life.
    display: DisplayInfo,
    settle_threads: bool,
    /// The DevTools pipes of the browsers the compositor's launcher started.
    debuggers: PageDebuggers,
}

/// The compositor's event loop, to be run on the thread that made it (winit,
/// for the nested window, insists on the main thread).
pub struct Runner {
    parts: Parts,
    _stopped: std::sync::mpsc::Sender<()>,
}

impl CompositorHost {
    /// Start the compositor on a thread of its own and wait until its socket listens.
    pub fn start(config: Config) -> HostResult<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("wayrig-compositor".into())
            .spawn(move || match CompositorHost::start_here(config) {
                Ok((host, runner)) => {
                    let _ = ready_tx.send(Ok(host));
                    runner.run();
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| HostError::Failed(format!("cannot start the compositor thread: {e}")))?;
        ready_rx
            .recv()
            .map_err(|_| HostError::Failed("the compositor thread died while starting".into()))?
    }

    /// Set the compositor up on this thread; it serves once `Runner::run` is called here.
    pub fn start_here(config: Config) -> HostResult<(Self, Runner)> {
        let (commands, channel) = channel::channel::<Command>();
        let (stopped_tx, stopped_rx) = std::sync::mpsc::channel();
        let display = display_of(&config);
        let settle_threads = config.settle_threads;
        let parts = prepare(config, channel, commands.clone()).map_err(HostError::Failed)?;
        let host = CompositorHost {
            commands,
            stopped: Mutex::new(Some(stopped_rx)),
            info: parts.info.clone(),
            display,
            settle_threads,
            debuggers: parts.state.rig.apps.debuggers(),
        };
        Ok((
            host,
            Runner {
                parts,
                _stopped: stopped_tx,
            },
        ))
    }

    pub fn session(&self) -> &SessionInfo {
        &self.info
    }

    /// Ask the compositor's loop and wait for its answer, at most `limit`:
    /// a loop that stopped answering fails the request, naming `what`.
    async fn ask<T>(
        &self,
        what: &str,
        limit: Duration,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> HostResult<T> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(make(tx)).map_err(|_| HostError::Gone)?;
        match tokio::time::timeout(limit, rx).await {
            Ok(answer) => answer.map_err(|_| HostError::Gone),
            Err(_) => Err(HostError::Failed(format!(
                "the compositor did not answer {what} within {limit:?}: its loop is stuck; \
                 end this session and start another"
            ))),
        }
    }

    /// Ask the loop to stop and take the receiver that tells when it has.
    fn request_stop(&self) -> Option<std::sync::mpsc::Receiver<()>> {
        let _ = self.commands.send(Command::Shutdown);
        self.stopped.lock().unwrap().take()
    }
}

impl Drop for CompositorHost {
    /// Stop the compositor if `shutdown` did not. Its apps take seconds to
    /// end: inside a tokio runtime that wait goes to the blocking pool (the
    /// runtime waits for it before it ends) instead of holding a worker;
    /// outside one, it is waited for here.
    fn drop(&mut self) {
        let Some(stopped) = self.request_stop() else {
            return;
        };
        // Returns with an error once the runner is gone, which is what we wait for.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || stopped.recv());
            }
            Err(_) => {
                let _ = stopped.recv();
            }
        }
    }
}

#[async_trait::async_trait]
impl Host for CompositorHost {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            launch: true,
            capture_covered: true,
            frame_pacing: true,
            window_commands: true,
            input: true,
            background_input: true,
            settle_threads: self.settle_threads,
            clipboard: true,
            settle_approximate: false,
        }
    }

    async fn windows(&self) -> HostResult<Vec<WindowInfo>> {
        self.ask("the window list", ANSWER_LIMIT, Command::Windows)
            .await
    }

    async fn watch_windows(&self) -> HostResult<WindowWatch> {
        self.ask("a window watch", ANSWER_LIMIT, Command::Watch)
            .await
    }

    async fn launch(&self, spec: LaunchSpec) -> HostResult<AppInfo> {
        self.ask("a launch", ANSWER_LIMIT, |tx| Command::Launch(spec, tx))
            .await?
    }

    async fn window_command(
        &self,
        window: WindowHandle,
        command: WindowCommand,
    ) -> HostResult<Option<WindowInfo>> {
        self.ask("a window command", ANSWER_LIMIT, |tx| {
            Command::Window(window, command, tx)
        })
        .await?
    }

    async fn wait_frames(
        &self,
        window: WindowHandle,
        until: FrameWait,
        timeout: Duration,
    ) -> HostResult<Settled> {
        self.ask("a frame wait", timeout + ANSWER_LIMIT, |tx| {
            Command::WaitFrames(window, until, timeout, tx)
        })
        .await?
    }

    async fn input(
        &self,
        window: WindowHandle,
        events: Vec<InputEvent>,
        options: InputOptions,
    ) -> HostResult<InputReport> {
        self.ask("input", WAITING_ANSWER_LIMIT, |tx| {
            Command::Input(window, events, options, tx)
        })
        .await?
    }

    async fn commits(&self, window: WindowHandle) -> HostResult<u64> {
        self.ask("a commit count", ANSWER_LIMIT, |tx| {
            Command::Commits(window, tx)
        })
        .await?
    }

    async fn hold_frames(&self, window: WindowHandle, hold: Duration) -> HostResult<()> {
        self.ask("holding frames", ANSWER_LIMIT, |tx| {
            Command::HoldFrames(window, hold, tx)
        })
        .await?
    }

    async fn damage_since(&self, window: WindowHandle, since: u64) -> HostResult<(Damage, u64)> {
        self.ask("damage", ANSWER_LIMIT, |tx| {
            Command::Damage(window, since, tx)
        })
        .await?
    }

    async fn step(&self, frames: u32) -> HostResult<Stepped> {
        self.ask("a step", WAITING_ANSWER_LIMIT, |tx| {
            Command::Step(frames, tx)
        })
        .await?
    }

    async fn capture_window(&self, window: WindowHandle) -> HostResult<Capture> {
        self.ask("a capture", ANSWER_LIMIT, |tx| {
            Command::CaptureWindow(window, tx)
        })
        .await?
        .map(Pixels::into_capture)
    }

    async fn record(&self, recording: Option<Arc<Recording>>) -> HostResult<()> {
        self.ask("recording", ANSWER_LIMIT, |tx| {
            Command::Record(recording, tx)
        })
        .await
    }

    async fn capture_output(&self) -> HostResult<Capture> {
        self.ask("a capture", ANSWER_LIMIT, Command::CaptureOutput)
            .await?
            .map(Pixels::into_capture)
    }

    async fn displays(&self) -> HostResult<Vec<DisplayInfo>> {
        Ok(vec![self.display.clone()])
    }

    async fn pointer(&self) -> HostResult<PointerState> {
        self.ask("the pointer", ANSWER_LIMIT, Command::Pointer)
            .await
    }

    async fn window_at(&self, window: WindowHandle, x: f64, y: f64) -> HostResult<WindowHandle> {
        self.ask("a hit test", ANSWER_LIMIT, |reply| {
            Command::WindowAt(window, x, y, reply)
        })
        .await?
    }

    async fn move_pointer_to_desktop(&self, x: f64, y: f64) -> HostResult<PointerState> {
        self.ask("a pointer move", ANSWER_LIMIT, |reply| {
            Command::PointerToDesktop(x, y, reply)
        })
        .await?
    }

    async fn evaluate(
        &self,
        window: WindowHandle,
        script: String,
        limit: Duration,
    ) -> HostResult<serde_json::Value> {
        let windows = self.windows().await?;
        devtools::evaluate_in_window(&self.debuggers, &windows, window, &script, limit).await
    }

    async fn clipboard(&self) -> HostResult<ClipboardText> {
        self.ask("the clipboard", ANSWER_LIMIT, Command::Clipboard)
            .await??
            .text()
            .await
    }

    async fn set_clipboard(&self, text: String) -> HostResult<u64> {
        self.ask("the clipboard", ANSWER_LIMIT, |tx| {
            Command::SetClipboard(text, tx)
        })
        .await
    }

    async fn shutdown(&self) {
        if let Some(stopped) = self.request_stop() {
            let _ = tokio::task::spawn_blocking(move || stopped.recv()).await;
        }
    }
}

/// The virtual output a configuration makes.
fn display_of(config: &Config) -> DisplayInfo {
    DisplayInfo {
        id: 1,
        name: OUTPUT_NAME.into(),
        primary: true,
        bounds: Rect::new(0, 0, config.width, config.height),
        pixel_width: (f64::from(config.width) * config.scale).round() as u32,
        pixel_height: (f64::from(config.height) * config.scale).round() as u32,
        scale: config.scale,
        refresh_mhz: config.refresh_mhz,
    }
}

/// The environment that points an app at this session.
fn app_environment(
    config: &Config,
    runtime_dir: &std::path::Path,
    socket_name: &str,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("WAYLAND_DISPLAY", socket_name),
        ("XDG_RUNTIME_DIR", &runtime_dir.to_string_lossy()),
        ("XDG_SESSION_TYPE", "wayland"),
        ("GDK_BACKEND", "wayland"),
        ("QT_QPA_PLATFORM", "wayland"),
        ("SDL_VIDEODRIVER", "wayland"),
        ("CLUTTER_BACKEND", "wayland"),
        ("MOZ_ENABLE_WAYLAND", "1"),
        ("ELECTRON_OZONE_PLATFORM_HINT", "wayland"),
        ("WINIT_UNIX_BACKEND", "wayland"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend(config.app_env.iter().cloned());
    env
}

/// Everything the loop owns, made on the thread that will run it.
struct Parts {
    runtime_dir: RuntimeDir,
    event_loop: EventLoop<'static, State>,
    state: State,
    info: SessionInfo,
}

fn prepare(
    config: Config,
    commands: Channel<Command>,
    exit_sender: channel::Sender<Command>,
) -> Result<Parts, String> {
    let runtime_dir = RuntimeDir::create(config.runtime_parent.as_deref())
        .map_err(|e| format!("cannot create the runtime directory: {e}"))?;
    let socket_name = "wayland-0".to_string();
    let listener = ListeningSocket::bind_absolute(runtime_dir.path().join(&socket_name))
        .map_err(|e| format!("cannot bind the Wayland socket: {e}"))?;
    let event_loop: EventLoop<'static, State> =
        EventLoop::try_new().map_err(|e| format!("cannot create the event loop: {e}"))?;
    let display: Display<State> =
        Display::new().map_err(|e| format!("cannot create the display: {e}"))?;
    display
        .handle()
        .set_default_max_buffer_size(CLIENT_EVENTS_MOST);
    let app_env = app_environment(&config, runtime_dir.path(), &socket_name);
    let mut state = State::new(
        config.clone(),
        display.handle(),
        event_loop.get_signal(),
        app_env.clone(),
    )?;
    insert_sources(
        &mut state,
        &event_loop,
        listener,
        display,
        commands,
        exit_sender,
    )?;
    let terminal_field = state.rig.input_queue.terminal_field.clone();
    crate::input_method::start(&mut state.rig.display_handle, terminal_field)?;
    if config.nested {
        show_nested(&mut state, &event_loop, &config)?;
    }
    tracing::info!(
        socket = %runtime_dir.path().join(&socket_name).display(),
        pacing = ?config.pacing,
        nested = config.nested,
        "compositor listening"
    );
    let info = SessionInfo {
        runtime_dir: runtime_dir.path().to_path_buf(),
        socket_name,
        app_env,
    };
    Ok(Parts {
        runtime_dir,
        event_loop,
        state,
        info,
    })
}

/// Open the nested window and show the output in it; closing it stops the compositor.
fn show_nested(
    state: &mut State,
    event_loop: &EventLoop<'static, State>,
    config: &Config,
) -> Result<(), String> {
    let (nested, events) = Nested::open(&state.rig.output, config)
        .map_err(|e| format!("cannot open the nested window: {e}"))?;
    event_loop
        .handle()
        .insert_source(events, |event, _, state| match event {
            WinitEvent::CloseRequested => state.rig.stop(),
            WinitEvent::Redraw => state
                .backend
                .render(&state.rig.windows.space, &state.rig.output),
            // The watching person's own input is not forwarded: the session is driven.
            WinitEvent::Resized { .. } | WinitEvent::Focus(_) | WinitEvent::Input(_) => {}
        })
        .map_err(|e| format!("cannot watch the window's events: {e}"))?;
    state.backend.show_nested(nested);
    Ok(())
}

impl Runner {
    /// Serve until shut down, then end every launched app.
    pub fn run(self) {
        let Parts {
            runtime_dir,
            mut event_loop,
            mut state,
            info: _,
        } = self.parts;
        while state.rig.running {
            if let Err(e) = event_loop.dispatch(None, &mut state) {
                tracing::error!(%e, "event loop failed");
                break;
            }
            state.refresh_windows();
            if let Err(e) = state.rig.display_handle.flush_clients() {
                tracing::debug!(%e, "flushing clients failed");
            }
        }
        // Let apps end cleanly while their Wayland connections are still
        // served: each app first (a browser ends its own helpers), then what
        // is left of their groups (a terminal's shell), then SIGKILL.
        let signals: [fn(&wayrig_host::launch::Apps); 2] = [
            wayrig_host::launch::Apps::signal_apps,
            wayrig_host::launch::Apps::signal_all,
        ];
        for signal in signals {
            signal(&state.rig.apps);
            let deadline = Instant::now() + APP_GRACE / 2;
            while !state.rig.apps.running().is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                if event_loop.dispatch(Some(left), &mut state).is_err() {
                    break;
                }
                let _ = state.rig.display_handle.flush_clients();
            }
        }
        state.rig.apps.kill_remaining();
        state.rig.frames.abandon_settle_waiters();
        drop(state);
        drop(event_loop);
        drop(runtime_dir);
        tracing::info!("compositor stopped");
    }
}

fn insert_sources(
    state: &mut State,
    event_loop: &EventLoop<'static, State>,
    listener: ListeningSocket,
    display: Display<State>,
    commands: Channel<Command>,
    exit_sender: channel::Sender<Command>,
) -> Result<(), String> {
    let handle = event_loop.handle();
    handle
        .insert_source(
            Generic::new(listener, Interest::READ, Mode::Level),
            |_, listener, state| {
                while let Some(stream) = listener.accept()? {
                    if let Err(e) = state
                        .rig
                        .display_handle
                        .insert_client(stream, Arc::new(ClientState::default()))
                    {
                        tracing::warn!(%e, "cannot accept a client");
                    }
                }
                Ok(PostAction::Continue)
            },
        )
        .map_err(|e| format!("cannot watch the socket: {e}"))?;
    handle
        .insert_source(
            Generic::new(display, Interest::READ, Mode::Level),
            |_, display, state| {
                // SAFETY: the display is never dropped while the event loop holds it.
                unsafe { display.get_mut().dispatch_clients(state)? };
                Ok(PostAction::Continue)
            },
        )
        .map_err(|e| format!("cannot watch the display: {e}"))?;
    handle
        .insert_source(commands, move |event, _, state| match event {
            ChannelEvent::Msg(cmd) => state.handle_command(cmd, &exit_sender),
            ChannelEvent::Closed => state.rig.stop(),
        })
        .map_err(|e| format!("cannot watch the command channel: {e}"))?;
    let interval = state.rig.config.frame_interval();
    let first = Instant::now() + interval;
    handle
        .insert_source(Timer::from_deadline(first), move |deadline, _, state| {
            state.tick();
            let mut next = deadline + interval;
            let now = Instant::now();
            if next <= now {
                // Fell behind (a stopped process, a slow machine): skip missed frames.
                next = now + interval;
            }
            TimeoutAction::ToInstant(next)
        })
        .map_err(|e| format!("cannot start the frame clock: {e}"))?;
    Ok(())
}

impl State {
    fn handle_command(&mut self, cmd: Command, exit_sender: &channel::Sender<Command>) {
        match cmd {
            Command::Windows(reply) => {
                self.refresh_windows();
                let _ = reply.send(self.rig.windows.registry.announced());
            }
            Command::Watch(reply) => {
                self.refresh_windows();
                let windows = &self.rig.windows;
                let _ = reply.send(WindowWatch {
                    windows: windows.registry.announced(),
                    events: windows.events.subscribe(),
                });
            }
            Command::Launch(spec, reply) => {
                let sender = exit_sender.clone();
                let result = self
                    .rig
                    .apps
                    .launch(&spec, move |pid, code| {
                        let _ = sender.send(Command::AppExited(pid, code));
                    })
                    .map(|pid| AppInfo { pid });
                let _ = reply.send(result);
            }
            Command::Window(handle, cmd, reply) => {
                self.refresh_windows();
                let _ = reply.send(self.window_command(handle, cmd));
            }
            Command::WaitFrames(handle, until, timeout, reply) => {
                self.refresh_windows();
                self.rig.add_frame_waiter(handle, until, timeout, reply);
            }
            Command::Step(frames, reply) => self.rig.start_step(frames, reply),
            Command::Commits(handle, reply) => {
                let windows = &self.rig.windows;
                let _ = reply.send(windows.resolve(handle).map(|id| windows.tree_commits(id)));
            }
            Command::HoldFrames(handle, hold, reply) => {
                let _ = reply.send(self.rig.hold_frames(handle, hold));
            }
            Command::Damage(handle, since, reply) => {
                let windows = &mut self.rig.windows;
                let _ = reply.send(
                    windows
                        .resolve(handle)
                        .map(|id| windows.damage_since(id, since)),
                );
            }
            Command::Input(handle, events, options, reply) => {
                self.refresh_windows();
                self.queue_input(handle, &events, options, reply);
            }
            Command::CaptureWindow(handle, reply) => {
                self.refresh_windows();
                let _ = reply.send(self.capture_window(handle));
            }
            Command::CaptureOutput(reply) => {
                let _ = reply.send(self.capture_output());
            }
            Command::Record(recording, reply) => {
                self.record_into(recording);
                let _ = reply.send(());
            }
            Command::Pointer(reply) => {
                let _ = reply.send(self.pointer_state());
            }
            Command::WindowAt(handle, x, y, reply) => {
                self.refresh_windows();
                let _ = reply.send(self.window_at(handle, x, y));
            }
            Command::PointerToDesktop(x, y, reply) => {
                self.refresh_windows();
                let _ = reply.send(self.pointer_to_desktop(x, y));
            }
            Command::Clipboard(reply) => {
                let _ = reply.send(self.read_clipboard());
            }
            Command::SetClipboard(text, reply) => {
                let _ = reply.send(self.set_clipboard(text));
            }
            Command::AppExited(pid, code) => {
                tracing::info!(pid, ?code, "app exited");
                if self.rig.config.exit_with_last_app && self.rig.apps.running().is_empty() {
                    tracing::info!("the last app exited; stopping");
                    self.rig.stop();
                }
            }
            Command::Shutdown => self.rig.stop(),
        }
    }
}
