//! The AT-SPI side: the apps on a session's accessibility bus, each read in bulk
//! with Cache.GetItems, bounds fetched concurrently, mapped to the model.
//!
//! Plain zbus connection and proxies, built with explicit destinations and
//! property caching off (atspi 0.30's proxy defaults name the wrong services).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::{
    CacheItem, CoordType, Interface, InterfaceSet, ObjectRefOwned, Role as AtspiRole, State,
    StateSet,
};
use futures_util::stream::{self, StreamExt};
use zbus::proxy::CacheProperties;

use crate::event_marks::{meaning, Marks, Meaning};
use crate::facts::{bounds, lasting, Lasting};
use crate::model::{is_layout, is_stand_in_name, without_mnemonics, Error, Node, Role, States};
use crate::objects::{node_id, object_proxy, ref_id};
use wayrig_host::Rect;

/// How many extents requests are in flight at once.
const EXTENTS_IN_FLIGHT: usize = 64;
/// How many spans of reads are kept until someone takes them.
const SPANS_KEPT: usize = 256;
/// Round trips an app gets to export its cache after registering.
const STARTUP_ROUND_TRIPS: usize = 50;
/// The most children read of an object that manages its descendants (a
/// table of a million rows is not read whole).
const MANAGED_CHILDREN: i32 = 2_000;
/// A hung app must not hang a read.
const CALL_LIMIT: Duration = Duration::from_secs(5);

/// Where one phase of a read spent its time, and the calls it made to the
/// app: what the benchmarks print to show where a read's time goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub phase: &'static str,
    pub took: Duration,
    pub calls: usize,
}

/// One application on the accessibility bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    pub bus_name: String,
    pub root_path: String,
    pub pid: Option<u32>,
}

/// How an app's tree is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Cache.GetItems where the app has it, else node by node; the last
    /// one's items kept where no event since says they changed.
    Bulk,
    /// Cache.GetItems asked again whatever the events say: the toolkit's
    /// events may trail what input just did (GTK 4 sends them after its frame).
    BulkAnew,
    /// Every object's properties one call each, level by level: what tools
    /// without the cache do, kept to compare against.
    NodeByNode,
}

/// A top-level accessible (frame, window, dialog) of an app, with its elements.
#[derive(Debug, Clone)]
pub struct Frame {
    pub head: FrameHead,
    /// Root first; bounds relative to the frame's surface origin.
    pub nodes: Vec<Node>,
}

/// An app's objects as one bulk read gives them, before the per-node calls.
pub struct AppItems {
    app: App,
    items: Arc<Vec<CacheItem>>,
    /// Index into `items` by node id.
    ids: HashMap<u64, usize>,
    /// Children by parent node id, in index order.
    children: HashMap<u64, Vec<u64>>,
    /// Where on the connection the cache was read, when this read made the
    /// app create objects to read them (GTK 4): asking them more may have
    /// made it create others.
    realized_at: Option<zbus::message::Sequence>,
}

/// A top-level accessible of an app, before its elements are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHead {
    pub id: u64,
    pub name: String,
    /// An AT-SPI "window": a popup, menu or tooltip rather than a top level.
    pub popup: bool,
}

impl AppItems {
    /// The app's frames, in the order the app lists them.
    pub fn frames(&self) -> Vec<FrameHead> {
        let root = node_id(&self.app.bus_name, &self.app.root_path);
        self.kids(root)
            .iter()
            .filter(|id| self.ids.contains_key(id))
            .map(|&id| {
                let it = self.item(id);
                FrameHead {
                    id,
                    name: it.short_name.clone(),
                    popup: it.role == AtspiRole::Window,
                }
            })
            .collect()
    }

    fn kids(&self, id: u64) -> &[u64] {
        self.children.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The item of a node id that is in `ids`.
    fn item(&self, id: u64) -> &CacheItem {
        &self.items[self.ids[&id]]
    }
}

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

/// Announcements kept per app; older ones are dropped.
const ANNOUNCEMENTS_KEPT: usize = 64;

/// What apps announced, numbered in order per app (by bus name), so that
/// each reader gets every announcement once, whatever other readers took.
#[derive(Debug, Default)]
pub struct Announcements {
    by_app: HashMap<String, Announced>,
}

/// One app's latest announcements: `kept` ends with number `next - 1`.
#[derive(Debug, Default)]
struct Announced {
    next: u64,
    kept: std::collections::VecDeque<String>,
}

/// How far one reader (a client's connection) has read each app's
/// announcements.
#[derive(Debug, Default, Clone)]
pub struct AnnouncementsRead(HashMap<String, u64>);

impl Announcements {
    fn push(&mut self, app: &str, text: String) {
        let a = self.by_app.entry(app.to_string()).or_default();
        a.kept.push_back(text);
        a.next += 1;
        if a.kept.len() > ANNOUNCEMENTS_KEPT {
            a.kept.pop_front();
        }
    }

