//! An app's accessibility in memory for unit tests of the session's rules:
//! one window's elements as recorded, what the app does when asked, and a log
//! of every request the session made of it.
//!
//! Elements are numbered by the test (1 is the window's root); the session
//! sees them by the ids a read would give (`id`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use wayrig_host::Rect;

use crate::access::{
    node_id, Accessibility, AnnouncementsRead, App, AppItems, Frame, FrameHead, Interfaces, Picked,
    Read, Span,
};
use crate::model::{Error, Node, Range, Role};

/// The fake app's unique bus name.
const BUS: &str = ":1.7";
/// The fake app's process: the fake host's windows are of it.
const PID: u32 = 4242;

fn path(number: u64) -> String {
    format!("/org/a11y/atspi/accessible/{number}")
}

/// The id a read gives element `number`.
pub(crate) fn id(number: u64) -> u64 {
    node_id(BUS, &path(number))
}

pub(crate) struct FakeAccess {
    app: Mutex<Recorded>,
    /// Events so far: each request that changes the app sends one.
    changes: AtomicU64,
    /// The change count and node of the last focus event.
    focus: tokio::sync::watch::Sender<(u64, u64)>,
    /// How many times the window's elements were read.
    reads: tokio::sync::watch::Sender<u64>,
}

/// The app as recorded, what it does when asked, and what it was asked.
struct Recorded {
    nodes: Vec<Node>,
    numbers: HashMap<u64, u64>,
    interfaces: HashMap<u64, Interfaces>,
    actions: HashMap<u64, Vec<String>>,
    values: HashMap<u64, Range>,
    /// The element the app names at every point (one drawn over the rest).
    covered_by: Option<u64>,
    /// Objects the app has and a read leaves out, by id, their parents'
    /// ids given.
    unread: HashMap<u64, Node>,
    grants_focus: bool,
    sets_text: bool,
    /// The app will not place a caret or select text when asked, and
    /// reports its caret at the end of the text.
    refuses_offsets: bool,
    /// The change count at which an event last named each node.
    named: HashMap<u64, u64>,
    asked: Vec<String>,
}

