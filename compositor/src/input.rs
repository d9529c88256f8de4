//! Input through the seat, the path a person's input takes: pointer, wheel, keys
//! and text, checked whole before any of it is sent, then sent in order.
//!
//! Text goes through the input method when the focused client has text input
//! enabled, else as key presses on a temporary keymap holding its characters.

use smithay::backend::input::{Axis, AxisSource, ButtonState, KeyState};
use smithay::desktop::{utils::under_from_surface_tree, PopupKind, WindowSurfaceType};
use smithay::input::keyboard::{FilterResult, Keycode};
use smithay::input::pointer::{AxisFrame, ButtonEvent, MotionEvent};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use smithay::wayland::text_input::TextInputSeat;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::Resource;
use tokio::sync::oneshot;
use wayrig_host::{
    Button, HostError, HostResult, InputEvent, InputOptions, InputReport, Mods, PointerState, Rect,
    TextPath, WindowHandle,
};

use crate::keys::{self, Chord, KeyPosition};
use crate::state::{State, Surface};

/// Linux input event codes of the pointer buttons.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
/// One wheel click scrolls this many logical points, as libinput reports it.
const WHEEL_CLICK: f64 = 15.0;
/// Event time between two click series, longer than any toolkit's double-click
/// time, so that a request's clicks never continue the previous request's.
const CLICK_SERIES_GAP_MS: u32 = 1000;
/// Event time between the clicks of one series, as a quick person's.
const CLICK_PRESS_GAP_MS: u32 = 60;

fn button_code(button: Button) -> u32 {
    match button {
        Button::Left => BTN_LEFT,
        Button::Right => BTN_RIGHT,
        Button::Middle => BTN_MIDDLE,
    }
}

/// Where a pointer event lands: the surface under it and that surface's global origin.
#[derive(Debug, Clone)]
struct Target {
    global: Point<f64, Logical>,
    surface: WlSurface,
    origin: Point<f64, Logical>,
}

/// A key resolved on the session keymap, with the modifiers it is sent with.
#[derive(Debug, Clone)]
struct ResolvedKey {
    mods: Vec<Keycode>,
    key: Keycode,
}

/// One checked step of an input request.
#[derive(Debug, Clone)]
enum Step {
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
    Text(String),
}

/// How long an input request may wait on its client before it fails.
const INPUT_WAIT_LIMIT: Duration = Duration::from_secs(5);

/// An input request being delivered. It waits only where a toolkit must read one
/// event before the next: GTK scrolls only once it has seen the pointer enter.
pub struct InputJob {
    handle: WindowHandle,
    window: u64,
    steps: VecDeque<Step>,
    options: InputOptions,
    needs_keyboard: bool,
    started: bool,
    report: InputReport,
    /// Moment of the ping whose answer the job waits for.
    waiting_since: Option<u64>,
    deadline: Instant,
    reply: oneshot::Sender<HostResult<InputReport>>,
}

impl State {
    /// Check a whole input request and queue it; nothing is sent unless all of
    /// it is valid. Requests are delivered in the order they arrive.
    pub fn queue_input(
        &mut self,
        handle: WindowHandle,
        events: &[InputEvent],
        options: InputOptions,
        reply: oneshot::Sender<HostResult<InputReport>>,
    ) {
        match self.plan_input(handle, events) {
            Ok((window, steps)) => {
                let needs_keyboard = steps.iter().any(|s| match s {
                    Step::Move(_, mods) | Step::Buttons { mods, .. } | Step::Wheel { mods, .. } => {
                        !mods.is_empty()
                    }
                    _ => true,
                });
                self.input_jobs.push_back(InputJob {
                    handle,
                    window,
                    steps: steps.into(),
                    options,
                    needs_keyboard,
                    started: false,
                    report: InputReport::default(),
                    waiting_since: None,
                    deadline: Instant::now() + INPUT_WAIT_LIMIT,
                    reply,
                });
                self.run_input();
            }
            Err(e) => {
                let _ = reply.send(Err(e));
            }
        }
    }

