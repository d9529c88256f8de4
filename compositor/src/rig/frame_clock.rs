//! The output's frame clock: frame callbacks and presentation feedback at the
//! session's pacing, and the settle and step waiters answered as frames go by.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use smithay::desktop::utils::{
    take_presentation_feedback_surface_tree, OutputPresentationFeedback,
};
use smithay::output::Output;
use smithay::reexports::wayland_protocols::wp::presentation_time::server::wp_presentation_feedback;
use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Resource;
use smithay::utils::{Clock, Monotonic, Time};
use smithay::wayland::compositor::{
    with_states, with_surface_tree_downward, SurfaceAttributes, TraversalAction,
};
use smithay::wayland::presentation::Refresh;
use smithay::wayland::shell::xdg::XdgToplevelSurfaceData;
use tokio::sync::oneshot;
use wayrig_host::{HostError, HostResult, Pacing, Settled, Stepped, WindowHandle};

use crate::config::Config;
use crate::registry::Record;
use crate::rig::clients::Clients;
use crate::rig::pixels::Tiles;
use crate::rig::windows::{Surface, WindowData, Windows};
use crate::settle::SettleCheck;
use wayrig_host::threads;
use wayrig_host::FrameWait;

/// How long each frame of a step may wait for its windows to draw or answer
/// a ping.
const STEP_LIMIT: Duration = Duration::from_secs(10);

/// A caller waiting on a window's frames: to settle, to draw, or to commit.
struct SettleWaiter {
    handle: WindowHandle,
    until: FrameWait,
    started: Instant,
    deadline: Instant,
    commits_at_start: u64,
    reply: oneshot::Sender<HostResult<Settled>>,
}

/// A step request in progress (step pacing).
struct StepJob {
    remaining: u32,
    frames: u32,
    callbacks: u64,
    /// Windows that got a frame this step and have not yet drawn, or shown
    /// that they draw nothing.
    awaiting: Vec<u64>,
    /// Of those, the ones that answered a ping since the frame: they have
    /// read it, and draw nothing once their app sleeps with nothing to run
    /// (GTK answers the ping before it paints).
    read: HashSet<u64>,
    moment: u64,
    deadline: Instant,
    reply: oneshot::Sender<HostResult<Stepped>>,
}

/// The virtual output's clock and who waits on it.
pub struct FrameClock {
    clock: Clock<Monotonic>,
    pacing: Pacing,
    frame_interval: Duration,
    /// Minimized and fully covered windows keep receiving frame callbacks
    /// (when false, only while someone waits on their frames).
    frames_for_hidden: bool,
    frame_seq: u64,
    settle_waiters: Vec<SettleWaiter>,
    step_job: Option<StepJob>,
    /// Whether a running thread of an app keeps its window from settling.
    settle_threads: bool,
    /// Clients whose frame callbacks wait, until when: their elements are
    /// being read.
    held: HashMap<ClientId, Instant>,
    /// Windows sent a frame they have not yet drawn (step pacing: a wait
    /// gave them frames; the next step starts once they have drawn).
    in_flight: HashSet<u64>,
}

/// Ping the client of `surface` unless a ping is in flight.
fn ping(windows: &Windows, clients: &mut Clients, surface: &WlSurface) {
    clients.ping(surface, windows.shell_client_of(surface));
}

impl FrameClock {
    pub fn new(config: &Config) -> Self {
        FrameClock {
            clock: Clock::new(),
            pacing: config.pacing,
            frame_interval: config.frame_interval(),
            frames_for_hidden: config.frames_for_hidden,
            frame_seq: 0,
            settle_waiters: Vec::new(),
            settle_threads: config.settle_threads,
            step_job: None,
            held: HashMap::new(),
            in_flight: HashSet::new(),
        }
    }

    /// The compositor's clock now.
    pub fn now(&self) -> Time<Monotonic> {
        self.clock.now()
    }

    // ---- frames --------------------------------------------------------

