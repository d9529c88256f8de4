//! Input through the seat, the path a person's input takes: pointer, wheel, keys
//! and text, sent in order once `rig::input_queue` has checked a request whole.
//!
//! Text goes through the input method when the focused client has text input
//! enabled, else as key presses on a temporary keymap holding its characters.

use smithay::backend::input::{Axis, AxisSource, ButtonState, KeyState};
use smithay::input::keyboard::{FilterResult, Keycode};
use smithay::input::pointer::{AxisFrame, ButtonEvent, MotionEvent};
use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Resource;
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use smithay::wayland::text_input::TextInputSeat;
use std::time::Instant;

use tokio::sync::oneshot;
use wayrig_host::{
    HostError, HostResult, InputEvent, InputOptions, InputReport, PointerState, TextPath,
    WindowHandle,
};

use crate::keys;
use crate::rig::input_queue::{Prior, Step, Target, INPUT_WAIT_LIMIT};
use crate::rig::windows::{root_surface, Surface};
use crate::state::State;

/// How long text after a key waits for the client to draw the key's
/// effect (see `InputJob::drawn_after`): a key that changes nothing shown
/// is drawn by no commit.
const KEY_DRAWN_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// One wheel click scrolls this many logical points, as libinput reports it.
const WHEEL_CLICK: f64 = 15.0;

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
        let rig = &mut self.rig;
        // Input for the window: its app's frames come again (a window
        // gone is answered by the queue).
        let _ = rig.hold_frames(handle, std::time::Duration::ZERO);
        if rig
            .input_queue
            .push(&rig.windows, handle, events, options, reply)
        {
            self.run_input();
        }
    }

    /// Send queued input until a job has to wait or none is left.
    pub fn run_input(&mut self) {
        loop {
            let Some(job) = self.rig.input_queue.jobs.front() else {
                return;
            };
            if job.waiting_since.is_some() {
                return;
            }
            let (id, handle) = (job.window, job.handle);
            if self
                .rig
                .windows
                .registry
                .get(id)
                .is_none_or(|r| !r.is_live())
            {
                self.finish_input(Err(HostError::NoWindow(handle)));
                continue;
            }
            let job = self.rig.input_queue.front_job();
            if !job.started {
                job.started = true;
                let (activate, needs_keyboard) = (job.options.activate, job.needs_keyboard);
                if job.options.leave_focus {
                    let pointer = self.pointer_state();
                    let prior = Prior {
                        pointer: (pointer.x, pointer.y).into(),
                        pointer_window: pointer.window,
                        keyboard: self.keyboard_focus(),
                    };
                    self.rig.input_queue.front_job().prior = Some(prior);
                }
                let activated = self.focus_for_input(id, activate, needs_keyboard);
                self.rig.input_queue.front_job().report.activated = activated;
            }
            let job = self.rig.input_queue.front_job();
            let Some(step) = job.steps.pop_front() else {
                self.note_input(id);
                let report = std::mem::take(&mut self.rig.input_queue.front_job().report);
                self.finish_input(Ok(report));
                continue;
            };
            // The pointer enters first and the client reads the enter before
            // what follows: GTK scrolls only once it has seen the pointer
            // enter, and GTK 3 ignores the enter into a menu that just popped
            // up and lights the row under the pointer at a motion after it,
            // as a hand's motion goes on past the edge. A held button keeps
            // the pointer's focus where it was pressed: no enter to wait on.
            let enter_first = match &step {
                Step::Wheel { target, .. } => Some(target).filter(|t| !self.pointer_is_at(t)),
                Step::Move(target, _) => Some(target).filter(|t| !self.pointer_on(&t.surface)),
                _ => None,
            };
            if let Some(target) = enter_first.cloned() {
                self.pointer_move(&target);
                if self.pointer_on(&target.surface) {
                    self.wait_for_client(id, step);
                    return;
                }
            }
            if let Step::Text { text, continued } = &step {
                if self.text_input_active() {
                    if self.rig.input_queue.unread_keys {
                        // Let the client read the keys first: its commit would overtake them.
                        self.wait_for_client(id, step);
                        return;
                    }
                    if !self.drew_since_key(id) {
                        // Resumed by the frame clock's tick (see `drawn_after`).
                        self.rig.input_queue.front_job().steps.push_front(step);
                        return;
                    }
                    if !continued {
                        let job = self.rig.input_queue.front_job();
                        job.report.text_paths.push(TextPath::InputMethod);
                    }
                    self.record_step(&step, "text-input");
                    match self.commit_text(text) {
                        Ok(Some(rest)) if !rest.is_empty() => {
                            let job = self.rig.input_queue.front_job();
                            job.steps.push_front(Step::Text {
                                text: rest,
                                continued: true,
                            });
                        }
                        Ok(_) => {}
                        Err(e) => self.finish_input(Err(e)),
                    }
                    continue;
                }
            }
            self.record_step(&step, "keymap");
            let mut report = std::mem::take(&mut self.rig.input_queue.front_job().report);
            let sent = self.send_step(step, &mut report);
            self.rig.input_queue.front_job().report = report;
            if let Err(e) = sent {
                self.finish_input(Err(e));
            }
        }
    }

    /// Ping the client of window `id` and hold `step` until it answers.
    fn wait_for_client(&mut self, id: u64, step: Step) {
        if let Some(rec) = self.rig.windows.registry.get(id) {
            let surface = rec.surface.surface.wl_surface().clone();
            self.rig.ping_client_of(&surface);
        }
        let moment = self.rig.clients.moment();
        let job = self.rig.input_queue.front_job();
        job.steps.push_front(step);
        job.waiting_since = Some(moment);
    }

    fn finish_input(&mut self, result: HostResult<InputReport>) {
        if let Some(job) = self.rig.input_queue.jobs.pop_front() {
            if let Some(prior) = job.prior {
                self.put_back(prior);
            }
            let _ = job.reply.send(result);
        }
    }

    /// Put the pointer and the keyboard focus back where background input
    /// found them. The events sent before reach the window first: a client
    /// reads its pointer leave and keyboard leave after them.
    fn put_back(&mut self, prior: Prior) {
        let windows = &self.rig.windows;
        let under = prior.pointer_window.and_then(|handle| {
            let id = windows.resolve(handle).ok()?;
            let content = windows.content_rect(id)?;
            let (x, y) = (
                prior.pointer.x - content.x as f64,
                prior.pointer.y - content.y as f64,
            );
            crate::rig::input_queue::target(windows, id, x, y).ok()
        });
        if let Some(pointer) = self.seat.get_pointer() {
            let event = MotionEvent {
                location: prior.pointer,
                serial: SERIAL_COUNTER.next_serial(),
                time: self.event_time(),
            };
            let focus = under.map(|t| (t.surface, t.origin));
            pointer.motion(self, focus, &event);
            pointer.frame(self);
        }
        let keyboard = prior.keyboard.filter(|s| s.is_alive());
        if self.keyboard_focus() != keyboard {
            self.focus_keyboard(keyboard);
        }
    }

    /// A client answered a ping sent at `answered`: resume input waiting on it.
    pub fn input_pong(&mut self, client: &ClientId, answered: u64) {
        let Some(job) = self.rig.input_queue.jobs.front_mut() else {
            return;
        };
        let Some(since) = job.waiting_since else {
            return;
        };
        let window = job.window;
        let surface = self
            .rig
            .windows
            .registry
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
            self.rig.input_queue.unread_keys = false;
            self.rig.input_queue.front_job().waiting_since = None;
            self.run_input();
        } else if let Some(surface) = surface {
            // That pong answered an older ping: ask again.
            self.rig.ping_client_of(&surface);
            let moment = self.rig.clients.moment();
            self.rig.input_queue.front_job().waiting_since = Some(moment);
        }
    }

    /// Fail a job whose client stopped answering; a window that went away ends its job.
    pub fn check_input_deadline(&mut self) {
        let Some(job) = self.rig.input_queue.jobs.front() else {
            return;
        };
        let gone = self
            .rig
            .windows
            .registry
            .get(job.window)
            .is_none_or(|r| !r.is_live());
        if gone {
            self.rig.input_queue.front_job().waiting_since = None;
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

    fn pointer_on(&self, surface: &WlSurface) -> bool {
        self.seat
            .get_pointer()
            .is_some_and(|p| p.current_focus().is_some_and(|f| f == *surface))
    }

    fn pointer_is_at(&self, target: &Target) -> bool {
        self.pointer_on(&target.surface)
            && self
                .seat
                .get_pointer()
                .is_some_and(|p| p.current_location() == target.global)
    }

    /// Give the window what the input needs; returns whether it was activated.
    fn focus_for_input(&mut self, id: u64, activate: bool, needs_keyboard: bool) -> bool {
        let Some(rec) = self.rig.windows.registry.get(id) else {
            return false;
        };
        // Popups take the keyboard through their grab; leave it to them.
        let Surface::Toplevel(_) = rec.surface.surface else {
            return false;
        };
        let surface = rec.surface.surface.wl_surface();
        let focused = self.keyboard_focus().is_some_and(|f| f == surface);
        let front = self
            .rig
            .windows
            .registry
            .iter()
            .next()
            .is_some_and(|r| r.id == id);
        if activate && (!focused || rec.minimized || !front) {
            self.activate(id);
            return true;
        }
        if needs_keyboard && !focused {
            self.focus_keyboard(Some(surface));
        }
        false
    }

    /// Event time in ms: the compositor clock, never going backwards.
    pub(crate) fn event_time(&mut self) -> u32 {
        let now = self.rig.frames.now().into();
        self.rig.input_queue.event_time(now)
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
                    let now = self.rig.frames.now().into();
                    self.rig.input_queue.begin_click_series(now);
                }
                for _ in 0..pairs {
                    self.pointer_button(button, ButtonState::Pressed);
                    self.pointer_button(button, ButtonState::Released);
                    self.rig.input_queue.next_click();
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
            Step::Text { text, continued } => {
                // Text input is off (`run_input` commits it when on): type keys.
                self.type_on_temporary_keymap(&text)?;
                if !continued {
                    report.text_paths.push(TextPath::Keymap);
                }
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
            .and_then(|s| self.rig.windows.id_for_surface(&root_surface(&s)))
            .and_then(|id| self.rig.windows.registry.get(id))
            .map(|r| r.handle());
        PointerState {
            x: at.x,
            y: at.y,
            buttons: self.rig.input_queue.buttons_down(),
            window,
        }
    }

    /// The window (this one, or a popup of it) whose surface a pointer
    /// event at `(x, y)` of the window's content reaches, as input sends it.
    pub fn window_at(&self, handle: WindowHandle, x: f64, y: f64) -> HostResult<WindowHandle> {
        let windows = &self.rig.windows;
        let id = windows.resolve(handle)?;
        let target = crate::rig::input_queue::target(windows, id, x, y)
            .map_err(HostError::InvalidRequest)?;
        windows
            .id_for_surface(&root_surface(&target.surface))
            .and_then(|id| windows.registry.get(id))
            .map(|r| r.handle())
            .ok_or(HostError::NoWindow(handle))
    }

    /// Take the pointer off a popup about to be dismissed, while its surface
    /// still exists: its client hears the pointer leave it. A client cannot
    /// hear a leave once it destroyed the surface, and GTK 3 then keeps the
    /// row that was under the pointer marked as entered: the same row of
    /// its next menu never lights when the pointer comes over it.
    pub fn pointer_off_popup(&mut self, popup: &WlSurface) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        if !pointer
            .current_focus()
            .is_some_and(|f| root_surface(&f) == *popup)
        {
            return;
        }
        let event = MotionEvent {
            location: pointer.current_location(),
            serial: SERIAL_COUNTER.next_serial(),
            time: self.event_time(),
        };
        pointer.motion(self, None, &event);
        pointer.frame(self);
    }

    /// The pointer to a point of the output no window lies under.
    pub fn pointer_to_desktop(&mut self, x: f64, y: f64) -> HostResult<PointerState> {
        let at = Point::<f64, Logical>::from((x, y));
        if !x.is_finite() || !y.is_finite() {
            return Err(HostError::InvalidRequest(format!(
                "coordinates must be finite, got ({x}, {y})"
            )));
        }
        if self.rig.windows.space.element_under(at).is_some() {
            return Err(HostError::InvalidRequest(format!(
                "a window lies under ({x}, {y}); send input to it to move the pointer there"
            )));
        }
        if let Some(pointer) = self.seat.get_pointer() {
            let event = MotionEvent {
                location: at,
                serial: SERIAL_COUNTER.next_serial(),
                time: self.event_time(),
            };
            pointer.motion(self, None, &event);
            pointer.frame(self);
        }
        Ok(self.pointer_state())
    }

    fn pointer_move(&mut self, target: &Target) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let event = MotionEvent {
            location: target.global,
            serial: SERIAL_COUNTER.next_serial(),
            time: self.event_time(),
        };
        pointer.motion(self, Some((target.surface.clone(), target.origin)), &event);
        pointer.frame(self);
    }

    fn pointer_button(&mut self, button: u32, state: ButtonState) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let time = self.event_time();
        self.rig.input_queue.note_button(button, state, time);
        self.rig.input_queue.unread_keys = true;
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
        let time = self.event_time();
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
        let time = self.event_time();
        self.rig.input_queue.unread_keys = true;
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

    /// Whether the front job may commit text after the key it sent: the
    /// window drew since (see `drawn_after`), or none came within
    /// `KEY_DRAWN_LIMIT`.
    fn drew_since_key(&mut self, id: u64) -> bool {
        let Some((commits, by)) = self.rig.input_queue.front_job().drawn_after else {
            return true;
        };
        // A key that changes nothing shown is drawn by no commit.
        if self.commits_of(id) > commits || Instant::now() >= by {
            self.rig.input_queue.front_job().drawn_after = None;
            return true;
        }
        false
    }

    /// How many times window `id` committed.
    fn commits_of(&self, id: u64) -> u64 {
        self.rig
            .windows
            .registry
            .get(id)
            .map_or(0, |r| r.surface.activity.commits())
    }

    /// A job waiting for its window to draw a key's effect goes on once it
    /// has: asked on each tick of the frame clock.
    pub fn resume_input_once_drawn(&mut self) {
        let waiting = self
            .rig
            .input_queue
            .jobs
            .front()
            .is_some_and(|job| job.drawn_after.is_some() && job.waiting_since.is_none());
        if waiting {
            self.run_input();
        }
    }

    /// The focused client has enabled text input (a text field has focus).
    fn text_input_active(&self) -> bool {
        if self
            .rig
            .input_queue
            .terminal_field
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return false;
        }
        let mut active = false;
        self.seat
            .text_input()
            .with_active_text_input(|_, _| active = true);
        active
    }

    /// Commit text through text-input-v3 up to its first newline or tab, which
    /// goes as its key (Enter, Tab); returns the text after that key. The
    /// rest waits until the client has read the key (see `unread_keys`).
    fn commit_text(&mut self, text: &str) -> HostResult<Option<String>> {
        let (chunk, key, rest) = match text.find(['\n', '\t']) {
            Some(at) => (&text[..at], Some(&text[at..at + 1]), Some(&text[at + 1..])),
            None => (text, None, None),
        };
        if !chunk.is_empty() {
            let handle = self.seat.text_input();
            handle.with_active_text_input(|ti, _| ti.commit_string(Some(chunk.to_string())));
            handle.done(false);
        }
        if let Some(key) = key {
            // Text follows the key: it waits for the key's effect drawn.
            if rest.is_some_and(|r| !r.is_empty()) {
                let id = self.rig.input_queue.front_job().window;
                let commits = self.commits_of(id);
                self.rig.input_queue.front_job().drawn_after =
                    Some((commits, Instant::now() + KEY_DRAWN_LIMIT));
            }
            let name = if key == "\n" { "Enter" } else { "Tab" };
            let key = self
                .rig
                .input_queue
                .resolve_key(name)
                .map_err(HostError::Failed)?;
            self.key(key.key, KeyState::Pressed);
            self.key(key.key, KeyState::Released);
        }
        Ok(rest.map(str::to_string))
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
        let moment = self.rig.clients.next_moment();
        let Some(surface) = self
            .rig
            .windows
            .registry
            .get(id)
            .map(|r| r.surface.surface.wl_surface())
        else {
            return;
        };
        if let Some(rec) = self.rig.windows.registry.get_mut(id) {
            rec.surface.activity.answer_asked(Instant::now());
        }
        if let Some(client) = self.rig.clients.record(&surface) {
            client.last_input = moment;
        }
        self.rig.ping_client_of(&surface);
    }
}