    fn plan_input(
        &self,
        handle: WindowHandle,
        events: &[InputEvent],
    ) -> HostResult<(u64, Vec<Step>)> {
        if events.is_empty() {
            return Err(HostError::InvalidRequest(
                "input needs at least one event".into(),
            ));
        }
        let id = self.resolve(handle)?;
        let steps = events
            .iter()
            .enumerate()
            .map(|(i, ev)| {
                self.plan(id, ev)
                    .map_err(|e| HostError::InvalidRequest(format!("event {i}: {e}")))
            })
            .collect::<HostResult<Vec<Step>>>()?;
        Ok((id, steps))
    }

    /// Send queued input until a job has to wait or none is left.
    pub fn run_input(&mut self) {
        loop {
            let Some(job) = self.input_jobs.front() else {
                return;
            };
            if job.waiting_since.is_some() {
                return;
            }
            let (id, handle) = (job.window, job.handle);
            if self.windows.get(id).is_none_or(|r| !r.is_live()) {
                self.finish_input(Err(HostError::NoWindow(handle)));
                continue;
            }
            let job = self.input_jobs.front_mut().expect("job");
            if !job.started {
                job.started = true;
                let (activate, needs_keyboard) = (job.options.activate, job.needs_keyboard);
                let activated = self.focus_for_input(id, activate, needs_keyboard);
                self.input_jobs.front_mut().expect("job").report.activated = activated;
            }
            let job = self.input_jobs.front_mut().expect("job");
            let Some(step) = job.steps.pop_front() else {
                self.note_input(id);
                let report = std::mem::take(&mut self.input_jobs.front_mut().expect("job").report);
                self.finish_input(Ok(report));
                continue;
            };
            if let Step::Wheel { target, .. } = &step {
                if !self.pointer_is_at(target) {
                    // Enter first and let the client read it before the scroll.
                    let target = target.clone();
                    self.pointer_move(&target);
                    self.ping_client_of(&target.surface);
                    let moment = self.moment;
                    let job = self.input_jobs.front_mut().expect("job");
                    job.steps.push_front(step);
                    job.waiting_since = Some(moment);
                    return;
                }
            }
            let mut report = std::mem::take(&mut self.input_jobs.front_mut().expect("job").report);
            let sent = self.send_step(step, &mut report);
            self.input_jobs.front_mut().expect("job").report = report;
            if let Err(e) = sent {
                self.finish_input(Err(e));
            }
        }
    }

    fn finish_input(&mut self, result: HostResult<InputReport>) {
        if let Some(job) = self.input_jobs.pop_front() {
            let _ = job.reply.send(result);
        }
    }

    /// A client answered a ping sent at `answered`: resume input waiting on it.
    pub fn input_pong(&mut self, client: &ClientId, answered: u64) {
        let Some(job) = self.input_jobs.front_mut() else {
            return;
        };
        let Some(since) = job.waiting_since else {
            return;
        };
        let window = job.window;
        let surface = self
            .windows
            .get(window)
            .map(|r| r.surface.surface.wl_surface());
        if surface
            .as_ref()
            .and_then(|s| s.client())
            .is_none_or(|c| c.id() != *client)
        {
            return;
        }
        if answered >= since {
            self.input_jobs.front_mut().expect("job").waiting_since = None;
            self.run_input();
        } else if let Some(surface) = surface {
            // That pong answered an older ping: ask again.
            self.ping_client_of(&surface);
            let moment = self.moment;
            self.input_jobs.front_mut().expect("job").waiting_since = Some(moment);
        }
    }

    /// Fail a job whose client stopped answering; a window that went away ends its job.
    pub fn check_input_deadline(&mut self) {
        let Some(job) = self.input_jobs.front() else {
            return;
        };
        let gone = self.windows.get(job.window).is_none_or(|r| !r.is_live());
        if gone {
            self.input_jobs.front_mut().expect("job").waiting_since = None;
            self.run_input();
        } else if job.waiting_since.is_some() && Instant::now() >= job.deadline {
            let handle = job.handle;
            self.finish_input(Err(HostError::Timeout(
                INPUT_WAIT_LIMIT,
                format!("window {handle} did not answer a ping during input"),
            )));
            self.run_input();
        }
    }

