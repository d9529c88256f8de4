//! Reading a window's elements: its app found by pid, its AT-SPI frame matched
//! to the surface, bounds made relative to the window's content, reads kept.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use wayrig_host::{Damage, Rect, WindowHandle, WindowInfo, WindowKind};

use super::elements::is_control;
use super::placing::Placing;
use super::seen::{is_gtk3_popover, on_a_panel, unselected_panels};
use super::windows::{is_top_level, popups_over, top_level_of};
use super::Session;
use crate::access::{Accessibility, AppItems, Frame, FrameHead, Read, Span};
use crate::model::{ancestors, positions, Error, Node, Role, Tree};

/// How long a newly shown window's app may take to register with accessibility.
const APP_REGISTRATION: Duration = Duration::from_secs(5);
/// How long a registered app with no frame yet (AccessKit, building its tree
/// on first request) may take to show one.
const FIRST_FRAME_LIMIT: Duration = Duration::from_secs(3);
/// The longest a tree read may take.
const READ_LIMIT: Duration = Duration::from_secs(30);
/// The longest a window's first read keeps its app's frames back: a read
/// cut short, or longer, lets them go by then.
const READ_HOLD: Duration = Duration::from_secs(2);
/// How many times a read is made again when it made the app create objects
/// it did not read (GTK 4 creates them as they are asked for).
const COMPLETING_READS: usize = 2;

/// A window's last tree, with the window's commit count and the
/// accessibility change count it was read at, and how far its app's
/// coordinates lie from the window's content.
#[derive(Clone)]
pub(crate) struct Mirrored {
    commits: u64,
    changes: u64,
    /// The session's act count then.
    acts: u64,
    pub(super) tree: Tree,
    placing: Placing,
    /// Nodes whose bounds the next read asks again: items the read found
    /// left behind where another shows, and the elements of open popovers
    /// (placed on their popups, not where the app measures them).
    ask_again: HashSet<u64>,
    /// Whether the app named each overlapping control at its middle.
    verdicts: Verdicts,
}

/// Whether a read may be served by the last one, when the window drew
/// nothing and its app sent no event since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    Served,
    /// The last read was incomplete: read again.
    ReadAgain,
}

/// One read of a window's elements.
struct WindowRead {
    tree: Tree,
    /// Where its app's coordinates lie in the window's content.
    placing: Placing,
    /// Nodes whose bounds the next read asks again (see `Mirrored`).
    ask_again: HashSet<u64>,
    verdicts: Verdicts,
    /// The read made the app create objects it did not read, or some of
    /// its objects said they do not exist as their facts were asked.
    incomplete: bool,
}

impl Session {
    /// A window with its elements; bounds relative to the window's content,
    /// what does not show marked offscreen, controls whose name says nothing
    /// given the words a person would use (see `seen`). Read again only
    /// when the window drew a new frame or an app reported a change since
    /// the last read; else the mirror is what the user sees. A read that
    /// made the app create objects it then lacked is made again.
    pub async fn tree(&self, handle: WindowHandle) -> Result<Tree, Error> {
        let turn = self
            .reading
            .lock()
            .unwrap()
            .entry(handle)
            .or_default()
            .clone();
        let my_turn = turn.lock().await;
        // A first read is long: an app that animates answers it sooner when
        // it draws nothing meanwhile. A later read is short, and a frame
        // held through it would only come after it, and hold up a settle.
        let first = !self.mirror.lock().unwrap().contains_key(&handle);
        if first {
            let _ = self.host.hold_frames(handle, READ_HOLD).await;
        }
        let read = self.tree_completed(handle).await;
        if first {
            let _ = self.host.hold_frames(handle, Duration::ZERO).await;
        }
        drop(my_turn);
        // The last reader of the window lets its turn go.
        let mut reading = self.reading.lock().unwrap();
        if Arc::strong_count(&turn) == 2 {
            reading.remove(&handle);
        }
        read
    }

    /// `tree`, in the window's turn.
    async fn tree_completed(&self, handle: WindowHandle) -> Result<Tree, Error> {
        let mut read = self.tree_once(handle, Kept::Served).await?;
        for _ in 0..COMPLETING_READS {
            if !read.incomplete {
                break;
            }
            // Nothing may have changed since (an object gone for a moment
            // sends no event): the tree just read is not served again.
            read = self.tree_once(handle, Kept::ReadAgain).await?;
        }
        Ok(read.tree)
    }

    /// Read each top-level window as soon as it maps, before any client
    /// asks: its app's objects are made and its facts learned while the
    /// client is still starting, so the first read it asks finds the
    /// window mirrored and reads only what changed since. Runs until the
    /// session's windows end.
    pub async fn read_windows_ahead(&self) {
        if self.a11y.is_none() {
            return;
        }
        let mut list = self.windows.watch();
        let mut seen: HashSet<WindowHandle> = HashSet::new();
        let mut reads = futures_util::stream::FuturesUnordered::new();
        loop {
            let new: Vec<WindowHandle> = {
                let now = list.borrow_and_update();
                // A handle gone never comes back (a window mapped again has a new one).
                seen.retain(|h| now.iter().any(|w| w.handle == *h));
                now.iter()
                    .filter(|w| is_top_level(w) && w.pid.is_some())
                    .map(|w| w.handle)
                    .filter(|h| seen.insert(*h))
                    .collect()
            };
            for handle in new {
                reads.push(async move {
                    if let Err(e) = self.tree(handle).await {
                        tracing::debug!(%handle, "reading ahead: {e}");
                    }
                });
            }
            tokio::select! {
                changed = list.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                Some(()) = futures_util::StreamExt::next(&mut reads) => {}
            }
        }
    }