    /// What `app` announced that `read` has not had yet, oldest first.
    fn unread(&self, app: &str, read: &mut AnnouncementsRead) -> Vec<String> {
        let Some(a) = self.by_app.get(app) else {
            return Vec::new();
        };
        let seen = read.0.entry(app.to_string()).or_default();
        let first_kept = a.next - a.kept.len() as u64;
        let skip = seen.saturating_sub(first_kept) as usize;
        *seen = a.next;
        a.kept.iter().skip(skip).cloned().collect()
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Failed(format!("{what}: {e}"))
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
        })
    }

    /// Note that a phase of a read began at `began` and made `calls` calls.
    pub(crate) fn span(&self, phase: &'static str, began: std::time::Instant, calls: usize) {
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
    pub fn take_spans(&self) -> Vec<Span> {
        std::mem::take(&mut *self.spans.lock().unwrap())
    }

    /// A round trip to the app's main loop, then a wait until every event it
    /// sent before answering has been counted.
    pub async fn sync(&self, app: &App) -> Result<(), Error> {
        self.caught_up(app).await.map(|_| ())
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

    /// What the app announced that this reader has not had, oldest first.
    pub fn unread_announcements(&self, app: &App, read: &mut AnnouncementsRead) -> Vec<String> {
        self.announcements
            .lock()
            .unwrap()
            .unread(&app.bus_name, read)
    }

    /// Wait until an event after change count `since` says the object `id`
    /// gained focus; whether one did within `timeout`.
    pub async fn wait_focus(&self, id: u64, since: u64, timeout: Duration) -> bool {
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
    pub async fn wait_any_focus(&self, since: u64, timeout: Duration) -> Option<u64> {
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
    pub async fn wait_event(&self, id: u64, since: u64, timeout: Duration) -> bool {
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
    pub async fn wait_change(&self, since: u64, timeout: Duration) -> bool {
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
    pub fn named_since(&self, since: u64) -> std::collections::HashSet<u64> {
        let dirty = self.dirty.lock().unwrap();
        dirty
            .iter()
            .filter(|(_, &at)| at > since)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The objects an event moved after change count `since`.
    pub fn moved_since(&self, since: u64) -> std::collections::HashSet<u64> {
        self.marks.lock().unwrap().moved_since(since)
    }

    /// How many accessibility events have arrived so far.
    pub fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The apps registered on the bus, with their process ids.
    pub async fn apps(&self) -> Result<Vec<App>, Error> {
        let root = AccessibleProxy::builder(&self.conn)
            .destination("org.a11y.atspi.Registry")
            .and_then(|b| b.path("/org/a11y/atspi/accessible/root"))
            .map_err(|e| failed("registry", e))?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| failed("registry", e))?;
        let children = root
            .get_children()
            .await
            .map_err(|e| failed("listing apps", e))?;
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
                    if let Some(pid) = pid {
                        self.pids.lock().unwrap().insert(name.to_string(), pid);
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
        let listed = |name: &String| apps.iter().any(|a| &a.bus_name == name);
        self.kept_items
            .lock()
            .unwrap()
            .retain(|name, _| listed(name));
        self.pids.lock().unwrap().retain(|name, _| listed(name));
        self.marks
            .lock()
            .unwrap()
            .forget_all_but(&apps.iter().map(|a| a.bus_name.as_str()).collect::<Vec<_>>());
        Ok(apps)
    }

    /// Wait until an app of this process has registered on the bus, on the
    /// registry's children-changed signals (an app registers once it is up).
    pub async fn wait_for_app(&self, pid: u32, timeout: Duration) -> Result<Vec<App>, Error> {
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
                        "process {pid} has not registered with accessibility within {timeout:?}; \
                         is its toolkit's accessibility on?"
                    )))
                }
            }
        }
    }

    /// Every frame of an app with its elements (the whole app, as the
    /// benchmarks compare it).
    pub async fn read_app(&self, app: &App, how: Read) -> Result<Vec<Frame>, Error> {
        let items = self.read_items(app, how).await?;
        let mut frames = Vec::new();
        for head in items.frames() {
            frames.push(self.read_frame(&items, &head, &HashMap::new()).await);
        }
        Ok(frames)
    }

    /// An app's objects in one Cache.GetItems call (else a walk): enough to
    /// tell its frames apart before any per-node call. Read in bulk again,
    /// they are the last read's, with the objects events restated since
    /// asked again, unless an event changed the tree's shape.
    pub async fn read_items(&self, app: &App, how: Read) -> Result<AppItems, Error> {
        let kept = match how {
            Read::Bulk => self.cache_as_events_say(app).await?,
            Read::BulkAnew | Read::NodeByNode => None,
        };
        // A walk reads below objects that manage their descendants itself.
        let (cached_read, mut items, realized_at) = match kept {
            Some(items) => (true, items, None),
            None => self.read_cache_or_walk(app, how).await?,
        };
        if cached_read {
            let began = std::time::Instant::now();
            let managed = self.managed_items(app, &items).await?;
            if !managed.is_empty() {
                self.span("managed descendants", began, managed.len() * 6);
                Arc::make_mut(&mut items).extend(managed);
            }
        }
        if items.iter().any(|it| it.object.is_null()) {
            Arc::make_mut(&mut items).retain(|it| !it.object.is_null());
        }
        let ids: HashMap<u64, usize> = items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| ref_id(&it.object).map(|id| (id, i)))
            .collect();
        // Children in index order, from each item's parent link.
        let mut children: HashMap<u64, Vec<(i32, u64)>> = HashMap::new();
        for it in items.iter() {
            if let (Some(id), Some(parent)) = (ref_id(&it.object), ref_id(&it.parent)) {
                children.entry(parent).or_default().push((it.index, id));
            }
        }
        let children = children
            .into_iter()
            .map(|(parent, mut list)| {
                list.sort();
                (parent, list.into_iter().map(|(_, c)| c).collect())
            })
            .collect();
        // Facts of objects that are gone are not needed again.
        if let Some(store) = self.lasting.lock().unwrap().get_mut(&app.bus_name) {
            let mut dirty = self.dirty.lock().unwrap();
            store.retain(|id, _| {
                let kept = ids.contains_key(id);
                if !kept {
                    dirty.remove(id);
                }
                kept
            });
        }
        Ok(AppItems {
            app: app.clone(),
            items,
            ids,
            children,
            realized_at,
        })
    }

    /// The app's cache read anew (kept for the next read), with whether it
    /// was and, if the read made the app create objects, where it was read;
    /// else, without a cache (Qt 6.4), its tree walked.
    async fn read_cache_or_walk(
        &self,
        app: &App,
        how: Read,
    ) -> Result<(bool, Arc<Vec<CacheItem>>, Option<zbus::message::Sequence>), Error> {
        let what = || format!("reading {} (pid {:?})", app.bus_name, app.pid);
        let began = std::time::Instant::now();
        let cached = match how {
            Read::Bulk | Read::BulkAnew => self.cached_items(app).await?,
            Read::NodeByNode => None,
        };
        let Some((as_of, items)) = cached else {
            // No events tell when a walked tree changed: it is walked each time.
            let began = std::time::Instant::now();
            let (_, items) = self.walk_items(app).await?;
            self.span("walk", began, items.len() * 6);
            return Ok((false, Arc::new(items), None));
        };
        self.span("GetItems", began, 1);
        // Toolkits (GTK 4) put an object in the cache only once a client
        // has asked for it: walk down to what is missing, then read again.
        let began = std::time::Instant::now();
        let asked = self.realize_missing(&items).await;
        self.span("children the cache lacks", began, asked);
        let (as_of, items) = if asked > 0 {
            let began = std::time::Instant::now();
            let again = self
                .get_items(app)
                .await
                .map_err(|e| call_failed(&what(), e))?;
            self.span("GetItems again", began, 1);
            again
        } else {
            (as_of, items)
        };
        let items = Arc::new(items);
        self.kept_items
            .lock()
            .unwrap()
            .insert(app.bus_name.clone(), (as_of, items.clone()));
        Ok((true, items, (asked > 0).then_some(as_of)))
    }

    /// The app's last cache items, when no event since changed the tree's
    /// shape: those events restated (states, name, description) asked again.
    async fn cache_as_events_say(&self, app: &App) -> Result<Option<Arc<Vec<CacheItem>>>, Error> {
        let kept = self.kept_items.lock().unwrap().get(&app.bus_name).cloned();
        let Some((as_of, mut items)) = kept else {
            return Ok(None);
        };
        let began = std::time::Instant::now();
        let now = self.caught_up(app).await?;
        self.span("events caught up", began, 1);
        let index: HashMap<u64, usize> = items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| ref_id(&it.object).map(|id| (id, i)))
            .collect();
        let restated = {
            let marks = self.marks.lock().unwrap();
            if marks.reshaped_after(&app.bus_name, as_of) {
                return Ok(None);
            }
            marks.restated_after(index.keys().copied(), as_of)
        };
        if !restated.is_empty() {
            let began = std::time::Instant::now();
            let asked = restated.len();
            let conn = &self.conn;
            let (items_ref, index_ref) = (&items, &index);
            let fresh: Vec<(u64, Option<Restated>)> = stream::iter(restated)
                .map(|id| async move {
                    let object = &items_ref[index_ref[&id]].object;
                    (id, restate(conn, object).await)
                })
                .buffer_unordered(EXTENTS_IN_FLIGHT)
                .collect()
                .await;
            for (id, now) in fresh {
                // An object that does not answer is gone: read it all again.
                let Some(now) = now else { return Ok(None) };
                let it = &mut Arc::make_mut(&mut items)[index[&id]];
                (it.states, it.short_name, it.name) = (now.states, now.name, now.description);
            }
            self.span("objects events restated", began, asked * 3);
        }
        self.kept_items
            .lock()
            .unwrap()
            .insert(app.bus_name.clone(), (now, items.clone()));
        Ok(Some(items))
    }

    /// One frame's elements: its objects in tree order with what the cache
    /// lacks (bounds, values, keys, relations) read for each, concurrently;
    /// the bounds in `kept` (by node id) are taken as they are, and a node
    /// kept as unplaced (`None`) stays so while it is not showing.
    pub async fn read_frame(
        &self,
        items: &AppItems,
        head: &FrameHead,
        kept: &HashMap<u64, Option<Rect>>,
    ) -> Frame {
        // Depth-first, root first, children in order.
        let mut order = Vec::new();
        let mut stack = vec![head.id];
        while let Some(id) = stack.pop() {
            if !items.ids.contains_key(&id) {
                continue;
            }
            order.push(id);
            stack.extend(items.kids(id).iter().rev());
        }
        let mut details = self
            .details(&items.app, &items.items, &items.ids, &order, kept)
            .await;
        let began = std::time::Instant::now();
        {
            // A node id names one object for good: only new ones are added.
            let mut objects = self.objects.lock().unwrap();
            for id in &order {
                objects.entry(*id).or_insert_with(|| {
                    let it = items.item(*id);
                    (it.object.clone(), it.ifaces)
                });
            }
        }
        let mut nodes: Vec<Node> = order
            .iter()
            .map(|id| {
                let it = items.item(*id);
                let parent =
                    ref_id(&it.parent).filter(|p| *id != head.id && items.ids.contains_key(p));
                to_node(
                    *id,
                    parent,
                    items.kids(*id).to_vec(),
                    it,
                    details.remove(id).unwrap_or_default(),
                )
            })
            .collect();
        roles_by_content(&mut nodes);
        self.span("nodes", began, 0);
        Frame {
            head: head.clone(),
            nodes,
        }
    }

    /// The app's cache, with where on the connection it was current, or
    /// `None` when it has no GetItems. An app registers a moment before it
    /// exports its cache: its main loop gets a few round trips.
    async fn cached_items(
        &self,
        app: &App,
    ) -> Result<Option<(zbus::message::Sequence, Vec<CacheItem>)>, Error> {
        for _ in 0..STARTUP_ROUND_TRIPS {
            match self.get_items(app).await {
                Ok(items) => return Ok(Some(items)),
                Err(zbus::Error::MethodError(name, Some(message), _))
                    if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod"
                        && message.contains("doesn't exist") =>
                {
                    return Ok(None);
                }
                Err(zbus::Error::MethodError(name, _, _))
                    if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod" =>
                {
                    self.round_trip(app).await?;
                }
                // Qt 6.4 answers in the old cache format, with no items.
                Err(zbus::Error::Variant(_)) => return Ok(None),
                Err(e) => return Err(call_failed(&format!("reading {}", app.bus_name), e)),
            }
        }
        Ok(None)
    }

    /// One Cache.GetItems, with where its answer arrived: the events the app
    /// sent before it are in it. (A typed proxy's answer hides the place.)
    async fn get_items(
        &self,
        app: &App,
    ) -> Result<(zbus::message::Sequence, Vec<CacheItem>), zbus::Error> {
        let reply = self
            .conn
            .call_method(
                Some(app.bus_name.as_str()),
                "/org/a11y/atspi/cache",
                Some("org.a11y.atspi.Cache"),
                "GetItems",
                &(),
            )
            .await?;
        let items: Vec<CacheItem> = reply.body().deserialize()?;
        Ok((reply.recv_position(), items))
    }

    /// Read an app without a cache: each level's objects concurrently; with
    /// where on the connection the walk began.
    async fn walk_items(
        &self,
        app: &App,
    ) -> Result<(zbus::message::Sequence, Vec<CacheItem>), Error> {
        // A hung app would leave every object of the walk unanswered: ask once.
        let began_at = self.round_trip(app).await?;
        let root = app_root(app)?;
        let start = vec![(root.clone(), ObjectRefOwned::new(atspi::ObjectRef::Null), 0)];
        Ok((began_at, self.walk_from(&root, start).await))
    }

    /// Read objects and everything below them, each level's objects
    /// concurrently; `start` holds (object, parent, index in parent).
    async fn walk_from(
        &self,
        root: &ObjectRefOwned,
        start: Vec<(ObjectRefOwned, ObjectRefOwned, i32)>,
    ) -> Vec<CacheItem> {
        let conn = &self.conn;
        let mut items = Vec::new();
        let mut level = start;
        while !level.is_empty() {
            let read: Vec<Option<(CacheItem, Vec<ObjectRefOwned>)>> = stream::iter(level)
                .map(|(obj, parent, index)| {
                    let root = root.clone();
                    async move { read_object(conn, obj, parent, index, root).await }
                })
                .buffered(EXTENTS_IN_FLIGHT)
                .collect()
                .await;
            level = Vec::new();
            for (item, children) in read.into_iter().flatten() {
                for (i, child) in children.into_iter().enumerate() {
                    level.push((child, item.object.clone(), i as i32));
                }
                items.push(item);
            }
        }
        items
    }

    /// What the cache leaves out below objects that manage their descendants
    /// (GTK 3's tree views and tables list no children there), read by index.
    async fn managed_items(&self, app: &App, items: &[CacheItem]) -> Result<Vec<CacheItem>, Error> {
        // Only those whose children the cache left out (GTK 3 lists none).
        let listed: std::collections::HashSet<&str> =
            items.iter().map(|it| it.parent.path().as_str()).collect();
        let managed: Vec<ObjectRefOwned> = items
            .iter()
            .filter(|it| it.states.contains(State::ManagesDescendants))
            .filter(|it| !listed.contains(it.object.path().as_str()))
            .map(|it| it.object.clone())
            .collect();
        if managed.is_empty() {
            return Ok(Vec::new());
        }
        let root = app_root(app)?;
        let mut start = Vec::new();
        for parent in managed {
            let children = match object_proxy::<AccessibleProxy>(&self.conn, &parent).await {
                Ok(p) => children_by_index(&p).await,
                Err(_) => Vec::new(),
            };
            start.extend(
                children
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| (c, parent.clone(), i as i32)),
            );
        }
        Ok(self.walk_from(&root, start).await)
    }

    /// A call that the app answers from its main loop, after what it queued
    /// before; returns where its reply arrived on the connection.
    async fn round_trip(&self, app: &App) -> Result<zbus::message::Sequence, Error> {
        // The reply message itself is what counts (its place among the
        // events), which a typed proxy's answer hides: the call is made raw.
        let reply = self
            .conn
            .call_method(
                Some(app.bus_name.as_str()),
                app.root_path.as_str(),
                Some("org.a11y.atspi.Accessible"),
                "GetRole",
                &(),
            )
            .await
            .map_err(|e| call_failed("accessibility round trip", e))?;
        Ok(reply.recv_position())
    }

    /// Ask for the children the cache lacks, level by level and concurrently, so
    /// the toolkit adds them; returns how many objects were asked for.
    async fn realize_missing(&self, items: &[CacheItem]) -> usize {
        let mut known: std::collections::HashSet<u64> =
            items.iter().filter_map(|it| ref_id(&it.object)).collect();
        let mut cached_children: HashMap<u64, i32> = HashMap::new();
        for it in items {
            if let Some(parent) = ref_id(&it.parent) {
                *cached_children.entry(parent).or_default() += 1;
            }
        }
        let mut frontier: Vec<ObjectRefOwned> = items
            .iter()
            .filter(|it| {
                ref_id(&it.object)
                    .is_some_and(|id| cached_children.get(&id).copied().unwrap_or(0) < it.children)
            })
            .map(|it| it.object.clone())
            .collect();
        let mut asked = 0;
        while !frontier.is_empty() {
            asked += frontier.len();
            let conn = &self.conn;
            let found: Vec<Vec<ObjectRefOwned>> = stream::iter(frontier)
                .map(|obj| async move { children_of(conn, &obj).await })
                .buffer_unordered(EXTENTS_IN_FLIGHT)
                .collect()
                .await;
            frontier = found
                .into_iter()
                .flatten()
                .filter(|c| ref_id(c).is_some_and(|id| known.insert(id)))
                .collect();
            // Known objects may still hide unrealized children: ask the new ones.
        }
        asked
    }

    /// What the cache lacks, for each node: the lasting facts (values and
    /// text among them) from the store unless an event named the object since
    /// they were read, then the bounds, fetched unless `kept` holds them (the
    /// caller knows they cannot have moved, or that the node was not laid
    /// out, which holds while it does not show); each phase's calls concurrent.
    async fn details(
        &self,
        app: &App,
        items: &[CacheItem],
        ids: &HashMap<u64, usize>,
        order: &[u64],
        kept: &HashMap<u64, Option<Rect>>,
    ) -> HashMap<u64, (Arc<Lasting>, Option<Rect>)> {
        let conn = &self.conn;
        // Events counted from here on may not be in what is read now.
        let read_at = self.changes();
        let mut known: HashMap<u64, Arc<Lasting>> = {
            let stores = self.lasting.lock().unwrap();
            let dirty = self.dirty.lock().unwrap();
            let empty = HashMap::new();
            let store = stores.get(&app.bus_name).unwrap_or(&empty);
            order
                .iter()
                .filter_map(|id| {
                    let (at, facts) = store.get(id)?;
                    let named = dirty.get(id).is_some_and(|event| event > at);
                    (!named).then(|| (*id, facts.clone()))
                })
                .collect()
        };
        let item = |id: &u64| &items[ids[id]];
        // Containers that only lay others out have no keys, actions or
        // relations worth a call each (most of a GTK 4 tree).
        let (layout, unknown): (Vec<u64>, Vec<u64>) = order
            .iter()
            .copied()
            .filter(|id| !known.contains_key(id))
            .partition(|id| {
                let it = item(id);
                is_layout(role(it.role, &it.states), &it.short_name)
            });
        let began = std::time::Instant::now();
        let fetched: Vec<(u64, Arc<Lasting>)> = stream::iter(unknown)
            .map(|id| async move {
                let it = item(&id);
                let text_field = is_text_field(role(it.role, &it.states));
                let password = it.role == AtspiRole::PasswordText;
                let facts = lasting(conn, &it.object, it.ifaces, text_field, password).await;
                (id, Arc::new(facts))
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        self.span("facts of unknown nodes", began, fetched.len());
        {
            let mut stores = self.lasting.lock().unwrap();
            let store = stores.entry(app.bus_name.clone()).or_default();
            let nothing = Arc::new(Lasting::default());
            let fresh = fetched
                .into_iter()
                .chain(layout.into_iter().map(|id| (id, nothing.clone())));
            for (id, facts) in fresh {
                store.insert(id, (read_at, facts.clone()));
                known.insert(id, facts);
            }
        }
        let began = std::time::Instant::now();
        let kept: HashMap<u64, Option<Rect>> = kept
            .iter()
            .filter(|(id, b)| {
                b.is_some() || ids.contains_key(id) && !item(id).states.contains(State::Showing)
            })
            .map(|(id, b)| (*id, *b))
            .collect();
        let wanted: Vec<u64> = order
            .iter()
            .copied()
            .filter(|id| !kept.contains_key(id) && item(id).ifaces.contains(Interface::Component))
            .collect();
        let asked = wanted.len();
        let mut measured: HashMap<u64, Option<Rect>> = stream::iter(wanted)
            .map(|id| async move {
                let (obj, ifaces) = (&item(&id).object, item(&id).ifaces);
                (
                    id,
                    bounds(conn, obj, ifaces, self.coords_for(obj).await).await,
                )
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        self.span("bounds", began, asked);
        order
            .iter()
            .map(|id| {
                let bounds = match kept.get(id) {
                    Some(b) => *b,
                    None => measured.remove(id).flatten(),
                };
                (*id, (known.remove(id).unwrap_or_default(), bounds))
            })
            .collect()
    }

    /// Whether the app created objects after a read that made it create some
    /// (GTK 4 makes a popover's menu when a relation or a bound of its button
    /// is asked): that read lacks them, and reading again finds them.
    pub async fn grew_after(&self, items: &AppItems) -> Result<bool, Error> {
        let Some(read_at) = items.realized_at else {
            return Ok(false);
        };
        self.caught_up(&items.app).await?;
        let marks = self.marks.lock().unwrap();
        Ok(marks.reshaped_after(&items.app.bus_name, read_at))
    }

    /// The bounds the app gives now of nodes read before, asked side by side
    /// (a node whose object has no Component is left out): a read asks
    /// those it already knows it needs while it waits for the app's events.
    pub async fn bounds_of(&self, ids: &[u64]) -> HashMap<u64, Option<Rect>> {
        let began = std::time::Instant::now();
        let objects: Vec<(u64, ObjectRefOwned, InterfaceSet)> = {
            let known = self.objects.lock().unwrap();
            ids.iter()
                .filter_map(|id| known.get(id).map(|(o, i)| (*id, o.clone(), *i)))
                .filter(|(_, _, ifaces)| ifaces.contains(Interface::Component))
                .collect()
        };
        let asked = objects.len();
        let conn = &self.conn;
        let measured = stream::iter(objects)
            .map(|(id, obj, ifaces)| async move {
                let coords = self.coords_for(&obj).await;
                (id, bounds(conn, &obj, ifaces, coords).await)
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        self.span("bounds ahead", began, asked);
        measured
    }

    /// The node the app says is at a point (in its window's coordinates,
    /// as bounds are) inside the node `within`: the deepest one there.
    /// `None` when the app cannot tell or answers an object not read.
    pub async fn pick(&self, within: u64, x: i32, y: i32) -> Option<u64> {
        self.at_point(within, x, y).await.ok()??.id()
    }

    /// The object the app says is at a point (in its window's coordinates,
    /// as bounds are) inside the node `within`: the deepest one there (GTK 4,
    /// AccessKit) or the child of `within` there (GTK 3, Qt), read or not;
    /// `Ok(None)` when the app says nothing of it is there. An error when
    /// the app cannot tell.
    pub async fn at_point(&self, within: u64, x: i32, y: i32) -> Result<Option<Picked>, Error> {
        let (obj, ifaces) = self
            .object(within)
            .ok_or_else(|| Error::NoElement(format!("{within} was never read")))?;
        if !ifaces.contains(Interface::Component) {
            return Err(Error::Unsupported(format!(
                "element {within} cannot tell what lies at a point"
            )));
        }
        let proxy = object_proxy::<ComponentProxy>(&self.conn, &obj).await?;
        let coords = self.coords_for(&obj).await;
        let hit = proxy
            .get_accessible_at_point(x, y, coords)
            .await
            .map_err(|e| call_failed("asking what lies at a point", e))?;
        Ok(is_object(&hit).then_some(Picked(hit)))
    }

    /// The coordinates the app of `obj` is asked places in (`coords_of`),
    /// learnt once per app.
    async fn coords_for(&self, obj: &ObjectRefOwned) -> CoordType {
        let Some(name) = obj.name_as_str() else {
            return CoordType::Window;
        };
        if let Some(coords) = self.coords.lock().unwrap().get(name) {
            return *coords;
        }
        let coords = crate::facts::coords_of(&self.conn, name).await;
        self.coords.lock().unwrap().insert(name.to_string(), coords);
        coords
    }

    /// The parent of an object the app named, read or not; `None` at the
    /// top or when the app does not tell.
    pub async fn parent_of(&self, picked: &Picked) -> Option<Picked> {
        let proxy = object_proxy::<AccessibleProxy>(&self.conn, &picked.0)
            .await
            .ok()?;
        let parent = proxy.parent().await.ok()?;
        is_object(&parent).then_some(Picked(parent))
    }

    /// The object and interfaces behind a node id read before.
    pub fn object(&self, id: u64) -> Option<(ObjectRefOwned, InterfaceSet)> {
        self.objects.lock().unwrap().get(&id).cloned()
    }

    pub fn connection(&self) -> &zbus::Connection {
        &self.conn
    }
}

/// The reference names an object, not AT-SPI's null.
fn is_object(r: &ObjectRefOwned) -> bool {
    !r.is_null() && r.path_as_str() != "/org/a11y/atspi/null" && ref_id(r).is_some()
}

/// An object an app named when asked what lies at a point.
pub struct Picked(ObjectRefOwned);

impl Picked {
    /// Its node id, as a read names it.
    pub fn id(&self) -> Option<u64> {
        ref_id(&self.0)
    }
}

/// Roles told by what an element holds: a combo box with no text field
/// inside only pops up a list to choose from (a pop-up button), and a plain
/// container holding scroll bars is a scroll area (GTK 4's scrolled window).
/// `nodes` are in pre-order, a parent before its children.
pub(crate) fn roles_by_content(nodes: &mut [Node]) {
    let index = crate::model::positions(nodes);
    let mut edits_text = vec![false; nodes.len()];
    // Children after parents: walking backwards, a child is done before its parent.
    for i in (0..nodes.len()).rev() {
        let own = is_text_field(nodes[i].role) && nodes[i].role != Role::SpinButton;
        let inside = nodes[i]
            .children
            .iter()
            .filter_map(|c| index.get(c))
            .any(|&c| c > i && edits_text[c]);
        edits_text[i] = own || inside;
        if nodes[i].role == Role::ComboBox && !edits_text[i] {
            nodes[i].role = Role::PopUpButton;
        }
        let scrolls = nodes[i]
            .children
            .iter()
            .filter_map(|c| index.get(c))
            .any(|&c| nodes[c].role == Role::ScrollBar);
        if scrolls && matches!(nodes[i].role, Role::Panel | Role::Group | Role::Unknown) {
            nodes[i].role = Role::ScrollView;
        }
    }
}

/// Roles whose text is their value.
pub fn is_text_field(role: Role) -> bool {
    matches!(
        role,
        Role::TextInput
            | Role::TextArea
            | Role::PasswordInput
            | Role::SearchInput
            | Role::SpinButton
    )
}

/// One object read property by property, as a cache item, with its children.
/// The children of an object that manages its descendants: GTK 3's bridge
/// lists none of them to GetChildren, so ask by index, up to a bound.
async fn children_by_index(p: &AccessibleProxy<'_>) -> Vec<ObjectRefOwned> {
    let count = p
        .child_count()
        .await
        .unwrap_or(0)
        .clamp(0, MANAGED_CHILDREN);
    stream::iter(0..count)
        .map(|i| async move { p.get_child_at_index(i).await.ok() })
        .buffered(EXTENTS_IN_FLIGHT)
        .filter_map(|c| async move { c.filter(|c| !c.is_null()) })
        .collect()
        .await
}

/// The app's root object.
fn app_root(app: &App) -> Result<ObjectRefOwned, Error> {
    Ok(atspi::ObjectRef::new_owned(
        zbus::names::UniqueName::try_from(app.bus_name.clone())
            .map_err(|e| failed("app name", e))?,
        zbus::zvariant::ObjectPath::try_from(app.root_path.clone())
            .map_err(|e| failed("app path", e))?,
    ))
}

async fn read_object(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    parent: ObjectRefOwned,
    index: i32,
    app: ObjectRefOwned,
) -> Option<(CacheItem, Vec<ObjectRefOwned>)> {
    let p = object_proxy::<AccessibleProxy>(conn, &object).await.ok()?;
    let (role, name, description, states, ifaces, children) = tokio::join!(
        p.get_role(),
        p.name(),
        p.description(),
        p.get_state(),
        p.get_interfaces(),
        p.get_children()
    );
    let mut children = children.unwrap_or_default();
    let states = states.unwrap_or_default();
    if children.is_empty() && states.contains(State::ManagesDescendants) {
        children = children_by_index(&p).await;
    }
    Some((
        CacheItem {
            object,
            app,
            parent,
            index,
            children: children.len() as i32,
            ifaces: ifaces.unwrap_or_default(),
            short_name: name.unwrap_or_default(),
            role: role.ok()?,
            name: description.unwrap_or_default(),
            states,
        },
        children,
    ))
}

/// Ask toolkits for object and cache events, and read every message the
/// connection receives, in order, on a task of its own: it counts the events
/// and publishes how far it has read. (An unread stream would stall the
/// connection; reading them all is what makes "every event sent before this
/// reply has been seen" checkable.)
async fn watch_changes(
    conn: &zbus::Connection,
    watch: Watch,
) -> Result<
    (
        tokio::sync::watch::Receiver<Option<zbus::message::Sequence>>,
        tokio::task::JoinHandle<()>,
    ),
    Error,
> {
    use atspi::events::{DBusMatchRule, RegistryEventString};
    // Made before the match rules so that nothing after them is missed.
    let mut messages = zbus::MessageStream::from(conn);
    let dbus = zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| failed("bus", e))?;
    for rule in [
        atspi::ObjectEvents::MATCH_RULE_STRING,
        atspi::CacheEvents::MATCH_RULE_STRING,
    ] {
        let rule = zbus::MatchRule::try_from(rule).map_err(|e| failed("event rule", e))?;
        dbus.add_match_rule(rule)
            .await
            .map_err(|e| failed("watching accessibility events", e))?;
    }
    let registry = atspi::proxy::registry::RegistryProxy::new(conn)
        .await
        .map_err(|e| failed("registry", e))?;
    for event in [
        atspi::ObjectEvents::REGISTRY_EVENT_STRING,
        atspi::CacheEvents::REGISTRY_EVENT_STRING,
    ] {
        registry
            .register_event(event)
            .await
            .map_err(|e| failed("registering events", e))?;
    }
    let (read_to, read) = tokio::sync::watch::channel(None);
    let task = tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            let Ok(message) = message else { continue };
            let header = message.header();
            let event = message.message_type() == zbus::message::Type::Signal
                && header.interface().is_some_and(|i| {
                    i.starts_with("org.a11y.atspi.Event.") || i.as_str() == "org.a11y.atspi.Cache"
                });
            if event {
                watch.saw(&message);
            }
            read_to.send_replace(Some(message.recv_position()));
        }
    });
    Ok((read, task))
}

/// Where the event task writes what it saw.
struct Watch {
    changes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    dirty: Shared<HashMap<u64, u64>>,
    marks: Shared<Marks>,
    announcements: Shared<Announcements>,
    /// The change count and node id of the last object that gained focus.
    focus: tokio::sync::watch::Sender<(u64, u64)>,
}

impl Watch {
    /// Count an event, mark the object it names, keep what it announces.
    fn saw(&self, message: &zbus::Message) {
        let count = self
            .changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        let header = message.header();
        let (Some(sender), Some(path)) = (header.sender(), header.path()) else {
            return;
        };
        let id = node_id(sender.as_str(), path.as_str());
        let member = header.member().map(|m| m.as_str().to_string());
        let body = message.body();
        // Object events carry (kind, detail1, detail2, data, properties).
        let object_event = body.deserialize::<(
            String,
            i32,
            i32,
            zbus::zvariant::OwnedValue,
            HashMap<String, zbus::zvariant::OwnedValue>,
        )>();
        let kind = object_event.as_ref().map(|e| e.0.as_str()).unwrap_or("");
        let meaning = meaning(member.as_deref().unwrap_or(""), kind);
        // A move leaves what is read per node as it was.
        if meaning != Meaning::Moved {
            self.dirty.lock().unwrap().insert(id, count);
        }
        self.marks.lock().unwrap().mark(
            meaning,
            sender.as_str(),
            id,
            count,
            message.recv_position(),
        );
        let Ok((kind, detail1, _, data, _)) = object_event else {
            return;
        };
        match member.as_deref() {
            Some("StateChanged") if kind == "focused" && detail1 == 1 => {
                self.focus.send_replace((count, id));
            }
            Some("Announcement") => {
                let Ok(text) = String::try_from(data) else {
                    return;
                };
                self.announcements
                    .lock()
                    .unwrap()
                    .push(sender.as_str(), text);
            }
            _ => {}
        }
    }
}

/// What an object's cache item says that events restate.
struct Restated {
    states: StateSet,
    name: String,
    description: String,
}

/// An object's states, name and description asked now; `None` when it does
/// not answer (it is gone).
async fn restate(conn: &zbus::Connection, obj: &ObjectRefOwned) -> Option<Restated> {
    let p = object_proxy::<AccessibleProxy>(conn, obj).await.ok()?;
    let (states, name, description) = tokio::join!(p.get_state(), p.name(), p.description());
    Some(Restated {
        states: states.ok()?,
        name: name.ok()?,
        description: description.ok()?,
    })
}

async fn children_of(conn: &zbus::Connection, obj: &ObjectRefOwned) -> Vec<ObjectRefOwned> {
    match object_proxy::<AccessibleProxy>(conn, obj).await {
        Ok(p) => p.get_children().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

fn to_node(
    id: u64,
    parent: Option<u64>,
    children: Vec<u64>,
    it: &CacheItem,
    (lasting, bounds): (Arc<Lasting>, Option<Rect>),
) -> Node {
    let mut states = states(&it.states);
    let role = match lasting.role.unwrap_or_else(|| role(it.role, &it.states)) {
        // As ARIA has it: a separator a person can focus (and move) is a splitter.
        Role::Separator if states.focusable => Role::Splitter,
        role => role,
    };
    if role == Role::PasswordInput {
        states.password = true;
    }
    states.sort = lasting.sort;
    let mut annotations = lasting.annotations.clone();
    if annotations.has_popup.is_none() && it.states.contains(State::HasPopup) {
        annotations.has_popup = Some("menu".into());
    }
    let gtk = lasting
        .toolkit
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("gtk"));
    // GTK 4.8 names some controls by their label as written, mnemonic
    // marker and all ("Page _1"); text shown as text carries none.
    let name = if gtk && takes_mnemonic(role) {
        without_mnemonics(&it.short_name)
    } else {
        it.short_name.clone()
    };
    Node {
        id,
        parent,
        children,
        role,
        native_role: it.role.name().to_string(),
        name_is_stand_in: gtk && is_stand_in_name(role, &name),
        name,
        label_fallback: None,
        description: it.name.clone(),
        key: lasting.key.clone(),
        states,
        value: lasting.value.clone(),
        range: lasting.range,
        selection: lasting.selection,
        bounds,
        actions: lasting.actions.clone(),
        place: lasting.place,
        relations: lasting.relations.clone(),
        annotations,
    }
}

/// Controls (and the pages they switch) whose label a toolkit may write
/// with a mnemonic marker.
fn takes_mnemonic(role: Role) -> bool {
    matches!(
        role,
        Role::Button
            | Role::ToggleButton
            | Role::CheckBox
            | Role::RadioButton
            | Role::Switch
            | Role::MenuButton
            | Role::ComboBox
            | Role::Tab
            | Role::MenuItem
            | Role::CheckMenuItem
            | Role::RadioMenuItem
            | Role::Menu
            // A stack page is named by its title, written as its tab's.
            | Role::Group
            | Role::Panel
            | Role::TabPanel
    )
}

fn states(s: &StateSet) -> States {
    States {
        focusable: s.contains(State::Focusable),
        focused: s.contains(State::Focused),
        disabled: !s.contains(State::Sensitive) && !s.contains(State::Enabled),
        checkable: s.contains(State::Checkable),
        checked: s.contains(State::Checked),
        mixed: s.contains(State::Indeterminate),
        selected: s.contains(State::Selected),
        selectable: s.contains(State::Selectable),
        expanded: s.contains(State::Expanded),
        expandable: s.contains(State::Expandable),
        multiline: s.contains(State::MultiLine),
        multiselectable: s.contains(State::Multiselectable),
        password: false,
        read_only: s.contains(State::ReadOnly),
        editable: s.contains(State::Editable),
        offscreen: !s.contains(State::Showing) && !s.contains(State::Visible),
        concealed: false,
        invalid: s.contains(State::InvalidEntry),
        busy: s.contains(State::Busy),
        vertical: s.contains(State::Vertical),
        horizontal: s.contains(State::Horizontal),
        pressed: s.contains(State::Pressed),
        sort: None,
    }
}

/// AT-SPI roles in the model's vocabulary.
pub fn role(r: AtspiRole, states: &StateSet) -> Role {
    use AtspiRole as A;
    match r {
        A::Frame | A::Window | A::InternalFrame => Role::Window,
        A::Dialog | A::FileChooser | A::ColorChooser | A::FontChooser => Role::Dialog,
        A::Alert => Role::AlertDialog,
        A::Notification => Role::Alert,
        A::Application => Role::Application,
        // An expander: a button that shows a section, not one that opens a popup.
        A::Button | A::ToggleButton
            if states.contains(State::Expandable) && !states.contains(State::HasPopup) =>
        {
            Role::Disclosure
        }
        A::Button => Role::Button,
        A::PushButtonMenu => Role::MenuButton,
        A::ToggleButton if states.contains(State::HasPopup) => Role::MenuButton,
        A::ToggleButton => Role::ToggleButton,
        A::CheckBox => Role::CheckBox,
        A::RadioButton => Role::RadioButton,
        A::ComboBox => Role::ComboBox,
        A::PasswordText => Role::PasswordInput,
        A::Entry | A::Text if states.contains(State::MultiLine) => Role::TextArea,
        A::Entry | A::Text | A::Autocomplete | A::Editbar => Role::TextInput,
        A::SpinButton => Role::SpinButton,
        A::Slider | A::Dial => Role::Slider,
        A::ProgressBar => Role::ProgressBar,
        A::LevelBar => Role::Meter,
        A::Log => Role::Log,
        A::Timer => Role::Timer,
        A::Article => Role::Article,
        A::Landmark => Role::Region,
        A::ContentDeletion => Role::Deletion,
        A::ContentInsertion => Role::Insertion,
        A::ScrollBar => Role::ScrollBar,
        A::Label | A::AcceleratorLabel | A::Static | A::Caption => Role::Label,
        A::Heading => Role::Heading,
        A::Paragraph => Role::Paragraph,
        A::Link => Role::Link,
        A::Image | A::Icon | A::Animation => Role::Image,
        A::List | A::ListBox => Role::List,
        A::ListItem => Role::ListItem,
        A::Tree => Role::Tree,
        A::TreeTable => Role::TreeGrid,
        A::TreeItem => Role::TreeItem,
        A::Table => Role::Table,
        A::TableRow => Role::Row,
        A::TableCell => Role::Cell,
        A::TableColumnHeader | A::ColumnHeader => Role::ColumnHeader,
        A::TableRowHeader | A::RowHeader => Role::RowHeader,
        A::PageTabList => Role::TabList,
        A::PageTab => Role::Tab,
        A::MenuBar => Role::MenuBar,
        A::Menu | A::PopupMenu => Role::Menu,
        A::MenuItem | A::TearoffMenuItem => Role::MenuItem,
        A::CheckMenuItem => Role::CheckMenuItem,
        A::RadioMenuItem => Role::RadioMenuItem,
        A::Separator => Role::Separator,
        A::ToolBar => Role::Toolbar,
        A::StatusBar | A::InfoBar => Role::StatusBar,
        A::ToolTip => Role::Tooltip,
        A::Grouping | A::Form | A::Section => Role::Group,
        A::Panel
        | A::Filler
        | A::RootPane
        | A::LayeredPane
        | A::GlassPane
        | A::OptionPane
        | A::SplitPane => Role::Panel,
        A::ScrollPane | A::Viewport => Role::ScrollView,
        A::DocumentFrame
        | A::DocumentText
        | A::DocumentWeb
        | A::DocumentEmail
        | A::DocumentSpreadsheet
        | A::DocumentPresentation
        | A::Terminal => Role::Document,
        A::Canvas | A::DrawingArea => Role::Canvas,
        // A month of days to pick from (GTK 3 shows it without children):
        // a grid, as ARIA's date pickers are, not a layout container.
        A::Calendar => Role::Grid,
        _ => Role::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reader_gets_every_announcement_once() {
        let mut all = Announcements::default();
        let (mut one, mut other) = (AnnouncementsRead::default(), AnnouncementsRead::default());
        all.push(":1.5", "Saved".into());
        assert_eq!(all.unread(":1.5", &mut one), ["Saved"]);
        all.push(":1.5", "Copied".into());
        // One reader's read takes nothing from the other's.
        assert_eq!(all.unread(":1.5", &mut other), ["Saved", "Copied"]);
        assert_eq!(all.unread(":1.5", &mut one), ["Copied"]);
        assert!(all.unread(":1.5", &mut one).is_empty());
        assert!(all.unread(":1.6", &mut one).is_empty());
        // A reader that fell behind gets what is still kept.
        for i in 0..ANNOUNCEMENTS_KEPT + 3 {
            all.push(":1.5", format!("n{i}"));
        }
        let late = all.unread(":1.5", &mut other);
        assert_eq!(late.len(), ANNOUNCEMENTS_KEPT);
        assert_eq!(late[0], "n3");
    }

    #[test]
    fn node_ids_are_stable_and_distinct() {
        let a = node_id(":1.5", "/org/a11y/atspi/accessible/12");
        assert_eq!(a, node_id(":1.5", "/org/a11y/atspi/accessible/12"));
        assert_ne!(a, node_id(":1.6", "/org/a11y/atspi/accessible/12"));
        assert_ne!(a, node_id(":1.5", "/org/a11y/atspi/accessible/1"));
        // The separator keeps ("a", "b/c") apart from ("ab", "/c").
        assert_ne!(node_id(":1.1", "2/x"), node_id(":1.12", "/x"));
    }

    #[test]
    fn alerts_expanders_and_aria_groups_have_roles_of_their_own() {
        let none = StateSet::empty();
        assert_eq!(role(AtspiRole::Alert, &none), Role::AlertDialog);
        assert_eq!(role(AtspiRole::Notification, &none), Role::Alert);
        let expandable = StateSet::new(State::Expandable);
        assert_eq!(role(AtspiRole::Button, &expandable), Role::Disclosure);
        assert_eq!(role(AtspiRole::ToggleButton, &expandable), Role::Disclosure);
        let popup = StateSet::new(State::Expandable | State::HasPopup);
        assert_eq!(role(AtspiRole::ToggleButton, &popup), Role::MenuButton);
    }

    #[test]
    fn roles_map_with_states() {
        let none = StateSet::empty();
        let multi = StateSet::new(State::MultiLine);
        assert_eq!(role(AtspiRole::Button, &none), Role::Button);
        assert_eq!(role(AtspiRole::Text, &none), Role::TextInput);
        assert_eq!(role(AtspiRole::Text, &multi), Role::TextArea);
        assert_eq!(
            role(AtspiRole::ToggleButton, &StateSet::new(State::HasPopup)),
            Role::MenuButton
        );
        assert_eq!(role(AtspiRole::Frame, &none), Role::Window);
        assert_eq!(role(AtspiRole::PasswordText, &none), Role::PasswordInput);
        assert_eq!(role(AtspiRole::Calendar, &none), Role::Grid);
    }
}