    fn pointer_is_at(&self, target: &Target) -> bool {
        self.seat.get_pointer().is_some_and(|p| {
            p.current_focus().is_some_and(|f| f == target.surface)
                && p.current_location() == target.global
        })
    }

    fn plan(&self, id: u64, event: &InputEvent) -> Result<Step, String> {
        Ok(match event {
            InputEvent::PointerMove { x, y, mods } => {
                Step::Move(self.target(id, *x, *y)?, self.mod_keys(mods)?)
            }
            InputEvent::PointerDown {
                x,
                y,
                button,
                clicks,
                mods,
            } => Step::Buttons {
                target: self.target(id, *x, *y)?,
                mods: self.mod_keys(mods)?,
                button: button_code(*button),
                pairs: clicks_checked(*clicks)? - 1,
                last: Some(ButtonState::Pressed),
            },
            InputEvent::PointerUp {
                x, y, button, mods, ..
            } => Step::Buttons {
                target: self.target(id, *x, *y)?,
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
                target: self.target(id, *x, *y)?,
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
                    target: self.target(id, *x, *y)?,
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
                Step::Text(text.clone())
            }
        })
    }

    /// The surface of window `id` (popups included) under a content-relative point.
    fn target(&self, id: u64, x: f64, y: f64) -> Result<Target, String> {
        if !x.is_finite() || !y.is_finite() {
            return Err(format!("coordinates must be finite, got ({x}, {y})"));
        }
        let content = self
            .content_rect(id)
            .ok_or("the window has no geometry yet")?;
        let global = Point::<f64, Logical>::from((content.x as f64 + x, content.y as f64 + y));
        let rec = self.windows.get(id).ok_or("the window is gone")?;
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

    fn key_position(
        &self,
        keysym: smithay::input::keyboard::Keysym,
        name: &str,
    ) -> Result<KeyPosition, String> {
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

    fn resolve_key(&self, name: &str) -> Result<ResolvedKey, String> {
        let Chord { mut mods, keysym } = keys::parse_chord(name)?;
        let pos = self.key_position(keysym, name)?;
        mods.shift |= pos.shifted;
        Ok(ResolvedKey {
            mods: self.mod_keys(&mods)?,
            key: pos.keycode,
        })
    }

    /// Give the window what the input needs; returns whether it was activated.
    fn focus_for_input(&mut self, id: u64, activate: bool, needs_keyboard: bool) -> bool {
        let Some(rec) = self.windows.get(id) else {
            return false;
        };
        // Popups take the keyboard through their grab; leave it to them.
        let Surface::Toplevel(_) = rec.surface.surface else {
            return false;
        };
        let surface = rec.surface.surface.wl_surface();
        let focused = self.keyboard_focus().is_some_and(|f| f == surface);
        let front = self.windows.iter().next().is_some_and(|r| r.id == id);
        if activate && (!focused || rec.minimized || !front) {
            self.activate(id);
            return true;
        }
        if needs_keyboard && !focused {
            if let Some(kb) = self.seat.get_keyboard() {
                kb.set_focus(self, Some(surface), SERIAL_COUNTER.next_serial());
            }
        }
        false
    }

    /// Event time in ms: the compositor clock, never going backwards.
    fn now_ms(&mut self) -> u32 {
        let now: std::time::Duration = self.clock.now().into();
        self.input_time = self.input_time.max(now.as_millis() as u32);
        self.input_time
    }

    /// Start a click series: its first press comes late enough after the last
    /// press that toolkits count it as a new click, not a double click.
    fn begin_click_series(&mut self) {
        let now = self.now_ms();
        if let Some(last) = self.last_press_time {
            self.input_time = now.max(last.wrapping_add(CLICK_SERIES_GAP_MS));
        }
    }

    fn send_step(&mut self, step: Step, report: &mut InputReport) -> HostResult<()> {
        match step {
            Step::Move(target, mods) => {
                self.press_keys(&mods);
                self.pointer_move(&target);
                self.release_keys(&mods);
            }
            Step::Buttons {
                target,
                mods,
                button,
                pairs,
                last,
            } => {
                self.press_keys(&mods);
                self.pointer_move(&target);
                if pairs > 0 || last == Some(ButtonState::Pressed) {
                    self.begin_click_series();
                }
                for _ in 0..pairs {
                    self.pointer_button(button, ButtonState::Pressed);
                    self.pointer_button(button, ButtonState::Released);
                    self.input_time = self.input_time.wrapping_add(CLICK_PRESS_GAP_MS);
                }
                if let Some(state) = last {
                    self.pointer_button(button, state);
                }
                self.release_keys(&mods);
            }
            Step::Wheel {
                target,
                mods,
                dx,
                dy,
                precise,
            } => {
                self.press_keys(&mods);
                self.pointer_move(&target);
                self.pointer_wheel(dx, dy, precise);
                self.release_keys(&mods);
            }
            Step::KeyDown(k) => {
                self.press_keys(&k.mods);
                self.key(k.key, KeyState::Pressed);
            }
            Step::KeyUp(k) => {
                self.key(k.key, KeyState::Released);
                self.release_keys(&k.mods);
            }
            Step::Key(k) => {
                self.press_keys(&k.mods);
                self.key(k.key, KeyState::Pressed);
                self.key(k.key, KeyState::Released);
                self.release_keys(&k.mods);
            }
            Step::Text(text) => {
                let path = if self.text_input_active() {
                    self.commit_text(&text)?;
                    TextPath::InputMethod
                } else {
                    self.type_on_temporary_keymap(&text)?;
                    TextPath::Keymap
                };
                report.text_paths.push(path);
            }
        }
        Ok(())
    }

    /// Where the pointer is, what it holds down and which window it is over.
    pub fn pointer_state(&self) -> PointerState {
        let pointer = self.seat.get_pointer();
        let at = pointer
            .as_ref()
            .map(|p| p.current_location())
            .unwrap_or_default();
        let window = pointer
            .and_then(|p| p.current_focus())
            .and_then(|s| self.window_id_for_surface(&Self::root_surface(&s)))
            .and_then(|id| self.windows.get(id))
            .map(|r| r.handle());
        PointerState {
            x: at.x,
            y: at.y,
            buttons: self
                .buttons_down
                .iter()
                .filter_map(|code| match *code {
                    BTN_LEFT => Some(Button::Left),
                    BTN_RIGHT => Some(Button::Right),
                    BTN_MIDDLE => Some(Button::Middle),
                    _ => None,
                })
                .collect(),
            window,
        }
    }

    fn pointer_move(&mut self, target: &Target) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let event = MotionEvent {
            location: target.global,
            serial: SERIAL_COUNTER.next_serial(),
            time: self.now_ms(),
        };
        pointer.motion(self, Some((target.surface.clone(), target.origin)), &event);
        pointer.frame(self);
    }

    fn pointer_button(&mut self, button: u32, state: ButtonState) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let time = self.now_ms();
        self.buttons_down.retain(|b| *b != button);
        if state == ButtonState::Pressed {
            self.last_press_time = Some(time);
            self.buttons_down.push(button);
        }
        let event = ButtonEvent {
            serial: SERIAL_COUNTER.next_serial(),
            time,
            button,
            state,
        };
        pointer.button(self, &event);
        pointer.frame(self);
    }

