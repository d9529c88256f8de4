//! The Host trait and its vocabulary: what a host of apps under test (Wayrig's
//! own compositor, or a compositor Wayrig attaches to) offers the services.
//!
//! Everything here is plain data in logical points; no Wayland or D-Bus type
//! crosses this boundary, so every protocol face can stand on any host.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

pub mod chromium;
pub mod clipboard_pipe;
pub mod devtools;
pub mod firefox;
pub mod launch;
pub mod rdp;
pub mod threads;

/// A window as the host knows it: a stable id plus an epoch that changes each
/// time the same surface is unmapped and mapped again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WindowHandle {
    pub id: u64,
    pub epoch: u32,
}

impl fmt::Display for WindowHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.id, self.epoch)
    }
}

/// A rectangle in logical points (global unless said otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: i32, height: i32) -> Self {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.width <= 0 || self.height <= 0
    }

    pub fn intersects(&self, other: &Rect) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && self.x < other.x + other.width
            && other.x < self.x + self.width
            && self.y < other.y + other.height
            && other.y < self.y + self.height
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, other: &Rect) -> Rect {
        let (x, y) = (self.x.min(other.x), self.y.min(other.y));
        let right = (self.x + self.width).max(other.x + other.width);
        let bottom = (self.y + self.height).max(other.y + other.height);
        Rect::new(x, y, right - x, bottom - y)
    }

    /// `other` lies wholly inside this rectangle.
    pub fn contains_rect(&self, other: &Rect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.x + other.width <= self.x + self.width
            && other.y + other.height <= self.y + self.height
    }

    pub fn contains_point(&self, x: f64, y: f64) -> bool {
        x >= self.x as f64
            && y >= self.y as f64
            && x < (self.x + self.width) as f64
            && y < (self.y + self.height) as f64
    }

    /// The parts of `self` not covered by `other`, as up to four rectangles.
    pub fn subtract(&self, other: &Rect) -> Vec<Rect> {
        if !self.intersects(other) {
            return vec![*self];
        }
        let (x1, y1) = (self.x, self.y);
        let (x2, y2) = (self.x + self.width, self.y + self.height);
        let (ox1, oy1) = (other.x.max(x1), other.y.max(y1));
        let (ox2, oy2) = (
            (other.x + other.width).min(x2),
            (other.y + other.height).min(y2),
        );
        let pieces = [
            Rect::new(x1, y1, x2 - x1, oy1 - y1),
            Rect::new(x1, oy2, x2 - x1, y2 - oy2),
            Rect::new(x1, oy1, ox1 - x1, oy2 - oy1),
            Rect::new(ox2, oy1, x2 - ox2, oy2 - oy1),
        ];
        pieces.into_iter().filter(|r| !r.is_empty()).collect()
    }
}

/// What kind of surface a window is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// A top-level window without a parent.
    Normal,
    /// A top-level window with a parent (transient for it).
    Dialog,
    /// A popup that grabbed input: a menu, a popover, a combo box list.
    Menu,
    /// A popup without a grab: tooltips and the like.
    Tooltip,
}

/// The full state of one window, as the host is the authority on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowInfo {
    pub handle: WindowHandle,
    pub title: String,
    pub app_id: String,
    /// Process id of the client (its credentials, or the pid the host spawned).
    pub pid: Option<u32>,
    pub kind: WindowKind,
    /// The window this one belongs to (dialogs and popups).
    pub parent: Option<WindowHandle>,
    /// Everything the window draws, shadows and client-side decorations included.
    pub frame: Rect,
    /// The window's own surface, without its subsurfaces. Toolkits that draw
    /// their decorations in subsurfaces (winit) measure their elements from it.
    pub surface: Rect,
    /// The window's content as the client declares it (xdg window geometry);
    /// coordinates "relative to the window" are relative to its top-left corner.
    pub content: Rect,
    pub maximized: bool,
    pub fullscreen: bool,
    /// The app was asked for a new state (size, maximized, ...) that it has
    /// not yet acknowledged and drawn; the state above is what it drew last.
    pub configuring: bool,
    pub minimized: bool,
    pub focused: bool,
    /// Some part of the window can be seen on the output now.
    pub on_screen: bool,
    /// Stacking position, 0 is the front-most window.
    pub z: u32,
    /// Device pixels per logical point for this window's buffers.
    pub scale: f64,
}

