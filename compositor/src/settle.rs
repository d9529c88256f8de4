//! The rules of "settled": what a window must show over the output's frame ticks
//! before settle answers. Pure accounting, fed by the compositor's events.
//!
//! A window is settled when it asks for no frame it has not drawn, has no
//! unacknowledged configure, has read its input (a ping sent after the last input
//! came back) and has stayed quiet, without a commit or a frame request, for
//! `QUIET_TICKS` whole ticks of the output clock, and has then answered a ping.
//! Where threads are watched, a thread of the app found running at a tick
//! breaks the quiet too: a worker computing what the main loop will draw.
//! The quiet ticks catch toolkits (GTK) that pace themselves and commit up to one
//! refresh interval after a frame callback, when no callback is pending for a
//! moment. The ping catches an app still busy drawing a slow frame: it reads the
//! ping only after it has committed that frame, which breaks the quiet.
//!
//! A window that animates forever (a spinner) would never be quiet, so once it
//! has committed at every tick for a while its pixels are compared, tile by
//! tile, commit to commit: a tile that has kept changing for
//! `ANIMATION_TICKS` is its animation, and a commit that changes nothing else
//! is no activity. Where most of the window animates, effects cannot be told
//! from it, and it never settles.

use crate::rig::pixels::Tiles;
use std::time::{Duration, Instant};

use wayrig_host::threads::{BusyThread, MainLoopWake, TIMER_SOON_MS};

/// Whole output frames without a commit or a frame request before a window counts as quiet.
pub const QUIET_TICKS: u32 = 2;

/// Ticks (a second at 60 Hz) a tile must have kept changing, never resting
/// for `TILE_REST_TICKS`, before its changes count as animation, as a
/// spinner's do; an effect's changes (a switch sliding) end sooner.
pub const ANIMATION_TICKS: u64 = 60;
/// Ticks without a change that end a tile's run of changes: a spinner's edge
/// tiles rest while it turns past.
const TILE_REST_TICKS: u64 = 120;
/// Changes a tile's run must hold to count as animation.
const ANIMATION_CHANGES: u32 = 8;
/// Ticks a window commits in a run before its pixels are compared.
const PIXELS_AFTER_TICKS: u64 = 6;
/// Ticks with neither a commit nor a frame asked for that end a run of
/// drawing, and with it what was learnt of the window's animation. An app
/// that animates asks for every frame, even while it is busy answering
/// input or accessibility requests (or draws at a few frames a second on a
/// loaded machine); one that shows effects one after the other rests
/// between them, so repeated effects are never learnt as animation.
const RUN_GAP_TICKS: u64 = 8;
/// How long a main loop that paces itself (wakes every few ms, as GTK's
/// frame clock does for a few hundred ms after drawing) keeps its window
/// from counting as quiet: its pacing hides any longer timer, seen only
/// once it sleeps longer. A loop that paces for good (GTK 4's frame clock
/// between a caret's fades) is taken as quiet after this.
const PACING_MOST: Duration = Duration::from_millis(70);
/// As `PACING_MOST`, for the first paced stretch after input or an action
/// asked for the window's answer (a plain wait asks nothing): a timer set in answer (a search entry's
/// delay, set as the key was read, just before the loop drew the key and
/// began to pace) hides behind it, and only a timer due within
/// `TIMER_SOON_MS` is work not yet shown, so by then such a timer has
/// fired (its work runs, draws and paces anew) or there was none.
const PACING_AFTER_REQUEST: Duration = Duration::from_millis(TIMER_SOON_MS as u64);
/// Past this share of its tiles animating, a window's effects cannot be
/// told from its animation.
const ANIMATION_SHARE_MAX: f64 = 0.5;

/// One tile's run of changes: the ticks of its first and last change, and
/// how many changes it holds.
#[derive(Debug, Clone, Copy, Default)]
struct TileRun {
    since: u64,
    last: u64,
    changes: u32,
}

