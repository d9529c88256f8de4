//! Input in frames: a window's input runs as steps, one request at a time and
//! in order, each step answered once the app has read it and drawn its answer.
//!
//! The queue per window is bounded and can be cancelled; a press cancelled
//! before its release is released safely, the pointer moved off first.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wayrig_host::Capability;

use tokio::sync::watch;
use wayrig_host::{
    Button, FrameWait, Host, HostError, InputEvent, InputOptions, Mods, PointerState, WindowHandle,
    WindowInfo,
};

use super::Session;
use crate::model::Error;

/// Input requests that may wait for one window at once; more is `Busy`.
pub const QUEUE_LIMIT: usize = 32;
/// How long one step may wait for its frames.
const STEP_LIMIT: Duration = Duration::from_secs(10);
/// The most one input request may hold: a request holds its window's turn
/// until it ends, and every client's next input waits behind it.
const STEPS_MOST: usize = 10_000;
const EVENTS_MOST: usize = 20_000;
const TEXT_MOST: usize = 65_536;
const SPREAD_MOST: Duration = Duration::from_secs(600);

/// Refuse a request of more steps, events or typed characters than one
/// request may hold, or spread over more time, before any of it is sent.
fn check_size(steps: &[Step]) -> Result<(), Error> {
    let events: usize = steps.iter().map(|s| s.events.len()).sum();
    let text: usize = steps
        .iter()
        .flat_map(|s| &s.events)
        .map(|e| match e {
            InputEvent::Text { text } => text.chars().count(),
            _ => 0,
        })
        .sum();
    let spread = steps.iter().filter_map(|s| s.at).max().unwrap_or_default();
    let too_much = if steps.len() > STEPS_MOST {
        format!("{} steps, of at most {STEPS_MOST}", steps.len())
    } else if events > EVENTS_MOST {
        format!("{events} events, of at most {EVENTS_MOST}")
    } else if text > TEXT_MOST {
        format!("{text} characters to type, of at most {TEXT_MOST}")
    } else if spread > SPREAD_MOST {
        format!(
            "steps spread over {} s, of at most {} s",
            spread.as_secs(),
            SPREAD_MOST.as_secs()
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidRequest(format!(
        "the input is too large for one request: {too_much}; send it in parts"
    )))
}

/// One step: events delivered together, then a wait on the window's frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub events: Vec<InputEvent>,
    /// What the step waits for before the next one: `Drawn` (the app read
    /// it and drew its answer) unless a step must last longer (a long press).
    pub then: FrameWait,
    /// Not sent before this long after the request's first step was: a
    /// gesture spread over time (a glide, a drag, typing with a delay).
    pub at: Option<Duration>,
}

impl Step {
    /// Events answered once the app has drawn what they caused.
    pub fn drawn(events: Vec<InputEvent>) -> Self {
        Step {
            events,
            then: FrameWait::Drawn,
            at: None,
        }
    }

    /// The same step, sent no earlier than `at` after the request's first.
    pub fn at(self, at: Duration) -> Self {
        Step {
            at: Some(at),
            ..self
        }
    }
}

/// What a step did: its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// The events the seat delivered, in order.
    pub events: Vec<InputEvent>,
    /// Frames the window committed while the step waited (the last step:
    /// until the request's effect showed).
    pub commits: u64,
    pub waited: Duration,
    /// When the step was answered, from the session's start.
    pub at: Duration,
    /// The window went away before drawing: the app closed it in answer.
    pub window_closed: bool,
    /// The pointer once the step was answered: where, buttons down, and the
    /// window under it.
    pub pointer: PointerState,
    /// The last step only: why the window had not settled when the wait for
    /// the request's effect ran out (`None`: it settled).
    pub unsettled: Option<String>,
}

/// The input queue of one window.
struct WindowQueue {
    /// Held by the request whose steps run; the others wait their turn.
    turn: Arc<tokio::sync::Mutex<()>>,
    waiting: AtomicUsize,
    /// Bumped by each cancel; a request started under an older one stops.
    cancels: watch::Sender<u64>,
}