/// A change to the set of windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WindowEvent {
    Created(WindowInfo),
    /// The window's full new state.
    Updated(WindowInfo),
    Closed(WindowHandle),
}

/// A snapshot of the windows and the events that follow it, taken atomically.
#[derive(Debug)]
pub struct WindowWatch {
    pub windows: Vec<WindowInfo>,
    pub events: broadcast::Receiver<WindowEvent>,
}

/// What can be asked of one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum WindowCommand {
    /// Raise and focus.
    Activate,
    /// Move the content's top-left corner to (x, y).
    Move {
        x: i32,
        y: i32,
    },
    /// Ask the client for a content size.
    Resize {
        width: i32,
        height: i32,
    },
    Minimize,
    Maximize,
    /// Undo minimize, maximize and fullscreen.
    Restore,
    Fullscreen,
    /// Ask the client to close (xdg_toplevel.close); it may refuse.
    Close,
    /// End the client: disconnect it and kill its process.
    ForceClose,
}

/// How the host paces frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// A virtual output at its refresh rate.
    #[default]
    Realtime,
    /// A frame callback is answered as soon as its frame is taken.
    Fast,
    /// Frames advance only when a client asks: by a step, or by waiting on
    /// a window's frames (an input's answer, an idle).
    Step,
}

impl std::fmt::Display for Pacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pacing::Realtime => "realtime",
            Pacing::Fast => "fast",
            Pacing::Step => "step",
        })
    }
}

impl std::str::FromStr for Pacing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "realtime" => Ok(Pacing::Realtime),
            "fast" => Ok(Pacing::Fast),
            "step" => Ok(Pacing::Step),
            other => Err(format!(
                "unknown pacing mode {other:?} (expected realtime, fast or step)"
            )),
        }
    }
}

/// An app to start in the host's session; the argument vector runs without a shell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchSpec {
    pub argv: Vec<String>,
    /// Extra environment on top of what the host sets up.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Leave focus where it is: the app's windows map unfocused, behind.
    pub background: bool,
}

/// An app the host started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppInfo {
    pub pid: u32,
}

/// A rendered image as raw pixels: encoded once, by whoever needs a file
/// format, and only then.
#[derive(Clone, PartialEq, Eq)]
pub struct Capture {
    /// Size in device pixels.
    pub width: u32,
    pub height: u32,
    /// Opaque pixels, row-major without padding, the bytes R, G, B, A each.
    pub rgba: Vec<u8>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("rgba_bytes", &self.rgba.len())
            .finish()
    }
}

/// What a settled window looked like when settle answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    pub window: WindowHandle,
    /// Frames the window committed while settle waited.
    pub commits: u64,
    pub waited: Duration,
}

/// What a wait on a window's frames waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameWait {
    /// Settled: no frame asked for and not drawn, no configure unacknowledged,
    /// input read, and quiet since (what `idle` waits for).
    Settled,
    /// Settled after a request the session just made (input, an action
    /// through accessibility): as `Settled`, but a timer the app may have
    /// set in answer (a search entry's delay) is waited out even while its
    /// frame clock's wake-ups hide it.
    Effect,
    /// The app has read its input and drawn what it drew in answer: its first
    /// commit after the input, or nothing, when it asks for no frame. Like
    /// `Effect`, it follows a request, which a later `Settled` wait honours.
    Drawn,
    /// The window has committed this many new frames.
    Frames(u32),
    /// The window (its popups too) has committed more frames in all than
    /// this count, as `Host::commits` gives it: a wait from a baseline read
    /// before, so that a commit made in between is not missed.
    Past(u64),
}

