//! What the session asks of its apps' accessibility, as a trait over plain
//! data: the AT-SPI client (`a11y::A11y`) in a live session, a fake in tests.
//!
//! Nodes are named by the ids a read gave them; an id a read never gave is
//! stale. Nothing here names a D-Bus or AT-SPI type.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use wayrig_host::Rect;

use crate::model::{Error, Node, Range, Role};
use crate::session::Menu;

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
    /// In bulk where the app can (AT-SPI's Cache.GetItems), else node by
    /// node; the last read's items kept where no event since says they changed.
    Bulk,
    /// In bulk again whatever the events say: the toolkit's events may
    /// trail what input just did (GTK 4 sends them after its frame).
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
    /// Some object it holds said it does not exist when its facts were
    /// asked (an app rebuilding its tree, as AccessKit does, says so of
    /// objects it lists a moment later): the read lacks what they have, and
    /// is made again rather than served again.
    pub gone: bool,
}

/// A top-level accessible of an app, before its elements are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHead {
    pub id: u64,
    pub name: String,
    /// An AT-SPI "window": a popup, menu or tooltip rather than a top level.
    pub popup: bool,
    /// An AT-SPI alert: a prompt, which an app may draw over one of its
    /// windows rather than in a window of its own (Chromium's permission
    /// prompts).
    pub alert: bool,
    /// Its toolkit marks it modal: while it shows, the app's other windows
    /// take no input (GTK's modal windows).
    pub modal: bool,
}

/// An app's objects as one bulk read gives them, before the per-node calls:
/// its frames, and what the implementation read to find them (which only it
/// looks into, to read a frame's elements).
pub struct AppItems {
    pub app: App,
    /// The app's frames, in the order the app lists them.
    pub frames: Vec<FrameHead>,
    read: Box<dyn std::any::Any + Send + Sync>,
}

impl AppItems {
    pub fn new(app: App, frames: Vec<FrameHead>, read: impl std::any::Any + Send + Sync) -> Self {
        AppItems {
            app,
            frames,
            read: Box::new(read),
        }
    }

    /// What the implementation that made it read, if it is of type `T`.
    pub fn read_as<T: 'static>(&self) -> Option<&T> {
        self.read.downcast_ref()
    }
}

/// An object an app named when asked what lies at a point, read or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    pub bus_name: String,
    pub path: String,
}

impl Picked {
    /// Its node id, as a read names it.
    pub fn id(&self) -> u64 {
        node_id(&self.bus_name, &self.path)
    }
}

