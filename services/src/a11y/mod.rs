//! The AT-SPI client: the apps on a session's accessibility bus, read in bulk
//! with Cache.GetItems and acted on through their objects' interfaces.
//!
//! Plain zbus connection and proxies, built with explicit destinations and
//! property caching off (atspi 0.30's proxy defaults name the wrong services).
//! Its parts: events (what apps send), reading (their trees), mapping (AT-SPI
//! to the model), acting (their objects' interfaces), facts (per-node reads).

mod acting;
mod event_marks;
mod events;
mod facts;
mod mapping;
mod objects;
mod reading;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::application::ApplicationProxy;
use atspi::{CacheItem, CoordType, InterfaceSet, ObjectRefOwned};
use futures_util::stream::StreamExt;
use wayrig_host::Rect;
use zbus::proxy::CacheProperties;

use crate::access::{
    Accessibility, AnnouncementsRead, App, AppItems, Frame, FrameHead, Interfaces, Picked, Read,
    Span,
};
use crate::model::{Error, Range, Role};
use event_marks::Marks;
use events::{watch_changes, Announcements, Watch};
use facts::Lasting;

/// How many requests to one app are in flight at once.
const EXTENTS_IN_FLIGHT: usize = 64;
/// How many spans of reads are kept until someone takes them.
const SPANS_KEPT: usize = 256;
/// A hung app must not hang a read.
const CALL_LIMIT: Duration = Duration::from_secs(5);

/// A connection to one session's accessibility bus.
pub struct A11y {
    conn: zbus::Connection,
    /// Counts every accessibility event any app sent: a tree read while it
    /// stayed the same is still what the apps say.
    changes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// How far the event task has read the connection's messages.
    read: tokio::sync::watch::Receiver<Option<zbus::message::Sequence>>,
    /// Objects of the nodes read so far, by node id, for acting on them.
    objects: std::sync::Mutex<HashMap<u64, (ObjectRefOwned, InterfaceSet)>>,
    /// Lasting facts of each app's nodes (by bus name and node id), with the
    /// change count they were read at.
    lasting: std::sync::Mutex<HashMap<String, LastingStore>>,
    /// The change count of the last event that named each object.
    dirty: Shared<HashMap<u64, u64>>,
    /// What events since marked as moved, restated or reshaped.
    marks: Shared<Marks>,
    /// Each app's (by bus name) last Cache.GetItems, with where on the
    /// connection it was current: read again only where events say.
    kept_items: std::sync::Mutex<HashMap<String, KeptItems>>,
    /// What each app (by bus name) announced lately.
    announcements: Shared<Announcements>,
    /// The process of each app's connection, by its unique bus name.
    pids: std::sync::Mutex<HashMap<String, u32>>,
    /// The change count and node id of the last object that gained focus.
    focus: tokio::sync::watch::Receiver<(u64, u64)>,
    /// The event task; its message stream holds the connection open.
    events: tokio::task::JoinHandle<()>,
    /// The phases of the reads since the spans were last taken.
    spans: std::sync::Mutex<Vec<Span>>,
    /// The coordinates each app (by unique bus name) is asked places in.
    coords: std::sync::Mutex<HashMap<String, CoordType>>,
    /// Apps (by unique bus name) whose cache holds stale copies of what
    /// they show (Chromium's pages): walked instead of read from it.
    uncached: std::sync::Mutex<HashSet<String>>,
    /// Apps (by unique bus name) that keep what they hide visible and say
    /// so by `showing` alone (Firefox).
    hide_by_showing: std::sync::Mutex<HashSet<String>>,
    /// Document events are watched, once an app that needs them came.
    document_events: tokio::sync::OnceCell<()>,
    /// Questions asked once per app that it has not answered yet.
    asked_again: AskedAgain,
}