impl FrameWait {
    /// Whether the wait is for the window to settle (`Settled`, `Effect`).
    pub fn settles(self) -> bool {
        matches!(self, Self::Settled | Self::Effect)
    }
}

/// The result of a step in step pacing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stepped {
    /// Frames advanced.
    pub frames: u32,
    /// Frame callbacks answered over those frames, over all windows.
    pub callbacks: u64,
}

/// A pointer button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    #[default]
    Left,
    Right,
    Middle,
}

/// Modifier keys held during an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Mods {
    pub shift: bool,
    pub ctrl: bool,
    pub alt: bool,
    #[serde(rename = "super")]
    pub logo: bool,
}

impl Mods {
    pub fn any(&self) -> bool {
        self.shift || self.ctrl || self.alt || self.logo
    }
}

/// One input event; coordinates are logical points relative to the window's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum InputEvent {
    PointerMove {
        x: f64,
        y: f64,
        #[serde(default)]
        mods: Mods,
    },
    /// Presses `button`; with `clicks` > 1 the earlier clicks of a double or
    /// triple click are sent first.
    PointerDown {
        x: f64,
        y: f64,
        #[serde(default)]
        button: Button,
        #[serde(default = "one")]
        clicks: u32,
        #[serde(default)]
        mods: Mods,
    },
    PointerUp {
        x: f64,
        y: f64,
        #[serde(default)]
        button: Button,
        #[serde(default = "one")]
        clicks: u32,
        #[serde(default)]
        mods: Mods,
    },
    /// A move, then a press and a release for each click.
    Click {
        x: f64,
        y: f64,
        #[serde(default)]
        button: Button,
        #[serde(default = "one")]
        clicks: u32,
        #[serde(default)]
        mods: Mods,
    },
    /// Scrolls by dx, dy logical points: wheel clicks, or touchpad-style when `precise`.
    Wheel {
        x: f64,
        y: f64,
        dx: f64,
        dy: f64,
        #[serde(default)]
        precise: bool,
        #[serde(default)]
        mods: Mods,
    },
    /// A key and its modifiers as menu accelerators write them (`Shift+Tab`).
    KeyDown {
        key: String,
    },
    KeyUp {
        key: String,
    },
    /// Presses and releases the key with its modifiers.
    Key {
        key: String,
    },
    /// Any Unicode text, typed into the focused widget.
    Text {
        text: String,
    },
}

fn one() -> u32 {
    1
}

/// How input reaches a window that is not focused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputOptions {
    /// Raise and focus the window first (as a person would), or deliver to it
    /// where it is, giving it keyboard focus only.
    pub activate: bool,
    /// Once the input is sent, put the pointer and the keyboard focus back
    /// where they were (background delivery): the window gets the input
    /// without taking the pointer or the focus from where a person left them.
    #[serde(default)]
    pub leave_focus: bool,
}

impl InputOptions {
    /// Input to a window where it is, leaving the pointer and the focus
    /// where they were.
    pub fn background() -> Self {
        InputOptions {
            activate: false,
            leave_focus: true,
        }
    }
}

impl Default for InputOptions {
    fn default() -> Self {
        InputOptions {
            activate: true,
            leave_focus: false,
        }
    }
}

/// How a text event was typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextPath {
    /// Committed by Wayrig's input method through text-input-v3.
    InputMethod,
    /// Key presses on a temporary keymap holding the text's characters.
    Keymap,
}

/// What happened to an input request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InputReport {
    /// The window was raised and focused for this input.
    pub activated: bool,
    /// The path each text event took, in order.
    pub text_paths: Vec<TextPath>,
}