impl FakeAccess {
    /// A window of `nodes`, numbered by the test (ids, parents): root first,
    /// bounds relative to the window's content. Every element offers
    /// Component and nothing else until told.
    pub(crate) fn new(nodes: Vec<Node>) -> Self {
        let numbers: HashMap<u64, u64> = nodes.iter().map(|n| (id(n.id), n.id)).collect();
        let mut nodes: Vec<Node> = nodes
            .into_iter()
            .map(|mut n| {
                n.id = id(n.id);
                n.parent = n.parent.map(id);
                n.children.clear();
                n
            })
            .collect();
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent {
                let child = nodes[i].id;
                if let Some(parent) = nodes.iter_mut().find(|n| n.id == p) {
                    parent.children.push(child);
                }
            }
        }
        FakeAccess {
            app: Mutex::new(Recorded {
                nodes,
                numbers,
                interfaces: HashMap::new(),
                actions: HashMap::new(),
                values: HashMap::new(),
                covered_by: None,
                unread: HashMap::new(),
                grants_focus: false,
                sets_text: false,
                refuses_offsets: false,
                named: HashMap::new(),
                asked: Vec::new(),
            }),
            changes: AtomicU64::new(0),
            focus: tokio::sync::watch::channel((0, 0)).0,
            reads: tokio::sync::watch::channel(0).0,
        }
    }

    /// Element `number` offers `interfaces` (Component among them, if asked).
    pub(crate) fn offers(self, number: u64, interfaces: Interfaces) -> Self {
        self.app
            .lock()
            .unwrap()
            .interfaces
            .insert(id(number), interfaces);
        self
    }

    /// Element `number` has these named actions (and so the Action interface).
    pub(crate) fn with_actions(self, number: u64, names: &[&str]) -> Self {
        {
            let mut app = self.app.lock().unwrap();
            let names = names.iter().map(|n| n.to_string()).collect();
            app.actions.insert(id(number), names);
            app.interfaces.entry(id(number)).or_insert(COMPONENT).action = true;
        }
        self
    }

    /// Element `number` has a value (and so the Value interface).
    pub(crate) fn with_value(self, number: u64, range: Range) -> Self {
        {
            let mut app = self.app.lock().unwrap();
            app.values.insert(id(number), range);
            app.interfaces.entry(id(number)).or_insert(COMPONENT).value = true;
        }
        self
    }

    /// The app names element `number` at every point asked about.
    pub(crate) fn covered_by(self, number: u64) -> Self {
        self.app.lock().unwrap().covered_by = Some(id(number));
        self
    }

    /// The app has an object (numbered, its parent too) that a read leaves
    /// out: one it creates as asked, or made since the read.
    pub(crate) fn with_unread(self, mut object: Node) -> Self {
        {
            let mut app = self.app.lock().unwrap();
            app.numbers.insert(id(object.id), object.id);
            object.id = id(object.id);
            object.parent = object.parent.map(id);
            app.unread.insert(object.id, object);
        }
        self
    }

    /// The app grants focus when asked (GTK 3), or not (GTK 4).
    pub(crate) fn granting_focus(self) -> Self {
        self.app.lock().unwrap().grants_focus = true;
        self
    }

    /// The app replaces a text field's text when asked (GTK 3), or not.
    pub(crate) fn setting_text(self) -> Self {
        self.app.lock().unwrap().sets_text = true;
        self
    }

    /// The app will not place a caret or select text when asked (and
    /// keeps its caret at the end of the text).
    pub(crate) fn refusing_offsets(self) -> Self {
        self.app.lock().unwrap().refuses_offsets = true;
        self
    }

    /// Follows how many times the window's elements were read.
    pub(crate) fn reads(&self) -> tokio::sync::watch::Receiver<u64> {
        self.reads.subscribe()
    }

    /// What the session asked the app to do, in order ("click 3").
    pub(crate) fn asked(&self) -> Vec<String> {
        self.app.lock().unwrap().asked.clone()
    }

    /// Note a request that changes node `id`, and the event it brings.
    fn did(&self, app: &mut Recorded, id: u64, what: String) {
        app.asked.push(what);
        let at = self.changes.fetch_add(1, Ordering::SeqCst) + 1;
        app.named.insert(id, at);
    }

    fn app_info() -> App {
        App {
            bus_name: BUS.into(),
            root_path: path(1),
            pid: Some(PID),
        }
    }

    fn element(app: &Recorded, id: u64) -> Result<&Node, Error> {
        app.nodes
            .iter()
            .find(|n| n.id == id)
            .ok_or_else(|| Error::StaleElement(format!("element {id} was never read")))
    }

    fn picked(id: u64, app: &Recorded) -> Option<Picked> {
        app.numbers.get(&id).map(|number| Picked {
            bus_name: BUS.into(),
            path: path(*number),
        })
    }
}

/// What an element offers unless told otherwise.
const COMPONENT: Interfaces = Interfaces {
    action: false,
    component: true,
    editable_text: false,
    selection: false,
    text: false,
    value: false,
};

/// Wait out `timeout` (at once, in a test's paused time): what is awaited
/// never comes.
async fn never(timeout: Duration) {
    tokio::time::sleep(timeout).await;
}

#[async_trait::async_trait]
impl Accessibility for FakeAccess {
    async fn apps(&self) -> Result<Vec<App>, Error> {
        Ok(vec![FakeAccess::app_info()])
    }

    async fn wait_for_app(&self, pid: u32, _timeout: Duration) -> Result<Vec<App>, Error> {
        match pid {
            PID => self.apps().await,
            _ => Err(Error::Unsupported(format!(
                "process {pid} never registered"
            ))),
        }
    }

    async fn sync(&self, _app: &App) -> Result<(), Error> {
        Ok(())
    }

    fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    async fn wait_focus(&self, id: u64, since: u64, timeout: Duration) -> bool {
        let (at, who) = *self.focus.borrow();
        if at > since && who == id {
            return true;
        }
        never(timeout).await;
        false
    }

