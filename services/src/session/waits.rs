//! Waiting for what an agent expects: an element to show or to go, read again
//! only when the window commits or an accessibility event arrives; and for
//! the effect of input, before its answer.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use wayrig_host::{Capability, FrameWait, HostError, Stepped, WindowHandle, WindowInfo};

use super::elements::Query;
use super::windows::is_top_level;
use super::Session;
use crate::model::{Error, Node, Tree};

/// What `wait_for` waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// An element the query matches shows.
    Shown(Query),
    /// No element the query matches shows (any that match are hidden or gone).
    Gone(Query),
}

impl Expect {
    /// Why a wait for this ran out, for the timeout's message.
    fn unmet(&self, handle: WindowHandle, timeout: Duration) -> String {
        match self {
            Expect::Shown(q) => format!(
                "window {handle} showed no element matching {} within {timeout:?}",
                q.describe()
            ),
            Expect::Gone(q) => format!(
                "window {handle} still showed an element matching {} after {timeout:?}",
                q.describe()
            ),
        }
    }
}

/// How long an app may take to read input and draw its answer to it: the
/// frame waited for between the steps of an action, and for its answer when
/// that waits for no more.
pub(super) const DRAWN_LIMIT: Duration = Duration::from_secs(5);

/// The most frames one step advances: ten seconds of a 60 Hz output, so
/// that one request cannot hold the session for long.
const STEP_MOST: u32 = 600;

impl Session {
    /// Advance every window `frames` frames, in a session paced `step`: each
    /// frame's callbacks answered, and drawn (or shown by a ping to need no
    /// drawing) before the next. Other pacings refuse it.
    pub async fn step(&self, frames: u32) -> Result<Stepped, Error> {
        self.require(Capability::FramePacing, "stepping frames")?;
        if !(1..=STEP_MOST).contains(&frames) {
            return Err(Error::InvalidRequest(format!(
                "a step advances 1 to {STEP_MOST} frames, not {frames}; step again for more"
            )));
        }
        Ok(self.host.step(frames).await?)
    }

    /// Set how long an input or action's answer waits for its window to
    /// settle (zero: only for the frame drawn in answer).
    pub fn set_effect_wait(&self, limit: Duration) {
        let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
        self.effect_wait_ms.store(ms, Ordering::Relaxed);
    }

    /// How long an input or action's answer waits for its window to settle.
    pub fn effect_wait(&self) -> Duration {
        Duration::from_millis(self.effect_wait_ms.load(Ordering::Relaxed))
    }

    /// Wait for the effect of input or an action to show: the window settled
    /// (frames, configures, input read, the app's threads and timers) within
    /// the effect wait, then the accessibility events its app sent until then.
    /// Answers why not, when the wait ran out first; a window that closed in
    /// answer (a dialog's OK) has shown its effect in another window of its
    /// app, `app` (read before the input: once the window has gone, the
    /// session's list no longer says whose it was).
    pub(crate) async fn settle_effect(
        &self,
        window: WindowHandle,
        app: Option<u32>,
    ) -> Option<String> {
        let began = Instant::now();
        let limit = self.effect_wait();
        let paced = self.capabilities().has(Capability::FramePacing);
        let waited = if limit.is_zero() || !paced {
            self.host
                .wait_frames(window, FrameWait::Drawn, DRAWN_LIMIT)
                .await
                .map(drop)
        } else {
            self.host
                .wait_frames(window, FrameWait::Effect, limit)
                .await
                .map(drop)
        };
        // A window unmapped in answer settles at once, as it draws no more:
        // gone from the list, it closed, and its effect shows elsewhere.
        let closed = waited.is_ok()
            && paced
            && self
                .host
                .windows()
                .await
                .is_ok_and(|listed| !listed.iter().any(|w| w.handle == window));
        let unsettled = match waited {
            Ok(()) if closed => {
                let left = limit.saturating_sub(began.elapsed());
                return self.settle_where_focus_went(app, left).await;
            }
            Ok(()) => None,
            Err(HostError::NoWindow(_)) if paced => {
                let left = limit.saturating_sub(began.elapsed());
                return self.settle_where_focus_went(app, left).await;
            }
            Err(HostError::NoWindow(_)) => return None,
            Err(HostError::Timeout(after, why)) if paced && !limit.is_zero() => Some(format!(
                "the answer waited {after:?} for the window to settle: {why}"
            )),
            // No frame in answer, where only one is waited for: said as well.
            Err(HostError::Timeout(after, why)) => Some(format!(
                "the answer waited {after:?} for a frame drawn in answer: {why}"
            )),
            Err(e) => {
                tracing::debug!(%e, "no frame drawn after input");
                None
            }
        };
        if let Err(e) = self.sync_apps(window).await {
            tracing::debug!(%e, "no accessibility sync after input");
        }
        unsettled
    }