impl TileRun {
    /// The tile changed at tick `t`: whether that is its animation, as the
    /// run before it says; then the run goes on or starts anew.
    fn changed(&mut self, t: u64) -> bool {
        let goes_on = self.changes > 0 && t - self.last <= TILE_REST_TICKS;
        let animation =
            goes_on && t - self.since >= ANIMATION_TICKS && self.changes >= ANIMATION_CHANGES;
        if !goes_on {
            *self = TileRun {
                since: t,
                last: t,
                changes: 0,
            };
        }
        self.last = t;
        self.changes = self.changes.saturating_add(1);
        animation
    }
}

/// Frame activity of one window between ticks of the output clock.
#[derive(Debug, Default)]
pub struct Activity {
    commits: u64,
    committed_since_tick: bool,
    quiet_ticks: u32,
    /// The host's moment when the window last became quiet.
    quiet_mark: u64,
    /// A thread of the app found running at the last tick it was looked for.
    busy: Option<BusyThread>,
    /// When the last timer its main loop was found waiting for is due. It
    /// stays pending until then: while the app draws or animates, its frame
    /// clock's own wake-ups hide a longer timer from later looks.
    timer: Option<Instant>,
    /// Since when its main loop has been found pacing itself, at every look
    /// since its last commit.
    pacing_since: Option<Instant>,
    /// When input or an action last asked for the window's answer, until a
    /// paced stretch begun since ends in a commit: until then a timer set
    /// in answer may hide behind the pacing.
    requested: Option<Instant>,
    /// When input or an action last asked for the window's answer: for
    /// `PACING_AFTER_REQUEST` from then a loop found pacing hides a timer
    /// set in answer, however often it draws meanwhile (a caret's fade is
    /// drawn in a few frames, each ending a paced stretch).
    asked: Option<Instant>,
    /// Ticks of the output clock counted so far, and the last at which the
    /// window committed or asked for a frame.
    ticks: u64,
    last_active_tick: u64,
    /// The last tick at which a look found the thread that draws its frames
    /// running or waiting to run: starved of the CPU, an app that animates
    /// is late for its next frame, not resting.
    drawer_running_tick: u64,
    /// Tick since which the window has been drawing at (nearly) every tick.
    run_since: Option<u64>,
    /// The tiles of the last commit compared, and each tile's run of changes.
    pixels: Option<Tiles>,
    runs: Vec<TileRun>,
    /// The last commit changed only what animates.
    animation_only: bool,
}

impl Activity {
    /// Whether the window's next commit should come with its pixels: it has
    /// committed at every tick for a while, as an animation does, and its
    /// pixels are being compared since.
    pub fn wants_pixels(&self) -> bool {
        self.pixels.is_some()
            || self
                .run_since
                .is_some_and(|since| self.ticks - since >= PIXELS_AFTER_TICKS)
    }

    /// The window committed a new state, with its pixels when `wants_pixels`
    /// asked for them.
    pub fn committed(&mut self, pixels: Option<Tiles>) {
        self.commits += 1;
        // A paced stretch after the request ended in drawing: what the
        // request set has shown, or was not behind that stretch.
        if let (Some(since), Some(asked)) = (self.pacing_since, self.requested) {
            if since >= asked {
                self.requested = None;
            }
        }
        // What it drew is paced anew.
        self.pacing_since = None;
        if self.run_gap() {
            self.run_since = None;
        }
        self.last_active_tick = self.ticks;
        self.run_since.get_or_insert(self.ticks);
        let (effect, animated) = self.changed_beyond_animation(pixels);
        self.animation_only = !effect && animated;
        if effect {
            self.committed_since_tick = true;
            self.quiet_ticks = 0;
        }
    }

    /// Compare a commit's pixels with the last: whether it changed anything
    /// but the tiles that animate, and whether it changed those.
    fn changed_beyond_animation(&mut self, pixels: Option<Tiles>) -> (bool, bool) {
        let Some(now) = pixels else {
            self.pixels = None;
            self.runs.clear();
            return (true, false);
        };
        let changed = self.pixels.as_ref().and_then(|before| now.changed(before));
        self.pixels = Some(now);
        let Some(changed) = changed else {
            self.runs = vec![TileRun::default(); self.pixels.as_ref().map_or(0, Tiles::count)];
            return (true, false);
        };
        let (mut effect, mut animating) = (false, 0usize);
        for (run, changed) in self.runs.iter_mut().zip(&changed) {
            if !changed {
                continue;
            }
            if run.changed(self.ticks) {
                animating += 1;
            } else {
                effect = true;
            }
        }
        let all_over = animating as f64 > ANIMATION_SHARE_MAX * changed.len() as f64;
        (effect || all_over, animating > 0)
    }