    async fn wait_any_focus(&self, since: u64, timeout: Duration) -> Option<u64> {
        let (at, who) = *self.focus.borrow();
        if at > since {
            return Some(who);
        }
        never(timeout).await;
        None
    }

    async fn wait_event(&self, id: u64, since: u64, timeout: Duration) -> bool {
        let named = self.app.lock().unwrap().named.get(&id).copied();
        if named.is_some_and(|at| at > since) {
            return true;
        }
        never(timeout).await;
        false
    }

    async fn wait_change(&self, since: u64, timeout: Duration) -> bool {
        if self.changes() > since {
            return true;
        }
        never(timeout).await;
        false
    }

    fn named_since(&self, since: u64) -> HashSet<u64> {
        let app = self.app.lock().unwrap();
        app.named
            .iter()
            .filter(|(_, at)| **at > since)
            .map(|(id, _)| *id)
            .collect()
    }

    fn moved_since(&self, _since: u64) -> HashSet<u64> {
        HashSet::new()
    }

    fn unread_announcements(&self, _app: &App, _read: &mut AnnouncementsRead) -> Vec<String> {
        Vec::new()
    }

    async fn read_items(&self, app: &App, _how: Read) -> Result<AppItems, Error> {
        let root = self.app.lock().unwrap().nodes[0].clone();
        let head = FrameHead {
            id: root.id,
            name: root.name,
            popup: false,
            alert: false,
            modal: false,
        };
        Ok(AppItems::new(app.clone(), vec![head], ()))
    }

    async fn read_frame(
        &self,
        _items: &AppItems,
        head: &FrameHead,
        _kept: &HashMap<u64, Option<Rect>>,
    ) -> Frame {
        self.reads.send_modify(|n| *n += 1);
        Frame {
            head: head.clone(),
            nodes: self.app.lock().unwrap().nodes.clone(),
        }
    }

    async fn grew_after(&self, _items: &AppItems) -> Result<bool, Error> {
        Ok(false)
    }

    async fn bounds_of(&self, ids: &[u64]) -> HashMap<u64, Option<Rect>> {
        let app = self.app.lock().unwrap();
        ids.iter()
            .filter_map(|id| Some((*id, FakeAccess::element(&app, *id).ok()?.bounds)))
            .collect()
    }

    /// The fake app's screen is its window: its places are its bounds.
    async fn screen_places_of(&self, ids: &[u64]) -> HashMap<u64, Rect> {
        let app = self.app.lock().unwrap();
        ids.iter()
            .filter_map(|id| Some((*id, FakeAccess::element(&app, *id).ok()?.bounds?)))
            .collect()
    }

    async fn at_point(&self, within: u64, x: i32, y: i32) -> Result<Option<Picked>, Error> {
        let app = self.app.lock().unwrap();
        if let Some(over) = app.covered_by {
            return Ok(FakeAccess::picked(over, &app));
        }
        // The deepest element below `within` lying at the point.
        let mut at = FakeAccess::element(&app, within)?;
        loop {
            let inner = at.children.iter().find_map(|c| {
                let child = FakeAccess::element(&app, *c).ok()?;
                child
                    .bounds
                    .is_some_and(|b| b.contains_point(f64::from(x), f64::from(y)))
                    .then_some(child)
            });
            match inner {
                Some(child) => at = child,
                None => break,
            }
        }
        Ok(FakeAccess::picked(at.id, &app))
    }

    async fn parent_of(&self, picked: &Picked) -> Option<Picked> {
        let app = self.app.lock().unwrap();
        let parent = match app.unread.get(&picked.id()) {
            Some(unread) => unread.parent?,
            None => FakeAccess::element(&app, picked.id()).ok()?.parent?,
        };
        FakeAccess::picked(parent, &app)
    }

    async fn role_and_name(&self, picked: &Picked) -> Option<(Role, String)> {
        let app = self.app.lock().unwrap();
        let object = match app.unread.get(&picked.id()) {
            Some(unread) => unread,
            None => FakeAccess::element(&app, picked.id()).ok()?,
        };
        Some((object.role, object.name.clone()))
    }

