//! An app's accessibility in memory for tests of the session's rules and of
//! the faces over it (feature `test-support`, `a_form`): one window's
//! elements as recorded, what the app does when asked, and a log of every
//! request the session made of it.
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
use crate::model::{Annotations, Error, Node, Place, Range, Relations, Role, States};

/// The fake app's unique bus name.
const BUS: &str = ":1.7";
/// The fake app's process: the fake host's windows are of it.
const PID: u32 = 4242;

fn path(number: u64) -> String {
    format!("/org/a11y/atspi/accessible/{number}")
}

/// The id a read gives element `number`.
pub fn id(number: u64) -> u64 {
    node_id(BUS, &path(number))
}

pub struct FakeAccess {
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
    /// How many reads still meet an object that says it does not exist.
    gone_reads: u64,
    asked: Vec<String>,
}

impl FakeAccess {
    /// A window of `nodes`, numbered by the test (ids, parents): root first,
    /// bounds relative to the window's content. Every element offers
    /// Component and nothing else until told.
    pub fn new(nodes: Vec<Node>) -> Self {
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
                gone_reads: 0,
                asked: Vec::new(),
            }),
            changes: AtomicU64::new(0),
            focus: tokio::sync::watch::channel((0, 0)).0,
            reads: tokio::sync::watch::channel(0).0,
        }
    }

    /// Element `number` offers `interfaces` (Component among them, if asked).
    pub fn offers(self, number: u64, interfaces: Interfaces) -> Self {
        self.app
            .lock()
            .unwrap()
            .interfaces
            .insert(id(number), interfaces);
        self
    }

    /// Element `number` has these named actions (and so the Action interface).
    pub fn with_actions(self, number: u64, names: &[&str]) -> Self {
        {
            let mut app = self.app.lock().unwrap();
            let names = names.iter().map(|n| n.to_string()).collect();
            app.actions.insert(id(number), names);
            app.interfaces.entry(id(number)).or_insert(COMPONENT).action = true;
        }
        self
    }

    /// Element `number` has a value (and so the Value interface).
    pub fn with_value(self, number: u64, range: Range) -> Self {
        {
            let mut app = self.app.lock().unwrap();
            app.values.insert(id(number), range);
            app.interfaces.entry(id(number)).or_insert(COMPONENT).value = true;
        }
        self
    }

    /// The app names element `number` at every point asked about.
    pub fn covered_by(self, number: u64) -> Self {
        self.app.lock().unwrap().covered_by = Some(id(number));
        self
    }

    /// The app has an object (numbered, its parent too) that a read leaves
    /// out: one it creates as asked, or made since the read.
    pub fn with_unread(self, mut object: Node) -> Self {
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
    pub fn granting_focus(self) -> Self {
        self.app.lock().unwrap().grants_focus = true;
        self
    }

    /// The app replaces a text field's text when asked (GTK 3), or not.
    pub fn setting_text(self) -> Self {
        self.app.lock().unwrap().sets_text = true;
        self
    }

    /// The app will not place a caret or select text when asked (and
    /// keeps its caret at the end of the text).
    pub fn refusing_offsets(self) -> Self {
        self.app.lock().unwrap().refuses_offsets = true;
        self
    }

    /// The next `reads` reads of the window meet an object that says it
    /// does not exist as its facts are asked (gone for a moment).
    pub fn gone_reads(self, reads: u64) -> Self {
        self.app.lock().unwrap().gone_reads = reads;
        self
    }

    /// Follows how many times the window's elements were read.
    pub fn reads(&self) -> tokio::sync::watch::Receiver<u64> {
        self.reads.subscribe()
    }

    /// What the session asked the app to do, in order ("click 3").
    pub fn asked(&self) -> Vec<String> {
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
        let mut app = self.app.lock().unwrap();
        let gone = app.gone_reads > 0;
        app.gone_reads = app.gone_reads.saturating_sub(1);
        Frame {
            head: head.clone(),
            nodes: app.nodes.clone(),
            gone,
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

/// Element `number` of the fake app, a child of `parent`, 10x10 at the
/// window's corner until placed.
pub fn node(number: u64, parent: Option<u64>, role: Role, name: &str) -> Node {
    Node {
        id: number,
        parent,
        children: Vec::new(),
        role,
        native_role: String::new(),
        name: name.into(),
        name_is_stand_in: false,
        label_fallback: None,
        description: String::new(),
        key: None,
        states: States::default(),
        value: None,
        range: None,
        selection: None,
        bounds: Some(Rect::new(0, 0, 10, 10)),
        actions: Vec::new(),
        place: Place::default(),
        relations: Relations::default(),
        annotations: Annotations::default(),
    }
}

/// A session over the fake host and app, as the faces' hostile-input tests
/// drive it: window 1 ("Main", 400x300) holding a button (2, "Save"), an
/// entry (3, "Name"), a slider (4, "Volume", 0 to 100), and a list (5) of
/// two rows, the second (7) scrolled out of the window. The host takes
/// input and draws at once.
pub async fn a_form() -> (crate::Session, super::fake_host::FakeHost) {
    use super::fake_host::{window, FakeHost, Temper};
    let at = |mut n: Node, x, y, w, h| {
        n.bounds = Some(Rect::new(x, y, w, h));
        n
    };
    let mut entry = at(node(3, Some(1), Role::TextInput, "Name"), 10, 50, 200, 30);
    entry.states.editable = true;
    let app = FakeAccess::new(vec![
        at(node(1, None, Role::Window, "Main"), 0, 0, 400, 300),
        at(node(2, Some(1), Role::Button, "Save"), 10, 10, 80, 30),
        entry,
        at(node(4, Some(1), Role::Slider, "Volume"), 10, 90, 200, 20),
        at(node(5, Some(1), Role::List, ""), 10, 120, 200, 170),
        at(node(6, Some(5), Role::ListItem, "Row 1"), 10, 120, 200, 20),
        at(node(7, Some(5), Role::ListItem, "Row 40"), 10, 900, 200, 20),
    ])
    .with_actions(2, &["click"])
    .with_actions(7, &["activate"])
    .with_value(
        4,
        Range {
            min: 0.0,
            max: 100.0,
            now: 50.0,
            step: 1.0,
        },
    )
    .setting_text()
    .granting_focus();
    let host =
        FakeHost::new(vec![window(1, "Main")], Temper::Willing(Duration::ZERO), 64).with_input();
    let session = crate::Session::with_accessibility(
        std::sync::Arc::new(host.clone()),
        std::sync::Arc::new(app),
    )
    .await
    .expect("a session over the fakes");
    (session, host)
}

/// A runtime of one thread in paused time, as the faces' hostile-input
/// tests drive `a_form` in: the session's bounded waits cost nothing, and a
/// wait with no end shows as one (time jumps to the test's own limit).
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime")
}