    /// Answer the frame callbacks of one record's surface tree; returns how many.
    fn send_frames_for(&mut self, windows: &Windows, output: &Output, id: u64) -> u64 {
        let Some(rec) = windows.registry.get(id) else {
            return 0;
        };
        let on_screen = rec.announced().is_some_and(|info| info.on_screen);
        // Input waiting on the window's next frames gets them even when hidden
        // windows are throttled, or its answer could never come.
        let awaited = self
            .settle_waiters
            .iter()
            .any(|w| w.handle.id == id && !w.until.settles());
        if !self.frames_for_hidden && !on_screen && !awaited {
            return 0;
        }
        let root = rec.surface.surface.wl_surface();
        if self.holds(&root, id) {
            return 0;
        }
        let now = self.clock.now();
        let time: Duration = now.into();
        let mut sent = 0;
        with_surface_tree_downward(
            &root,
            (),
            |_, _, _| TraversalAction::DoChildren(()),
            |_, states, _| {
                let mut attrs = states.cached_state.get::<SurfaceAttributes>();
                for cb in attrs.current().frame_callbacks.drain(..) {
                    cb.done(time.as_millis() as u32);
                    sent += 1;
                }
            },
            |_, _, _| true,
        );
        if sent > 0 {
            if self.pacing == Pacing::Step {
                self.in_flight.insert(id);
            }
            let mut feedback = OutputPresentationFeedback::new(output);
            let output = output.clone();
            take_presentation_feedback_surface_tree(
                &root,
                &mut feedback,
                |_, _| Some(output.clone()),
                |_, _| wp_presentation_feedback::Kind::Vsync,
            );
            self.frame_seq += 1;
            feedback.presented(
                now,
                Refresh::fixed(self.frame_interval),
                self.frame_seq,
                wp_presentation_feedback::Kind::Vsync,
            );
        }
        sent
    }

    /// Keep `client`'s frame callbacks for `hold` (zero: give them again).
    pub fn hold(&mut self, client: ClientId, hold: Duration) {
        let now = Instant::now();
        self.held.retain(|_, until| *until > now);
        match hold.is_zero() {
            true => self.held.remove(&client),
            false => self.held.insert(client, now + hold),
        };
    }

    /// Whether record `id`'s frame callbacks wait: its client is held and no
    /// one waits on the record's frames (a settle that saw no frames would
    /// take the held app for a quiet one).
    fn holds(&mut self, root: &WlSurface, id: u64) -> bool {
        let Some(client) = root.client().map(|c| c.id()) else {
            return false;
        };
        let Some(until) = self.held.get(&client) else {
            return false;
        };
        if *until <= Instant::now() {
            self.held.remove(&client);
            return false;
        }
        let waited = self.settle_waiters.iter().any(|w| w.handle.id == id)
            || self
                .step_job
                .as_ref()
                .is_some_and(|job| job.awaiting.contains(&id));
        !waited
    }

    /// One frame of the virtual output: every window that asked gets its callback.
    /// Returns the windows that got one and the number of callbacks.
    fn send_frames_all(&mut self, windows: &Windows, output: &Output) -> (Vec<u64>, u64) {
        let ids: Vec<u64> = windows.registry.iter().map(|r| r.id).collect();
        let mut got = Vec::new();
        let mut total = 0;
        for id in ids {
            let n = self.send_frames_for(windows, output, id);
            if n > 0 {
                got.push(id);
                total += n;
            }
        }
        (got, total)
    }

