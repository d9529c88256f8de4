//! A host in memory for tests of the session's rules and of the faces over
//! it (feature `test-support`): windows that an
//! imagined app changes after a delay, or never, a stream that can lag, a
//! clipboard in memory (or none); one display, captures whose pixels say where
//! they are, a pointer; where asked, input kept as sent, each batch a frame.
//!
//! Everything else a host does answers `Unsupported`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;
use wayrig_host::{
    AppInfo, Capabilities, Capture, ClipboardText, DisplayInfo, FrameWait, Host, HostError,
    HostResult, InputEvent, InputOptions, InputReport, LaunchSpec, PointerState, Rect, Settled,
    Stepped, WindowCommand, WindowEvent, WindowHandle, WindowInfo, WindowKind, WindowWatch,
};

/// How the imagined app answers window commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temper {
    /// Draws each change after this long.
    Willing(Duration),
    /// Never draws maximize, and keeps its window when asked to close.
    Stubborn,
}

#[derive(Clone)]
pub struct FakeHost {
    shared: Arc<Shared>,
    temper: Temper,
    /// Whether it offers a clipboard at all.
    has_clipboard: bool,
    /// Whether it takes input (kept in `sent`) and draws a frame for each.
    takes_input: bool,
    /// The app closes the window input is sent to, and the stream says so
    /// this long after the host stops listing it.
    closes_on_input: Option<Duration>,
    /// The host stops once it has taken this many batches of input.
    stops_on_input: Option<usize>,
    /// It paces frames and settles windows, keeping which it was asked to
    /// settle; the app closes the window input is sent to once it has drawn
    /// its answer, as a dialog's OK does.
    settles_a_dialog: bool,
    /// It takes input and never draws in answer: a wait for a frame drawn
    /// runs out.
    draws_nothing: bool,
}

/// The windows and their stream, shared with the imagined app's tasks, and
/// the clipboard.
struct Shared {
    windows: Mutex<Vec<WindowInfo>>,
    /// The stream's sender; none once the host has stopped.
    events: Mutex<Option<broadcast::Sender<WindowEvent>>>,
    clipboard: Mutex<ClipboardText>,
    pointer: Mutex<(f64, f64)>,
    /// The input sent, batch by batch, with the window it was sent to.
    sent: Mutex<Vec<(WindowHandle, Vec<InputEvent>)>>,
    /// The windows asked to settle, in order.
    settled: Mutex<Vec<WindowHandle>>,
    stopped: AtomicBool,
}

pub const OUTPUT: Rect = Rect::new(0, 0, 1280, 800);

/// A normal window of the fake app; window 1 has the focus.
pub fn window(id: u64, title: &str) -> WindowInfo {
    let r = Rect::new(100, 100, 400, 300);
    WindowInfo {
        app_id: "org.example.Fake".into(),
        pid: Some(4242),
        frame: r,
        surface: r,
        content: r,
        focused: id == 1,
        handle: WindowHandle { id, epoch: 1 },
        title: title.into(),
        kind: WindowKind::Normal,
        parent: None,
        maximized: false,
        fullscreen: false,
        configuring: false,
        minimized: false,
        on_screen: true,
        z: id as u32 - 1,
        scale: 1.0,
    }
}

impl FakeHost {
    /// `capacity` bounds the event stream: a reader that falls further
    /// behind lags.
    pub fn new(windows: Vec<WindowInfo>, temper: Temper, capacity: usize) -> Self {
        FakeHost {
            shared: Arc::new(Shared {
                windows: Mutex::new(windows),
                events: Mutex::new(Some(broadcast::channel(capacity).0)),
                clipboard: Mutex::new(ClipboardText {
                    text: None,
                    generation: 0,
                }),
                pointer: Mutex::new((0.0, 0.0)),
                sent: Mutex::new(Vec::new()),
                settled: Mutex::new(Vec::new()),
                stopped: AtomicBool::new(false),
            }),
            temper,
            has_clipboard: true,
            takes_input: false,
            closes_on_input: None,
            stops_on_input: None,
            settles_a_dialog: false,
            draws_nothing: false,
        }
    }

    /// The same host as one that takes input and draws a frame for each batch.
    pub fn with_input(self) -> Self {
        FakeHost {
            takes_input: true,
            ..self
        }
    }

    /// The same host as one whose app never draws a frame in answer.
    pub fn drawing_nothing(self) -> Self {
        FakeHost {
            draws_nothing: true,
            ..self.with_input()
        }
    }

    /// The same host as one whose app closes the window it takes input in,
    /// the stream telling of it `lag` after the host stops listing it.
    pub fn closing_on_input(self, lag: Duration) -> Self {
        FakeHost {
            closes_on_input: Some(lag),
            ..self.with_input()
        }
    }