    /// Whether the window's run of drawing has ended: for `RUN_GAP_TICKS`
    /// it neither committed nor asked for a frame, and its app's drawing
    /// thread was not found waiting to run.
    fn run_gap(&self) -> bool {
        self.ticks - self.last_active_tick.max(self.drawer_running_tick) > RUN_GAP_TICKS
    }

    /// The window's last commit changed only what animates: it will ask for
    /// frames, and drawing them is no activity.
    pub fn animating(&self) -> bool {
        self.animation_only
    }

    /// Count quiet ticks anew: a wait began and must see its app's threads
    /// and timers over whole ticks.
    pub fn quiet_anew(&mut self) {
        self.quiet_ticks = 0;
    }

    /// The window was asked for an answer at `now` (input, or an action
    /// whose effect is waited for): quiet is counted anew, and the first
    /// paced stretch since may hide a timer set in answer.
    pub fn answer_asked(&mut self, now: Instant) {
        self.quiet_anew();
        self.requested = Some(now);
        self.asked = Some(now);
    }

    /// A tick of the output clock; `wants_frame` is whether a frame callback
    /// waits, `moment` the host's moment counter now.
    pub fn tick(&mut self, wants_frame: bool, moment: u64) {
        self.ticks += 1;
        if wants_frame {
            self.last_active_tick = self.ticks;
        }
        if self.run_gap() && self.run_since.is_some() {
            // It stopped drawing: what animated then proves nothing now.
            self.run_since = None;
            self.pixels = None;
            self.runs.clear();
            self.animation_only = false;
        }
        if self.committed_since_tick || (wants_frame && !self.animating()) {
            self.quiet_ticks = 0;
        } else {
            self.quiet_ticks = self.quiet_ticks.saturating_add(1);
            if self.quiet_ticks == QUIET_TICKS {
                self.quiet_mark = moment;
            }
        }
        self.committed_since_tick = false;
    }

    /// What a look at the app's threads found at `now`: a thread running,
    /// or a timer its main loop wakes for soon, is work not yet shown, so
    /// the window is not quiet until the timer is due; nor while its loop
    /// paces itself, for up to `PACING_MOST` (`PACING_AFTER_REQUEST`).
    pub fn threads_looked_at(
        &mut self,
        busy: Option<BusyThread>,
        wake: Option<MainLoopWake>,
        now: Instant,
    ) {
        if let Some(MainLoopWake::Timer(ms)) = wake {
            let due = now + Duration::from_millis(ms.into());
            self.timer = Some(self.timer.map_or(due, |known| known.max(due)));
        }
        self.timer = self.timer.filter(|due| *due > now);
        match wake {
            Some(MainLoopWake::Pacing) => {
                self.pacing_since.get_or_insert(now);
            }
            Some(MainLoopWake::Timer(_) | MainLoopWake::Later) => self.pacing_since = None,
            // Running, or not looked at: as it was.
            None => {}
        }
        if busy.is_some() || self.timer.is_some() || self.pacing(now) {
            self.quiet_ticks = 0;
        }
        self.busy = busy;
    }

    /// A look found the thread that draws its frames running or waiting to
    /// run: its run of drawing goes on, whether it commits or not.
    pub fn drawer_found_running(&mut self) {
        self.drawer_running_tick = self.ticks;
    }

    /// Whether its main loop paces itself at `now`, hiding what it waits for:
    /// for `PACING_AFTER_REQUEST` from the request or the pacing's start,
    /// whichever is later, in the first paced stretch after a request; for
    /// `PACING_MOST` in any other; and in any stretch within
    /// `PACING_AFTER_REQUEST` of the request.
    pub fn pacing(&self, now: Instant) -> bool {
        let Some(since) = self.pacing_since else {
            return false;
        };
        if self.answer_due(now) {
            return true;
        }
        let until = match self.requested {
            Some(asked) => since.max(asked) + PACING_AFTER_REQUEST,
            None => since + PACING_MOST,
        };
        now < until
    }