    /// The accounting clock: once per output frame, whatever the pacing.
    /// `moment` is the clients' moment now.
    pub fn tick(
        &mut self,
        windows: &mut Windows,
        clients: &mut Clients,
        output: &Output,
        moment: u64,
    ) {
        // Threads are looked at only for windows someone waits to settle.
        let watched: Vec<u64> = if self.settle_threads {
            self.settle_waiters
                .iter()
                .filter(|w| w.until.settles())
                .filter_map(|w| windows.resolve(w.handle).ok())
                .collect()
        } else {
            Vec::new()
        };
        let ids: Vec<u64> = windows.registry.iter().map(|r| r.id).collect();
        for id in ids {
            let wants = windows.wants_frame(id);
            if let Some(rec) = windows.registry.get_mut(id) {
                rec.surface.activity.tick(wants, moment);
            }
            if watched.contains(&id) {
                Self::look_at_threads(windows, clients, id);
            }
        }
        // In step pacing a client asks for frames by a step, or by waiting
        // on a window's frames (an input's answer, an idle): between its
        // requests the apps stand still.
        let asked = self.pacing == Pacing::Step && !self.settle_waiters.is_empty();
        if self.pacing == Pacing::Realtime || asked {
            self.send_frames_all(windows, output);
        }
        if self
            .step_job
            .as_ref()
            .is_some_and(|job| !job.read.is_empty())
        {
            self.look_at_read_windows(windows, clients);
            if self
                .step_job
                .as_ref()
                .is_some_and(|job| job.awaiting.is_empty())
            {
                self.advance_step(windows, clients, output);
            }
        }
    }

    /// A root surface of record `id` committed.
    pub fn note_commit(
        &mut self,
        windows: &mut Windows,
        clients: &mut Clients,
        output: &Output,
        id: u64,
    ) {
        if let Some(rec) = windows.registry.get_mut(id) {
            let activity = &rec.surface.activity;
            let pixels = activity
                .wants_pixels()
                .then(|| Tiles::of(&rec.surface.surface.wl_surface()))
                .flatten();
            rec.surface.activity.committed(pixels);
        }
        self.in_flight.remove(&id);
        windows.note_shown_change(id);
        if self.pacing == Pacing::Fast {
            self.send_frames_for(windows, output, id);
        }
        // A stepped window has drawn its frame once it asks for the next one.
        if self
            .step_job
            .as_ref()
            .is_some_and(|job| job.awaiting.contains(&id))
            && windows.wants_frame(id)
        {
            let done = self.step_job.as_mut().is_some_and(|job| {
                job.awaiting.retain(|w| *w != id);
                job.awaiting.is_empty()
            });
            if done {
                self.advance_step(windows, clients, output);
            }
        }
    }

    /// Record `id` is gone: its settle waiters fail and a step stops waiting on it.
    pub fn forget_window(&mut self, id: u64) {
        self.in_flight.remove(&id);
        for waiter in std::mem::take(&mut self.settle_waiters) {
            if waiter.handle.id == id {
                let _ = waiter.reply.send(Err(HostError::NoWindow(waiter.handle)));
            } else {
                self.settle_waiters.push(waiter);
            }
        }
        if let Some(job) = &mut self.step_job {
            job.awaiting.retain(|w| *w != id);
        }
    }

    // ---- settle --------------------------------------------------------

    fn settle_check(windows: &Windows, clients: &Clients, id: u64) -> Option<SettleCheck> {
        let rec = windows.registry.get(id)?;
        let wl = rec.surface.surface.wl_surface();
        let pending_configure = match &rec.surface.surface {
            Surface::Toplevel(w) => w.toplevel().is_some_and(|t| {
                with_states(t.wl_surface(), |states| {
                    states
                        .data_map
                        .get::<XdgToplevelSurfaceData>()
                        .is_some_and(|d| !d.lock().unwrap().pending_configures().is_empty())
                })
            }),
            Surface::Popup(_) => false,
        };
        let client = clients.of_surface(&wl);
        let input_read = client.is_none_or(|c| c.answered > c.last_input);
        let activity = &rec.surface.activity;
        let now = Instant::now();
        Some(SettleCheck {
            busy_thread: activity.busy_thread().cloned(),
            timer_due: activity.timer_due(now),
            pacing: activity.pacing(now),
            drawing: activity.drawing(),
            // An animation asks for every frame; what it draws is no activity.
            wants_frame: windows.wants_frame(id) && !activity.animating(),
            pending_configure,
            quiet_ticks: activity.quiet_ticks(),
            input_read,
            answered_while_quiet: client.is_none_or(|c| activity.answered_while_quiet(c.answered)),
        })
    }