    /// The same host as one that stops once it has taken `batches` of input.
    pub fn stopping_on_input(self, batches: usize) -> Self {
        FakeHost {
            stops_on_input: Some(batches),
            ..self.with_input()
        }
    }

    /// The same host as one that paces frames and settles windows, whose
    /// app closes the window input is sent to once it has drawn its answer,
    /// the stream telling of it before that answer comes.
    pub fn settling_a_dialog(self) -> Self {
        FakeHost {
            settles_a_dialog: true,
            ..self.with_input()
        }
    }

    /// The windows asked to settle so far, in order.
    pub fn settled(&self) -> Vec<WindowHandle> {
        self.shared.settled.lock().unwrap().clone()
    }

    /// Every input event sent so far, in order, batches joined.
    pub fn sent(&self) -> Vec<InputEvent> {
        let sent = self.shared.sent.lock().unwrap();
        sent.iter().flat_map(|(_, batch)| batch.clone()).collect()
    }

    /// The same host as one that has no clipboard to offer.
    pub fn without_clipboard(self) -> Self {
        FakeHost {
            has_clipboard: false,
            ..self
        }
    }

    /// Change a window as its app would, and say so on the stream.
    pub fn change(&self, id: u64, change: impl FnOnce(&mut WindowInfo)) {
        let mut windows = self.shared.windows.lock().unwrap();
        if let Some(w) = windows.iter_mut().find(|w| w.handle.id == id) {
            change(w);
            self.shared.say(WindowEvent::Updated(w.clone()));
        }
    }

    /// Put the pointer at a global point.
    pub fn point_at(&self, x: f64, y: f64) {
        *self.shared.pointer.lock().unwrap() = (x, y);
    }

    /// Stop as a compositor whose last app exited does: the stream ends,
    /// saying nothing of the windows that went with it.
    /// From then on every request answers that the host is gone.
    pub fn stop(&self) {
        self.shared.windows.lock().unwrap().clear();
        self.shared.events.lock().unwrap().take();
        self.shared.stopped.store(true, Ordering::SeqCst);
    }

    fn running(&self) -> HostResult<()> {
        if self.shared.stopped.load(Ordering::SeqCst) {
            return Err(HostError::Gone);
        }
        Ok(())
    }

    /// Map a window, and say so on the stream.
    pub fn add(&self, window: WindowInfo) {
        self.shared.windows.lock().unwrap().push(window.clone());
        self.shared.say(WindowEvent::Created(window));
    }

    pub fn remove(&self, id: u64) {
        let mut windows = self.shared.windows.lock().unwrap();
        if let Some(i) = windows.iter().position(|w| w.handle.id == id) {
            let gone = windows.remove(i);
            self.shared.say(WindowEvent::Closed(gone.handle));
        }
    }
}

impl Shared {
    /// Tell the stream's readers, while the host runs.
    fn say(&self, event: WindowEvent) {
        if let Some(events) = self.events.lock().unwrap().as_ref() {
            let _ = events.send(event);
        }
    }
}

/// A capture whose pixel at x, y is (x mod 256, y mod 256, 0x80).
fn pattern(width: u32, height: u32) -> Capture {
    let pixels: Vec<u8> = (0..height)
        .flat_map(|y| (0..width).flat_map(move |x| [x as u8, y as u8, 0x80, 0xff]))
        .collect();
    Capture {
        width,
        height,
        rgba: pixels,
    }
}

fn unsupported<T>() -> HostResult<T> {
    Err(HostError::Unsupported(
        "the fake host does not do this".into(),
    ))
}