    /// A window that closed in answer (a dialog's OK) has shown its effect
    /// there; what closing it did shows in the window its app focuses next
    /// (the page a file was chosen for), which settles too, within `left`
    /// of the effect wait. Answers why not, when the wait ran out first.
    async fn settle_where_focus_went(&self, app: Option<u32>, left: Duration) -> Option<String> {
        if left.is_zero() {
            return None;
        }
        let windows = self.host.windows().await.ok()?;
        // The compositor may not have moved the focus yet as the window
        // goes: then the app's frontmost window is where it goes.
        let of_app: Vec<&WindowInfo> = windows
            .iter()
            .filter(|w| app.is_some() && w.pid == app && is_top_level(w))
            .collect();
        let next = of_app
            .iter()
            .find(|w| w.focused)
            .or_else(|| of_app.iter().min_by_key(|w| w.z))?
            .handle;
        tracing::debug!(%next, focused = of_app.iter().any(|w| w.focused), "settling where the focus went");
        let unsettled = match self.host.wait_frames(next, FrameWait::Effect, left).await {
            Ok(_) | Err(HostError::NoWindow(_)) => None,
            Err(HostError::Timeout(after, why)) => Some(format!(
                "the window closed; the answer waited {after:?} for window {next}, which took \
                 the focus, to settle: {why}"
            )),
            Err(e) => {
                tracing::debug!(%e, "no settle where the focus went");
                None
            }
        };
        if let Err(e) = self.sync_apps(next).await {
            tracing::debug!(%e, "no accessibility sync after input");
        }
        unsettled
    }

    /// Wait until the window shows what `expect` asks for, reading its tree
    /// again only when the window commits a frame or an accessibility event
    /// arrives: work nothing else can see (a worker polled on a timer, a
    /// reply from the network) is waited for by its result. Answers the
    /// first element that matched (none for `Gone`); `Timeout` when the
    /// window did not show it within `timeout`.
    pub async fn wait_for(
        &self,
        handle: WindowHandle,
        expect: &Expect,
        timeout: Duration,
    ) -> Result<Option<Node>, Error> {
        let shows = |query: &Query| {
            let query = Query {
                include_hidden: false,
                ..query.clone()
            };
            move |tree: &Tree| query.find(tree).first().map(|n| (*n).clone())
        };
        let met = match expect {
            Expect::Shown(query) => {
                let first = shows(query);
                self.wait_until(handle, timeout, |tree| first(tree).map(Some))
                    .await
            }
            Expect::Gone(query) => {
                let first = shows(query);
                self.wait_until(handle, timeout, |tree| {
                    first(tree).is_none().then_some(None)
                })
                .await
            }
        };
        met?.ok_or_else(|| Error::Timeout(expect.unmet(handle, timeout)))
    }

    /// Wait until `met` answers something of the window's tree, reading it
    /// again only when the window commits a frame or an accessibility event
    /// arrives; `None` when `timeout` ran out first.
    pub(crate) async fn wait_until<T>(
        &self,
        handle: WindowHandle,
        timeout: Duration,
        met: impl Fn(&Tree) -> Option<T>,
    ) -> Result<Option<T>, Error> {
        let a11y = self.a11y()?;
        let deadline = Instant::now() + timeout;
        loop {
            // Counted before the read: a change during it makes a new read.
            let changes = a11y.changes();
            let commits = self.host.commits(handle).await?;
            let tree = self.tree(handle).await?;
            if let Some(answer) = met(&tree) {
                return Ok(Some(answer));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            if a11y.changes() != changes {
                continue;
            }
            // A commit past the one counted before the read, or a change of
            // the tree, whichever comes first; the other is dropped unanswered.
            tokio::select! {
                frame = self.host.wait_frames(handle, FrameWait::Past(commits), left) => {
                    match frame {
                        Ok(_) | Err(wayrig_host::HostError::Timeout(..)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                _ = a11y.wait_change(changes, left) => {}
            }
        }
    }
}