    /// One read of the window (see `tree`), unless the last one still holds
    /// and `kept` lets it be served.
    async fn tree_once(&self, handle: WindowHandle, kept: Kept) -> Result<WindowRead, Error> {
        let changes = self.a11y()?.changes();
        let acts = self.acts.load(std::sync::atomic::Ordering::SeqCst);
        let commits = self.host.commits(handle).await?;
        let last = self.mirror.lock().unwrap().get(&handle).cloned();
        if let (Some(last), Kept::Served) = (&last, kept) {
            if (last.commits, last.changes) == (commits, changes) {
                return Ok(WindowRead {
                    tree: last.tree.clone(),
                    placing: last.placing.clone(),
                    ask_again: last.ask_again.clone(),
                    verdicts: last.verdicts.clone(),
                    incomplete: false,
                });
            }
        }
        // Bounds that lie where nothing was drawn since the last read have
        // not moved. (A first read is asked too: the host keeps what the
        // window showed, to compare the next read's with.)
        let since = last.as_ref().map_or(0, |l| l.commits);
        let began = std::time::Instant::now();
        let (damage, commits) = self.host.damage_since(handle, since).await?;
        self.a11y()?.span("damage", began, 0);
        let kept = match (&last, damage) {
            (Some(last), Damage::Within(rects)) => Some((last, rects)),
            _ => None,
        };
        // The apps' events may trail what an act did to their caches.
        let how = match &last {
            Some(last) if last.acts == acts => Read::Bulk,
            _ => Read::BulkAnew,
        };
        // Each call has its own limit; this bounds a read of an app that
        // stops answering halfway through its many calls.
        let read = tokio::time::timeout(READ_LIMIT, self.read_tree(handle, kept, how))
            .await
            .map_err(|_| {
                Error::Timeout(format!(
                    "reading the elements of window {handle} took over {READ_LIMIT:?}; is its app hung?"
                ))
            })??;
        self.mirror.lock().unwrap().insert(
            handle,
            Mirrored {
                commits,
                changes,
                acts,
                tree: read.tree.clone(),
                placing: read.placing.clone(),
                ask_again: read.ask_again.clone(),
                verdicts: read.verdicts.clone(),
            },
        );
        Ok(read)
    }

    /// Where the time of the reads since the last call went, phase by phase.
    pub fn take_read_spans(&self) -> Vec<Span> {
        self.a11y().map(|a| a.take_spans()).unwrap_or_default()
    }

    /// The window's tree, read; `last` is the tree read before with the
    /// damage drawn since, when known.
    async fn read_tree(
        &self,
        handle: WindowHandle,
        last: Option<(&Mirrored, Vec<Rect>)>,
        how: Read,
    ) -> Result<WindowRead, Error> {
        let began = std::time::Instant::now();
        let window = self.window(&super::WindowPick::Handle(handle)).await?;
        let windows = self.windows.now();
        self.a11y()?.span("window", began, 0);
        // Trees of windows that have closed are kept no longer.
        self.mirror
            .lock()
            .unwrap()
            .retain(|kept, _| windows.iter().any(|w| w.handle == *kept));
        let pid = window.pid.ok_or_else(|| {
            Error::Unsupported(format!(
                "window {handle} has no known process, so no accessibility"
            ))
        })?;
        let a11y = self.a11y()?;
        // Bounds the last read already says it needs are asked while the
        // app's events catch up: one wait on a busy app instead of two.
        let same_size = |last: &Mirrored| {
            let was = &last.tree.window.content;
            (was.width, was.height) == (window.content.width, window.content.height)
        };
        let kept_verdicts = match &last {
            Some((last, damage)) if same_size(last) => verdicts_kept(last, damage),
            _ => Verdicts::new(),
        };
        let (since, kept_ahead, named_ahead, ahead) = match last {
            Some((last, damage)) if same_size(last) => {
                let named = moved_or_named_since(a11y, last.changes);
                let kept = unmoved(last, &damage, &named);
                let ahead: Vec<u64> = last
                    .tree
                    .nodes
                    .iter()
                    .map(|n| n.id)
                    .filter(|id| !kept.contains_key(id))
                    .collect();
                (Some(last.changes), kept, named, ahead)
            }
            _ => (None, HashMap::new(), HashSet::new(), Vec::new()),
        };
        let (found, asked_ahead) = tokio::join!(
            self.find_frame(pid, &window, &windows, how),
            a11y.bounds_of(&ahead)
        );
        let (apps, app, head) = found?;
        // An element named or moved while its bounds were asked ahead is
        // asked again.
        let named_late = match since {
            Some(changes) => &moved_or_named_since(a11y, changes) - &named_ahead,
            None => HashSet::new(),
        };
        let kept: HashMap<u64, Option<Rect>> = kept_ahead
            .into_iter()
            .chain(asked_ahead)
            .filter(|(id, _)| !named_late.contains(id))
            .collect();
        // Only the picked frame's elements cost per-node calls.
        let mut frame = a11y.read_frame(&apps[app], &head, &kept).await;
        // The popups the window shows now, relative to its surface, each as
        // its surface and as its content (xdg window geometry) lie.
        let surface = (window.surface.x, window.surface.y);
        let popups_shown: Vec<[Rect; 2]> = popups_over(handle, &windows)
            .into_iter()
            .map(|w| popup_places(w, surface))
            .collect();
        let on_popups = read_frames_over(a11y, &apps[app], &kept, &mut frame, &popups_shown).await;
        let began = std::time::Instant::now();
        let unplaced = self
            .unplace_left_behind(&mut frame.nodes, &kept_verdicts)
            .await?;
        a11y.span("items left behind", began, unplaced.asked);
        let began = std::time::Instant::now();
        let inner_frames = Placing::frames_to_ask(&frame.nodes);
        let screen = if inner_frames.is_empty() {
            HashMap::new()
        } else {
            a11y.screen_places_of(&inner_frames).await
        };
        let placing = Placing::of(&frame.nodes, surface_offset(&frame, &window), &screen)
            .with_frames_on_popups(on_popups);
        let gone = frame.gone;
        let nodes = frame
            .nodes
            .into_iter()
            .map(|mut n| {
                n.bounds = n.bounds.map(|b| placing.to_window(n.id, b));
                n
            })
            .collect();
        let mut tree = Tree { window, nodes };
        // What shows on popups is judged by those of the window's own
        // top-level (a popup read alone shows on itself): a popover open
        // over another window of the app opens none of this one's.
        let popups_of_top = popups_over(top_level_of(handle, &windows), &windows);
        let popups: Vec<&WindowInfo> = popups_of_top
            .iter()
            .copied()
            .filter(|w| w.kind == WindowKind::Menu)
            .collect();
        let placed = super::seen::place_popovers(&mut tree, &popups);
        let content = tree.window.content;
        let in_content = |p: &&WindowInfo| {
            Rect::new(
                p.content.x - content.x,
                p.content.y - content.y,
                p.content.width,
                p.content.height,
            )
        };
        let areas: Vec<Rect> = popups.iter().map(in_content).collect();
        super::seen::as_seen(&mut tree, &areas);
        // Lists drawn on popups that take no grab (Chromium's <select>) too.
        let every_popup: Vec<Rect> = popups_of_top.iter().map(in_content).collect();
        super::seen::hide_list_items_off_their_popup(&mut tree, &every_popup);
        a11y.span("model", began, 0);
        let began = std::time::Instant::now();
        let grew = a11y.grew_after(&apps[app]).await?;
        if grew {
            a11y.span("objects made while read", began, 1);
        }
        let incomplete = grew || gone;
        Ok(WindowRead {
            tree,
            placing,
            ask_again: &unplaced.left | &placed,
            verdicts: unplaced.verdicts,
            incomplete,
        })
    }