    /// Whether input or an action asked for the window's answer less than
    /// `PACING_AFTER_REQUEST` before `now`: a timer set in answer may be
    /// pending, even behind what animates.
    pub fn answer_due(&self, now: Instant) -> bool {
        self.asked
            .is_some_and(|asked| now < asked + PACING_AFTER_REQUEST)
    }

    /// In how many ms the last timer found is due, if it is still pending.
    pub fn timer_due(&self, now: Instant) -> Option<u32> {
        let left = self.timer?.checked_duration_since(now)?;
        Some(u32::try_from(left.as_millis()).unwrap_or(u32::MAX))
    }

    /// Whether the window committed or asked for a frame in the last
    /// quiet ticks' span, beyond what it animates.
    pub fn drawing(&self) -> bool {
        self.ticks - self.last_active_tick < u64::from(QUIET_TICKS) && !self.animating()
    }

    /// The thread found running at the last look, if any.
    pub fn busy_thread(&self) -> Option<&BusyThread> {
        self.busy.as_ref()
    }

    pub fn quiet_ticks(&self) -> u32 {
        self.quiet_ticks
    }

    /// Whether a ping answered at moment `answered` was sent after the window
    /// became quiet (pings take moments later than any mark before them).
    pub fn answered_while_quiet(&self, answered: u64) -> bool {
        self.quiet_ticks >= QUIET_TICKS && answered > self.quiet_mark
    }

    pub fn commits(&self) -> u64 {
        self.commits
    }
}

/// One evaluation of the settle rules for a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleCheck {
    /// A thread of the app found running at the last tick.
    pub busy_thread: Option<BusyThread>,
    /// A timer of the app's main loop due then, in ms.
    pub timer_due: Option<u32>,
    /// Its main loop paces itself, hiding what it waits for.
    pub pacing: bool,
    /// It committed or asked for a frame lately, beyond what it animates.
    pub drawing: bool,
    pub wants_frame: bool,
    pub pending_configure: bool,
    pub quiet_ticks: u32,
    pub input_read: bool,
    /// A ping sent after the window became quiet came back.
    pub answered_while_quiet: bool,
}

impl SettleCheck {
    pub fn settled(&self) -> bool {
        !self.wants_frame
            && !self.pending_configure
            && self.input_read
            && self.quiet_ticks >= QUIET_TICKS
            && self.answered_while_quiet
    }

    /// Quiet for long enough, but no ping has come back since: ask.
    pub fn needs_ping(&self) -> bool {
        !self.input_read || (self.quiet_ticks >= QUIET_TICKS && !self.answered_while_quiet)
    }

    /// Why the window is not settled, for a timeout message.
    pub fn reason(&self) -> String {
        let mut why = Vec::new();
        let thread;
        // A window drawing all the time keeps its drawing thread running
        // (or, starved of the CPU, waiting to run): drawing is said first.
        let timer = self.timer_due;
        let busy = self.busy_thread.as_ref();
        if self.drawing
            || self.wants_frame
            || (busy.is_none() && timer.is_none() && !self.pacing && self.quiet_ticks < QUIET_TICKS)
        {
            why.push("it keeps drawing frames");
        }
        if let Some(t) = busy {
            thread = format!("its thread {:?} (tid {}) keeps running", t.name, t.tid);
            why.push(thread.as_str());
        } else if let Some(ms) = timer {
            thread = format!("its main loop keeps setting timers ({ms} ms)");
            why.push(thread.as_str());
        } else if self.pacing {
            why.push("its main loop keeps waking every few ms");
        }
        if self.pending_configure {
            why.push("it has not acknowledged a configure");
        }
        if !self.input_read {
            why.push("it has not answered a ping since its last input");
        } else if self.quiet_ticks >= QUIET_TICKS && !self.answered_while_quiet {
            why.push("it has not answered a ping since it went quiet");
        }
        if why.is_empty() {
            why.push("no reason left");
        }
        why.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &Activity, wants: bool) -> SettleCheck {
        check_at(a, wants, Instant::now())
    }

