//! The rules of "settled": what a window must show over the output's frame ticks
//! before settle answers. Pure accounting, fed by the compositor's events.
//!
//! A window is settled when it asks for no frame it has not drawn, has no
//! unacknowledged configure, has read its input (a ping sent after the last input
//! came back) and has stayed quiet, without a commit or a frame request, for
//! `QUIET_TICKS` whole ticks of the output clock. The quiet ticks catch toolkits
//! (GTK) that pace themselves and commit up to one refresh interval after a
//! frame callback, when no callback is pending for a moment.

/// Whole output frames without a commit or a frame request before a window counts as quiet.
pub const QUIET_TICKS: u32 = 2;

/// Frame activity of one window between ticks of the output clock.
#[derive(Debug, Default)]
pub struct Activity {
    commits: u64,
    committed_since_tick: bool,
    quiet_ticks: u32,
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

    /// A tick of the output clock; `wants_frame` is whether a frame callback waits.
    pub fn tick(&mut self, wants_frame: bool) {
        if self.committed_since_tick || wants_frame {
            self.quiet_ticks = 0;
        } else {
            self.quiet_ticks = self.quiet_ticks.saturating_add(1);
        }
        self.committed_since_tick = false;
    }

    pub fn quiet_ticks(&self) -> u32 {
        self.quiet_ticks
    }

    pub fn commits(&self) -> u64 {
        self.commits
    }
}

/// One evaluation of the settle rules for a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleCheck {
    pub wants_frame: bool,
    pub pending_configure: bool,
    pub quiet_ticks: u32,
    pub input_read: bool,
}

impl SettleCheck {
    pub fn settled(&self) -> bool {
        !self.wants_frame
            && !self.pending_configure
            && self.input_read
            && self.quiet_ticks >= QUIET_TICKS
    }

    /// Why the window is not settled, for a timeout message.
    pub fn reason(&self) -> String {
        let mut why = Vec::new();
        if self.wants_frame || self.quiet_ticks < QUIET_TICKS {
            why.push("it keeps drawing frames");
        }
        if self.pending_configure {
            why.push("it has not acknowledged a configure");
        }
        if !self.input_read {
            why.push("it has not answered a ping since its last input");
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
            wants_frame: wants,
            pending_configure: false,
            quiet_ticks: a.quiet_ticks(),
            input_read: true,
        }
    }

    #[test]
    fn a_window_that_stops_drawing_settles_after_quiet_ticks() {
        let mut a = Activity::default();
        a.committed();
        a.tick(false);
        assert!(!check(&a, false).settled(), "committed during that tick");
        a.tick(false);
        assert!(!check(&a, false).settled(), "one quiet tick is not enough");
        a.tick(false);
        assert!(check(&a, false).settled());
        assert_eq!(a.commits(), 1);
    }

    #[test]
    fn an_animating_window_never_settles() {
        let mut a = Activity::default();
        for _ in 0..100 {
            a.committed();
            a.tick(true);
            assert!(!check(&a, true).settled());
        }
        assert_eq!(a.commits(), 100);
    }

    #[test]
    fn a_pending_frame_request_blocks_even_when_quiet() {
        let mut a = Activity::default();
        for _ in 0..5 {
            a.tick(false);
        }
        assert!(check(&a, false).settled());
        assert!(!check(&a, true).settled());
    }

    #[test]
    fn input_must_be_read() {
        let mut a = Activity::default();
        for _ in 0..5 {
            a.tick(false);
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
            wants_frame: false,
            pending_configure: true,
            quiet_ticks: 10,
            input_read: true,
        };
        assert!(!c.settled());
        assert!(c.reason().contains("configure"));
    }
}