#[async_trait::async_trait]
impl Host for FakeHost {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            launch: false,
            capture_covered: false,
            frame_pacing: self.settles_a_dialog,
            window_commands: true,
            input: self.takes_input,
            background_input: self.takes_input,
            settle_threads: false,
            clipboard: self.has_clipboard,
            settle_approximate: false,
        }
    }

    async fn windows(&self) -> HostResult<Vec<WindowInfo>> {
        self.running()?;
        Ok(self.shared.windows.lock().unwrap().clone())
    }

    async fn watch_windows(&self) -> HostResult<WindowWatch> {
        let windows = self.shared.windows.lock().unwrap();
        Ok(WindowWatch {
            windows: windows.clone(),
            events: match self.shared.events.lock().unwrap().as_ref() {
                Some(events) => events.subscribe(),
                // A stopped host's stream has ended.
                None => broadcast::channel(1).1,
            },
        })
    }

    async fn launch(&self, _spec: LaunchSpec) -> HostResult<AppInfo> {
        unsupported()
    }

    async fn window_command(
        &self,
        window: WindowHandle,
        command: WindowCommand,
    ) -> HostResult<Option<WindowInfo>> {
        let now = self
            .shared
            .windows
            .lock()
            .unwrap()
            .iter()
            .find(|w| w.handle == window)
            .cloned()
            .ok_or(HostError::NoWindow(window))?;
        let Temper::Willing(delay) = self.temper else {
            return Ok(Some(now));
        };
        let host = self.clone();
        let id = window.id;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            match command {
                WindowCommand::Maximize => host.change(id, |w| {
                    w.maximized = true;
                    (w.frame, w.surface, w.content) = (OUTPUT, OUTPUT, OUTPUT);
                }),
                WindowCommand::Close => host.remove(id),
                _ => {}
            }
        });
        Ok(Some(now))
    }

    async fn wait_frames(
        &self,
        window: WindowHandle,
        until: FrameWait,
        timeout: Duration,
    ) -> HostResult<Settled> {
        if !self.takes_input {
            return unsupported();
        }
        self.running()?;
        if self.draws_nothing && until == FrameWait::Drawn {
            return Err(HostError::Timeout(timeout, "no frame was drawn".into()));
        }
        if until.settles() {
            self.shared.settled.lock().unwrap().push(window);
        }
        let drawn = Ok(Settled {
            window,
            commits: 0,
            waited: Duration::ZERO,
        });
        if self.settles_a_dialog && until == FrameWait::Drawn {
            // The answer drawn, the app closes the window; the session
            // hears of it before that answer comes.
            self.remove(window.id);
            tokio::time::sleep(Duration::from_millis(50)).await;
            return drawn;
        }
        if !self
            .shared
            .windows
            .lock()
            .unwrap()
            .iter()
            .any(|w| w.handle == window)
        {
            return Err(HostError::NoWindow(window));
        }
        // Each batch of input was drawn as it was taken.
        drawn
    }

    async fn input(
        &self,
        window: WindowHandle,
        events: Vec<InputEvent>,
        _options: InputOptions,
    ) -> HostResult<InputReport> {
        if !self.takes_input {
            return unsupported();
        }
        self.running()?;
        let batches = {
            let mut sent = self.shared.sent.lock().unwrap();
            sent.push((window, events));
            sent.len()
        };
        if self.stops_on_input.is_some_and(|n| batches >= n) {
            self.stop();
        }
        if let Some(lag) = self.closes_on_input {
            let mut windows = self.shared.windows.lock().unwrap();
            windows.retain(|w| w.handle != window);
            let shared = self.shared.clone();
            tokio::spawn(async move {
                tokio::time::sleep(lag).await;
                shared.say(WindowEvent::Closed(window));
            });
        }
        Ok(InputReport {
            activated: false,
            text_paths: Vec::new(),
        })
    }

    async fn commits(&self, _window: WindowHandle) -> HostResult<u64> {
        if !self.takes_input {
            return unsupported();
        }
        Ok(self.shared.sent.lock().unwrap().len() as u64)
    }

    async fn step(&self, _frames: u32) -> HostResult<Stepped> {
        unsupported()
    }

    async fn capture_window(&self, window: WindowHandle) -> HostResult<Capture> {
        let windows = self.shared.windows.lock().unwrap();
        let w = windows
            .iter()
            .find(|w| w.handle == window)
            .ok_or(HostError::NoWindow(window))?;
        let side = |points: i32| (f64::from(points) * w.scale).round() as u32;
        Ok(pattern(side(w.content.width), side(w.content.height)))
    }

    async fn capture_output(&self) -> HostResult<Capture> {
        Ok(pattern(OUTPUT.width as u32, OUTPUT.height as u32))
    }

    async fn displays(&self) -> HostResult<Vec<DisplayInfo>> {
        Ok(vec![DisplayInfo {
            id: 1,
            name: "FAKE-1".into(),
            primary: true,
            bounds: OUTPUT,
            pixel_width: OUTPUT.width as u32,
            pixel_height: OUTPUT.height as u32,
            scale: 1.0,
            refresh_mhz: 60_000,
        }])
    }

    async fn pointer(&self) -> HostResult<PointerState> {
        let (x, y) = *self.shared.pointer.lock().unwrap();
        Ok(PointerState {
            x,
            y,
            buttons: Vec::new(),
            window: None,
        })
    }

    async fn clipboard(&self) -> HostResult<ClipboardText> {
        if !self.has_clipboard {
            return unsupported();
        }
        Ok(self.shared.clipboard.lock().unwrap().clone())
    }

    async fn set_clipboard(&self, text: String) -> HostResult<u64> {
        if !self.has_clipboard {
            return unsupported();
        }
        let mut clipboard = self.shared.clipboard.lock().unwrap();
        clipboard.text = Some(text);
        clipboard.generation += 1;
        Ok(clipboard.generation)
    }

    async fn shutdown(&self) {}
}
