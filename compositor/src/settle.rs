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

use crate::threads::BusyThread;

/// Whole output frames without a commit or a frame request before a window counts as quiet.
pub const QUIET_TICKS: u32 = 2;

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
}

impl Activity {
    /// The window committed a new state.
    pub fn committed(&mut self) {
        self.commits += 1;
        self.committed_since_tick = true;
        self.quiet_ticks = 0;
    }

    /// The window got input: it may draw in answer, so count quiet ticks anew.
    pub fn input_received(&mut self) {
        self.quiet_ticks = 0;
    }

    /// A tick of the output clock; `wants_frame` is whether a frame callback
    /// waits, `moment` the host's moment counter now.
    pub fn tick(&mut self, wants_frame: bool, moment: u64) {
        if self.committed_since_tick || wants_frame {
            self.quiet_ticks = 0;
        } else {
            self.quiet_ticks = self.quiet_ticks.saturating_add(1);
            if self.quiet_ticks == QUIET_TICKS {
                self.quiet_mark = moment;
            }
        }
        self.committed_since_tick = false;
    }

    /// What a look at the app's threads found this tick: a thread running
    /// is work not yet shown, so the window is not quiet.
    pub fn threads_looked_at(&mut self, busy: Option<BusyThread>) {
        if busy.is_some() {
            self.quiet_ticks = 0;
        }
        self.busy = busy;
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
        if let Some(t) = &self.busy_thread {
            thread = format!("its thread {:?} (tid {}) keeps running", t.name, t.tid);
            why.push(thread.as_str());
        } else if self.wants_frame || self.quiet_ticks < QUIET_TICKS {
            why.push("it keeps drawing frames");
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
        SettleCheck {
            busy_thread: a.busy_thread().cloned(),
            wants_frame: wants,
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
            a.threads_looked_at(Some(worker.clone()));
        }
        let c = check(&a, false);
        assert!(!c.settled());
        assert!(c.reason().contains("pool-worker") && c.reason().contains("4711"));
        // The worker is done: the window settles after its quiet ticks.
        for _ in 0..QUIET_TICKS {
            a.tick(false, 0);
            a.threads_looked_at(None);
        }
        assert!(check(&a, false).settled());
    }

    #[test]
    fn a_window_that_stops_drawing_settles_after_quiet_ticks() {
        let mut a = Activity::default();
        a.committed();
        a.tick(false, 0);
        assert!(!check(&a, false).settled(), "committed during that tick");
        a.tick(false, 0);
        assert!(!check(&a, false).settled(), "one quiet tick is not enough");
        a.tick(false, 0);
        assert!(check(&a, false).settled());
        assert_eq!(a.commits(), 1);
    }

    #[test]
    fn an_animating_window_never_settles() {
        let mut a = Activity::default();
        for _ in 0..100 {
            a.committed();
            a.tick(true, 0);
            assert!(!check(&a, true).settled());
        }
        assert_eq!(a.commits(), 100);
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
        a.committed();
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
        a.committed();
        a.tick(false, 7);
        assert!(!a.answered_while_quiet(6));
        a.tick(false, 8);
        a.tick(false, 9);
        assert!(!a.answered_while_quiet(9));
        assert!(a.answered_while_quiet(10));
    }
}