    /// The apps of the window's process (`pid`), read in bulk, and the frame
    /// of theirs that is the window (`apps[app]`, `head`).
    async fn find_frame(
        &self,
        pid: u32,
        window: &WindowInfo,
        windows: &[WindowInfo],
        how: Read,
    ) -> Result<(Vec<AppItems>, usize, FrameHead), Error> {
        let a11y = self.a11y()?;
        let handle = window.handle;
        // AccessKit (egui, winit apps) builds its tree only once a client
        // asks: an app with no frame yet is read again on its next events.
        let first_frame_by = std::time::Instant::now() + FIRST_FRAME_LIMIT;
        loop {
            let since = a11y.changes();
            let mut apps = Vec::new();
            let began = std::time::Instant::now();
            let registered = a11y.wait_for_app(pid, APP_REGISTRATION).await?;
            a11y.span("registration", began, 1);
            for app in registered {
                apps.push(a11y.read_items(&app, how).await?);
            }
            let heads = frame_heads(&apps);
            let no_frames = heads.is_empty();
            // The same app's top-level windows, in the order they were made,
            // for matching by order.
            let mut siblings: Vec<&WindowInfo> = windows
                .iter()
                .filter(|w| w.pid == Some(pid) && is_top_level(w))
                .collect();
            siblings.sort_by_key(|w| w.handle.id);
            let titled = heads_titled(&heads, &window.title);
            if let Some((app, head)) = pick_frame(heads, window, &siblings) {
                break Ok((apps, app, head));
            }
            let left = first_frame_by.saturating_duration_since(std::time::Instant::now());
            if no_frames && !left.is_zero() && a11y.wait_change(since, left).await {
                continue;
            }
            return Err(if titled > 1 {
                Error::Failed(format!(
                    "window {handle} (pid {pid}): {titled} accessibility frames are titled {:?} \
                     and they cannot be told apart from its other windows",
                    window.title
                ))
            } else {
                Error::Unsupported(format!(
                    "window {handle} (pid {pid}) exposes no accessibility tree: {}",
                    crate::accessibility_off::advice(pid)
                ))
            });
        }
    }

    /// GTK 4.8's list views keep the rows they no longer show, with the
    /// bounds those had when they last showed: a scrolled list has several
    /// rows at each place. Controls hidden behind others keep their layout
    /// so too (see `covered_controls`). Where elements share a place the
    /// app is asked which one is there; the others, and all they hold, are
    /// not laid out (and those covered are concealed). Answers those and
    /// how many places were asked about.
    async fn unplace_left_behind(
        &self,
        nodes: &mut [Node],
        verdicts_kept: &Verdicts,
    ) -> Result<Unplaced, Error> {
        let a11y = self.a11y()?;
        let contested = shared_places(nodes);
        let parents: HashMap<u64, u64> = nodes
            .iter()
            .filter_map(|n| Some((n.id, n.parent?)))
            .collect();
        let bounds: HashMap<u64, Rect> = nodes
            .iter()
            .filter_map(|n| Some((n.id, n.bounds?)))
            .collect();
        let (mut left, mut there) = (HashSet::new(), HashSet::new());
        let mut concealed = HashSet::new();
        let mut verdicts = Verdicts::new();
        let mut asked = 0;
        for place in &contested {
            // A control's verdict holds while it lies where it lay and
            // nothing was drawn over it since.
            let item = place.items[0];
            if let (Claim::Middle, Some(b)) = (&place.claim, bounds.get(&item)) {
                if let Some(&(was, shown)) = verdicts_kept.get(&item).filter(|(was, _)| was == b) {
                    verdicts.insert(item, (was, shown));
                    if shown {
                        there.insert(item);
                    } else {
                        left.insert(item);
                        concealed.insert(item);
                    }
                    continue;
                }
            }
            asked += 1;
            let hit = match a11y.pick(place.container, place.x, place.y).await {
                Ok(Some(hit)) => hit,
                // The app says nothing of it is there: not asked again
                // while nothing changes there.
                Ok(None) => {
                    if place.claim == Claim::Middle {
                        verdicts.extend(bounds.get(&item).map(|b| (item, (*b, true))));
                    }
                    continue;
                }
                // It did not answer (busy, the object gone): no verdict is
                // kept, and the next read asks again.
                Err(e) => {
                    tracing::debug!(%e, item, "no answer to what lies at a point");
                    continue;
                }
            };
            // What holds what is there: a claimant, or (for a middle) the
            // element asked about or anything known.
            let known = |id: &u64| parents.contains_key(id) || *id == place.container;
            let holds = |outer: u64, inner: u64| {
                let mut at = parents.get(&inner).copied();
                while let Some(id) = at {
                    if id == outer {
                        return true;
                    }
                    at = parents.get(&id).copied();
                }
                false
            };
            let mut at = Some(hit);
            let mut named = None;
            while let Some(id) = at {
                if place.items.contains(&id) {
                    named = Some(id);
                    break;
                }
                at = parents.get(&id).copied();
            }
            tracing::debug!(
                claim = ?place.claim,
                items = ?place.items,
                hit,
                ?named,
                "asked the app what shows where elements share a place"
            );
            match (&place.claim, named) {
                (Claim::OneOf, Some(shown)) => {
                    there.insert(shown);
                    left.extend(place.items.iter().filter(|id| **id != shown));
                }
                (Claim::OneOf, None) => {}
                (Claim::Page, Some(shown)) => {
                    there.insert(shown);
                    for page in place.items.iter().filter(|id| **id != shown) {
                        left.insert(*page);
                        concealed.insert(*page);
                    }
                }
                (Claim::Page, None) => {}
                (Claim::Middle, Some(shown)) if shown == item => {
                    there.insert(shown);
                    verdicts.extend(bounds.get(&item).map(|b| (item, (*b, true))));
                }
                // An element around the item: the app did not look deeper
                // (Chromium answers from what it last hit-tested); an
                // element lying over another is never one that holds it.
                (Claim::Middle, _) if holds(hit, item) => {
                    verdicts.extend(bounds.get(&item).map(|b| (item, (*b, true))));
                }
                // Something the read holds is at the middle, not the item.
                (Claim::Middle, _) if known(&hit) => {
                    left.insert(item);
                    concealed.insert(item);
                    verdicts.extend(bounds.get(&item).map(|b| (item, (*b, false))));
                }
                // An object the read left out: as above.
                (Claim::Middle, _) => {
                    verdicts.extend(bounds.get(&item).map(|b| (item, (*b, true))));
                }
            }
        }
        left.retain(|id| !there.contains(id));
        concealed.retain(|id| !there.contains(id));
        // What they hold was left behind (or concealed) with them.
        let children: HashMap<u64, &[u64]> = nodes
            .iter()
            .map(|n| (n.id, n.children.as_slice()))
            .collect();
        for set in [&mut left, &mut concealed] {
            let mut held: Vec<u64> = set.iter().copied().collect();
            while let Some(id) = held.pop() {
                for child in children.get(&id).copied().unwrap_or_default() {
                    if set.insert(*child) {
                        held.push(*child);
                    }
                }
            }
        }
        for n in nodes.iter_mut().filter(|n| left.contains(&n.id)) {
            n.bounds = None;
            n.states.concealed = concealed.contains(&n.id);
        }
        Ok(Unplaced {
            left,
            verdicts,
            asked,
        })
    }
}