/// Questions asked once per app (its toolkit, its coordinates) that it did
/// not answer, by bus name and question. Each is asked again at the next
/// read, up to `ASKED_MOST` times: an app busy as it starts is not taken
/// for one that has no answer, and one that never answers costs a call's
/// limit a few times, not at every read.
#[derive(Default)]
struct AskedAgain(std::sync::Mutex<HashMap<(String, &'static str), u8>>);

/// How many times a question asked once per app is asked before the
/// app's silence is taken as its answer.
const ASKED_MOST: u8 = 3;

impl AskedAgain {
    /// `app` did not answer `question` again: whether to stop asking.
    fn gives_up(&self, app: &str, question: &'static str) -> bool {
        let mut asked = self.0.lock().unwrap();
        let times = asked.entry((app.to_string(), question)).or_default();
        *times = times.saturating_add(1);
        *times >= ASKED_MOST
    }

    /// Forget the apps no longer listed.
    fn retain(&self, listed: impl Fn(&str) -> bool) {
        self.0.lock().unwrap().retain(|(app, _), _| listed(app));
    }
}

impl Drop for A11y {
    fn drop(&mut self) {
        self.events.abort();
    }
}

type Shared<T> = std::sync::Arc<std::sync::Mutex<T>>;
/// One app's lasting facts by node id, with the change count each was read at.
type LastingStore = HashMap<u64, (u64, Arc<Lasting>)>;
/// An app's last cache items, shared with the reads that use them, and where
/// on the connection they were current.
type KeptItems = (zbus::message::Sequence, Arc<Vec<CacheItem>>);

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Failed(format!("{what}: {e}"))
}

/// The AT-SPI bus of the desktop whose session bus is at `session`, as its
/// org.a11y.Bus names it (activating it if need be).
pub async fn desktop_bus_address(session: &str) -> Result<String, Error> {
    let conn = zbus::connection::Builder::address(session)
        .map_err(|e| Error::Failed(format!("bad session bus address {session:?}: {e}")))?
        .method_timeout(Duration::from_secs(5))
        .build()
        .await
        .map_err(|e| Error::Failed(format!("cannot reach the desktop's session bus: {e}")))?;
    let launcher = atspi::proxy::bus::BusProxy::new(&conn)
        .await
        .map_err(|e| Error::Failed(format!("the desktop has no org.a11y.Bus: {e}")))?;
    launcher.get_address().await.map_err(|e| {
        Error::Failed(format!(
            "the desktop's org.a11y.Bus gave no address (is at-spi2-core installed?): {e}"
        ))
    })
}

/// A call that failed, as an answer: one the app did not answer in time is a
/// timeout (the app is hung or stopped), anything else a failure.
pub(crate) fn call_failed(what: &str, e: zbus::Error) -> Error {
    match &e {
        zbus::Error::InputOutput(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            Error::Timeout(format!(
                "{what}: the app did not answer within {CALL_LIMIT:?}"
            ))
        }
        _ => failed(what, e),
    }
}

impl A11y {
    pub async fn connect(address: &str) -> Result<Self, Error> {
        let conn = zbus::connection::Builder::address(address)
            .map_err(|e| failed("bad accessibility bus address", e))?
            .method_timeout(CALL_LIMIT)
            .build()
            .await
            .map_err(|e| failed("cannot reach the accessibility bus", e))?;
        let changes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let dirty: Shared<HashMap<u64, u64>> = Default::default();
        let marks: Shared<Marks> = Default::default();
        let announcements: Shared<Announcements> = Default::default();
        let (focus_to, focus) = tokio::sync::watch::channel((0, 0));
        let watch = Watch {
            changes: changes.clone(),
            dirty: dirty.clone(),
            marks: marks.clone(),
            announcements: announcements.clone(),
            focus: focus_to,
        };
        let (read, events) = watch_changes(&conn, watch).await?;
        Ok(A11y {
            conn,
            changes,
            read,
            objects: Default::default(),
            lasting: Default::default(),
            dirty,
            marks,
            kept_items: Default::default(),
            pids: Default::default(),
            announcements,
            focus,
            events,
            spans: Default::default(),
            coords: Default::default(),
            uncached: Default::default(),
            hide_by_showing: Default::default(),
            document_events: Default::default(),
            asked_again: Default::default(),
        })
    }

    /// Learn how a newly seen app's toolkit tells its tree. Chromium (and
    /// Electron) builds its pages' trees once a client asks an object's
    /// attributes, as Orca does: it is asked. Its cache keeps stale copies
    /// of page objects (no bounds, an old parent): it is walked instead,
    /// and its Document events watched. Firefox hides by `showing` alone.
    /// Whether the app answered what its toolkit is: one that did not (busy
    /// as it starts) is met again at the next look.
    async fn meet_app(&self, root: &ObjectRefOwned) -> bool {
        let Ok(app) = objects::object_proxy::<ApplicationProxy>(&self.conn, root).await else {
            return false;
        };
        let Ok(toolkit) = facts::answer(app.toolkit_name().await) else {
            return false;
        };
        let toolkit = toolkit.unwrap_or_default();
        let Some(name) = root.name_as_str() else {
            return true;
        };
        match toolkit.as_str() {
            "Gecko" => {
                self.hide_by_showing
                    .lock()
                    .unwrap()
                    .insert(name.to_string());
                // Its cache holds no page: walked, as Chromium is, instead
                // of a whole page walked again at every read after a change.
                self.uncached.lock().unwrap().insert(name.to_string());
                if let Err(e) = self
                    .document_events
                    .get_or_try_init(|| events::watch_document_events(&self.conn))
                    .await
                {
                    tracing::warn!(%e, "Firefox's pages are walked whole at each read");
                }
            }
            "Chromium" => {
                self.uncached.lock().unwrap().insert(name.to_string());
                // Before the page's tree is asked for: its load-complete is
                // the only sign that it was built.
                let watched = self
                    .document_events
                    .get_or_try_init(|| events::watch_document_events(&self.conn))
                    .await;
                if let Err(e) = watched {
                    tracing::warn!(%e, "Chromium's pages are walked whole at each read");
                }
                if let Ok(root) = objects::object_proxy::<AccessibleProxy>(&self.conn, root).await {
                    let asked = root.get_attributes().await;
                    tracing::debug!(ok = asked.is_ok(), "asked Chromium for its tree");
                }
            }
            _ => {}
        }
        true
    }

    /// `sync`, returning where on the connection the app's answer arrived:
    /// every event it sent before is marked.
    async fn caught_up(&self, app: &App) -> Result<zbus::message::Sequence, Error> {
        let position = self.round_trip(app).await?;
        let mut read = self.read.clone();
        tokio::time::timeout(
            CALL_LIMIT,
            read.wait_for(|p| p.is_some_and(|p| p >= position)),
        )
        .await
        .map_err(|_| Error::Timeout("the accessibility events did not catch up".into()))?
        .map_err(|_| Error::Failed("the accessibility connection closed".into()))?;
        Ok(position)
    }
}

#[async_trait::async_trait]
impl Accessibility for A11y {
    /// Note that a phase of a read began at `began` and made `calls` calls.
    fn span(&self, phase: &'static str, began: std::time::Instant, calls: usize) {
        let mut spans = self.spans.lock().unwrap();
        // Nobody may be taking them: only the latest are kept.
        if spans.len() >= SPANS_KEPT {
            spans.drain(..SPANS_KEPT / 2);
        }
        spans.push(Span {
            phase,
            took: began.elapsed(),
            calls,
        });
    }

    /// The phases of the reads since the last time they were taken, in order.
    fn take_spans(&self) -> Vec<Span> {
        std::mem::take(&mut *self.spans.lock().unwrap())
    }

    /// A round trip to the app's main loop, then a wait until every event it
    /// sent before answering has been counted.
    async fn sync(&self, app: &App) -> Result<(), Error> {
        self.caught_up(app).await.map(|_| ())
    }

    /// What the app announced that this reader has not had, oldest first.
    fn unread_announcements(&self, app: &App, read: &mut AnnouncementsRead) -> Vec<String> {
        self.announcements
            .lock()
            .unwrap()
            .unread(&app.bus_name, read)
    }

    /// Wait until an event after change count `since` says the object `id`
    /// gained focus; whether one did within `timeout`.
    async fn wait_focus(&self, id: u64, since: u64, timeout: Duration) -> bool {
        let mut focus = self.focus.clone();
        let gained = async move {
            focus
                .wait_for(|&(at, who)| at > since && who == id)
                .await
                .is_ok()
        };
        tokio::time::timeout(timeout, gained).await.unwrap_or(false)
    }

    /// Wait until an event after change count `since` says some object gained
    /// focus; the object, if one did within `timeout`.
    async fn wait_any_focus(&self, since: u64, timeout: Duration) -> Option<u64> {
        let mut focus = self.focus.clone();
        let gained = async move {
            focus
                .wait_for(|&(at, _)| at > since)
                .await
                .ok()
                .map(|seen| seen.1)
        };
        tokio::time::timeout(timeout, gained).await.ok().flatten()
    }

    /// Wait until an event after change count `since` names the object `id`;
    /// whether one did within `timeout`.
    async fn wait_event(&self, id: u64, since: u64, timeout: Duration) -> bool {
        let mut read = self.read.clone();
        let named = move || {
            self.dirty
                .lock()
                .unwrap()
                .get(&id)
                .is_some_and(|&at| at > since)
                || self.marks.lock().unwrap().moved_after(id, since)
        };
        let seen = async move {
            loop {
                if named() {
                    return true;
                }
                if read.changed().await.is_err() {
                    return false;
                }
            }
        };
        tokio::time::timeout(timeout, seen).await.unwrap_or(false)
    }

    /// Wait until any accessibility event arrives after change count `since`;
    /// whether one did within `timeout`.
    async fn wait_change(&self, since: u64, timeout: Duration) -> bool {
        let mut read = self.read.clone();
        let seen = async move {
            while self.changes() <= since {
                if read.changed().await.is_err() {
                    return false;
                }
            }
            true
        };
        tokio::time::timeout(timeout, seen).await.unwrap_or(false)
    }

    /// The objects an event named after change count `since`.
    fn named_since(&self, since: u64) -> HashSet<u64> {
        let dirty = self.dirty.lock().unwrap();
        dirty
            .iter()
            .filter(|(_, &at)| at > since)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The objects an event moved after change count `since`.
    fn moved_since(&self, since: u64) -> HashSet<u64> {
        self.marks.lock().unwrap().moved_since(since)
    }

    /// How many accessibility events have arrived so far.
    fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The apps registered on the bus, with their process ids.
    async fn apps(&self) -> Result<Vec<App>, Error> {
        let root = AccessibleProxy::builder(&self.conn)
            .destination("org.a11y.atspi.Registry")
            .and_then(|b| b.path("/org/a11y/atspi/accessible/root"))
            .map_err(|e| failed("registry", e))?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| failed("registry", e))?;
        let children = root.get_children().await.map_err(|e| match e {
            // Its daemon ended (killed, or gone with the session bus that
            // started it): nothing on this connection will answer again.
            zbus::Error::InputOutput(e) => Error::Failed(format!(
                "the accessibility bus is gone ({e}): elements cannot be read or acted on \
                 in this session any more; windows, input and captures still work. Start \
                 the session again to read elements"
            )),
            e => failed("listing apps", e),
        })?;
        let dbus = zbus::fdo::DBusProxy::builder(&self.conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| failed("bus", e))?;
        let mut apps = Vec::new();
        for child in children {
            let Some(name) = child.name() else { continue };
            // A unique name is one connection, of one process, for good.
            let known = self.pids.lock().unwrap().get(name.as_str()).copied();
            let pid = match known {
                Some(pid) => Some(pid),
                None => {
                    let pid = dbus
                        .get_connection_unix_process_id(name.clone().into())
                        .await
                        .ok();
                    // Once per app that answers (or gave up on): its pid is
                    // known from here on.
                    if let Some(pid) = pid {
                        if self.meet_app(&child).await
                            || self.asked_again.gives_up(name.as_str(), "toolkit")
                        {
                            self.pids.lock().unwrap().insert(name.to_string(), pid);
                        }
                    }
                    pid
                }
            };
            apps.push(App {
                bus_name: name.to_string(),
                root_path: child.path_as_str().to_string(),
                pid,
            });
        }
        // What was kept of apps that left is not needed again.
        let listed = |name: &str| apps.iter().any(|a| a.bus_name == name);
        self.kept_items
            .lock()
            .unwrap()
            .retain(|name, _| listed(name));
        self.pids.lock().unwrap().retain(|name, _| listed(name));
        {
            let mut lasting = self.lasting.lock().unwrap();
            lasting.retain(|name, _| listed(name));
            // An event's mark matters only to what was read (facts to read
            // again, bounds to ask again): objects never read, and those of
            // apps that left, are forgotten.
            let read = |id: &u64| lasting.values().any(|store| store.contains_key(id));
            self.dirty.lock().unwrap().retain(|id, _| read(id));
        }
        self.coords.lock().unwrap().retain(|name, _| listed(name));
        self.asked_again.retain(listed);
        self.uncached.lock().unwrap().retain(|name| listed(name));
        self.hide_by_showing
            .lock()
            .unwrap()
            .retain(|name| listed(name));
        self.objects
            .lock()
            .unwrap()
            .retain(|_, (object, _)| object.name_as_str().is_some_and(listed));
        self.marks
            .lock()
            .unwrap()
            .forget_all_but(&apps.iter().map(|a| a.bus_name.as_str()).collect::<Vec<_>>());
        Ok(apps)
    }

    /// Wait until an app of this process has registered on the bus, on the
    /// registry's children-changed signals (an app registers once it is up).
    async fn wait_for_app(&self, pid: u32, timeout: Duration) -> Result<Vec<App>, Error> {
        let of_pid = |apps: Vec<App>| -> Vec<App> {
            apps.into_iter().filter(|a| a.pid == Some(pid)).collect()
        };
        // Most reads are of an app that registered long ago.
        let apps = of_pid(self.apps().await?);
        if !apps.is_empty() {
            return Ok(apps);
        }
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("org.a11y.atspi.Event.Object")
            .and_then(|b| b.member("ChildrenChanged"))
            .and_then(|b| b.path("/org/a11y/atspi/accessible/root"))
            .map_err(|e| failed("match rule", e))?
            .build();
        let mut signals = zbus::MessageStream::for_match_rule(rule, &self.conn, Some(64))
            .await
            .map_err(|e| failed("watching the registry", e))?;
        // The registry announces apps only to those who asked for the event.
        if let Ok(registry) = atspi::proxy::registry::RegistryProxy::new(&self.conn).await {
            let _ = registry.register_event("object:children-changed").await;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let apps = of_pid(self.apps().await?);
            if !apps.is_empty() {
                return Ok(apps);
            }
            match tokio::time::timeout_at(deadline, signals.next()).await {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    return Err(Error::Unsupported(format!(
                    "process {pid} has not registered with accessibility within {timeout:?}: {}",
                    crate::accessibility_off::advice(pid)
                )))
                }
            }
        }
    }

    async fn read_items(&self, app: &App, how: Read) -> Result<AppItems, Error> {
        self.read_app_items(app, how).await
    }

    async fn read_frame(
        &self,
        items: &AppItems,
        head: &FrameHead,
        kept: &HashMap<u64, Option<Rect>>,
    ) -> Frame {
        self.read_frame_nodes(items, head, kept).await
    }

    async fn grew_after(&self, items: &AppItems) -> Result<bool, Error> {
        self.grew_after_read(items).await
    }

    async fn bounds_of(&self, ids: &[u64]) -> HashMap<u64, Option<Rect>> {
        self.bounds_now(ids).await
    }

    async fn screen_places_of(&self, ids: &[u64]) -> HashMap<u64, Rect> {
        self.places_now(ids, Some(CoordType::Screen), "screen places")
            .await
            .into_iter()
            .filter_map(|(id, place)| Some((id, place?)))
            .collect()
    }

    async fn at_point(&self, within: u64, x: i32, y: i32) -> Result<Option<Picked>, Error> {
        self.object_at_point(within, x, y).await
    }

    async fn parent_of(&self, picked: &Picked) -> Option<Picked> {
        self.parent_of_picked(picked).await
    }

    async fn role_and_name(&self, picked: &Picked) -> Option<(Role, String)> {
        self.role_and_name_of_picked(picked).await
    }

    fn interfaces(&self, id: u64) -> Option<Interfaces> {
        self.object(id)
            .map(|(_, ifaces)| acting::interfaces(ifaces))
    }

    async fn action_names(&self, id: u64) -> Result<Vec<String>, Error> {
        self.actions_of(id).await
    }

    async fn do_action(&self, id: u64, index: usize) -> Result<bool, Error> {
        self.do_action_at(id, index).await
    }

    async fn value(&self, id: u64) -> Result<Range, Error> {
        self.value_of(id).await
    }

    async fn set_value(&self, id: u64, value: f64) -> Result<(), Error> {
        self.put_value(id, value).await
    }

    async fn set_text(&self, id: u64, text: &str) -> Result<bool, Error> {
        self.put_text(id, text).await
    }

    async fn text_length(&self, id: u64) -> Result<i32, Error> {
        self.length_of_text(id).await
    }

    async fn select_text(&self, id: u64, from: i32, to: i32) -> Result<bool, Error> {
        self.select_characters(id, from, to).await
    }

    async fn caret(&self, id: u64) -> Result<i32, Error> {
        self.caret_of(id).await
    }

    async fn set_caret(&self, id: u64, at: i32) -> Result<bool, Error> {
        self.put_caret(id, at).await
    }

    async fn grab_focus(&self, id: u64) -> Result<bool, Error> {
        self.ask_focus(id).await
    }

    async fn scroll_to(&self, id: u64) -> Result<bool, Error> {
        self.ask_scroll(id).await
    }

    async fn select_child(&self, id: u64, index: usize) -> Result<bool, Error> {
        self.select_child_at(id, index).await
    }
}
