//! Waiting for what an agent expects: an element to show or to go, read again
//! only when the window commits or an accessibility event arrives.

use std::time::{Duration, Instant};

use wayrig_host::{FrameWait, WindowHandle};

use super::elements::Query;
use super::Session;
use crate::model::{Error, Node};

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

impl Session {
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
        let a11y = self.a11y()?;
        let deadline = Instant::now() + timeout;
        loop {
            // Counted before the read: a change during it makes a new read.
            let changes = a11y.changes();
            let commits = self.host.commits(handle).await?;
            let tree = self.tree(handle).await?;
            match expect {
                Expect::Shown(query) => {
                    let query = Query {
                        include_hidden: false,
                        ..query.clone()
                    };
                    if let Some(found) = query.find(&tree).first() {
                        return Ok(Some((*found).clone()));
                    }
                }
                Expect::Gone(query) => {
                    let query = Query {
                        include_hidden: false,
                        ..query.clone()
                    };
                    if query.find(&tree).is_empty() {
                        return Ok(None);
                    }
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(expect.unmet(handle, timeout)));
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
