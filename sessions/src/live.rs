//! A live session and what it owns: its host, its `Session`, every task
//! spawned for it, its bus and its directory; `Sessions` keeps many by id.
//!
//! Ending a session cancels its tasks, waits for them, stops its host (its
//! apps end), and then lets its bus and directory go.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use wayrig_compositor::{CompositorHost, RuntimeDir};
use wayrig_host::Host;
use wayrig_services::{Session, STOP_GRACE};

use crate::recipe::{BusAddresses, Spec, Staged, StartError};

/// Time a face has, past `STOP_GRACE`, to answer what is left and close.
const ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// A running session with everything it started.
pub struct Live<H: Host + ?Sized = CompositorHost> {
    session: Arc<Session>,
    host: Arc<H>,
    buses: Option<BusAddresses>,
    stop: CancellationToken,
    tasks: TaskTracker,
    /// Dropped last: the bus's and the compositor's files live in it.
    _files: Option<RuntimeDir>,
}

impl<H: Host + ?Sized> Live<H> {
    /// A session over `host`; `files` is the directory it keeps its files in.
    pub fn new(
        host: Arc<H>,
        session: Session,
        buses: Option<BusAddresses>,
        files: Option<RuntimeDir>,
    ) -> Self {
        Live {
            session: Arc::new(session),
            host,
            buses,
            stop: CancellationToken::new(),
            tasks: TaskTracker::new(),
            _files: files,
        }
    }

    /// The session every face calls.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The host under it (the compositor, or the desktop attached to).
    pub fn host(&self) -> &Arc<H> {
        &self.host
    }

    /// The session's private buses, when it has them.
    pub fn buses(&self) -> Option<&BusAddresses> {
        self.buses.as_ref()
    }

    /// Cancelled when the session ends: what serves it stops on it.
    pub fn stopping(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Run `work` (`what`, for the log) for this session: ending the session waits for it, so it
    /// should end once `stopping` is cancelled; work still running past the
    /// faces' `STOP_GRACE` (and the time to answer once it is over) is
    /// dropped, so that no client holds the end.
    pub fn spawn<F>(&self, what: &'static str, work: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                () = work => {}
                () = async {
                    stop.cancelled().await;
                    tokio::time::sleep(STOP_GRACE + ANSWER_TIME).await;
                } => tracing::warn!("{what} outlived the stopping session's grace; dropped"),
            }
        });
    }

    /// End the session: its tasks are told and awaited, then its host stops
    /// and ends its apps. The bus and directory go with the last reference.
    pub async fn end(&self) {
        self.stop.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        self.host.shutdown().await;
        self.session.finish_recording();
    }
}

impl<H: Host + ?Sized> std::ops::Deref for Live<H> {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl<H: Host + ?Sized> Drop for Live<H> {
    /// Dropped without `end`, what it spawned is still told to stop.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Live {
    /// Make a session by the recipe, its compositor on a thread of its own.
    pub async fn start(spec: Spec) -> Result<Live, StartError> {
        Staged::prepare(spec).await?.start().await
    }
}

/// A session's id, as faces that serve many name it.
pub type SessionId = String;

/// The sessions of one process, by id, up to a limit.
pub struct Sessions {
    book: Mutex<Book>,
    limit: usize,
    made: std::sync::atomic::AtomicU64,
    /// Each session recorded into a folder here named by its id, within
    /// the size limit given.
    record: Option<(std::path::PathBuf, u64)>,
}

#[derive(Default)]
struct Book {
    live: HashMap<SessionId, Arc<Live>>,
    /// Sessions being made: each holds a place.
    starting: usize,
}

/// A place held while a session starts, given back however the start ends.
struct Place<'a>(&'a Mutex<Book>);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.lock().unwrap().starting -= 1;
    }
}

/// Why no session was made.
#[derive(Debug, thiserror::Error)]
pub enum SessionsFull {
    #[error("all {0} sessions are in use; end one first")]
    Full(usize),
    #[error(transparent)]
    Start(#[from] StartError),
}

impl Sessions {
    /// Room for `limit` sessions at once.
    pub fn new(limit: usize) -> Self {
        Sessions {
            book: Mutex::default(),
            limit,
            made: Default::default(),
            record: None,
        }
    }

    /// Record each session into `root/ID` (its id), each within `limit` bytes.
    pub fn recording_into(mut self, root: std::path::PathBuf, limit: u64) -> Self {
        self.record = Some((root, limit));
        self
    }

    /// Make a session by the recipe and keep it; its id names it from now on.
    /// A place is held while it starts, so concurrent creates keep the limit.
    pub async fn create(&self, mut spec: Spec) -> Result<(SessionId, Arc<Live>), SessionsFull> {
        let place = {
            let mut book = self.book.lock().unwrap();
            if book.live.len() + book.starting >= self.limit {
                return Err(SessionsFull::Full(self.limit));
            }
            book.starting += 1;
            Place(&self.book)
        };
        let n = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("{:x}-{n}", std::process::id());
        if let Some((root, limit)) = &self.record {
            let recording = wayrig_record::Recording::start(&root.join(&id), *limit)
                .map_err(|e| StartError::new("recording", e))?;
            spec.compositor.record = Some(recording);
        }
        let made = Arc::new(Live::start(spec).await?);
        let mut book = self.book.lock().unwrap();
        book.live.insert(id.clone(), made.clone());
        drop(book);
        drop(place);
        Ok((id, made))
    }

    /// The session `id`, while it lives.
    pub fn get(&self, id: &str) -> Option<Arc<Live>> {
        self.book.lock().unwrap().live.get(id).cloned()
    }

    /// Whether another session fits.
    pub fn has_room(&self) -> bool {
        let book = self.book.lock().unwrap();
        book.live.len() + book.starting < self.limit
    }

    /// End the session `id`; false when there is none by that id.
    pub async fn end(&self, id: &str) -> bool {
        let found = self.book.lock().unwrap().live.remove(id);
        match found {
            Some(live) => {
                live.end().await;
                true
            }
            None => false,
        }
    }

    /// End every session.
    pub async fn end_all(&self) {
        let all: Vec<_> = self.book.lock().unwrap().live.drain().collect();
        for (_, live) in all {
            live.end().await;
        }
    }
}