    fn check_at(a: &Activity, wants: bool, now: Instant) -> SettleCheck {
        SettleCheck {
            busy_thread: a.busy_thread().cloned(),
            timer_due: a.timer_due(now),
            pacing: a.pacing(now),
            drawing: a.drawing(),
            wants_frame: wants && !a.animating(),
            pending_configure: false,
            quiet_ticks: a.quiet_ticks(),
            input_read: true,
            answered_while_quiet: a.answered_while_quiet(1),
        }
    }

    #[test]
    fn a_running_thread_keeps_a_quiet_window_unsettled_and_is_named() {
        let mut a = Activity::default();
        let worker = BusyThread {
            tid: 4711,
            name: "pool-worker".into(),
        };
        for _ in 0..5 {
            a.tick(false, 0);
            a.threads_looked_at(Some(worker.clone()), None, Instant::now());
        }
        let c = check(&a, false);
        assert!(!c.settled());
        assert_eq!(
            c.reason(),
            "its thread \"pool-worker\" (tid 4711) keeps running"
        );
        // Drawing all the time runs the thread that draws: both are said,
        // drawing first.
        let drawing = SettleCheck {
            drawing: true,
            ..check(&a, true)
        };
        assert!(
            drawing
                .reason()
                .starts_with("it keeps drawing frames, its thread \"pool-worker\""),
            "{}",
            drawing.reason()
        );
        // The worker is done: the window settles after its quiet ticks.
        for _ in 0..QUIET_TICKS {
            a.tick(false, 0);
            a.threads_looked_at(None, None, Instant::now());
        }
        assert!(check(&a, false).settled());
    }

    #[test]
    fn a_window_that_stops_drawing_settles_after_quiet_ticks() {
        let mut a = Activity::default();
        a.committed(None);
        a.tick(false, 0);
        assert!(!check(&a, false).settled(), "committed during that tick");
        a.tick(false, 0);
        assert!(!check(&a, false).settled(), "one quiet tick is not enough");
        a.tick(false, 0);
        assert!(check(&a, false).settled());
        assert_eq!(a.commits(), 1);
    }

    #[test]
    fn a_window_drawing_without_its_pixels_never_settles() {
        let mut a = Activity::default();
        for _ in 0..100 {
            a.committed(None);
            a.tick(true, 0);
            assert!(!check(&a, true).settled());
        }
        assert_eq!(a.commits(), 100);
    }

    /// A 128x128 buffer (16 tiles) with the given pixels of the first byte
    /// set to `value`.
    fn pixels(set: &[(usize, usize, u8)]) -> Tiles {
        let mut bytes = vec![0u8; 128 * 128 * 4];
        for &(x, y, value) in set {
            bytes[(y * 128 + x) * 4] = value;
        }
        Tiles::hash(&bytes, 128, 128, 128 * 4)
    }

    /// Settled, with a ping answered just now.
    fn settled_now(a: &Activity) -> bool {
        SettleCheck {
            answered_while_quiet: a.answered_while_quiet(u64::MAX),
            ..check(a, true)
        }
        .settled()
    }

    /// One frame of a spinner turning in the first tile, `n` its frame count,
    /// and whatever else the frame shows.
    fn frame(a: &mut Activity, n: u64, wants: bool, more: &[(usize, usize, u8)]) {
        let mut set = vec![(3, 3, (n % 250) as u8 + 1)];
        set.extend_from_slice(more);
        a.committed(a.wants_pixels().then(|| pixels(&set)));
        a.tick(wants, n);
    }