/// Whether the app named a control at its middle (`true`: it shows), with
/// the bounds it had then, in the app's coordinates, by control.
type Verdicts = HashMap<u64, (Rect, bool)>;

/// What a read found of elements sharing places.
struct Unplaced {
    /// Elements left behind (or concealed), and all they hold.
    left: HashSet<u64>,
    verdicts: Verdicts,
    /// Places the app was asked about.
    asked: usize,
}

/// The verdicts of the last read that still hold: those of controls on
/// which nothing was drawn since (`damage`, in the window's content, as
/// `last.placing` places the app's coordinates there).
fn verdicts_kept(last: &Mirrored, damage: &[Rect]) -> Verdicts {
    last.verdicts
        .iter()
        .filter(|(id, (b, _))| {
            let drawn = last.placing.to_window(**id, *b);
            !damage.iter().any(|d| d.intersects(&drawn))
        })
        .map(|(id, v)| (*id, *v))
        .collect()
}

/// What the app's answer at a shared place tells.
#[derive(Debug, PartialEq)]
enum Claim {
    /// One of the items shows there; the others were left behind where a
    /// scroll may bring them again (a list's rows).
    OneOf,
    /// It is the middle of the first item, which overlaps the others: the
    /// item shows only if the app names it (or what it holds) there.
    Middle,
    /// The items are pages of a stack, all laid out over this place: the
    /// one that holds what the app names there shows, the others are
    /// concealed with all they hold.
    Page,
}

/// A place that several elements claim: rows of a list, controls laid
/// over one another.
#[derive(Debug, PartialEq)]
struct SharedPlace {
    /// The element the app is asked inside: the list, or the window.
    container: u64,
    claim: Claim,
    /// A point inside every claimant, in the app's coordinates.
    x: i32,
    y: i32,
    items: Vec<u64>,
}

/// The places in lists that more than one item of the list claims: each
/// item's middle where the list shows it (a point the app can be asked
/// about), with every item of the list that holds it too. Items are swept
/// top to bottom, each compared with those it overlaps.
fn shared_places(nodes: &[Node]) -> Vec<SharedPlace> {
    let bounds: HashMap<u64, Rect> = nodes
        .iter()
        .filter_map(|n| Some((n.id, n.bounds?)))
        .collect();
    let mut items_of: HashMap<u64, Vec<(u64, Rect)>> = HashMap::new();
    for n in nodes.iter().filter(|n| n.role.is_item()) {
        if let (Some(list), Some(b)) = (n.parent, n.bounds) {
            items_of.entry(list).or_default().push((n.id, b));
        }
    }
    let mut places = Vec::new();
    for (list, mut items) in items_of {
        items.sort_by_key(|(_, b)| (b.y, b.x));
        let shown = |b: &Rect| match bounds.get(&list) {
            Some(l) => clip(b, l),
            None => Some(*b),
        };
        let mut claimed = HashSet::new();
        // Items above this one that reach below its top.
        let mut above: Vec<(u64, Rect)> = Vec::new();
        for (i, (id, b)) in items.iter().enumerate() {
            above.retain(|(_, a)| a.y + a.height > b.y);
            let here = shown(b);
            above.push((*id, *b));
            let Some(here) = here else {
                continue;
            };
            if claimed.contains(id) {
                continue;
            }
            let (x, y) = (here.x + here.width / 2, here.y + here.height / 2);
            let holds = |(_, r): &&(u64, Rect)| r.contains_point(f64::from(x), f64::from(y));
            let below = items[i + 1..].iter().take_while(|(_, r)| r.y <= y);
            let claimants: Vec<u64> = above
                .iter()
                .chain(below)
                .filter(holds)
                .map(|(id, _)| *id)
                .collect();
            if claimants.len() > 1 {
                claimed.extend(claimants.iter().copied());
                places.push(SharedPlace {
                    container: list,
                    claim: Claim::OneOf,
                    x,
                    y,
                    items: claimants,
                });
            }
        }
    }
    places.extend(covered_controls(nodes));
    places.extend(stacked_pages(nodes));
    places.sort_by_key(|p| (p.container, p.y, p.x));
    places
}

/// Controls laid out over one another, where not all can show: the pages
/// of a GTK 4.8 stack keep the layout they last had, and gnome-calculator's
/// Basic keys stay in its tree, still laid out, while its Advanced keys
/// show over and around them. For each control that overlaps another
/// (neither holding the other, neither in a menu: a popover shows on a
/// surface of its own, and menus an app draws lie over its window by
/// nature), the app is asked what is at its middle: one the
/// app does not name there is concealed. Controls do not overlap in a
/// layout that shows them all, so such an app is asked nothing.
fn covered_controls(nodes: &[Node]) -> Vec<SharedPlace> {
    let Some(root) = nodes.first().map(|n| n.id) else {
        return Vec::new();
    };
    let index = positions(nodes);
    let holds = |outer: u64, inner: &Node| ancestors(nodes, &index, inner).any(|p| p.id == outer);
    // A menu, and a GTK 3 popover, lie on surfaces of their own, measured
    // from their corner: they overlap the window's controls only on paper.
    let measured_apart = |n: &Node| {
        ancestors(nodes, &index, n)
            .any(|p| p.role == Role::Menu || is_gtk3_popover(nodes, &index, p))
    };
    // What an unselected tab's panel holds is concealed without asking.
    let unselected = unselected_panels(nodes, &index);
    let controls: Vec<(&Node, Rect)> = nodes
        .iter()
        .filter(|n| is_control(n) && !n.role.is_item() && !measured_apart(n))
        .filter(|n| !on_a_panel(nodes, &index, n, &unselected))
        .filter_map(|n| Some((n, n.bounds.filter(|b| !b.is_empty())?)))
        .collect();
    let mut places = Vec::new();
    for (n, b) in &controls {
        let (x, y) = (b.x + b.width / 2, b.y + b.height / 2);
        let over: Vec<u64> = controls
            .iter()
            .filter(|(o, ob)| {
                o.id != n.id && clip(b, ob).is_some() && !holds(o.id, n) && !holds(n.id, o)
            })
            .map(|(o, _)| o.id)
            .collect();
        if over.is_empty() {
            continue;
        }
        places.push(SharedPlace {
            container: root,
            claim: Claim::Middle,
            x,
            y,
            items: std::iter::once(n.id).chain(over).collect(),
        });
    }
    places
}