/// One output (monitor) of the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplayInfo {
    /// Stable for the life of the output.
    pub id: u32,
    /// The output's connector-like name ("WAYRIG-1", "HDMI-A-1").
    pub name: String,
    pub primary: bool,
    /// Where it sits in the global space, logical points.
    pub bounds: Rect,
    /// Its size in device pixels.
    pub pixel_width: u32,
    pub pixel_height: u32,
    /// Device pixels per logical point.
    pub scale: f64,
    /// Refresh rate in millihertz (60 Hz is 60000).
    pub refresh_mhz: u32,
}

/// Where the pointer is and what it holds down, as the seat has it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointerState {
    /// Global position, logical points.
    pub x: f64,
    pub y: f64,
    /// Buttons pressed and not released.
    pub buttons: Vec<Button>,
    /// The window whose surface has pointer focus.
    pub window: Option<WindowHandle>,
}

/// The most clipboard text a host reads or a session offers: 1 MiB.
pub const CLIPBOARD_TEXT_LIMIT: usize = 1 << 20;

/// The clipboard's text as the host has it now, whoever owns the selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClipboardText {
    /// `None` when the clipboard is empty or its owner offers no text type.
    pub text: Option<String>,
    /// Changes whenever the clipboard's content changes: an app or the host
    /// set it, or it was cleared.
    pub generation: u64,
}

/// What the host can do; faces answer `unsupported` for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    pub launch: bool,
    pub capture_covered: bool,
    pub frame_pacing: bool,
    pub window_commands: bool,
    pub input: bool,
    /// Input can reach a window without raising or focusing it, the
    /// pointer left where it was (cua's background delivery).
    pub background_input: bool,
    /// Settle waits for the app's running threads too, not only its frames.
    pub settle_threads: bool,
    /// The clipboard's text can be read and set.
    pub clipboard: bool,
    /// Settle is inferred from outside (the output going quiet), not known
    /// from the apps' own frames and configures.
    pub settle_approximate: bool,
}

/// One capability a host lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    Launch,
    CaptureCovered,
    FramePacing,
    WindowCommands,
    Input,
    BackgroundInput,
    Clipboard,
}

impl Capabilities {
    /// Whether the host has `capability`.
    pub fn has(&self, capability: Capability) -> bool {
        match capability {
            Capability::Launch => self.launch,
            Capability::CaptureCovered => self.capture_covered,
            Capability::FramePacing => self.frame_pacing,
            Capability::WindowCommands => self.window_commands,
            Capability::Input => self.input,
            Capability::BackgroundInput => self.background_input,
            Capability::Clipboard => self.clipboard,
        }
    }
}

/// Why a host lacks a capability, in a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    pub capability: Capability,
    pub reason: String,
}

/// The host's errors, in the host's terms; faces map them to their codes.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum HostError {
    #[error("no window {0}")]
    NoWindow(WindowHandle),
    #[error("window {0} is stale: it was unmapped and mapped again as epoch {1}")]
    StaleWindow(WindowHandle, u32),
    #[error("timed out after {0:?}: {1}")]
    Timeout(Duration, String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("cannot launch {argv0:?}: {reason}")]
    Launch { argv0: String, reason: String },
    #[error("{0}")]
    Failed(String),
    #[error("the host has shut down")]
    Gone,
}

pub type HostResult<T> = Result<T, HostError>;

/// Where a window's pixels changed over some commits, as the app told the
/// compositor when it committed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Only within these rectangles, in the window's content coordinates
    /// (logical points, from the content's top left corner); none at all
    /// when empty. The content kept its size and scale.
    Within(Vec<Rect>),
    /// Anything may have changed or moved: the window was laid out anew
    /// (resized or rescaled), or a popup or subsurface drew.
    Anywhere,
}

/// The one interface the services use to reach a host of apps.
#[async_trait::async_trait]
pub trait Host: Send + Sync {
    fn capabilities(&self) -> Capabilities;

    /// Why each capability this host lacks is missing (none by default).
    fn limits(&self) -> Vec<Limit> {
        Vec::new()
    }

