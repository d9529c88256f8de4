//! Input requests waiting their turn, each checked whole against its window and
//! the session keymap before any of it is sent, and the event time they keep.
//!
//! Sending them through the seat is `input.rs`'s; this is what needs no seat.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use smithay::backend::input::ButtonState;
use smithay::desktop::{utils::under_from_surface_tree, PopupKind, WindowSurfaceType};
use smithay::input::keyboard::{Keycode, Keysym};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Point};
use tokio::sync::oneshot;
use wayrig_host::{
    Button, HostError, HostResult, InputEvent, InputOptions, InputReport, Mods, Rect, WindowHandle,
};

use crate::keys::{self, Chord, KeyPosition, SessionKeymap};
use crate::rig::windows::{Surface, Windows};

/// Linux input event codes of the pointer buttons.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
/// Event time between two click series, longer than any toolkit's double-click
/// time, so that a request's clicks never continue the previous request's.
const CLICK_SERIES_GAP_MS: u32 = 1000;
/// Event time between the clicks of one series, as a quick person's.
const CLICK_PRESS_GAP_MS: u32 = 60;
/// How long an input request may wait on its client before it fails.
pub const INPUT_WAIT_LIMIT: Duration = Duration::from_secs(5);

fn button_code(button: Button) -> u32 {
    match button {
        Button::Left => BTN_LEFT,
        Button::Right => BTN_RIGHT,
        Button::Middle => BTN_MIDDLE,
    }
}

/// Where a pointer event lands: the surface under it and that surface's global origin.
#[derive(Debug, Clone)]
pub struct Target {
    pub global: Point<f64, Logical>,
    pub surface: WlSurface,
    pub origin: Point<f64, Logical>,
}

/// A key resolved on the session keymap, with the modifiers it is sent with.
#[derive(Debug, Clone)]
pub struct ResolvedKey {
    pub mods: Vec<Keycode>,
    pub key: Keycode,
}

/// One checked step of an input request.
#[derive(Debug, Clone)]
pub enum Step {
    Move(Target, Vec<Keycode>),
    Buttons {
        target: Target,
        mods: Vec<Keycode>,
        button: u32,
        /// Press-release pairs, then an optional last press or release.
        pairs: u32,
        last: Option<ButtonState>,
    },
    Wheel {
        target: Target,
        mods: Vec<Keycode>,
        dx: f64,
        dy: f64,
        precise: bool,
    },
    KeyDown(ResolvedKey),
    KeyUp(ResolvedKey),
    Key(ResolvedKey),
    /// Text to type; `continued` when it is the rest of a text already reported.
    Text {
        text: String,
        continued: bool,
    },
}

/// An input request being delivered. It waits only where a toolkit must read one
/// event before the next: GTK scrolls only once it has seen the pointer enter.
pub struct InputJob {
    pub handle: WindowHandle,
    pub window: u64,
    pub steps: VecDeque<Step>,
    pub options: InputOptions,
    pub needs_keyboard: bool,
    pub started: bool,
    pub report: InputReport,
    /// Moment of the ping whose answer the job waits for.
    pub waiting_since: Option<u64>,
    /// The window's commit count when the job sent a key between two texts
    /// committed through text input, and until when the next text waits for
    /// the client to draw past it. A client commits its own text input state
    /// as it draws the key's effect (foot: its cursor's place, right after
    /// its surface, on a render timer of its own), and one whose commit
    /// crosses our `done` takes it for stale and drops the text.
    pub drawn_after: Option<(u64, Instant)>,
    /// Where the pointer and the keyboard focus were before a background
    /// job: put back once it is sent.
    pub prior: Option<Prior>,
    pub deadline: Instant,
    pub reply: oneshot::Sender<HostResult<InputReport>>,
}

/// Where the pointer was (and the window under it) and which surface had
/// the keyboard focus, before background input.
pub struct Prior {
    pub pointer: Point<f64, Logical>,
    pub pointer_window: Option<WindowHandle>,
    pub keyboard: Option<WlSurface>,
}

/// Input requests in arrival order, the front one being delivered.
pub struct InputQueue {
    pub jobs: VecDeque<InputJob>,
    /// The session keymap, for finding keys.
    keymap: SessionKeymap,
    /// Time stamp of the last input event sent (ms); input time never goes back.
    event_time: u32,
    /// Time stamp of the last button press, to keep click series apart.
    last_press_time: Option<u32>,
    /// Pointer buttons pressed and not yet released, in press order.
    buttons_down: Vec<u32>,
    /// Keys or buttons were sent that the client may not have read yet. GTK
    /// queues those but applies an input-method commit as it reads it, so a
    /// commit sent now could overtake them: it waits for a ping's answer.
    pub unread_keys: bool,
    /// The focused field is a terminal's, as its text-input says (set by
    /// the input method): its text goes as keys. foot drops a commit whose
    /// serial its own cursor update crossed (the shell's prompt drawn as
    /// the text came), and a terminal takes keys as they are typed.
    pub terminal_field: Arc<AtomicBool>,
}