/// The pages of stacks that show one page at a time and keep the others'
/// last layout: GTK 4.8's stacks (gnome-text-editor's documents in
/// libadwaita's tab view) give a page no size of its own and say `showing`
/// of none, so neither tells which page shows. Pages are the unsized
/// children of one element; where two or more of them hold content laid
/// out over one place, the app is asked what is at its middle.
fn stacked_pages(nodes: &[Node]) -> Vec<SharedPlace> {
    let Some(root) = nodes.first().map(|n| n.id) else {
        return Vec::new();
    };
    let index = positions(nodes);
    let node = |id: &u64| index.get(id).map(|i| &nodes[*i]);
    // Where a page's content lies: around what it holds that has a size.
    let extent = |page: &Node| {
        page.children
            .iter()
            .filter_map(|c| node(c)?.bounds.filter(|b| !b.is_empty()))
            .reduce(|a, b| a.union(&b))
    };
    let mut places = Vec::new();
    for n in nodes {
        let pages: Vec<(u64, Rect)> = n
            .children
            .iter()
            .filter_map(node)
            .filter(|c| c.bounds.is_none_or(|b| b.is_empty()))
            .filter_map(|c| Some((c.id, extent(c)?)))
            .collect();
        if pages.len() < 2 {
            continue;
        }
        let Some(common) = pages
            .iter()
            .skip(1)
            .try_fold(pages[0].1, |shared, (_, b)| clip(&shared, b))
        else {
            continue;
        };
        places.push(SharedPlace {
            container: root,
            claim: Claim::Page,
            x: common.x + common.width / 2,
            y: common.y + common.height / 2,
            items: pages.iter().map(|(id, _)| *id).collect(),
        });
    }
    places
}

/// The part of `r` inside `within`, if any.
fn clip(r: &Rect, within: &Rect) -> Option<Rect> {
    let (x, y) = (r.x.max(within.x), r.y.max(within.y));
    let right = (r.x + r.width).min(within.x + within.width);
    let bottom = (r.y + r.height).min(within.y + within.height);
    (right > x && bottom > y).then(|| Rect::new(x, y, right - x, bottom - y))
}

/// The bounds of the last read that cannot have moved since, by node id, in
/// the app's coordinates: those of elements no event named, that lie wholly
/// inside the window and inside each element around them (what a scrolled
/// view clips may move unseen), and that no damage since touches. An element
/// that moves is drawn somewhere else, and where it was is drawn again.
/// Elements that were not laid out (`None`) are kept so while they do not
/// show (a hidden page's, a closed popover's); items left behind are asked
/// again, to find which shows now.
fn unmoved(last: &Mirrored, damage: &[Rect], named: &HashSet<u64>) -> HashMap<u64, Option<Rect>> {
    let tree = &last.tree;
    let window = Rect::new(0, 0, tree.window.content.width, tree.window.content.height);
    let index = positions(&tree.nodes);
    let inside_ancestors = |n: &Node, b: &Rect| {
        ancestors(&tree.nodes, &index, n).all(|p| p.bounds.is_none_or(|pb| pb.contains_rect(b)))
    };
    tree.nodes
        .iter()
        .filter(|n| !named.contains(&n.id) && !last.ask_again.contains(&n.id))
        .filter_map(|n| match n.bounds {
            None => Some((n.id, None)),
            Some(b) => (window.contains_rect(&b)
                && !damage.iter().any(|d| d.intersects(&b))
                && inside_ancestors(n, &b))
            .then(|| (n.id, Some(last.placing.to_app(n.id, b)))),
        })
        .collect()
}

impl Session {
    /// Where the window's app places its content (see `Placing`), as its
    /// last read found.
    pub(super) fn app_placing(&self, window: WindowHandle) -> Placing {
        self.mirror
            .lock()
            .unwrap()
            .get(&window)
            .map_or_else(Placing::default, |m| m.placing.clone())
    }
}

/// What the app draws over the frame's window but gives accessibility as
/// frames of their own beside the window's, read into the frame as children
/// of its root, to be placed as frames inside it are (see `Placing`):
/// alerts that lie over the window (Chromium's permission prompts, drawn
/// in no window of their own), and frames that lie exactly where one of
/// the window's popups shows (Chromium's context menu, an unnamed frame; its
/// omnibox keeps others like it that claim to show and draw nothing, with
/// no popup where they lie). `popups`: the surface and content of each popup
/// the window shows, relative to the window's surface. Only an app that
/// places its windows apart on a screen of its own (the frame not at the
/// origin) tells which window such a frame lies over. Answers the frames
/// read in for a popup.
async fn read_frames_over(
    a11y: &dyn Accessibility,
    items: &AppItems,
    kept: &HashMap<u64, Option<Rect>>,
    frame: &mut Frame,
    popups: &[[Rect; 2]],
) -> HashSet<u64> {
    let mut on_popups = HashSet::new();
    let Some(root) = frame.nodes.first().map(|n| n.id) else {
        return on_popups;
    };
    let beside: Vec<&FrameHead> = items
        .frames
        .iter()
        .filter(|h| h.id != frame.head.id && !h.popup)
        .filter(|h| h.alert || !popups.is_empty())
        .collect();
    if beside.is_empty() {
        return on_popups;
    }
    let Some(window) = a11y.screen_places_of(&[root]).await.remove(&root) else {
        return on_popups;
    };
    if (window.x, window.y) == (0, 0) {
        return on_popups;
    }
    // Read first: a frame's place can be asked once it is read.
    let mut read = Vec::new();
    for head in beside {
        let over = a11y.read_frame(items, head, kept).await;
        read.push((head, over.nodes, over.gone));
    }
    let places = a11y
        .screen_places_of(&read.iter().map(|(h, ..)| h.id).collect::<Vec<_>>())
        .await;
    for (head, mut nodes, gone) in read {
        let Some(&place) = places.get(&head.id) else {
            continue;
        };
        let over = if head.alert {
            window.contains_rect(&place)
        } else {
            let on_window = moved(place, -window.x, -window.y);
            popups.iter().flatten().any(|p| same_place(p, &on_window))
        };
        let Some(top) = nodes.first_mut().filter(|_| over) else {
            continue;
        };
        frame.gone |= gone;
        top.parent = Some(root);
        if !head.alert {
            on_popups.insert(top.id);
        }
        frame.nodes[0].children.push(top.id);
        frame.nodes.extend(nodes);
    }
    on_popups
}