    fn pointer_wheel(&mut self, dx: f64, dy: f64, precise: bool) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let time = self.now_ms();
        let mut frame = AxisFrame::new(time).source(if precise {
            AxisSource::Finger
        } else {
            AxisSource::Wheel
        });
        for (axis, value) in [(Axis::Horizontal, dx), (Axis::Vertical, dy)] {
            if value == 0.0 {
                continue;
            }
            frame = frame.value(axis, value);
            if !precise {
                frame = frame.v120(axis, (value / WHEEL_CLICK * 120.0).round() as i32);
            }
        }
        pointer.axis(self, frame);
        pointer.frame(self);
        if precise {
            // A touchpad scroll ends with its fingers lifting.
            let mut stop = AxisFrame::new(time).source(AxisSource::Finger);
            for (axis, value) in [(Axis::Horizontal, dx), (Axis::Vertical, dy)] {
                if value != 0.0 {
                    stop = stop.stop(axis);
                }
            }
            pointer.axis(self, stop);
            pointer.frame(self);
        }
    }

    fn key(&mut self, keycode: Keycode, state: KeyState) {
        let Some(keyboard) = self.seat.get_keyboard() else {
            return;
        };
        let time = self.now_ms();
        keyboard.input::<(), _>(
            self,
            keycode,
            state,
            SERIAL_COUNTER.next_serial(),
            time,
            |_, _, _| FilterResult::Forward,
        );
    }

    fn press_keys(&mut self, keys: &[Keycode]) {
        for &k in keys {
            self.key(k, KeyState::Pressed);
        }
    }

    fn release_keys(&mut self, keys: &[Keycode]) {
        for &k in keys.iter().rev() {
            self.key(k, KeyState::Released);
        }
    }

    /// The focused client has enabled text input (a text field has focus).
    fn text_input_active(&self) -> bool {
        let mut active = false;
        self.seat
            .text_input()
            .with_active_text_input(|_, _| active = true);
        active
    }

    /// Commit text through text-input-v3; newlines and tabs go as their keys.
    fn commit_text(&mut self, text: &str) -> HostResult<()> {
        let mut chunk = String::new();
        for c in text.chars().chain(std::iter::once('\0')) {
            if c != '\n' && c != '\t' && c != '\0' {
                chunk.push(c);
                continue;
            }
            if !chunk.is_empty() {
                let committed = std::mem::take(&mut chunk);
                let handle = self.seat.text_input();
                handle.with_active_text_input(|ti, _| ti.commit_string(Some(committed.clone())));
                handle.done(false);
            }
            if c != '\0' {
                let name = if c == '\n' { "Enter" } else { "Tab" };
                let key = self.resolve_key(name).map_err(HostError::Failed)?;
                self.key(key.key, KeyState::Pressed);
                self.key(key.key, KeyState::Released);
            }
        }
        Ok(())
    }

    /// Type text as key presses on temporary keymaps holding its characters,
    /// then put the session keymap back.
    fn type_on_temporary_keymap(&mut self, text: &str) -> HostResult<()> {
        let Some(keyboard) = self.seat.get_keyboard() else {
            return Err(HostError::Unsupported("the seat has no keyboard".into()));
        };
        let mut result = Ok(());
        for (chars, run) in keys::text_runs(text) {
            let (keymap, codes) = match keys::text_keymap(&chars) {
                Ok(km) => km,
                Err(e) => {
                    result = Err(HostError::Failed(e));
                    break;
                }
            };
            if let Err(e) = keyboard.set_keymap_from_string(self, keymap) {
                result = Err(HostError::Failed(format!(
                    "cannot load the text keymap: {e:?}"
                )));
                break;
            }
            for c in run.chars() {
                let code = codes[chars.iter().position(|x| *x == c).expect("char in its run")];
                self.key(code, KeyState::Pressed);
                self.key(code, KeyState::Released);
            }
        }
        if let Err(e) = keyboard.set_xkb_config(self, keys::session_xkb_config()) {
            tracing::error!(?e, "cannot restore the session keymap");
        }
        result
    }

    /// Settle now waits for the client to have read this input.
    fn note_input(&mut self, id: u64) {
        let moment = self.next_moment();
        let Some(surface) = self.windows.get(id).map(|r| r.surface.surface.wl_surface()) else {
            return;
        };
        if let Some(rec) = self.windows.get_mut(id) {
            rec.surface.activity.input_received();
        }
        if let Some(client) = self.client_record(&surface) {
            client.last_input = moment;
        }
        self.ping_client_of(&surface);
    }
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