impl InputQueue {
    pub fn new() -> Result<Self, String> {
        Ok(InputQueue {
            jobs: VecDeque::new(),
            keymap: SessionKeymap::new()?,
            event_time: 0,
            last_press_time: None,
            buttons_down: Vec::new(),
            unread_keys: false,
            terminal_field: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The job at the front, the one being delivered; there must be one.
    pub fn front_job(&mut self) -> &mut InputJob {
        self.jobs.front_mut().expect("job")
    }

    /// Check a whole input request and queue it; nothing is sent unless all of
    /// it is valid. Requests are delivered in the order they arrive. Returns
    /// whether it was queued; if not, `reply` has had the error.
    pub fn push(
        &mut self,
        windows: &Windows,
        handle: WindowHandle,
        events: &[InputEvent],
        options: InputOptions,
        reply: oneshot::Sender<HostResult<InputReport>>,
    ) -> bool {
        match self.plan_input(windows, handle, events) {
            Ok((window, steps)) => {
                let needs_keyboard = steps.iter().any(|s| match s {
                    Step::Move(_, mods) | Step::Buttons { mods, .. } | Step::Wheel { mods, .. } => {
                        !mods.is_empty()
                    }
                    _ => true,
                });
                self.jobs.push_back(InputJob {
                    handle,
                    window,
                    steps: steps.into(),
                    options,
                    needs_keyboard,
                    started: false,
                    report: InputReport::default(),
                    waiting_since: None,
                    drawn_after: None,
                    prior: None,
                    deadline: Instant::now() + INPUT_WAIT_LIMIT,
                    reply,
                });
                true
            }
            Err(e) => {
                let _ = reply.send(Err(e));
                false
            }
        }
    }

    fn plan_input(
        &self,
        windows: &Windows,
        handle: WindowHandle,
        events: &[InputEvent],
    ) -> HostResult<(u64, Vec<Step>)> {
        if events.is_empty() {
            return Err(HostError::InvalidRequest(
                "input needs at least one event".into(),
            ));
        }
        let id = windows.resolve(handle)?;
        let steps = events
            .iter()
            .enumerate()
            .map(|(i, ev)| {
                self.plan(windows, id, ev)
                    .map_err(|e| HostError::InvalidRequest(format!("event {i}: {e}")))
            })
            .collect::<HostResult<Vec<Step>>>()?;
        Ok((id, steps))
    }

    fn plan(&self, windows: &Windows, id: u64, event: &InputEvent) -> Result<Step, String> {
        Ok(match event {
            InputEvent::PointerMove { x, y, mods } => {
                Step::Move(target(windows, id, *x, *y)?, self.mod_keys(mods)?)
            }
            InputEvent::PointerDown {
                x,
                y,
                button,
                clicks,
                mods,
            } => Step::Buttons {
                target: target(windows, id, *x, *y)?,
                mods: self.mod_keys(mods)?,
                button: button_code(*button),
                pairs: clicks_checked(*clicks)? - 1,
                last: Some(ButtonState::Pressed),
            },
            InputEvent::PointerUp {
                x, y, button, mods, ..
            } => Step::Buttons {
                target: target(windows, id, *x, *y)?,
                mods: self.mod_keys(mods)?,
                button: button_code(*button),
                pairs: 0,
                last: Some(ButtonState::Released),
            },
            InputEvent::Click {
                x,
                y,
                button,
                clicks,
                mods,
            } => Step::Buttons {
                target: target(windows, id, *x, *y)?,
                mods: self.mod_keys(mods)?,
                button: button_code(*button),
                pairs: clicks_checked(*clicks)?,
                last: None,
            },
            InputEvent::Wheel {
                x,
                y,
                dx,
                dy,
                precise,
                mods,
            } => {
                if !dx.is_finite() || !dy.is_finite() {
                    return Err(format!("wheel needs finite dx, dy (got {dx}, {dy})"));
                }
                Step::Wheel {
                    target: target(windows, id, *x, *y)?,
                    mods: self.mod_keys(mods)?,
                    dx: *dx,
                    dy: *dy,
                    precise: *precise,
                }
            }
            InputEvent::KeyDown { key } => Step::KeyDown(self.resolve_key(key)?),
            InputEvent::KeyUp { key } => Step::KeyUp(self.resolve_key(key)?),
            InputEvent::Key { key } => Step::Key(self.resolve_key(key)?),
            InputEvent::Text { text } => {
                keys::check_text(text)?;
                Step::Text {
                    text: text.clone(),
                    continued: false,
                }
            }
        })
    }

    fn key_position(&self, keysym: Keysym, name: &str) -> Result<KeyPosition, String> {
        self.keymap.find(keysym).ok_or_else(|| {
            format!("key {name:?} is not on the keyboard; type it with a text event")
        })
    }

    fn mod_keys(&self, mods: &Mods) -> Result<Vec<Keycode>, String> {
        keys::modifier_keysyms(mods)
            .into_iter()
            .map(|sym| self.key_position(sym, "modifier").map(|p| p.keycode))
            .collect()
    }

    /// A key as menu accelerators write it, found on the session keymap.
    pub fn resolve_key(&self, name: &str) -> Result<ResolvedKey, String> {
        let Chord { mut mods, keysym } = keys::parse_chord(name)?;
        let pos = self.key_position(keysym, name)?;
        mods.shift |= pos.shifted;
        Ok(ResolvedKey {
            mods: self.mod_keys(&mods)?,
            key: pos.keycode,
        })
    }

    /// Event time in ms for the compositor clock at `now`, never going backwards.
    pub fn event_time(&mut self, now: Duration) -> u32 {
        self.event_time = self.event_time.max(now.as_millis() as u32);
        self.event_time
    }

    /// Start a click series at `now`: its first press comes late enough after
    /// the last press that toolkits count it as a new click, not a double click.
    pub fn begin_click_series(&mut self, now: Duration) {
        let now = self.event_time(now);
        if let Some(last) = self.last_press_time {
            self.event_time = now.max(last.wrapping_add(CLICK_SERIES_GAP_MS));
        }
    }

    /// Space the next click of a series from the one just sent.
    pub fn next_click(&mut self) {
        self.event_time = self.event_time.wrapping_add(CLICK_PRESS_GAP_MS);
    }

    /// A pointer button went to `state` at event time `time`.
    pub fn note_button(&mut self, button: u32, state: ButtonState, time: u32) {
        self.buttons_down.retain(|b| *b != button);
        if state == ButtonState::Pressed {
            self.last_press_time = Some(time);
            self.buttons_down.push(button);
        }
    }

    /// Pointer buttons pressed and not yet released, in press order.
    pub fn buttons_down(&self) -> Vec<Button> {
        self.buttons_down
            .iter()
            .filter_map(|code| match *code {
                BTN_LEFT => Some(Button::Left),
                BTN_RIGHT => Some(Button::Right),
                BTN_MIDDLE => Some(Button::Middle),
                _ => None,
            })
            .collect()
    }
}

/// The surface of window `id` (popups included) under a content-relative point.
pub(crate) fn target(windows: &Windows, id: u64, x: f64, y: f64) -> Result<Target, String> {
    if !x.is_finite() || !y.is_finite() {
        return Err(format!("coordinates must be finite, got ({x}, {y})"));
    }
    let content = windows
        .content_rect(id)
        .ok_or("the window has no geometry yet")?;
    let global = Point::<f64, Logical>::from((content.x as f64 + x, content.y as f64 + y));
    let rec = windows.registry.get(id).ok_or("the window is gone")?;
    let hit = match &rec.surface.surface {
        Surface::Toplevel(window) => {
            let render_origin =
                Point::<i32, Logical>::from((content.x, content.y)) - window.geometry().loc;
            window
                .surface_under(global - render_origin.to_f64(), WindowSurfaceType::ALL)
                .map(|(s, loc)| (s, (loc + render_origin).to_f64()))
        }
        Surface::Popup(popup) => {
            let render_origin =
                Point::<i32, Logical>::from((content.x, content.y)) - popup.geometry().loc;
            let surface = match &**popup {
                PopupKind::Xdg(p) => p.wl_surface().clone(),
                other => other.wl_surface().clone(),
            };
            under_from_surface_tree(&surface, global, render_origin, WindowSurfaceType::ALL)
                .map(|(s, loc)| (s, loc.to_f64()))
        }
    };
    let (surface, origin) = hit.ok_or_else(|| outside(x, y, content))?;
    Ok(Target {
        global,
        surface,
        origin,
    })
}

fn clicks_checked(clicks: u32) -> Result<u32, String> {
    if (1..=3).contains(&clicks) {
        Ok(clicks)
    } else {
        Err(format!("clicks must be 1, 2 or 3, got {clicks}"))
    }
}

fn outside(x: f64, y: f64, content: Rect) -> String {
    format!(
        "({x}, {y}) is outside the window: its content is {}x{} and no popup of it is there",
        content.width, content.height
    )
}