/// Where a popup lies from `origin` (global coordinates), as its surface
/// and as its content (xdg window geometry): an app's frame for it may
/// measure either.
pub(super) fn popup_places(popup: &WindowInfo, origin: (i32, i32)) -> [Rect; 2] {
    [popup.surface, popup.content].map(|r| moved(r, -origin.0, -origin.1))
}

/// `r` moved by (`dx`, `dy`).
fn moved(r: Rect, dx: i32, dy: i32) -> Rect {
    Rect::new(r.x + dx, r.y + dy, r.width, r.height)
}

/// Two places that agree to within the pixel either rounds to.
pub(super) fn same_place(a: &Rect, b: &Rect) -> bool {
    [a.x - b.x, a.y - b.y, a.width - b.width, a.height - b.height]
        .iter()
        .all(|d| d.abs() <= 1)
}

/// Toolkits disagree on what "window coordinates" are under Wayland: GTK 4
/// measures from the window's content, GTK 3 from its surface (shadow
/// included), AccessKit under winit from its surface while winit draws the
/// title bar in subsurfaces around it. The frame's own extents tell which:
/// their size is the surface's, or (Firefox) the content's placed where the
/// content lies in the surface.
fn surface_offset(frame: &Frame, window: &WindowInfo) -> (i32, i32) {
    let (surface, content) = (window.surface, window.content);
    let inset = (content.x - surface.x, content.y - surface.y);
    let from_surface = |r: Rect| {
        let size = (r.width, r.height);
        let surface_sized =
            size == (surface.width, surface.height) && size != (content.width, content.height);
        let content_placed =
            size == (content.width, content.height) && (r.x, r.y) == inset && inset != (0, 0);
        surface_sized || content_placed
    };
    match frame.nodes.first().and_then(|n| n.bounds) {
        Some(r) if from_surface(r) => (-inset.0, -inset.1),
        _ => (0, 0),
    }
}

/// The elements events moved or named since change count `since`: a move
/// reported by an event is a move (GTK 4 reports those of the elements it
/// exposes, not of the boxes around them).
fn moved_or_named_since(a11y: &dyn Accessibility, since: u64) -> HashSet<u64> {
    &a11y.named_since(since) | &a11y.moved_since(since)
}

/// How many frames carry a window's title.
fn heads_titled(frames: &[(usize, FrameHead)], title: &str) -> usize {
    frames
        .iter()
        .filter(|(_, f)| !f.name.is_empty() && f.name == title)
        .count()
}

/// Every frame of the apps, each with the index of its app in `apps`.
pub(super) fn frame_heads(apps: &[AppItems]) -> Vec<(usize, FrameHead)> {
    apps.iter()
        .enumerate()
        .flat_map(|(i, items)| items.frames.iter().cloned().map(move |head| (i, head)))
        .collect()
}