/// Every window's input queue.
#[derive(Default)]
pub(crate) struct InputQueues {
    windows: Mutex<HashMap<WindowHandle, Arc<WindowQueue>>>,
}

impl InputQueues {
    /// The window's queue. Queues no request holds are let go as others are
    /// made (a closed window's would otherwise stay for the session's life):
    /// an idle queue holds nothing a new one would not.
    fn of(&self, window: WindowHandle) -> Arc<WindowQueue> {
        let mut windows = self.windows.lock().unwrap();
        windows.retain(|w, queue| *w == window || Arc::strong_count(queue) > 1);
        windows
            .entry(window)
            .or_insert_with(|| {
                Arc::new(WindowQueue {
                    turn: Arc::new(tokio::sync::Mutex::new(())),
                    waiting: AtomicUsize::new(0),
                    cancels: watch::channel(0).0,
                })
            })
            .clone()
    }

    /// The window's cancels from now on: a request that subscribes before
    /// it waits for its turn is stopped by any cancel made meanwhile.
    pub(super) fn cancels_of(&self, window: WindowHandle) -> watch::Receiver<u64> {
        self.of(window).cancels.subscribe()
    }
}

/// Counts a request among the waiting until it drops.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A window's turn at input, held by the running request. A request dropped
/// before its end (its client went away, a gRPC deadline passed) may have
/// left a button down: the turn then passes on only once that button is
/// released, so no later input drags what it pressed.
struct Turn {
    held: Option<tokio::sync::OwnedMutexGuard<()>>,
    host: Arc<dyn Host>,
    window: WindowHandle,
}

impl Turn {
    /// The request ran to its end: the turn passes on as it is.
    fn ended(mut self) {
        self.held = None;
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (host, window) = (self.host.clone(), self.window);
        runtime.spawn(async move {
            if let Some(events) = release_events(&*host, window, None).await {
                if let Err(e) = host.input(window, events, quiet_release()).await {
                    tracing::warn!(%e, "releasing the press of a dropped request failed");
                }
            }
            drop(held);
        });
    }
}

/// The events that release every button the seat holds, the pointer first
/// moved to the corner of `window`'s content farthest from the press
/// (`pressed`, in content points; where the pointer is when unknown), so the
/// release completes no click. None when no button is down.
async fn release_events(
    host: &dyn Host,
    window: WindowHandle,
    pressed: Option<(f64, f64)>,
) -> Option<Vec<InputEvent>> {
    let pointer = host.pointer().await.ok()?;
    if pointer.buttons.is_empty() {
        return None;
    }
    let windows = host.windows().await.ok()?;
    let info = windows.iter().find(|w| w.handle == window)?;
    let pressed = pressed.unwrap_or((
        pointer.x - f64::from(info.content.x),
        pointer.y - f64::from(info.content.y),
    ));
    let (x, y) = far_corner(info, pressed);
    let mut events = vec![InputEvent::PointerMove {
        x,
        y,
        mods: Mods::default(),
    }];
    events.extend(
        pointer
            .buttons
            .iter()
            .map(|&button: &Button| InputEvent::PointerUp {
                x,
                y,
                button,
                clicks: 1,
                mods: Mods::default(),
            }),
    );
    Some(events)
}

/// A release sent on no one's behalf: it leaves the focus where it is.
fn quiet_release() -> InputOptions {
    InputOptions {
        activate: false,
        ..InputOptions::default()
    }
}

/// The error says the window is gone (closed, or unmapped and mapped again).
fn window_gone(e: &Error) -> bool {
    matches!(e, Error::NoWindow(_) | Error::StaleWindow(_))
}

/// Where a held press was made, from the events sent so far.
fn track_press(pressed: &mut Option<(f64, f64)>, events: &[InputEvent]) {
    for e in events {
        match e {
            InputEvent::PointerDown { x, y, .. } => *pressed = Some((*x, *y)),
            InputEvent::PointerUp { .. } | InputEvent::Click { .. } => *pressed = None,
            _ => {}
        }
    }
}