    /// Windows, front to back.
    async fn windows(&self) -> HostResult<Vec<WindowInfo>>;

    /// The windows and a stream of every change after that snapshot.
    async fn watch_windows(&self) -> HostResult<WindowWatch>;

    async fn launch(&self, spec: LaunchSpec) -> HostResult<AppInfo>;

    /// Run a command on a window and answer with its state afterwards
    /// (`None` when the command ended the window).
    async fn window_command(
        &self,
        window: WindowHandle,
        command: WindowCommand,
    ) -> HostResult<Option<WindowInfo>>;

    /// Wait on the window's frames (see `FrameWait`); `Timeout` says why not.
    async fn wait_frames(
        &self,
        window: WindowHandle,
        until: FrameWait,
        timeout: Duration,
    ) -> HostResult<Settled>;

    /// Wait until the window asks for no frame it has not drawn, has no
    /// unacknowledged configure and has answered a ping sent after its last input.
    async fn settle(&self, window: WindowHandle, timeout: Duration) -> HostResult<Settled> {
        self.wait_frames(window, FrameWait::Settled, timeout).await
    }

    /// Deliver input events to a window, in order, as one batch before its next frame.
    async fn input(
        &self,
        window: WindowHandle,
        events: Vec<InputEvent>,
        options: InputOptions,
    ) -> HostResult<InputReport>;

    /// How many times the window and its popups have committed a new state:
    /// what it shows cannot have changed while this stays the same.
    async fn commits(&self, window: WindowHandle) -> HostResult<u64>;

    /// Keep frame callbacks from the app of `window` for at most `hold`
    /// (zero: give them again), so an app that animates answers a long read
    /// of its elements sooner: it draws nothing meanwhile, and the read
    /// matches what it last drew. A window someone waits on (settle, input,
    /// steps) still gets its frames. Hosts that pace no frames hold none.
    async fn hold_frames(&self, _window: WindowHandle, _hold: Duration) -> HostResult<()> {
        Ok(())
    }

    /// Where the window's pixels may have changed since its commit count
    /// was `since` (as `commits` or this gave it), with the commit count now:
    /// what lies wholly outside the rectangles has not moved. A host that
    /// cannot tell says `Anywhere`.
    async fn damage_since(&self, window: WindowHandle, _since: u64) -> HostResult<(Damage, u64)> {
        Ok((Damage::Anywhere, self.commits(window).await?))
    }

    /// Advance `frames` frames (step pacing only).
    async fn step(&self, frames: u32) -> HostResult<Stepped>;

    /// The window's surface tree (subsurfaces and popups) over its content rectangle.
    async fn capture_window(&self, window: WindowHandle) -> HostResult<Capture>;

    /// The whole output as a person would see it.
    async fn capture_output(&self) -> HostResult<Capture>;

    /// The outputs, primary first.
    async fn displays(&self) -> HostResult<Vec<DisplayInfo>>;

    /// The pointer as the seat has it now.
    async fn pointer(&self) -> HostResult<PointerState>;

    /// The window a pointer event at `(x, y)` of `window`'s content would
    /// reach: the window itself, or a popup of it that lies over the point.
    async fn window_at(&self, window: WindowHandle, _x: f64, _y: f64) -> HostResult<WindowHandle> {
        Err(HostError::Unsupported(format!(
            "this host cannot tell which surface of window {window} takes a point"
        )))
    }

    /// Move the pointer to a global point no window lies under (the empty
    /// desktop): it leaves the surface it was over. A point over a window is
    /// refused; input to that window moves the pointer there.
    async fn move_pointer_to_desktop(&self, _x: f64, _y: f64) -> HostResult<PointerState> {
        Err(HostError::Unsupported(
            "this host cannot move the pointer where no window is".into(),
        ))
    }