/// The frame that is this window (with the index of the app it is in): same
/// title, else the same place among the app's frames. Popups (GTK 3's menus
/// are AT-SPI windows) are not in the count.
pub(super) fn pick_frame(
    mut frames: Vec<(usize, FrameHead)>,
    window: &WindowInfo,
    siblings: &[&WindowInfo],
) -> Option<(usize, FrameHead)> {
    if is_top_level(window) && frames.iter().any(|(_, f)| !f.popup) {
        frames.retain(|(_, f)| !f.popup);
    } else if !is_top_level(window) && frames.iter().any(|(_, f)| f.popup) {
        // A menu or tooltip is the newest popup frame (GTK 3 lists them as
        // AT-SPI windows); a toolkit without such frames (GTK 4's popovers)
        // keeps it in its window's frame, which the order below finds.
        return frames.into_iter().rfind(|(_, f)| f.popup);
    }
    // By title; when several windows share it (a launcher whose title
    // follows the demo it opened), by place among those that share it.
    let titled = |name: &str| !name.is_empty() && name == window.title;
    let same_title: Vec<usize> = frames
        .iter()
        .enumerate()
        .filter(|(_, (_, f))| titled(&f.name))
        .map(|(i, _)| i)
        .collect();
    if !same_title.is_empty() {
        let twins: Vec<&&WindowInfo> = siblings.iter().filter(|w| titled(&w.title)).collect();
        let place = twins.iter().position(|w| w.handle == window.handle);
        let i = match (same_title.len(), place) {
            (1, _) => same_title[0],
            (n, Some(p)) if n == twins.len() => same_title[p],
            // More frames than windows with the title, or fewer: any pick
            // would be a guess.
            _ => return None,
        };
        return Some(frames.swap_remove(i));
    }
    let place = siblings
        .iter()
        .position(|w| w.handle == window.handle)
        .unwrap_or(0);
    (place < frames.len()).then(|| frames.swap_remove(place))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fake_access::FakeAccess;
    use crate::session::fake_host::{self, FakeHost, Temper};

    #[tokio::test]
    async fn a_window_that_maps_is_read_before_a_client_asks() {
        let host = FakeHost::new(Vec::new(), Temper::Stubborn, 16).with_input();
        let app = Arc::new(FakeAccess::new(vec![
            crate::session::elements::tests::node(1, None, Role::Window, "Main"),
            crate::session::elements::tests::node(2, Some(1), Role::Button, "Save"),
        ]));
        let session = Arc::new(
            Session::with_accessibility(Arc::new(host.clone()), app.clone())
                .await
                .unwrap(),
        );
        let ahead = tokio::spawn({
            let session = session.clone();
            async move { session.read_windows_ahead().await }
        });
        let mut reads = app.reads();
        host.add(fake_host::window(1, "Main"));
        // Read with no client asking.
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            reads.wait_for(|n| *n == 1),
        )
        .await
        .expect("read ahead")
        .unwrap();
        // The client's first read finds it mirrored: the app is not read again.
        let handle = session.windows()[0].handle;
        let tree = tokio::time::timeout(std::time::Duration::from_secs(5), session.tree(handle))
            .await
            .expect("client read")
            .unwrap();
        assert!(tree.nodes.iter().any(|n| n.name == "Save"));
        assert_eq!(*reads.borrow(), 1);
        ahead.abort();
    }

    #[tokio::test]
    async fn a_read_that_met_objects_gone_for_a_moment_is_made_again() {
        use crate::session::fake_access::node;
        // A session whose app's next `gone` reads meet an object that says
        // it does not exist (an AccessKit node missing from its tree for a
        // moment), and how many reads its app answered.
        async fn reading(gone: u64) -> (Session, tokio::sync::watch::Receiver<u64>) {
            let nodes = vec![
                node(1, None, Role::Window, "Main"),
                node(2, Some(1), Role::Button, "Save"),
            ];
            let app = Arc::new(FakeAccess::new(nodes).gone_reads(gone));
            let host = FakeHost::new(vec![fake_host::window(1, "Main")], Temper::Stubborn, 16)
                .with_input();
            let session = Session::with_accessibility(Arc::new(host), app.clone())
                .await
                .unwrap();
            (session, app.reads())
        }
        let handle = WindowHandle { id: 1, epoch: 1 };
        let (session, reads) = reading(1).await;
        session.tree(handle).await.unwrap();
        assert_eq!(*reads.borrow(), 2, "the read that met it is made again");
        session.tree(handle).await.unwrap();
        assert_eq!(
            *reads.borrow(),
            2,
            "the read made again is served while nothing changed"
        );
        // An app whose object stays gone is read a bounded number of times,
        // then served as it reads while nothing changes.
        let (session, reads) = reading(u64::MAX).await;
        session.tree(handle).await.unwrap();
        assert_eq!(*reads.borrow(), 1 + COMPLETING_READS as u64);
        session.tree(handle).await.unwrap();
        assert_eq!(*reads.borrow(), 1 + COMPLETING_READS as u64);
    }

    /// A 1204x772 content inset (26, 23) in a surface with its shadow.
    fn shadowed() -> WindowInfo {
        let mut w = window(1, "Page", WindowKind::Normal);
        w.surface = Rect::new(100, 100, 1256, 828);
        w.content = Rect::new(126, 123, 1204, 772);
        w
    }

    fn frame_at(bounds: Rect) -> Frame {
        let mut root =
            crate::session::elements::tests::node(1, None, crate::model::Role::Window, "Page");
        root.bounds = Some(bounds);
        Frame {
            head: head(1, "Page", false).1,
            nodes: vec![root],
            gone: false,
        }
    }

    #[test]
    fn a_frame_measured_from_the_surface_is_moved_to_the_content() {
        let w = shadowed();
        // GTK 3: the frame is the surface.
        assert_eq!(
            surface_offset(&frame_at(Rect::new(0, 0, 1256, 828)), &w),
            (-26, -23)
        );
        // Firefox: the frame is the content, where it lies in the surface.
        assert_eq!(
            surface_offset(&frame_at(Rect::new(26, 23, 1204, 772)), &w),
            (-26, -23)
        );
        // GTK 4: the frame is the content, from the content.
        assert_eq!(
            surface_offset(&frame_at(Rect::new(0, 0, 1204, 772)), &w),
            (0, 0)
        );
    }

    fn window(id: u64, title: &str, kind: WindowKind) -> WindowInfo {
        crate::session::windows::tests::window(id, title, kind, 0)
    }

    fn head(id: u64, name: &str, popup: bool) -> (usize, FrameHead) {
        (
            0,
            FrameHead {
                id,
                name: name.into(),
                popup,
                alert: false,
                modal: false,
            },
        )
    }

    fn picked(
        frames: Vec<(usize, FrameHead)>,
        w: &WindowInfo,
        siblings: &[&WindowInfo],
    ) -> Option<u64> {
        pick_frame(frames, w, siblings).map(|(_, f)| f.id)
    }

    #[test]
    fn a_frame_with_the_window_title_wins_over_order() {
        let a = window(1, "Main", WindowKind::Normal);
        let b = window(2, "Settings", WindowKind::Normal);
        let frames = || vec![head(10, "Settings", false), head(11, "Main", false)];
        assert_eq!(picked(frames(), &a, &[&a, &b]), Some(11));
        assert_eq!(picked(frames(), &b, &[&a, &b]), Some(10));
    }

    #[test]
    fn untitled_frames_match_by_creation_order_and_popups_do_not_count() {
        let a = window(1, "", WindowKind::Normal);
        let b = window(2, "", WindowKind::Normal);
        let frames = || vec![head(20, "", false), head(21, "", true), head(22, "", false)];
        assert_eq!(picked(frames(), &a, &[&a, &b]), Some(20));
        assert_eq!(picked(frames(), &b, &[&a, &b]), Some(22));
    }

    #[test]
    fn a_window_without_a_frame_of_its_own_gets_none() {
        // eframe gives AccessKit to its first window only.
        let a = window(1, "Main", WindowKind::Normal);
        let b = window(2, "Details", WindowKind::Normal);
        assert_eq!(picked(vec![head(30, "Main", false)], &b, &[&a, &b]), None);
        assert_eq!(picked(vec![], &a, &[&a]), None);
    }

    #[test]
    fn windows_sharing_a_title_match_frames_sharing_it_in_order() {
        // gtk4-demo's launcher takes the title of the demo it opened.
        let launcher = window(1, "Spin Buttons", WindowKind::Normal);
        let demo = window(2, "Spin Buttons", WindowKind::Normal);
        let frames = || {
            vec![
                head(50, "Spin Buttons", false),
                head(51, "Spin Buttons", false),
            ]
        };
        let both = [&launcher, &demo];
        assert_eq!(picked(frames(), &launcher, &both), Some(50));
        assert_eq!(picked(frames(), &demo, &both), Some(51));
        // Two frames with the title and one window with it: no guess.
        let other = window(3, "Other", WindowKind::Normal);
        assert_eq!(picked(frames(), &demo, &[&other, &demo]), None);
    }

    #[test]
    fn a_menu_window_matches_a_popup_frame() {
        let menu = window(3, "", WindowKind::Menu);
        let frames = || {
            vec![
                head(40, "Main", false),
                head(41, "", true),
                head(42, "", true),
            ]
        };
        assert_eq!(picked(frames(), &menu, &[]), Some(42), "the newest popup");
        let main = window(1, "Main", WindowKind::Normal);
        assert_eq!(picked(frames(), &main, &[&main]), Some(40));
        // GTK 4 keeps a popover in its window's frame.
        assert_eq!(picked(vec![head(40, "Main", false)], &menu, &[]), Some(40));
    }

    #[test]
    fn rows_a_list_left_behind_share_places_with_the_rows_it_shows() {
        use crate::session::elements::tests::node;
        let at = |mut n: Node, y: i32| {
            n.bounds = Some(Rect::new(10, y, 200, 36));
            n
        };
        let mut list = node(1, None, Role::List, "Demo list");
        list.bounds = Some(Rect::new(0, 40, 220, 200));
        let nodes = vec![
            list,
            // The first page, shown before the list scrolled a page down.
            at(node(2, Some(1), Role::ListItem, ""), 50),
            at(node(3, Some(1), Role::ListItem, ""), 86),
            // The page it shows now: the same places.
            at(node(4, Some(1), Role::ListItem, ""), 50),
            at(node(5, Some(1), Role::ListItem, ""), 86),
            // Below both pages, alone in its place.
            at(node(6, Some(1), Role::ListItem, ""), 122),
            // Not an item: a header over the rows claims nothing.
            at(node(7, Some(1), Role::Label, ""), 50),
            // Scrolled half out at the bottom, where a row left behind lies.
            at(node(8, Some(1), Role::ListItem, ""), 220),
            at(node(9, Some(1), Role::ListItem, ""), 230),
            // Out of the list altogether: no point to ask about.
            at(node(10, Some(1), Role::ListItem, ""), 300),
            at(node(11, Some(1), Role::ListItem, ""), 300),
        ];
        let places = shared_places(&nodes);
        assert_eq!(
            places,
            vec![
                SharedPlace {
                    container: 1,
                    claim: Claim::OneOf,
                    x: 110,
                    y: 68,
                    items: vec![2, 4]
                },
                SharedPlace {
                    container: 1,
                    claim: Claim::OneOf,
                    x: 110,
                    y: 104,
                    items: vec![3, 5]
                },
                SharedPlace {
                    container: 1,
                    claim: Claim::OneOf,
                    x: 110,
                    y: 230,
                    items: vec![8, 9]
                },
            ]
        );
    }

    #[test]
    fn controls_over_another_controls_middle_are_asked_about() {
        use crate::session::elements::tests::{node, tree_of};
        let at = |mut n: Node, x: i32, y: i32, w: i32, h: i32| {
            n.bounds = Some(Rect::new(x, y, w, h));
            n
        };
        let no_bounds = |mut n: Node| {
            n.bounds = None;
            n
        };
        let nodes = tree_of(vec![
            no_bounds(node(1, None, Role::Window, "Keypads")),
            // A stack's page shown before the switch keeps its last layout.
            no_bounds(node(2, Some(1), Role::Group, "GtkStackPage")),
            at(node(3, Some(2), Role::Button, "1"), 10, 60, 140, 40),
            at(node(4, Some(3), Role::Label, "1"), 10, 60, 140, 40),
            // The page shown now, laid out a little lower over it.
            no_bounds(node(5, Some(1), Role::Group, "GtkStackPage")),
            at(node(6, Some(5), Role::Button, "7"), 10, 70, 140, 40),
            // Beside them, over nothing: nothing to ask.
            at(node(7, Some(1), Role::Button, "Mode"), 200, 10, 60, 30),
            // A text over a button is not a control; a button inside a
            // field is the field's own.
            at(node(8, Some(1), Role::Label, "badge"), 200, 10, 10, 10),
            at(
                node(9, Some(1), Role::SpinButton, "Count"),
                10,
                150,
                100,
                30,
            ),
            at(node(10, Some(9), Role::Button, "−"), 60, 150, 20, 30),
        ])
        .nodes;
        let middle = |item, others: Vec<u64>, x, y| SharedPlace {
            container: 1,
            claim: Claim::Middle,
            x,
            y,
            items: std::iter::once(item).chain(others).collect(),
        };
        // The two pages lie over one place too: asked where both lie.
        let pages = SharedPlace {
            container: 1,
            claim: Claim::Page,
            x: 80,
            y: 85,
            items: vec![2, 5],
        };
        assert_eq!(
            shared_places(&nodes),
            vec![
                middle(3, vec![6], 80, 80),
                pages,
                middle(6, vec![3], 80, 90)
            ]
        );
    }

    #[test]
    fn pages_of_a_stack_laid_out_over_one_place_are_asked_about() {
        use crate::session::elements::tests::{node, tree_of};
        let at = |mut n: Node, x: i32, y: i32, w: i32, h: i32| {
            n.bounds = Some(Rect::new(x, y, w, h));
            n
        };
        let no_bounds = |mut n: Node| {
            n.bounds = None;
            n
        };
        let nodes = tree_of(vec![
            at(node(1, None, Role::Window, "Editor"), 0, 0, 700, 520),
            at(node(2, Some(1), Role::Group, "AdwTabView"), 0, 92, 700, 428),
            // The first document's page, laid out before the tab bar showed.
            no_bounds(node(3, Some(2), Role::Group, "GtkStackPage")),
            at(node(4, Some(3), Role::Group, "EditorPage"), 0, 47, 700, 473),
            // The second's, shown now.
            no_bounds(node(5, Some(2), Role::Group, "GtkStackPage")),
            at(node(6, Some(5), Role::Group, "EditorPage"), 0, 92, 700, 428),
            // A page that holds nothing laid out has nothing to tell.
            no_bounds(node(7, Some(2), Role::Group, "GtkStackPage")),
            no_bounds(node(8, Some(7), Role::Label, "Open a document")),
            // Pages of another stack, one laid out: nothing to ask.
            no_bounds(node(9, Some(1), Role::Group, "GtkStackPage")),
            at(node(10, Some(9), Role::Image, "icon"), 10, 10, 16, 16),
            no_bounds(node(11, Some(1), Role::Group, "GtkStackPage")),
            no_bounds(node(12, Some(11), Role::Image, "spinner")),
        ])
        .nodes;
        assert_eq!(
            stacked_pages(&nodes),
            vec![SharedPlace {
                container: 1,
                claim: Claim::Page,
                x: 350,
                y: 306,
                items: vec![3, 5],
            }]
        );
    }

    #[test]
    fn a_controls_verdict_holds_until_something_is_drawn_over_it() {
        use crate::session::elements::tests::tree_of;
        let mut tree = tree_of(Vec::new());
        tree.window.content = Rect::new(0, 0, 400, 300);
        let last = Mirrored {
            commits: 1,
            changes: 1,
            acts: 0,
            tree,
            // The app measures from 10 points left of the content.
            placing: Placing::of(&[], (10, 0), &HashMap::new()),
            ask_again: HashSet::new(),
            verdicts: Verdicts::from([
                (1, (Rect::new(0, 0, 50, 40), false)),
                (2, (Rect::new(100, 0, 50, 40), true)),
            ]),
        };
        // A spinner redrawn beside the first control, over the second.
        let damage = [Rect::new(65, 0, 20, 20), Rect::new(120, 10, 10, 10)];
        assert_eq!(
            verdicts_kept(&last, &damage),
            Verdicts::from([(1, (Rect::new(0, 0, 50, 40), false))])
        );
    }
}