    /// Look at the threads of window `id`'s app: one running breaks its quiet.
    fn look_at_threads(windows: &mut Windows, clients: &Clients, id: u64) {
        let Some(rec) = windows.registry.get(id) else {
            return;
        };
        let pid_of = |rec: &Record<WindowData>| {
            clients
                .of_surface(&rec.surface.surface.wl_surface())
                .and_then(|c| c.pid)
        };
        let pid = pid_of(rec).filter(|pid| *pid != std::process::id());
        // An app draws all its windows on one main thread: while another of
        // them animates (a spinner beside a dialog), that thread runs for
        // its frames, and only this window's own commits tell its effect.
        let animating = windows.registry.iter().any(|r| {
            (r.id == id || (pid.is_some() && pid_of(r) == pid)) && r.surface.activity.animating()
        });
        let running = pid.map(threads::running_threads).unwrap_or_default();
        let drawer_running = running.drawing.is_some();
        let busy = running.busy(animating);
        // An app waiting for a frame it asked for sleeps until its nearest
        // timer; once it has drawn, its frame clock's own wake-ups hide a
        // longer one (a search entry's delay after typing), so timers are
        // read while it draws too, and its quiet waits for those wake-ups
        // to end. Not while it animates, as its timers are the animation's
        // (a progress bar's pulse), unless it was just asked for an answer:
        // a timer set in answer counts then (a caret blinking on a loaded
        // machine may be taken for animation), for a bounded while.
        let now = Instant::now();
        let just_asked = rec.surface.activity.answer_due(now);
        let wake = pid
            .filter(|_| busy.is_none() && (!animating || just_asked))
            .and_then(threads::main_loop_wake);
        if let Some(rec) = windows.registry.get_mut(id) {
            let activity = &mut rec.surface.activity;
            tracing::debug!(
                window = id,
                ?busy,
                ?wake,
                animating,
                drawer_running,
                commits = activity.commits(),
                quiet = activity.quiet_ticks(),
                "settle looks at threads"
            );
            if drawer_running {
                activity.drawer_found_running();
            }
            activity.threads_looked_at(busy, wake, now);
        }
    }