/// The corner of the window's content farthest from a point: a release there
/// completes no click made at the point.
fn far_corner(window: &WindowInfo, (x, y): (f64, f64)) -> (f64, f64) {
    let (w, h) = (
        f64::from(window.content.width.max(1)) - 1.0,
        f64::from(window.content.height.max(1)) - 1.0,
    );
    (
        if x < w / 2.0 { w } else { 0.0 },
        if y < h / 2.0 { h } else { 0.0 },
    )
}

tokio::task_local! {
    /// The window whose turn at input the running request holds.
    static HOLDING: WindowHandle;
}

impl Session {
    /// Run `work` in the window's turn at input: after every request queued
    /// before it and before any queued after, whichever face sent it (input,
    /// an act, a menu). Work already in that turn runs on in it.
    /// The work is boxed: a turn inside a turn (a menu's act) would
    /// otherwise hold its work's whole state twice over, on the stack.
    pub(crate) async fn in_turn<T>(
        &self,
        window: WindowHandle,
        work: Pin<Box<dyn Future<Output = Result<T, Error>> + Send + '_>>,
    ) -> Result<T, Error> {
        if HOLDING.try_with(|held| *held == window).unwrap_or(false) {
            return work.await;
        }
        let queue = self.input_queues.of(window);
        if queue.waiting.fetch_add(1, Ordering::SeqCst) >= QUEUE_LIMIT {
            queue.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Error::Busy(format!(
                "{QUEUE_LIMIT} input requests already wait for window {window}"
            )));
        }
        let waiting = Waiting(&queue.waiting);
        let turn = Turn {
            held: Some(queue.turn.clone().lock_owned().await),
            host: self.host.clone(),
            window,
        };
        drop(waiting);
        let done = HOLDING.scope(window, work).await;
        turn.ended();
        done
    }

    /// Run steps of input on a window, after the input queued before them,
    /// each answered once the app read it and drew its answer.
    pub async fn input_steps(
        &self,
        window: WindowHandle,
        steps: Vec<Step>,
        options: InputOptions,
    ) -> Result<Vec<StepReport>, Error> {
        self.require(Capability::Input, "input")?;
        check_size(&steps)?;
        self.window(&super::WindowPick::Handle(window)).await?;
        // A cancel from now on stops these steps, even while they wait.
        let cancels = self.input_queues.cancels_of(window);
        let ran = self
            .in_turn(
                window,
                Box::pin(self.run_steps(window, steps, options, cancels)),
            )
            .await;
        let closed = match &ran {
            Ok(reports) => reports.last().is_some_and(|r| r.window_closed),
            Err(e) => matches!(e, Error::Interrupted { .. }),
        };
        if closed {
            // The host saw the window go; the answer is read against a kept
            // list that knows it too, or the app would seem to show it still.
            let _ = self
                .windows
                .wait_gone(window, super::windows::CATCH_UP_LIMIT)
                .await;
        }
        ran
    }

    /// Run steps in the window's turn. A request that ends in an error (a
    /// cancel, an app that did not draw) leaves no button it pressed down.
    pub(super) async fn run_steps(
        &self,
        window: WindowHandle,
        steps: Vec<Step>,
        options: InputOptions,
        cancels: watch::Receiver<u64>,
    ) -> Result<Vec<StepReport>, Error> {
        let mut pressed = None;
        let total = steps.len();
        let mut sent = 0;
        let ran = self
            .steps_in_order(window, steps, options, cancels, &mut pressed, &mut sent)
            .await;
        // The host stopped midway (its last app exited and took the window
        // along): the steps left are never sent, as when the window closes.
        let ran = match ran {
            Err(e)
                if (1..total).contains(&sent)
                    && !matches!(e, Error::Interrupted { .. } | Error::Cancelled(_))
                    && matches!(self.host.windows().await, Err(HostError::Gone)) =>
            {
                Err(Error::Interrupted {
                    window: window.to_string(),
                    sent,
                    total,
                })
            }
            other => other,
        };
        // A cancel lets go of every button (one held by an earlier request
        // too, as minimizing the window does); another error only of its own.
        let cancelled = matches!(ran, Err(Error::Cancelled(_)));
        if cancelled || (ran.is_err() && pressed.is_some()) {
            self.release_safely(window, pressed).await;
        }
        ran
    }

    async fn steps_in_order(
        &self,
        window: WindowHandle,
        steps: Vec<Step>,
        options: InputOptions,
        mut cancels: watch::Receiver<u64>,
        pressed: &mut Option<(f64, f64)>,
        steps_sent: &mut usize,
    ) -> Result<Vec<StepReport>, Error> {
        let total = steps.len();
        let mut reports = Vec::with_capacity(total);
        let interrupted = |sent| Error::Interrupted {
            window: window.to_string(),
            sent,
            total,
        };
        // Whose window it is, should it close in answer: once it has gone,
        // the session's list no longer says.
        let app = self
            .windows()
            .iter()
            .find(|w| w.handle == window)
            .and_then(|w| w.pid);
        let first_sent = tokio::time::Instant::now();
        for (sent, step) in steps.into_iter().enumerate() {
            let cancelled = || {
                Error::Cancelled(format!(
                    "input to window {window} was cancelled after {sent} of {total} steps"
                ))
            };
            if cancels.has_changed().unwrap_or(true) {
                return Err(cancelled());
            }
            // A timed gesture's step waits for its time; a cancel ends the wait.
            if let Some(at) = step.at {
                tokio::select! {
                    _ = tokio::time::sleep_until(first_sent + at) => {}
                    _ = cancels.changed() => return Err(cancelled()),
                }
            }
            match self.input(window, step.events.clone(), options).await {
                Err(e) if sent > 0 && window_gone(&e) => return Err(interrupted(sent)),
                other => {
                    other?;
                }
            }
            *steps_sent = sent + 1;
            track_press(pressed, &step.events);
            // The last step's frames are counted from here to its answer:
            // one drawn between its wait and the effect's would fall between
            // two counts.
            let last = sent + 1 == total;
            let from = if last {
                self.host.commits(window).await.ok()
            } else {
                None
            };
            let wait = self.host.wait_frames(window, step.then, STEP_LIMIT);
            let waited = if last {
                // All input is in: a cancel no longer stops the request; it is
                // answered once the app drew (or its window went away).
                match wait.await {
                    Err(wayrig_host::HostError::NoWindow(_)) => None,
                    other => Some(other?),
                }
            } else {
                tokio::select! {
                    waited = wait => match waited {
                        Err(wayrig_host::HostError::NoWindow(_)) => return Err(interrupted(sent + 1)),
                        other => Some(other?),
                    },
                    _ = cancels.changed() => return Err(cancelled()),
                }
            };
            // The request's answer waits for its effect to show; the frames
            // drawn meanwhile are the last step's too.
            let drawn = waited.as_ref().map_or(0, |w| w.commits);
            // Input that closed its window (a dialog's OK) shows its effect
            // in the window its app focuses next, which settles too.
            let (unsettled, commits) = match (last, &waited) {
                (true, _) => {
                    let unsettled = self.settle_effect(window, app).await;
                    let after = self.host.commits(window).await.ok();
                    let counted = after.zip(from).map(|(a, f)| a.saturating_sub(f));
                    (unsettled, counted.unwrap_or(drawn).max(drawn))
                }
                _ => (None, drawn),
            };
            reports.push(StepReport {
                unsettled,
                events: step.events,
                commits,
                waited: waited.as_ref().map_or(Duration::ZERO, |w| w.waited),
                at: self.started.elapsed(),
                window_closed: waited.is_none(),
                pointer: self.host.pointer().await?,
            });
        }
        Ok(reports)
    }

    /// Cancel the window's input: what waits is never sent, what runs stops
    /// before its next step (one whose input is all sent is still answered
    /// once the app drew). Answers whether anything was waiting or running.
    pub fn cancel_input(&self, window: WindowHandle) -> bool {
        let queue = self.input_queues.of(window);
        let busy = queue.waiting.load(Ordering::SeqCst) > 0 || queue.turn.try_lock().is_err();
        queue.cancels.send_modify(|n| *n += 1);
        busy
    }

    /// Wait until the window has committed `frames` new frames.
    pub async fn after_frames(
        &self,
        window: WindowHandle,
        frames: u32,
        timeout: Duration,
    ) -> Result<u64, Error> {
        self.require(Capability::FramePacing, "waiting on frames")?;
        Ok(self
            .host
            .wait_frames(window, FrameWait::Frames(frames), timeout)
            .await?
            .commits)
    }

    /// A press left held by a cancelled request is released where it cannot
    /// complete a click: the pointer moves off first.
    async fn release_safely(&self, window: WindowHandle, pressed: Option<(f64, f64)>) {
        let Some(events) = release_events(&*self.host, window, pressed).await else {
            return;
        };
        if let Err(e) = self.input(window, events, quiet_release()).await {
            tracing::warn!(%e, "releasing a cancelled press failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wayrig_host::Rect;

    #[test]
    fn a_held_press_is_tracked_until_its_release() {
        let down = InputEvent::PointerDown {
            x: 5.0,
            y: 6.0,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        };
        let up = InputEvent::PointerUp {
            x: 5.0,
            y: 6.0,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        };
        let mut pressed = None;
        track_press(&mut pressed, std::slice::from_ref(&down));
        assert_eq!(pressed, Some((5.0, 6.0)));
        track_press(&mut pressed, &[up]);
        assert_eq!(pressed, None);
    }

    #[test]
    fn a_release_goes_to_the_corner_farthest_from_the_press() {
        let mut w = super::super::fake_host::window(1, "Main");
        w.content = Rect::new(0, 0, 400, 300);
        assert_eq!(far_corner(&w, (10.0, 10.0)), (399.0, 299.0));
        assert_eq!(far_corner(&w, (390.0, 290.0)), (0.0, 0.0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_larger_than_a_turn_may_hold_is_refused_unsent() {
        use super::super::fake_host::{window, FakeHost, Temper};
        let host = FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 64).with_input();
        let session = Session::without_accessibility(Arc::new(host.clone()))
            .await
            .unwrap();
        let handle = session.windows()[0].handle;
        let key = || InputEvent::Key { key: "a".into() };
        let text = |n: usize| InputEvent::Text {
            text: "é".repeat(n),
        };
        let too_large = [
            (
                vec![Step::drawn(vec![key()]); STEPS_MOST + 1],
                "10001 steps",
            ),
            (
                vec![Step::drawn(vec![key(); EVENTS_MOST + 1])],
                "20001 events",
            ),
            (
                vec![
                    Step::drawn(vec![text(40_000)]),
                    Step::drawn(vec![text(30_000)]),
                ],
                "70000 characters",
            ),
            (
                vec![Step::drawn(vec![key()]).at(SPREAD_MOST + Duration::from_secs(1))],
                "601 s",
            ),
        ];
        for (steps, said) in too_large {
            let refused = session
                .input_steps(handle, steps, InputOptions::default())
                .await;
            assert!(
                matches!(&refused, Err(Error::InvalidRequest(why)) if why.contains(said)),
                "{said}: {refused:?}"
            );
        }
        assert!(host.sent().is_empty(), "nothing sent: {:?}", host.sent());
        let most = vec![Step::drawn(vec![text(TEXT_MOST)])];
        assert!(session
            .input_steps(handle, most, InputOptions::default())
            .await
            .is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn one_turn_at_a_time_per_window_and_work_in_a_turn_reenters_it() {
        use super::super::fake_host::{window, FakeHost, Temper};
        let host = FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 64);
        let session = Arc::new(
            Session::without_accessibility(Arc::new(host))
                .await
                .unwrap(),
        );
        let handle = session.windows()[0].handle;
        let order = Arc::new(Mutex::new(Vec::new()));
        let (held_tx, held_rx) = tokio::sync::oneshot::channel();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
        let first = {
            let (session, order) = (session.clone(), order.clone());
            tokio::spawn(async move {
                let inner = session.clone();
                session
                    .in_turn(
                        handle,
                        Box::pin(async move {
                            order.lock().unwrap().push("first starts");
                            let _ = held_tx.send(());
                            let _ = go_rx.await;
                            // An act's own input, inside its turn, does not wait.
                            inner
                                .in_turn(handle, Box::pin(async { Ok::<_, Error>(()) }))
                                .await?;
                            order.lock().unwrap().push("first ends");
                            Ok::<_, Error>(())
                        }),
                    )
                    .await
            })
        };
        held_rx.await.unwrap();
        let second = {
            let (session, order) = (session.clone(), order.clone());
            tokio::spawn(async move {
                session
                    .in_turn(
                        handle,
                        Box::pin(async move {
                            order.lock().unwrap().push("second");
                            Ok::<_, Error>(())
                        }),
                    )
                    .await
            })
        };
        tokio::task::yield_now().await;
        assert_eq!(*order.lock().unwrap(), ["first starts"], "the second waits");
        go_tx.send(()).unwrap();
        first.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            ["first starts", "first ends", "second"]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn input_that_closes_its_window_is_answered_once_the_session_knows() {
        use super::super::fake_host::{window, FakeHost, Temper};
        // The stream tells of the close later than the host's own answer.
        let host = FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 16)
            .closing_on_input(Duration::from_millis(200));
        let session = Session::without_accessibility(Arc::new(host))
            .await
            .unwrap();
        let handle = session.windows()[0].handle;
        let escape = InputEvent::Key {
            key: "Escape".into(),
        };
        let reports = session
            .input_steps(
                handle,
                vec![Step::drawn(vec![escape])],
                InputOptions::default(),
            )
            .await
            .unwrap();
        assert!(reports[0].window_closed);
        assert!(
            matches!(
                session
                    .window(&super::super::WindowPick::Handle(handle))
                    .await,
                Err(Error::NoWindow(_))
            ),
            "the window the input closed is not served as if it showed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn input_that_closes_a_dialog_settles_the_window_of_its_app_left() {
        use super::super::fake_host::{window, FakeHost, Temper};
        // The dialog's OK closes it, and the session hears of that before
        // the frame drawn in answer: the answer still waits for the main
        // window, where closing it shows.
        let host = FakeHost::new(
            vec![window(1, "Main"), window(2, "Dialog")],
            Temper::Stubborn,
            16,
        )
        .settling_a_dialog();
        let session = Session::without_accessibility(Arc::new(host.clone()))
            .await
            .unwrap();
        let (main, dialog) = (session.windows()[0].handle, session.windows()[1].handle);
        let enter = InputEvent::Key {
            key: "Return".into(),
        };
        let reports = session
            .input_steps(
                dialog,
                vec![Step::drawn(vec![enter])],
                InputOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(reports[0].unsettled, None);
        assert_eq!(
            host.settled(),
            [dialog, main],
            "the main window settled after the dialog closed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn input_cut_short_by_the_host_stopping_says_how_much_was_sent() {
        use super::super::fake_host::{window, FakeHost, Temper};
        // The app is killed mid-typing and the compositor, its last app
        // gone, stops before it hears the window close.
        let host =
            FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 16).stopping_on_input(2);
        let session = Session::without_accessibility(Arc::new(host))
            .await
            .unwrap();
        let handle = session.windows()[0].handle;
        let letter = |text: &str| {
            Step::drawn(vec![InputEvent::Text {
                text: text.to_string(),
            }])
        };
        let typed = session
            .input_steps(
                handle,
                vec![letter("a"), letter("b"), letter("c")],
                InputOptions::default(),
            )
            .await;
        match typed {
            Err(Error::Interrupted { sent, total, .. }) => assert_eq!((sent, total), (2, 3)),
            other => panic!("{other:?}"),
        }
    }
}
