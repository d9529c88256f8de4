//! Reading an app's tree: its objects in bulk (Cache.GetItems, else a walk),
//! then what the cache lacks per node (facts, bounds), many calls in flight.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::collection::CollectionProxy;
use atspi::{
    CacheItem, CoordType, Interface, InterfaceSet, MatchType, ObjectMatchRule, ObjectRefOwned,
    Role as AtspiRole, SortOrder, State, StateSet,
};
use futures_util::stream::{self, StreamExt};

use super::facts::{bounds, lasting, Lasting, LastingRead, TextWanted};
use super::mapping::{role, to_node};
use super::objects::{object_proxy, ref_id};
use super::{call_failed, failed, A11y, EXTENTS_IN_FLIGHT};
use crate::access::{node_id, Accessibility, App, AppItems, Frame, FrameHead, Read};
use crate::model::{is_layout, is_text_field, roles_by_content, Error, Node};
use wayrig_host::Rect;

/// Round trips an app gets to export its cache after registering.
const STARTUP_ROUND_TRIPS: usize = 50;
/// The most children read of an object that manages its descendants (a
/// table of a million rows is not read whole).
const MANAGED_CHILDREN: i32 = 2_000;

/// What one bulk read of an app found: its objects, indexed, and whether
/// the read made the app create objects.
struct CachedRead {
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

impl CachedRead {
    /// The app's frames, in the order the app lists them.
    fn frames(&self, app: &App) -> Vec<FrameHead> {
        let root = node_id(&app.bus_name, &app.root_path);
        self.kids(root)
            .iter()
            .filter(|id| self.ids.contains_key(id))
            .map(|&id| {
                let it = self.item(id);
                FrameHead {
                    id,
                    name: it.short_name.clone(),
                    popup: it.role == AtspiRole::Window,
                    alert: it.role == AtspiRole::Alert,
                    modal: it.states.contains(State::Modal),
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

impl A11y {
    /// An app's objects in one Cache.GetItems call (else a walk): enough to
    /// tell its frames apart before any per-node call. Read in bulk again,
    /// they are the last read's, with the objects events restated since
    /// asked again, unless an event changed the tree's shape; a walked tree
    /// is walked again below the objects whose children events say changed.
    pub(super) async fn read_app_items(&self, app: &App, how: Read) -> Result<AppItems, Error> {
        let kept = match how {
            Read::Bulk => self.cache_as_events_say(app).await?,
            // A walked toolkit answers from the tree its events tell of:
            // Chromium applies a page's update and sends its events in one
            // go, so events caught up tell what a walk would find.
            Read::BulkAnew if self.walks(app) => self.cache_as_events_say(app).await?,
            Read::BulkAnew | Read::NodeByNode => None,
        };
        // A walk reads below objects that manage their descendants itself.
        let (cached_read, mut items, realized_at) = match kept {
            Some(items) => (!self.walks(app), items, None),
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
        let read = CachedRead {
            items,
            ids,
            children,
            realized_at,
        };
        Ok(AppItems::new(app.clone(), read.frames(app), read))
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
            Read::Bulk | Read::BulkAnew if !self.walks(app) => self.cached_items(app).await?,
            _ => None,
        };
        let Some((as_of, items)) = cached else {
            let began = std::time::Instant::now();
            let (as_of, items) = self.walk_items(app).await?;
            self.span("walk", began, items.len() * 6);
            let items = Arc::new(items);
            // Kept for the next bulk read, which walks again only below the
            // objects whose children events say changed.
            if matches!(how, Read::Bulk | Read::BulkAnew) {
                self.kept_items
                    .lock()
                    .unwrap()
                    .insert(app.bus_name.clone(), (as_of, items.clone()));
            }
            return Ok((false, items, None));
        };
        self.span("GetItems", began, 1);
        // Toolkits (GTK 4) put an object in the cache only once a client
        // has asked for it: walk down to what is missing, then read again.
        let began = std::time::Instant::now();
        let asked = self.realize_missing(&items).await;
        self.span("children the cache lacks", began, asked);
        let (as_of, mut items) = if asked > 0 {
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
        // Some toolkits never cache part of their tree (Chromium keeps its
        // pages out): what asking did not bring into the cache is walked.
        let mut walked_any = false;
        if asked > 0 {
            let began = std::time::Instant::now();
            let walked = self.walk_what_the_cache_lacks(app, &items).await?;
            if !walked.is_empty() {
                tracing::debug!(app = %app.bus_name, walked = walked.len(), "walked what the cache lacks");
                self.span("objects the cache never holds", began, walked.len() * 6);
                items.extend(walked);
                walked_any = true;
            }
        }
        let items = Arc::new(items);
        // What was walked is not kept: the events such a toolkit sends do not
        // say all that changes in it (an element moved to another parent).
        let mut kept = self.kept_items.lock().unwrap();
        if walked_any {
            kept.remove(&app.bus_name);
        } else {
            kept.insert(app.bus_name.clone(), (as_of, items.clone()));
        }
        drop(kept);
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
        // Without Document events a page built after the walk goes untold.
        if self.walks(app) && self.document_events.get().is_none() {
            return Ok(None);
        }
        let changed_children = {
            let mut marks = self.marks.lock().unwrap();
            let changed = marks.children_changed_after(&app.bus_name, as_of);
            match (marks.reshaped_after(&app.bus_name, as_of), changed) {
                (false, _) => Vec::new(),
                (true, Some(ids)) if self.walks(app) => ids,
                (true, _) => return Ok(None),
            }
        };
        let mut index = index_of(&items);
        let mut walked = HashSet::new();
        if !changed_children.is_empty() {
            // An object named by an event that the last walk did not find
            // came after it, under a parent whose event may be yet to come.
            if changed_children.iter().any(|id| !index.contains_key(id)) {
                return Ok(None);
            }
            let began = std::time::Instant::now();
            walked = self.walk_again(app, &mut items, &changed_children).await?;
            self.span("subtrees whose children changed", began, walked.len() * 6);
            index = index_of(&items);
        }
        if self.walks(app) {
            let began = std::time::Instant::now();
            let fresh = self.frames_again(app, &mut items).await?;
            if !fresh.is_empty() {
                self.span("frames the walk lacked", began, fresh.len() * 6);
                index = index_of(&items);
                walked.extend(fresh);
            }
        }
        let restated = {
            let marks = self.marks.lock().unwrap();
            let unwalked = index.keys().copied().filter(|id| !walked.contains(id));
            marks.restated_after(unwalked, as_of)
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

    /// Whether the app's tree is walked, its cache holding stale copies of
    /// what it shows (Chromium's pages).
    fn walks(&self, app: &App) -> bool {
        self.uncached.lock().unwrap().contains(&app.bus_name)
    }

    /// Walk a kept walk again below the objects `changed` (node ids in
    /// `items`), each with its own item, in place of what was there; answers
    /// the node ids walked.
    async fn walk_again(
        &self,
        app: &App,
        items: &mut Arc<Vec<CacheItem>>,
        changed: &[u64],
    ) -> Result<HashSet<u64>, Error> {
        let root = app_root(app)?;
        let index = index_of(items);
        let parent_of = |id: u64| ref_id(&items[index[&id]].parent);
        let changed_set: HashSet<u64> = changed.iter().copied().collect();
        // Walked from the outermost only: one inside another is walked with it.
        let outermost: Vec<u64> = changed
            .iter()
            .copied()
            .filter(|&id| {
                // At most a step an object: a parent link that loops ends.
                let mut at = parent_of(id);
                for _ in 0..index.len() {
                    let Some(up) = at.filter(|up| index.contains_key(up)) else {
                        break;
                    };
                    if changed_set.contains(&up) {
                        return false;
                    }
                    at = parent_of(up);
                }
                true
            })
            .collect();
        let gone = subtrees(items, outermost.clone());
        let starts = outermost
            .iter()
            .map(|id| {
                let it = &items[index[id]];
                (it.object.clone(), it.parent.clone(), it.index)
            })
            .collect();
        let fresh = self.walk_from(&root, starts).await;
        let walked = fresh.iter().filter_map(|it| ref_id(&it.object)).collect();
        let items = Arc::make_mut(items);
        items.retain(|it| ref_id(&it.object).is_none_or(|id| !gone.contains(&id)));
        items.extend(fresh);
        Ok(walked)
    }

    /// A kept walk's frames made as the app's are now, answering the node
    /// ids walked: a frame that came since is walked, one that went is let
    /// go. Chromium tells no event when it opens a frame beside its
    /// window's (a context menu's), so the app's children are asked at
    /// each read: one call.
    async fn frames_again(
        &self,
        app: &App,
        items: &mut Arc<Vec<CacheItem>>,
    ) -> Result<HashSet<u64>, Error> {
        let root = app_root(app)?;
        let proxy = object_proxy::<AccessibleProxy>(&self.conn, &root).await?;
        let now = proxy
            .get_children()
            .await
            .map_err(|e| call_failed(&format!("listing {}'s frames", app.bus_name), e))?;
        let root_id = ref_id(&root);
        let kept: HashSet<u64> = items
            .iter()
            .filter(|it| ref_id(&it.parent) == root_id)
            .filter_map(|it| ref_id(&it.object))
            .collect();
        let now_ids: HashSet<u64> = now.iter().filter_map(ref_id).collect();
        let came: Vec<(ObjectRefOwned, ObjectRefOwned, i32)> = now
            .into_iter()
            .enumerate()
            .filter(|(_, f)| ref_id(f).is_some_and(|id| !kept.contains(&id)))
            .map(|(i, f)| (f, root.clone(), i as i32))
            .collect();
        let went: Vec<u64> = kept.difference(&now_ids).copied().collect();
        if came.is_empty() && went.is_empty() {
            return Ok(HashSet::new());
        }
        let gone = subtrees(items, went);
        let fresh = self.walk_from(&root, came).await;
        let walked = fresh.iter().filter_map(|it| ref_id(&it.object)).collect();
        let items = Arc::make_mut(items);
        items.retain(|it| ref_id(&it.object).is_none_or(|id| !gone.contains(&id)));
        items.extend(fresh);
        Ok(walked)
    }

    /// One frame's elements: its objects in tree order with what the cache
    /// lacks (bounds, values, keys, relations) read for each, concurrently;
    /// the bounds in `kept` (by node id) are taken as they are, and a node
    /// kept as unplaced (`None`) stays so while it is not showing.
    pub(super) async fn read_frame_nodes(
        &self,
        items: &AppItems,
        head: &FrameHead,
        kept: &HashMap<u64, Option<Rect>>,
    ) -> Frame {
        let app = &items.app;
        let Some(items) = items.read_as::<CachedRead>() else {
            // Items another reader made hold nothing this one can read.
            return Frame {
                head: head.clone(),
                nodes: Vec::new(),
                gone: false,
            };
        };
        let reached = tree_order(head.id, &items.children, |id| items.ids.contains_key(&id));
        let order: Vec<u64> = reached.iter().map(|&(id, _)| id).collect();
        let mut children: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(id, from) in &reached {
            if let Some(parent) = from {
                children.entry(parent).or_default().push(id);
            }
        }
        let (mut details, gone) = self
            .details(app, &items.items, &items.ids, &order, kept)
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
        let hide_by_showing = self.hide_by_showing.lock().unwrap().contains(&app.bus_name);
        let mut nodes: Vec<Node> = reached
            .iter()
            .map(|&(id, parent)| {
                to_node(
                    id,
                    parent,
                    children.remove(&id).unwrap_or_default(),
                    items.item(id),
                    details.remove(&id).unwrap_or_default(),
                    hide_by_showing,
                )
            })
            .collect();
        roles_by_content(&mut nodes);
        self.span("nodes", began, 0);
        Frame {
            head: head.clone(),
            nodes,
            gone,
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
        // Each object read once: an app listing an ancestor among an
        // object's children would otherwise be walked round for good.
        let mut asked = HashSet::new();
        let mut level = start;
        level.retain(|(obj, _, _)| ref_id(obj).is_none_or(|id| asked.insert(id)));
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
                    if ref_id(&child).is_none_or(|id| asked.insert(id)) {
                        level.push((child, item.object.clone(), i as i32));
                    }
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
    pub(super) async fn round_trip(&self, app: &App) -> Result<zbus::message::Sequence, Error> {
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

    /// The objects below cached ones that the cache lacks, read by a walk
    /// from the cached parents that list more children than it holds.
    async fn walk_what_the_cache_lacks(
        &self,
        app: &App,
        items: &[CacheItem],
    ) -> Result<Vec<CacheItem>, Error> {
        let known: std::collections::HashSet<u64> =
            items.iter().filter_map(|it| ref_id(&it.object)).collect();
        let lacking = lacking_children(items);
        if lacking.is_empty() {
            return Ok(Vec::new());
        }
        let conn = &self.conn;
        let listed: Vec<(ObjectRefOwned, Vec<ObjectRefOwned>)> = stream::iter(lacking)
            .map(|object| async move {
                let children = children_of(conn, &object).await;
                (object, children)
            })
            .buffered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        let start: Vec<(ObjectRefOwned, ObjectRefOwned, i32)> = listed
            .into_iter()
            .flat_map(|(parent, children)| {
                children
                    .into_iter()
                    .enumerate()
                    .map(move |(i, c)| (c, parent.clone(), i as i32))
            })
            .filter(|(c, _, _)| ref_id(c).is_some_and(|id| !known.contains(&id)))
            .collect();
        if start.is_empty() {
            return Ok(Vec::new());
        }
        let root = app_root(app)?;
        Ok(self.walk_from(&root, start).await)
    }

    /// Ask for the children the cache lacks, level by level and concurrently, so
    /// the toolkit adds them; returns how many objects were asked for.
    async fn realize_missing(&self, items: &[CacheItem]) -> usize {
        let mut known: std::collections::HashSet<u64> =
            items.iter().filter_map(|it| ref_id(&it.object)).collect();
        let mut frontier = lacking_children(items);
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
    /// they were read (a read some call of which failed is not stored), then
    /// the bounds, fetched unless `kept` holds them (the
    /// caller knows they cannot have moved, or that the node was not laid
    /// out, which holds while it does not show) or the element is on a web
    /// page and does not show (it has none); each phase's calls concurrent.
    /// With them, whether an object said it does not exist as its facts
    /// were asked.
    async fn details(
        &self,
        app: &App,
        items: &[CacheItem],
        ids: &HashMap<u64, usize>,
        order: &[u64],
        kept: &HashMap<u64, Option<Rect>>,
    ) -> (HashMap<u64, (Arc<Lasting>, Option<Rect>)>, bool) {
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
        // Firefox makes no objects of text: an unnamed container's text is
        // what it shows.
        let hide_by_showing = self.hide_by_showing.lock().unwrap().contains(&app.bus_name);
        let wanted = |it: &CacheItem| {
            if is_text_field(role(it.role, &it.states)) {
                TextWanted::Field {
                    password: it.role == AtspiRole::PasswordText,
                }
            } else if hide_by_showing
                && it.short_name.is_empty()
                && it.ifaces.contains(Interface::Text)
            {
                TextWanted::Shown
            } else {
                TextWanted::None
            }
        };
        let (layout, unknown): (Vec<u64>, Vec<u64>) = order
            .iter()
            .copied()
            .filter(|id| !known.contains_key(id))
            .partition(|id| {
                let it = item(id);
                is_layout(role(it.role, &it.states), &it.short_name)
                    && wanted(it) != TextWanted::Shown
            });
        let began = std::time::Instant::now();
        let fetched: Vec<(u64, LastingRead)> = stream::iter(unknown)
            .map(|id| async move {
                let it = item(&id);
                (id, lasting(conn, &it.object, it.ifaces, wanted(it)).await)
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        self.span("facts of unknown nodes", began, fetched.len());
        let gone = fetched.iter().any(|(_, read)| read.gone);
        {
            let mut stores = self.lasting.lock().unwrap();
            let store = stores.entry(app.bus_name.clone()).or_default();
            let fresh = fetched.into_iter().chain(layout.into_iter().map(|id| {
                let nothing = LastingRead {
                    facts: Lasting::default(),
                    whole: true,
                    gone: false,
                };
                (id, nothing)
            }));
            remember(store, &mut known, read_at, fresh);
        }
        let on_pages = self.showing_on_pages(items, ids, order).await;
        let began = std::time::Instant::now();
        // Where the browser said which of its page's elements show, that
        // holds over what a read before found: one that shows is placed, one
        // that does not is not.
        let shows = |id: &u64| match on_pages.get(id) {
            Some(shows) => *shows,
            None => ids.contains_key(id) && item(id).states.contains(State::Showing),
        };
        let kept: HashMap<u64, Option<Rect>> = kept
            .iter()
            .filter(|(id, b)| b.is_some() || !shows(id))
            .map(|(id, b)| (*id, *b))
            .chain(
                on_pages
                    .iter()
                    .filter(|(_, shows)| !**shows)
                    .map(|(id, _)| (*id, None)),
            )
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
        let details = order
            .iter()
            .map(|id| {
                let bounds = match kept.get(id) {
                    Some(b) => *b,
                    None => measured.remove(id).flatten(),
                };
                (*id, (known.remove(id).unwrap_or_default(), bounds))
            })
            .collect();
        (details, gone)
    }

    /// Whether each element of the web pages among `order` (the
    /// descendants of each `document web`) shows now, as its browser says:
    /// one that is scrolled out of the page's view, or on a part of it that
    /// is hidden, does not. One Collection call a page asks which show, where
    /// a bounds call for each element would ask where all are (a 1,250-row
    /// table shows about 200 of its 10,000 elements). A page whose browser
    /// cannot answer so is left out.
    async fn showing_on_pages(
        &self,
        items: &[CacheItem],
        ids: &HashMap<u64, usize>,
        order: &[u64],
    ) -> HashMap<u64, bool> {
        let item = |id: &u64| &items[ids[id]];
        let pages: Vec<(u64, ObjectRefOwned)> = order
            .iter()
            .filter(|id| item(id).role == AtspiRole::DocumentWeb)
            .map(|id| (*id, item(id).object.clone()))
            .collect();
        if pages.is_empty() {
            return HashMap::new();
        }
        let began = std::time::Instant::now();
        // at-spi2-atk matches nothing on a criterion left `Invalid`: the
        // others are "none of nothing", as libatspi's clients give them.
        let rule = ObjectMatchRule::builder()
            .states([State::Showing], MatchType::All)
            .attributes(HashMap::new(), MatchType::NA)
            .roles(&[], MatchType::NA)
            .interfaces(std::iter::empty::<Interface>(), MatchType::NA)
            .build();
        let conn = &self.conn;
        let asked = pages.len();
        // `traverse` true: all descendants, not only children.
        let answers = stream::iter(pages)
            .map(|(page, object)| {
                let rule = rule.clone();
                async move {
                    let proxy = object_proxy::<CollectionProxy>(conn, &object).await.ok()?;
                    let shown = proxy
                        .get_matches(rule, SortOrder::Canonical, 0, true)
                        .await
                        .ok()?;
                    Some((page, shown))
                }
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect::<Vec<_>>()
            .await;
        self.span("showing on pages", began, asked);
        let mut answered = HashSet::new();
        let mut showing = HashSet::new();
        for (page, shown) in answers.into_iter().flatten() {
            answered.insert(page);
            showing.extend(shown.iter().filter_map(ref_id));
        }
        // Parents come before their children in `order`.
        let mut on_pages = HashMap::new();
        for id in order {
            let parent = ref_id(&item(id).parent);
            if parent.is_some_and(|p| answered.contains(&p) || on_pages.contains_key(&p)) {
                on_pages.insert(*id, showing.contains(id));
            }
        }
        on_pages
    }

    /// Whether the app created objects after a read that made it create some
    /// (GTK 4 makes a popover's menu when a relation or a bound of its button
    /// is asked): that read lacks them, and reading again finds them.
    pub(super) async fn grew_after_read(&self, items: &AppItems) -> Result<bool, Error> {
        let Some(read_at) = items.read_as::<CachedRead>().and_then(|r| r.realized_at) else {
            return Ok(false);
        };
        self.caught_up(&items.app).await?;
        let marks = self.marks.lock().unwrap();
        Ok(marks.reshaped_after(&items.app.bus_name, read_at))
    }

    /// The bounds the app gives now of nodes read before, asked side by side
    /// (a node whose object has no Component is left out): a read asks
    /// those it already knows it needs while it waits for the app's events.
    pub(super) async fn bounds_now(&self, ids: &[u64]) -> HashMap<u64, Option<Rect>> {
        self.places_now(ids, None, "bounds ahead").await
    }

    /// The places the app gives now of nodes read before, asked side by
    /// side in `coords` (`None`: those its bounds are asked in), as a read's
    /// phase `phase`.
    pub(super) async fn places_now(
        &self,
        ids: &[u64],
        coords: Option<CoordType>,
        phase: &'static str,
    ) -> HashMap<u64, Option<Rect>> {
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
                let coords = match coords {
                    Some(coords) => coords,
                    None => self.coords_for(&obj).await,
                };
                (id, bounds(conn, &obj, ifaces, coords).await)
            })
            .buffer_unordered(EXTENTS_IN_FLIGHT)
            .collect()
            .await;
        self.span(phase, began, asked);
        measured
    }
}

/// The ids `held` below `head` (itself first), depth-first with children in
/// order, each with the id it was reached from (`None` for the head); each
/// id once, so that an app whose objects name a child twice, or an ancestor
/// as their child, still gives a tree.
fn tree_order(
    head: u64,
    children: &HashMap<u64, Vec<u64>>,
    held: impl Fn(u64) -> bool,
) -> Vec<(u64, Option<u64>)> {
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(head, None)];
    while let Some((id, from)) = stack.pop() {
        if !held(id) || !seen.insert(id) {
            continue;
        }
        order.push((id, from));
        if let Some(kids) = children.get(&id) {
            stack.extend(kids.iter().rev().map(|&kid| (kid, Some(id))));
        }
    }
    order
}

/// The node ids of `roots` and of every item below them.
fn subtrees(items: &[CacheItem], roots: Vec<u64>) -> HashSet<u64> {
    let mut children: HashMap<u64, Vec<u64>> = HashMap::new();
    for it in items {
        if let (Some(id), Some(parent)) = (ref_id(&it.object), ref_id(&it.parent)) {
            children.entry(parent).or_default().push(id);
        }
    }
    let mut held = HashSet::new();
    let mut below = roots;
    while let Some(id) = below.pop() {
        if held.insert(id) {
            below.extend(children.get(&id).into_iter().flatten());
        }
    }
    held
}

/// The cached objects that list more children than the cache holds.
fn lacking_children(items: &[CacheItem]) -> Vec<ObjectRefOwned> {
    let mut cached_children: HashMap<u64, i32> = HashMap::new();
    for it in items {
        if let Some(parent) = ref_id(&it.parent) {
            *cached_children.entry(parent).or_default() += 1;
        }
    }
    items
        .iter()
        .filter(|it| {
            ref_id(&it.object)
                .is_some_and(|id| cached_children.get(&id).copied().unwrap_or(0) < it.children)
        })
        .map(|it| it.object.clone())
        .collect()
}

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

/// Index into `items` by node id.
fn index_of(items: &[CacheItem]) -> HashMap<u64, usize> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| ref_id(&it.object).map(|id| (id, i)))
        .collect()
}

/// One object read property by property, as a cache item, with its children.
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

/// Facts just read serve this read (`known`); only whole reads are kept in
/// the app's `store` for the reads after, as of the change count `read_at`:
/// a read that met a failed call (an object gone for a moment, an app
/// busy) may lack facts the object has, and no event would say so.
fn remember(
    store: &mut super::LastingStore,
    known: &mut HashMap<u64, Arc<Lasting>>,
    read_at: u64,
    fresh: impl IntoIterator<Item = (u64, LastingRead)>,
) {
    for (id, read) in fresh {
        let facts = Arc::new(read.facts);
        if read.whole {
            store.insert(id, (read_at, facts.clone()));
        }
        known.insert(id, facts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_read_with_a_failed_call_serve_this_read_and_are_not_kept() {
        let read = |key: &str, whole: bool| LastingRead {
            facts: Lasting {
                key: (!key.is_empty()).then(|| key.to_string()),
                ..Lasting::default()
            },
            whole,
            gone: !whole,
        };
        let (mut store, mut known) = (HashMap::new(), HashMap::new());
        remember(
            &mut store,
            &mut known,
            7,
            [(1, read("save", true)), (2, read("", false))],
        );
        assert_eq!(known[&1].key.as_deref(), Some("save"));
        assert_eq!(known[&2].key, None, "this read is served what it found");
        assert_eq!(store[&1].0, 7);
        assert_eq!(store[&1].1.key.as_deref(), Some("save"));
        assert!(!store.contains_key(&2), "the next read asks 2 again");
    }

    fn children(pairs: &[(u64, &[u64])]) -> HashMap<u64, Vec<u64>> {
        pairs
            .iter()
            .map(|(id, kids)| (*id, kids.to_vec()))
            .collect()
    }

    #[test]
    fn a_tree_is_read_root_first_with_children_in_order() {
        let kids = children(&[(1, &[2, 5]), (2, &[3, 4])]);
        let order = tree_order(1, &kids, |_| true);
        assert_eq!(
            order,
            [
                (1, None),
                (2, Some(1)),
                (3, Some(2)),
                (4, Some(2)),
                (5, Some(1))
            ]
        );
    }

    #[test]
    fn an_app_naming_an_ancestor_or_a_child_twice_still_gives_a_tree() {
        // The frame (1) named as its grandchild's child, and 3 as a child
        // of both 1 and 2: each node comes once, under where it was reached.
        let kids = children(&[(1, &[2, 3]), (2, &[3]), (3, &[1, 4])]);
        let order = tree_order(1, &kids, |_| true);
        assert_eq!(order, [(1, None), (2, Some(1)), (3, Some(2)), (4, Some(3))]);
    }

    #[test]
    fn ids_the_read_does_not_hold_are_left_out_with_what_is_below_them() {
        let kids = children(&[(1, &[2, 3]), (2, &[4])]);
        let order = tree_order(1, &kids, |id| id != 2);
        assert_eq!(order, [(1, None), (3, Some(1))]);
    }
}