/// A stable 64-bit id for an accessible object: FNV-1a over its bus name and path.
pub fn node_id(bus_name: &str, path: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bus_name.bytes().chain([0u8]).chain(path.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The interfaces a node's object offers to act through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// Named actions ("click", "activate").
    pub action: bool,
    /// Bounds, what lies at a point, focus and scrolling.
    pub component: bool,
    /// Text that can be replaced whole.
    pub editable_text: bool,
    /// Children that can be selected.
    pub selection: bool,
    /// Text with a caret and selections.
    pub text: bool,
    /// A number between bounds.
    pub value: bool,
}

/// How far one reader (a client's connection) has read each app's
/// announcements, by app bus name.
#[derive(Debug, Default, Clone)]
pub struct AnnouncementsRead(pub(crate) HashMap<String, u64>);

/// The apps' accessibility as the session uses it: listing and reading
/// apps, asking their objects, acting through them, and the events they
/// send, counted (a change count orders events against reads and acts).
#[async_trait::async_trait]
pub trait Accessibility: Send + Sync {
    // Apps and their events.

    /// The apps registered on the bus, with their process ids.
    async fn apps(&self) -> Result<Vec<App>, Error>;

    /// The apps of process `pid`, once at least one has registered (within
    /// `timeout`, else `Unsupported`).
    async fn wait_for_app(&self, pid: u32, timeout: Duration) -> Result<Vec<App>, Error>;

    /// A round trip to the app, then a wait until every event it sent
    /// before answering has been counted.
    async fn sync(&self, app: &App) -> Result<(), Error>;

    /// How many events have arrived so far.
    fn changes(&self) -> u64;

    /// Wait until an event after change count `since` says node `id`
    /// gained focus; whether one did within `timeout`.
    async fn wait_focus(&self, id: u64, since: u64, timeout: Duration) -> bool;

    /// Wait until an event after `since` says some node gained focus; the
    /// node, if one did within `timeout`.
    async fn wait_any_focus(&self, since: u64, timeout: Duration) -> Option<u64>;

    /// Wait until an event after `since` names node `id`; whether one did.
    async fn wait_event(&self, id: u64, since: u64, timeout: Duration) -> bool;

    /// Wait until any event arrives after `since`; whether one did.
    async fn wait_change(&self, since: u64, timeout: Duration) -> bool;

    /// The nodes an event named after `since`.
    fn named_since(&self, since: u64) -> HashSet<u64>;

    /// The nodes an event moved after `since`.
    fn moved_since(&self, since: u64) -> HashSet<u64>;

    /// What the app announced that `read` has not had yet, oldest first.
    fn unread_announcements(&self, app: &App, read: &mut AnnouncementsRead) -> Vec<String>;

    // Reading.

    /// Every frame of an app with its elements (the whole app, as the
    /// benchmarks compare it).
    async fn read_app(&self, app: &App, how: Read) -> Result<Vec<Frame>, Error> {
        let items = self.read_items(app, how).await?;
        let mut frames = Vec::new();
        for head in &items.frames {
            frames.push(self.read_frame(&items, head, &HashMap::new()).await);
        }
        Ok(frames)
    }

    /// An app's objects in bulk: enough to tell its frames apart.
    async fn read_items(&self, app: &App, how: Read) -> Result<AppItems, Error>;

    /// One frame's elements, in pre-order; the bounds in `kept` (by node
    /// id) are taken as they are, and a node kept as unplaced (`None`) stays
    /// so while it is not showing.
    async fn read_frame(
        &self,
        items: &AppItems,
        head: &FrameHead,
        kept: &HashMap<u64, Option<Rect>>,
    ) -> Frame;

    /// Whether the app created objects after a read that made it create
    /// some: that read lacks them, and reading again finds them.
    async fn grew_after(&self, items: &AppItems) -> Result<bool, Error>;

    /// The bounds the app gives now of nodes read before, asked side by side.
    async fn bounds_of(&self, ids: &[u64]) -> HashMap<u64, Option<Rect>>;

    /// Where the app places nodes read before on its own screen, asked side
    /// by side (a node it gives no place is left out): an app that measures
    /// a frame inside a window from the frame's own corner (Chromium's print
    /// preview) tells where it lies in the window only there.
    async fn screen_places_of(&self, ids: &[u64]) -> HashMap<u64, Rect>;

    /// The object the app says is at a point (in its window's coordinates,
    /// as bounds are) inside node `within`: the deepest one there, or the
    /// child of `within` there, read or not; `Ok(None)` when the app says
    /// nothing of it is there, an error when it cannot tell.
    async fn at_point(&self, within: u64, x: i32, y: i32) -> Result<Option<Picked>, Error>;

    /// The parent of an object the app named; `None` at the top or when the
    /// app does not tell.
    async fn parent_of(&self, picked: &Picked) -> Option<Picked>;

    /// What an object the app named is, and its name; `None` when the app
    /// does not tell.
    async fn role_and_name(&self, picked: &Picked) -> Option<(Role, String)>;

    /// The node the app says is at a point inside `within` (see `at_point`);
    /// `None` when it says nothing of it is there, an error when it did not
    /// answer.
    async fn pick(&self, within: u64, x: i32, y: i32) -> Result<Option<u64>, Error> {
        Ok(self.at_point(within, x, y).await?.map(|p| p.id()))
    }

    /// Note that a phase of a read began at `began` and made `calls` calls.
    fn span(&self, phase: &'static str, began: std::time::Instant, calls: usize);

    /// The phases of the reads since they were last taken, in order.
    fn take_spans(&self) -> Vec<Span>;

    // Acting on a node read before (an id never read is `StaleElement`).

    /// The interfaces of a node read before; `None` when it never was.
    fn interfaces(&self, id: u64) -> Option<Interfaces>;

    /// The node's action names, in the app's order.
    async fn action_names(&self, id: u64) -> Result<Vec<String>, Error>;

    /// Do the node's action at `index`; whether the app says it did.
    async fn do_action(&self, id: u64, index: usize) -> Result<bool, Error>;

    /// The node's value and its bounds (`step` 0 when it has none).
    async fn value(&self, id: u64) -> Result<Range, Error>;

    async fn set_value(&self, id: u64, value: f64) -> Result<(), Error>;

    /// Replace the node's text whole; whether the app did.
    async fn set_text(&self, id: u64, text: &str) -> Result<bool, Error>;

    /// How many characters the node's text has.
    async fn text_length(&self, id: u64) -> Result<i32, Error>;

    /// Select characters `from..to` of the node's text; whether the app did.
    async fn select_text(&self, id: u64, from: i32, to: i32) -> Result<bool, Error>;

    /// Where the node's caret is.
    async fn caret(&self, id: u64) -> Result<i32, Error>;

    /// Put the node's caret at `at`; whether the app did.
    async fn set_caret(&self, id: u64, at: i32) -> Result<bool, Error>;

    /// Ask for the keyboard focus; whether the app says it gave it.
    async fn grab_focus(&self, id: u64) -> Result<bool, Error>;

    /// Ask the app to scroll the node into view; whether it did.
    async fn scroll_to(&self, id: u64) -> Result<bool, Error>;

    /// Select the node's child at `index`; whether the app did.
    async fn select_child(&self, id: u64, index: usize) -> Result<bool, Error>;
}

/// Where an app exports its menu bar: its connection on the session bus,
/// and its application's object path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenubarAt {
    pub bus_name: String,
    pub app_path: String,
}

/// The menus apps export beside their accessibility (GTK's org.gtk.Menus on
/// the session bus): the app's own model, open or not, and items run by
/// their actions.
#[async_trait::async_trait]
pub trait ExportedMenus: Send + Sync {
    /// Where process `pid` exports the menu bar of application `app_id`,
    /// if it does.
    async fn menubar_of(&self, pid: u32, app_id: &str) -> Option<MenubarAt>;

    /// Every menu of the menu bar with its rows; `window` is the app's
    /// number for the window (GTK numbers an app's windows as made).
    async fn list(&self, at: &MenubarAt, window: u32) -> Result<Vec<Menu>, Error>;

    /// Run the item at the end of `path` (labels from the menu bar down),
    /// once its action is enabled; answers once the app's handler returned.
    async fn choose(&self, at: &MenubarAt, path: &[String], window: u32) -> Result<(), Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_are_stable_and_distinct() {
        let a = node_id(":1.5", "/org/a11y/atspi/accessible/12");
        assert_eq!(a, node_id(":1.5", "/org/a11y/atspi/accessible/12"));
        assert_ne!(a, node_id(":1.6", "/org/a11y/atspi/accessible/12"));
        assert_ne!(a, node_id(":1.5", "/org/a11y/atspi/accessible/1"));
        // The separator keeps ("a", "b/c") apart from ("ab", "/c").
        assert_ne!(node_id(":1.1", "2/x"), node_id(":1.12", "/x"));
    }
}