    #[test]
    fn a_spinner_alone_settles_once_learnt_and_an_effect_beside_it_does_not() {
        let mut a = Activity::default();
        let mut n = 0;
        // While it learns what animates, every frame is activity.
        for _ in 0..ANIMATION_TICKS {
            n += 1;
            frame(&mut a, n, true, &[]);
            assert!(!settled_now(&a), "frame {n}: not learnt yet");
        }
        for _ in 0..ANIMATION_TICKS {
            n += 1;
            frame(&mut a, n, true, &[]);
        }
        assert!(a.animating());
        assert!(settled_now(&a), "only the spinner draws");
        // An effect elsewhere (a check mark, a switch sliding for a few
        // frames) is activity until it stops changing.
        for step in 0..18u8 {
            n += 1;
            frame(&mut a, n, true, &[(100, 100, step + 1)]);
            assert!(!settled_now(&a), "effect frame {step}");
        }
        for _ in 0..QUIET_TICKS {
            n += 1;
            frame(&mut a, n, true, &[(100, 100, 18)]);
        }
        assert!(settled_now(&a), "the effect ended");
    }

    #[test]
    fn a_spinner_starved_of_the_cpu_is_learnt_while_its_drawing_thread_waits_to_run() {
        // Starved, the app draws every few ticks and at times not for 20
        // ticks, its main thread waiting to run all along: late for its
        // next frame, not resting. Only a look at its threads tells.
        let starved = |looked: bool| {
            let mut a = Activity::default();
            let mut n = 0;
            for frame_no in 0..60 {
                n += 1;
                frame(&mut a, n, false, &[]);
                let late = if frame_no % 6 == 5 { 20 } else { 4 };
                for _ in 0..late {
                    n += 1;
                    if looked {
                        a.drawer_found_running();
                    }
                    a.tick(false, n);
                }
            }
            n += 1;
            frame(&mut a, n, false, &[]);
            a
        };
        assert!(starved(true).animating(), "the spinner was learnt");
        assert!(!starved(false).animating(), "each gap ended its run");
    }

    #[test]
    fn a_window_that_animates_all_over_never_settles() {
        let mut a = Activity::default();
        for n in 0..4 * ANIMATION_TICKS {
            let v = (n % 250) as u8 + 1;
            let all: Vec<_> = (0..4)
                .flat_map(|ty| (0..4).map(move |tx| (tx * 32 + 1, ty * 32 + 1, v)))
                .collect();
            a.committed(a.wants_pixels().then(|| pixels(&all)));
            a.tick(true, n);
            assert!(!settled_now(&a));
        }
    }

    #[test]
    fn what_animated_before_a_rest_is_forgotten() {
        let mut a = Activity::default();
        let mut n = 0;
        for _ in 0..2 * ANIMATION_TICKS + u64::from(QUIET_TICKS) {
            n += 1;
            frame(&mut a, n, true, &[]);
        }
        assert!(a.animating());
        for _ in 0..=RUN_GAP_TICKS {
            n += 1;
            a.tick(false, n);
        }
        assert!(!a.animating());
        // The spinner's tile changes again: an effect now, until learnt anew.
        n += 1;
        frame(&mut a, n, true, &[]);
        assert!(!settled_now(&a));
    }

    #[test]
    fn effects_one_after_the_other_are_never_learnt_as_animation() {
        // A label changed by each of many presses, a few frames each, the
        // window resting (no frame asked for) between them.
        let mut a = Activity::default();
        let mut n = 0;
        for press in 0..40u8 {
            for _ in 0..PIXELS_AFTER_TICKS + 4 {
                n += 1;
                let set = [(100, 100, press + 1)];
                a.committed(a.wants_pixels().then(|| pixels(&set)));
                a.tick(true, n);
                assert!(!settled_now(&a), "press {press}: its effect is activity");
            }
            for _ in 0..=RUN_GAP_TICKS {
                n += 1;
                a.tick(false, n);
            }
            assert!(!a.animating());
        }
    }

    #[test]
    fn a_pending_frame_request_blocks_even_when_quiet() {
        let mut a = Activity::default();
        for _ in 0..5 {
            a.tick(false, 0);
        }
        assert!(check(&a, false).settled());
        assert!(!check(&a, true).settled());
    }

    #[test]
    fn input_must_be_read() {
        let mut a = Activity::default();
        for _ in 0..5 {
            a.tick(false, 0);
        }
        let mut c = check(&a, false);
        assert!(c.settled());
        c.input_read = false;
        assert!(!c.settled());
        assert!(c.reason().contains("ping"));
    }