    /// Evaluate `script` in the web page `window` shows and answer its
    /// value as JSON; a script that threw fails, saying what it threw.
    async fn evaluate(
        &self,
        window: WindowHandle,
        _script: String,
        _limit: Duration,
    ) -> HostResult<serde_json::Value> {
        Err(HostError::Unsupported(format!(
            "this host cannot evaluate scripts: window {} shows no page it can reach",
            window.id
        )))
    }

    /// Record the session into `recording` from now on (its video, input
    /// and window events), or stop recording with `None`.
    async fn record(
        &self,
        _recording: Option<std::sync::Arc<wayrig_record::Recording>>,
    ) -> HostResult<()> {
        Err(HostError::Unsupported(
            "this host cannot record its output".into(),
        ))
    }

    /// The clipboard's text (the data device selection), whoever owns it.
    async fn clipboard(&self) -> HostResult<ClipboardText>;

    /// Make the host the clipboard's owner, offering `text` in the usual text
    /// types; answers the clipboard's new generation.
    async fn set_clipboard(&self, text: String) -> HostResult<u64>;

    /// Stop the host and every app it started.
    async fn shutdown(&self);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(rects: &[Rect]) -> i32 {
        rects.iter().map(|r| r.width * r.height).sum()
    }

    #[test]
    fn subtract_disjoint_keeps_the_rect() {
        let a = Rect::new(0, 0, 10, 10);
        assert_eq!(a.subtract(&Rect::new(20, 20, 5, 5)), vec![a]);
    }

    #[test]
    fn subtract_covering_leaves_nothing() {
        let a = Rect::new(5, 5, 10, 10);
        assert!(a.subtract(&Rect::new(0, 0, 100, 100)).is_empty());
    }

    #[test]
    fn subtract_middle_leaves_a_ring() {
        let a = Rect::new(0, 0, 10, 10);
        let ring = a.subtract(&Rect::new(3, 3, 4, 4));
        assert_eq!(area(&ring), 100 - 16);
        for (i, r) in ring.iter().enumerate() {
            for s in &ring[i + 1..] {
                assert!(!r.intersects(s), "{r:?} overlaps {s:?}");
            }
        }
    }

    #[test]
    fn subtract_corner() {
        let a = Rect::new(0, 0, 10, 10);
        let rest = a.subtract(&Rect::new(5, 5, 10, 10));
        assert_eq!(area(&rest), 75);
    }

    #[test]
    fn input_events_deserialize_with_defaults() {
        let events: Vec<InputEvent> = serde_json::from_str(
            r#"[{"type": "click", "x": 200, "y": 99},
                {"type": "pointerDown", "x": 1, "y": 2, "button": "right", "clicks": 2,
                 "mods": {"shift": true}},
                {"type": "wheel", "x": 0, "y": 0, "dx": 0, "dy": 30, "precise": true},
                {"type": "text", "text": "Grace"},
                {"type": "key", "key": "CmdOrCtrl+A"}]"#,
        )
        .unwrap();
        assert_eq!(
            events[0],
            InputEvent::Click {
                x: 200.0,
                y: 99.0,
                button: Button::Left,
                clicks: 1,
                mods: Mods::default()
            }
        );
        assert!(matches!(
            events[1],
            InputEvent::PointerDown {
                button: Button::Right,
                clicks: 2,
                mods: Mods { shift: true, .. },
                ..
            }
        ));
        assert!(matches!(events[2], InputEvent::Wheel { precise: true, .. }));
        assert_eq!(
            events[4],
            InputEvent::Key {
                key: "CmdOrCtrl+A".into()
            }
        );
    }

    #[test]
    fn pacing_parses_and_rejects() {
        for pacing in [Pacing::Realtime, Pacing::Fast, Pacing::Step] {
            assert_eq!(pacing.to_string().parse::<Pacing>(), Ok(pacing));
        }
        assert!("slow".parse::<Pacing>().unwrap_err().contains("slow"));
    }
}