    fn span(&self, _phase: &'static str, _began: std::time::Instant, _calls: usize) {}

    fn take_spans(&self) -> Vec<Span> {
        Vec::new()
    }

    fn interfaces(&self, id: u64) -> Option<Interfaces> {
        let app = self.app.lock().unwrap();
        FakeAccess::element(&app, id).ok()?;
        Some(app.interfaces.get(&id).copied().unwrap_or(COMPONENT))
    }

    async fn action_names(&self, id: u64) -> Result<Vec<String>, Error> {
        let app = self.app.lock().unwrap();
        Ok(app.actions.get(&id).cloned().unwrap_or_default())
    }

    async fn do_action(&self, id: u64, index: usize) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        let name = app.actions.get(&id).and_then(|a| a.get(index)).cloned();
        let Some(name) = name else {
            return Ok(false);
        };
        // Choosing an item selects it alone among its siblings.
        if name == "select" {
            let parent = FakeAccess::element(&app, id)?.parent;
            for n in app.nodes.iter_mut().filter(|n| n.parent == parent) {
                n.states.selected = n.id == id;
            }
        }
        let what = format!("{name} {}", app.numbers[&id]);
        self.did(&mut app, id, what);
        Ok(true)
    }

    async fn value(&self, id: u64) -> Result<Range, Error> {
        let app = self.app.lock().unwrap();
        app.values
            .get(&id)
            .copied()
            .ok_or_else(|| Error::Unsupported("no value".into()))
    }

    async fn set_value(&self, id: u64, value: f64) -> Result<(), Error> {
        let mut app = self.app.lock().unwrap();
        let what = format!("set value {value} {}", app.numbers[&id]);
        if let Some(range) = app.values.get_mut(&id) {
            range.now = value;
        }
        self.did(&mut app, id, what);
        Ok(())
    }

    async fn set_text(&self, id: u64, text: &str) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        let what = format!("set text {text:?} {}", app.numbers[&id]);
        app.asked.push(what);
        Ok(app.sets_text)
    }

    async fn text_length(&self, id: u64) -> Result<i32, Error> {
        let app = self.app.lock().unwrap();
        let node = FakeAccess::element(&app, id)?;
        Ok(node.value.as_deref().unwrap_or("").chars().count() as i32)
    }

    async fn select_text(&self, id: u64, from: i32, to: i32) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        if app.refuses_offsets {
            return Ok(false);
        }
        let what = format!("select {from}..{to} {}", app.numbers[&id]);
        self.did(&mut app, id, what);
        Ok(true)
    }

    async fn caret(&self, id: u64) -> Result<i32, Error> {
        let app = self.app.lock().unwrap();
        if !app.refuses_offsets {
            return Ok(0);
        }
        let node = FakeAccess::element(&app, id)?;
        Ok(node.value.as_deref().unwrap_or("").chars().count() as i32)
    }

    async fn set_caret(&self, id: u64, at: i32) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        if app.refuses_offsets {
            return Ok(false);
        }
        let what = format!("caret {at} {}", app.numbers[&id]);
        app.asked.push(what);
        Ok(true)
    }

    async fn grab_focus(&self, id: u64) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        let what = format!("focus {}", app.numbers[&id]);
        app.asked.push(what);
        if !app.grants_focus {
            return Ok(false);
        }
        let at = self.changes.fetch_add(1, Ordering::SeqCst) + 1;
        self.focus.send_replace((at, id));
        Ok(true)
    }

    async fn scroll_to(&self, id: u64) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        let what = format!("scroll to {}", app.numbers[&id]);
        app.asked.push(what);
        Ok(false)
    }

    async fn select_child(&self, id: u64, index: usize) -> Result<bool, Error> {
        let mut app = self.app.lock().unwrap();
        let what = format!("select child {index} of {}", app.numbers[&id]);
        self.did(&mut app, id, what);
        Ok(true)
    }
}