    #[test]
    fn unacknowledged_configure_blocks() {
        let c = SettleCheck {
            busy_thread: None,
            timer_due: None,
            pacing: false,
            drawing: false,
            wants_frame: false,
            pending_configure: true,
            quiet_ticks: 10,
            input_read: true,
            answered_while_quiet: true,
        };
        assert!(!c.settled());
        assert!(c.reason().contains("configure"));
    }

    #[test]
    fn a_quiet_window_must_answer_a_ping_sent_after_it_went_quiet() {
        // A slow frame: the window looks quiet while the app is busy drawing.
        let mut a = Activity::default();
        a.committed(None);
        a.tick(false, 3);
        a.tick(false, 4);
        assert_eq!(a.quiet_ticks(), 1);
        a.tick(false, 5);
        let mut c = check(&a, false);
        c.answered_while_quiet = a.answered_while_quiet(5);
        assert!(!c.settled(), "a ping from before the quiet proves nothing");
        assert!(c.needs_ping());
        assert!(c.reason().contains("went quiet"));
        c.answered_while_quiet = a.answered_while_quiet(6);
        assert!(c.settled());
        assert!(!c.needs_ping());
        // A commit (the slow frame landing) starts the quiet over, with a new mark.
        a.committed(None);
        a.tick(false, 7);
        assert!(!a.answered_while_quiet(6));
        a.tick(false, 8);
        a.tick(false, 9);
        assert!(!a.answered_while_quiet(9));
        assert!(a.answered_while_quiet(10));
    }
    #[test]
    fn a_timer_seen_once_keeps_the_window_unsettled_until_it_is_due() {
        // A search entry's 150 ms delay, seen while the app waited for a
        // frame; at later looks its frame clock's 16 ms wake-ups hide it.
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = Activity::default();
        a.tick(false, 0);
        a.threads_looked_at(None, Some(MainLoopWake::Timer(150)), at(0));
        let mut t = 0;
        while t + 17 < 150 {
            t += 17;
            a.tick(false, 0);
            a.threads_looked_at(None, None, at(t));
            let c = check_at(&a, false, at(t));
            assert!(!c.settled(), "settled at {t} ms, before the timer");
            assert!(c.reason().contains("timers"), "{}", c.reason());
        }
        // A later, longer timer (the delay restarted by more typing) wins.
        a.threads_looked_at(None, Some(MainLoopWake::Timer(150)), at(t));
        a.threads_looked_at(None, Some(MainLoopWake::Timer(20)), at(t));
        assert_eq!(a.timer_due(at(t)), Some(150));
        // Once it is due, quiet ticks count again.
        for _ in 0..3 {
            t += 17;
            a.tick(false, 0);
            a.threads_looked_at(None, None, at(t + 150));
        }
        assert_eq!(a.timer_due(at(t + 150)), None);
        assert!(check_at(&a, false, at(t + 150)).settled());
    }
    #[test]
    fn a_loop_pacing_itself_after_drawing_is_not_quiet_until_it_sleeps_longer() {
        // GTK's frame clock wakes every 16 ms for a few frames after it
        // draws; a search entry's delay behind those wake-ups is not seen.
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = Activity::default();
        a.committed(None);
        for t in [17, 34, 51, 68] {
            a.tick(false, 0);
            a.threads_looked_at(None, Some(MainLoopWake::Pacing), at(t));
            let c = check_at(&a, false, at(t));
            assert!(!c.settled(), "settled at {t} ms, while the loop paced");
            assert!(c.reason().contains("waking every few ms"), "{}", c.reason());
        }
        // It sleeps longer: the delay shows, and keeps it unsettled.
        a.tick(false, 0);
        a.threads_looked_at(None, Some(MainLoopWake::Timer(90)), at(85));
        assert!(!check_at(&a, false, at(85)).settled());
        // A loop that paces for good (between a caret's fades): the first
        // paced stretch after a request may hide a timer set in answer, due
        // as late as TIMER_SOON_MS after the stretch began (a search entry's
        // delay after the typing it drew, on a loaded machine where looks
        // rarely catch the loop between reading the key and drawing it).
        let settles = |b: &mut Activity, from: u64, most: u64| {
            let mut t = from;
            while !check_at(b, false, at(t)).settled() {
                assert!(t <= from + most, "a loop pacing for good never settled");
                t += 17;
                b.tick(false, 0);
                b.threads_looked_at(None, Some(MainLoopWake::Pacing), at(t));
            }
            t
        };
        let mut b = Activity::default();
        b.answer_asked(at(0));
        let t = settles(&mut b, 0, 400);
        assert!(
            t >= u64::from(TIMER_SOON_MS),
            "settled at {t} ms, in the stretch after the request"
        );
        // The caret's next fade ends that stretch; the rests after it count
        // as quiet once PACING_MOST passed, or a caret fading every few
        // hundred ms would keep its window from ever settling.
        b.committed(None);
        b.tick(false, 0);
        b.threads_looked_at(None, Some(MainLoopWake::Pacing), at(t + 17));
        assert!(b.pacing(at(t + 17)));
        let rested = settles(&mut b, t + 17, 150);
        assert!(
            rested >= t + 17 + 70,
            "settled at {rested} ms, while the loop paced"
        );
        // A plain wait asks the app for nothing: its first stretch rests
        // after PACING_MOST, as any other.
        let mut c = Activity::default();
        c.quiet_anew();
        let plain = settles(&mut c, 0, 150);
        assert!(plain >= 70, "settled at {plain} ms, while the loop paced");
        // A look that finds it running leaves the pacing as it was; one
        // that finds it sleeping longer ends it.
        b.committed(None);
        b.threads_looked_at(None, Some(MainLoopWake::Pacing), at(rested + 17));
        b.threads_looked_at(None, None, at(rested + 100));
        assert!(!b.pacing(at(rested + 100)), "paced past PACING_MOST");
        b.threads_looked_at(None, Some(MainLoopWake::Later), at(rested + 101));
        b.threads_looked_at(None, Some(MainLoopWake::Pacing), at(rested + 117));
        assert!(
            b.pacing(at(rested + 117)),
            "a longer sleep did not end the pacing"
        );
    }