    pub fn add_frame_waiter(
        &mut self,
        windows: &mut Windows,
        clients: &mut Clients,
        handle: WindowHandle,
        until: FrameWait,
        timeout: Duration,
        reply: oneshot::Sender<HostResult<Settled>>,
    ) {
        let id = match windows.resolve(handle) {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        // Threads and timers are looked at only while someone waits: the
        // quiet counted before this wait began saw none of them (a press
        // through accessibility that started a worker draws nothing), so the
        // quiet is counted anew, each of its ticks looking at them; one look
        // can miss a worker that is between its runs. A wait for what an
        // action drew or did is a request too: a timer the app set in answer
        // may hide behind its pacing, even from a plain wait after it (which
        // itself asks the app for nothing).
        if self.settle_threads {
            if let Some(rec) = windows.registry.get_mut(id) {
                let activity = &mut rec.surface.activity;
                match until {
                    FrameWait::Effect | FrameWait::Drawn => activity.answer_asked(Instant::now()),
                    FrameWait::Settled => activity.quiet_anew(),
                    FrameWait::Frames(_) | FrameWait::Past(_) => {}
                }
            }
            if until.settles() {
                Self::look_at_threads(windows, clients, id);
            }
        }
        let now = Instant::now();
        let commits = windows
            .registry
            .get(id)
            .map_or(0, |r| r.surface.activity.commits());
        self.settle_waiters.push(SettleWaiter {
            handle,
            until,
            started: now,
            deadline: now + timeout,
            commits_at_start: commits,
            reply,
        });
        self.check_settle_waiters(windows, clients);
    }

    /// Answer every settle waiter whose window settled or whose time ran out.
    pub fn check_settle_waiters(&mut self, windows: &Windows, clients: &mut Clients) {
        let now = Instant::now();
        let waiters = std::mem::take(&mut self.settle_waiters);
        for w in waiters {
            let id = match windows.resolve(w.handle) {
                Ok(id) => id,
                Err(e) => {
                    let _ = w.reply.send(Err(e));
                    continue;
                }
            };
            let Some(check) = Self::settle_check(windows, clients, id) else {
                continue;
            };
            let commits = windows
                .registry
                .get(id)
                .map_or(0, |r| r.surface.activity.commits());
            let committed = commits - w.commits_at_start;
            let done = match w.until {
                FrameWait::Settled | FrameWait::Effect => check.settled(),
                // Read, then drawn: a commit since the input, or none asked for.
                FrameWait::Drawn => {
                    check.input_read
                        && (committed > 0 || (!check.wants_frame && !check.pending_configure))
                }
                FrameWait::Frames(n) => committed >= u64::from(n),
                FrameWait::Past(n) => windows.tree_commits(id) > n,
            };
            if done {
                tracing::debug!(window = %w.handle, ?w.until, committed, ?check, "settle answered");
                let _ = w.reply.send(Ok(Settled {
                    window: w.handle,
                    commits: committed,
                    waited: now - w.started,
                }));
            } else if now >= w.deadline {
                let why = match w.until {
                    FrameWait::Settled | FrameWait::Effect => {
                        format!("did not settle: {}", check.reason())
                    }
                    FrameWait::Drawn if !check.input_read => {
                        "has not answered a ping since its last input".to_string()
                    }
                    FrameWait::Drawn => "asked for a frame it has not drawn".to_string(),
                    FrameWait::Frames(n) => format!("did not commit {n} frames"),
                    FrameWait::Past(n) => format!("did not commit past frame {n}"),
                };
                let _ = w.reply.send(Err(HostError::Timeout(
                    w.deadline - w.started,
                    format!(
                        "window {} {why} ({committed} frames committed meanwhile)",
                        w.handle,
                    ),
                )));
            } else {
                if check.needs_ping() {
                    let wl = windows
                        .registry
                        .get(id)
                        .map(|r| r.surface.surface.wl_surface());
                    if let Some(wl) = wl {
                        ping(windows, clients, &wl);
                    }
                }
                self.settle_waiters.push(w);
            }
        }
    }

    /// The compositor is stopping: every settle waiter learns it is gone.
    pub fn abandon_settle_waiters(&mut self) {
        for waiter in self.settle_waiters.drain(..) {
            let _ = waiter.reply.send(Err(HostError::Gone));
        }
    }

    // ---- step pacing ---------------------------------------------------

    pub fn start_step(
        &mut self,
        windows: &Windows,
        clients: &mut Clients,
        output: &Output,
        frames: u32,
        reply: oneshot::Sender<HostResult<Stepped>>,
    ) {
        if self.pacing != Pacing::Step {
            let _ = reply.send(Err(HostError::Unsupported(format!(
                "stepping frames needs a session paced step (wayrig run --pacing step); \
                 this one is paced {}",
                self.pacing
            ))));
            return;
        }
        if self.step_job.is_some() {
            let _ = reply.send(Err(HostError::InvalidRequest(
                "a step is already in progress".into(),
            )));
            return;
        }
        // A step is every window's frames: none is held through it.
        self.held.clear();
        // It starts from a standstill: a window still drawing a frame a wait
        // gave it draws (or answers a ping) first.
        let moment = clients.next_moment();
        let awaiting: Vec<u64> = self.in_flight.drain().collect();
        for id in &awaiting {
            if let Some(wl) = windows
                .registry
                .get(*id)
                .map(|r| r.surface.surface.wl_surface())
            {
                ping(windows, clients, &wl);
            }
        }
        self.step_job = Some(StepJob {
            remaining: frames,
            frames: 0,
            callbacks: 0,
            awaiting,
            read: HashSet::new(),
            moment,
            deadline: Instant::now() + STEP_LIMIT,
            reply,
        });
        self.advance_step(windows, clients, output);
    }

    /// Deliver the next stepped frame, or answer when all were delivered.
    fn advance_step(&mut self, windows: &Windows, clients: &mut Clients, output: &Output) {
        loop {
            let Some(job) = self.step_job.as_mut() else {
                return;
            };
            if !job.awaiting.is_empty() {
                return;
            }
            if job.remaining == 0 {
                let job = self.step_job.take().expect("job");
                let _ = job.reply.send(Ok(Stepped {
                    frames: job.frames,
                    callbacks: job.callbacks,
                }));
                return;
            }
            job.remaining -= 1;
            job.frames += 1;
            let (got, n) = self.send_frames_all(windows, output);
            let moment = clients.next_moment();
            let job = self.step_job.as_mut().expect("job");
            job.callbacks += n;
            job.moment = moment;
            job.deadline = Instant::now() + STEP_LIMIT;
            job.awaiting = got.clone();
            job.read.clear();
            // Each window that got a frame either draws the next one or shows, by
            // answering a ping, that it drew nothing.
            for id in got {
                if let Some(wl) = windows
                    .registry
                    .get(id)
                    .map(|r| r.surface.surface.wl_surface())
                {
                    // With a ping from before this frame in flight, its pong asks again.
                    ping(windows, clients, &wl);
                }
            }
        }
    }

    /// `client` answered a ping sent at moment `answered`: the step stops waiting
    /// on its windows if that ping came after the frame.
    pub fn step_pong(
        &mut self,
        windows: &Windows,
        clients: &mut Clients,
        output: &Output,
        client: &ClientId,
        answered: u64,
    ) {
        let Some(job) = &mut self.step_job else {
            return;
        };
        let of_client = |id: &u64| {
            windows
                .registry
                .get(*id)
                .and_then(|r| r.surface.surface.wl_surface().client())
                .is_some_and(|c| c.id() == *client)
        };
        if answered >= job.moment {
            // Looked at from the next tick on, not now: GTK answers the ping
            // and sleeps a moment before it paints the frame.
            let read: Vec<u64> = job.awaiting.iter().copied().filter(of_client).collect();
            job.read.extend(read);
        } else if let Some(surface) = job
            .awaiting
            .iter()
            .find(|id| of_client(id))
            .and_then(|id| windows.registry.get(*id))
            .map(|r| r.surface.surface.wl_surface())
        {
            // That pong answered a ping from before the frame: ask again.
            ping(windows, clients, &surface);
        }
        if self
            .step_job
            .as_ref()
            .is_some_and(|job| job.awaiting.is_empty())
        {
            self.advance_step(windows, clients, output);
        }
    }

    /// Windows of the step that read their frame and whose app now sleeps
    /// with nothing to run drew nothing: the step stops waiting on them.
    fn look_at_read_windows(&mut self, windows: &Windows, clients: &Clients) {
        let Some(job) = &mut self.step_job else {
            return;
        };
        let asleep = |id: &u64| {
            windows
                .registry
                .get(*id)
                .and_then(|r| clients.of_surface(&r.surface.surface.wl_surface()))
                .and_then(|c| c.pid)
                .filter(|pid| *pid != std::process::id())
                .is_none_or(|pid| threads::busy_thread(pid).is_none())
        };
        let done: Vec<u64> = job.read.iter().copied().filter(asleep).collect();
        for id in done {
            job.read.remove(&id);
            job.awaiting.retain(|w| *w != id);
        }
    }

    pub fn check_step_deadline(&mut self) {
        if self
            .step_job
            .as_ref()
            .is_some_and(|j| Instant::now() >= j.deadline)
        {
            let job = self.step_job.take().expect("job");
            let _ = job.reply.send(Err(HostError::Timeout(
                STEP_LIMIT,
                format!(
                    "step stalled after {} frames: windows {:?} neither drew their frame nor \
                     went idle (a ping answered, every thread asleep)",
                    job.frames, job.awaiting
                ),
            )));
        }
    }
}