    #[test]
    fn a_request_whose_timer_hides_behind_a_caret_fading_is_not_answered_before_it() {
        // An action that draws nothing (a menu item chosen through the
        // app's exported actions) sets a 200 ms timer in a window whose
        // focused entry keeps a caret blinking: its loop paces, and the
        // caret's fade, drawn in a few frames, ends each paced stretch.
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = Activity::default();
        a.answer_asked(at(0));
        let fade = [30, 47, 64, 81];
        let mut t = 0;
        while t < u64::from(TIMER_SOON_MS) {
            t += 17;
            if fade.contains(&(t - 4)) || fade.contains(&t) {
                a.committed(None);
            }
            a.tick(false, 0);
            a.threads_looked_at(None, Some(MainLoopWake::Pacing), at(t));
            let c = check_at(&a, false, at(t));
            assert!(
                !c.settled(),
                "settled at {t} ms, before a timer set in answer"
            );
        }
        // Past TIMER_SOON_MS such a timer has fired or there was none: a
        // loop that paces for good rests after PACING_MOST.
        while !check_at(&a, false, at(t)).settled() {
            assert!(t < 400, "a loop pacing for good never settled");
            t += 17;
            a.tick(false, 0);
            a.threads_looked_at(None, Some(MainLoopWake::Pacing), at(t));
        }
    }

    #[test]
    fn a_window_drawing_with_a_timer_pending_is_said_to_do_both() {
        let now = Instant::now();
        let mut a = Activity::default();
        for _ in 0..3 {
            a.committed(None);
            a.tick(false, 0);
            a.threads_looked_at(None, Some(MainLoopWake::Timer(99)), now);
        }
        let why = check_at(&a, false, now).reason();
        assert!(why.contains("keeps drawing frames"), "{why}");
        assert!(why.contains("keeps setting timers (99 ms)"), "{why}");
    }
}
