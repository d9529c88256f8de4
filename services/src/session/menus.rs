//! The application menu a GTK app exports on the session bus (org.gtk.Menus
//! for the menu bar, org.gtk.Actions for what its items run), chosen by label.
//!
//! The exported menu is the app's own model: it answers whether a menu is open
//! or not, and an action's Activate returns once the item's handler has run.
//! Apps that export none are driven through the menu bar in their tree.

use std::collections::HashMap;
use std::time::Duration;

use wayrig_host::{InputEvent, InputOptions, WindowHandle, WindowKind};
use zbus::zvariant::{OwnedValue, Value};

use super::act::{ActOptions, Action, ElementRef, Path};
use super::Session;
use crate::model::{Error, Node, Role, Tree};

/// How long an opened menu gets to show its items.
const MENU_OPENS: Duration = Duration::from_secs(2);

/// How a menu item was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuPath {
    /// The action of the item in the menu the app exports on the session bus.
    Exported,
    /// The item in the window's menu bar, through accessibility or input.
    Tree(Path),
}

impl Session {
    /// Choose an item of the window's application menu by the labels along its
    /// path; answers once the item ran.
    pub async fn menu(&self, handle: WindowHandle, path: &[String]) -> Result<MenuPath, Error> {
        if path.is_empty() || path.iter().any(|l| l.is_empty()) {
            return Err(Error::InvalidRequest(
                "path lists the labels from the menu bar to the item, none empty".into(),
            ));
        }
        let windows = self.windows();
        let window = windows
            .iter()
            .find(|w| w.handle == handle)
            .ok_or_else(|| Error::NoWindow(handle.to_string()))?;
        if let (Some(pid), Some(app_path), Some(conn)) =
            (window.pid, app_path(&window.app_id), self.session_bus())
        {
            for bus_name in names_of(conn, pid).await {
                let exported = Exported {
                    conn,
                    bus_name,
                    app_path: app_path.clone(),
                };
                if !exported.has_menubar().await {
                    continue;
                }
                let chosen = exported.find(path).await?;
                // GTK numbers an app's windows 1, 2, ... as they are made.
                let number = windows
                    .iter()
                    .filter(|w| w.pid == Some(pid) && w.kind == WindowKind::Normal)
                    .filter(|w| w.handle.id <= handle.id)
                    .count() as u32;
                exported.activate(&chosen, number.max(1)).await?;
                return Ok(MenuPath::Exported);
            }
        }
        self.menu_in_tree(handle, path).await.map(MenuPath::Tree)
    }

    /// Walk the menu bar in the window's tree: items in closed menus (GTK 3,
    /// Qt) are there already; a menu that makes its items only once open
    /// (GTK 4 popovers) is opened first.
    async fn menu_in_tree(&self, handle: WindowHandle, path: &[String]) -> Result<Path, Error> {
        let mut tree = self.tree(handle).await?;
        let bar = tree
            .nodes
            .iter()
            .find(|n| n.role == Role::MenuBar)
            .map(|n| n.id)
            .ok_or_else(|| {
                Error::Unsupported(
                    "the window shows no menu bar and its app exports no menu".into(),
                )
            })?;
        let mut container = bar;
        let mut opened = false;
        for (depth, label) in path.iter().enumerate() {
            let mut found = item_under(&tree, container, label);
            // A menu with no items yet makes them when it opens (GTK 4).
            if found.is_none() && depth > 0 && items_under(&tree, container).is_empty() {
                self.open_item(handle, &tree, container, depth == 1).await?;
                opened = true;
                tree = self.tree(handle).await?;
                found = item_under(&tree, container, label);
            }
            let Some(item) = found else {
                let known = items_under(&tree, container)
                    .iter()
                    .map(|n| n.name.clone())
                    .collect::<Vec<_>>();
                if opened {
                    self.escape(handle).await;
                }
                return Err(Error::NoElement(format!(
                    "{path:?}: the menu {:?} has no item {label:?}; it has {known:?}",
                    &path[..depth]
                )));
            };
            if depth + 1 < path.len() {
                container = item.id;
                continue;
            }
            if item.states.disabled {
                if opened {
                    self.escape(handle).await;
                }
                return Err(Error::Failed(format!("the item {path:?} is disabled")));
            }
            let id = item.id;
            // The item's own action where it has one: menu items in popups are
            // measured from the popup, and closed menus are not on screen.
            let (obj, ifaces) = self
                .a11y()?
                .object(id)
                .ok_or_else(|| Error::StaleElement(id.to_string()))?;
            let done = match self
                .do_named_action(&obj, &ifaces, &super::act::PRESS_ACTIONS)
                .await
            {
                Ok(path) => path,
                Err(_) => {
                    self.act(
                        handle,
                        ElementRef::Id(id),
                        Action::Press,
                        ActOptions::default(),
                    )
                    .await?
                    .path
                }
            };
            self.settle_briefly(handle).await?;
            return Ok(done);
        }
        Err(Error::InvalidRequest("path names no item".into()))
    }

    /// Open a menu item's menu: a top-level item with a click where it shows
    /// (GTK 4's menu bar items have no action), a nested one by its action.
    async fn open_item(
        &self,
        handle: WindowHandle,
        tree: &Tree,
        id: u64,
        top: bool,
    ) -> Result<(), Error> {
        let node = tree
            .node(id)
            .ok_or_else(|| Error::StaleElement(id.to_string()))?;
        if node.states.expanded {
            return Ok(());
        }
        let opened = if top {
            if node.bounds.is_none() {
                return Err(Error::Unsupported(format!(
                    "the menu bar's {:?} is not on screen (on a hidden page?)",
                    node.name
                )));
            }
            self.act(
                handle,
                ElementRef::Id(id),
                Action::Press,
                ActOptions::default(),
            )
            .await
            .map(|report| report.path)
        } else {
            match self.a11y()?.object(id) {
                Some((obj, ifaces)) => {
                    let names = ["click", "activate", "press", "expand"];
                    self.do_named_action(&obj, &ifaces, &names).await
                }
                None => Err(Error::StaleElement(id.to_string())),
            }
        };
        opened?;
        self.settle_briefly(handle).await
    }

    /// Settle, but an app that animates forever gets only a moment; then its
    /// accessibility events are caught up with.
    async fn settle_briefly(&self, handle: WindowHandle) -> Result<(), Error> {
        match self.host.settle(handle, MENU_OPENS).await {
            Ok(_) | Err(wayrig_host::HostError::Timeout(..)) => {}
            Err(e) => return Err(e.into()),
        }
        self.sync_apps(handle).await
    }

    /// Close what a failed walk opened.
    async fn escape(&self, handle: WindowHandle) {
        let key = InputEvent::Key {
            key: "Escape".into(),
        };
        let _ = self
            .input(handle, vec![key.clone(), key], InputOptions::default())
            .await;
    }
}

/// The unique names on the bus that belong to a process.
async fn names_of(conn: &zbus::Connection, pid: u32) -> Vec<String> {
    let Ok(dbus) = zbus::fdo::DBusProxy::new(conn).await else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for name in dbus.list_names().await.unwrap_or_default() {
        if !name.starts_with(':') {
            continue;
        }
        if dbus
            .get_connection_unix_process_id(name.clone().into())
            .await
            .is_ok_and(|p| p == pid)
        {
            names.push(name.to_string());
        }
    }
    names
}

fn is_menu_item(n: &Node) -> bool {
    matches!(
        n.role,
        Role::MenuItem | Role::CheckMenuItem | Role::RadioMenuItem
    ) || (n.role == Role::Menu && !n.name.is_empty())
}

/// The menu items directly in a menu (or menu bar): the first items below it,
/// looking through unnamed containers and into the popups it controls.
fn items_under(tree: &Tree, container: u64) -> Vec<&Node> {
    let mut out = Vec::new();
    let Some(top) = tree.node(container) else {
        return out;
    };
    let mut stack: Vec<u64> = top.relations.controls.clone();
    stack.extend(top.children.iter().rev());
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(n) = tree.node(id) else { continue };
        if is_menu_item(n) {
            out.push(n);
        } else {
            stack.extend(n.children.iter().rev());
        }
    }
    out
}

fn item_under<'a>(tree: &'a Tree, container: u64, label: &str) -> Option<&'a Node> {
    items_under(tree, container)
        .into_iter()
        .find(|n| n.name == label || plain_label(&n.name) == label)
}

/// An item of an exported menu: what it says and what it runs.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    label: String,
    action: Option<String>,
    target: Option<OwnedValue>,
    submenu: Option<(u32, u32)>,
    section: Option<(u32, u32)>,
}

/// A chosen item, ready to run: its action's group, name and parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// "app" or "win" (or another group the app exports).
    pub group: String,
    pub name: String,
    pub target: Option<OwnedValue>,
}

/// One app's exported menus and actions on the session bus.
pub struct Exported<'a> {
    pub conn: &'a zbus::Connection,
    /// The app's unique bus name.
    pub bus_name: String,
    /// The app's object path ("/org/gtk/WidgetFactory4").
    pub app_path: String,
}

const MENUS: &str = "org.gtk.Menus";
const ACTIONS: &str = "org.gtk.Actions";

/// The object path GApplication exports under for an application id.
pub fn app_path(app_id: &str) -> Option<String> {
    if app_id.is_empty() || !app_id.contains('.') {
        return None;
    }
    let mut path = String::from("/");
    for c in app_id.chars() {
        path.push(match c {
            '.' => '/',
            '-' => '_',
            c if c.is_ascii_alphanumeric() || c == '_' => c,
            _ => return None,
        });
    }
    Some(path)
}

/// A label as a person reads it: mnemonic underscores gone ("_File" → "File").
pub fn plain_label(label: &str) -> String {
    let mut out = String::new();
    let mut chars = label.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            if chars.peek() == Some(&'_') {
                out.push('_');
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

impl Exported<'_> {
    /// Subscribe to groups and read their menus.
    async fn start(&self, groups: &[u32]) -> Result<HashMap<(u32, u32), Vec<Item>>, zbus::Error> {
        type Menus = Vec<(u32, u32, Vec<HashMap<String, OwnedValue>>)>;
        let reply = self.call_menus("Start", groups).await?;
        let menus: Menus = reply.body().deserialize()?;
        Ok(menus
            .into_iter()
            .map(|(group, menu, items)| ((group, menu), items.iter().map(item).collect()))
            .collect())
    }

    async fn end(&self, groups: &[u32]) {
        let _ = self.call_menus("End", groups).await;
    }

    /// One of the menu bar's group calls (`Start`, `End`).
    async fn call_menus(&self, method: &str, groups: &[u32]) -> zbus::Result<zbus::Message> {
        self.conn
            .call_method(
                Some(self.bus_name.as_str()),
                format!("{}/menus/menubar", self.app_path).as_str(),
                Some(MENUS),
                method,
                &(groups,),
            )
            .await
    }

    /// Whether the app exports a menu bar at all.
    pub async fn has_menubar(&self) -> bool {
        let found = self.start(&[0]).await;
        self.end(&[0]).await;
        found.is_ok_and(|menus| menus.contains_key(&(0, 0)))
    }

    /// The item at the end of `path`, by labels along it (mnemonics ignored).
    pub async fn find(&self, path: &[String]) -> Result<Chosen, Error> {
        let mut started = vec![0];
        let mut menus = self
            .start(&[0])
            .await
            .map_err(|e| Error::Unsupported(format!("the app exports no menu bar: {e}")))?;
        let result = self.walk(path, &mut menus, &mut started).await;
        self.end(&started).await;
        result
    }

    async fn walk(
        &self,
        path: &[String],
        menus: &mut HashMap<(u32, u32), Vec<Item>>,
        started: &mut Vec<u32>,
    ) -> Result<Chosen, Error> {
        let mut menu = (0, 0);
        for (depth, label) in path.iter().enumerate() {
            let items = self.items(menu, menus, started).await?;
            let Some(item) = items
                .iter()
                .find(|i| plain_label(&i.label) == *label || i.label == *label)
            else {
                let known: Vec<String> = items.iter().map(|i| plain_label(&i.label)).collect();
                return Err(Error::NoElement(format!(
                    "{path:?}: the menu {:?} has no item {label:?}; it has {known:?}",
                    &path[..depth]
                )));
            };
            let last = depth + 1 == path.len();
            match (last, &item.submenu, &item.action) {
                (false, Some(sub), _) => menu = *sub,
                (false, None, _) => {
                    return Err(Error::NoElement(format!(
                        "{:?} is an item, not a menu",
                        &path[..=depth]
                    )))
                }
                (true, _, Some(action)) => {
                    let (group, name) = action.split_once('.').ok_or_else(|| {
                        Error::Failed(format!("the item runs {action:?}, which has no group"))
                    })?;
                    return Ok(Chosen {
                        group: group.to_string(),
                        name: name.to_string(),
                        target: item.target.clone(),
                    });
                }
                (true, Some(_), None) => {
                    return Err(Error::InvalidRequest(format!(
                        "{path:?} is a menu; name one of its items"
                    )))
                }
                (true, None, None) => {
                    return Err(Error::Failed(format!("{path:?} runs no action")));
                }
            }
        }
        Err(Error::InvalidRequest("path names no item".into()))
    }

    /// A menu's items with its sections' items in their place.
    async fn items(
        &self,
        menu: (u32, u32),
        menus: &mut HashMap<(u32, u32), Vec<Item>>,
        started: &mut Vec<u32>,
    ) -> Result<Vec<Item>, Error> {
        let mut out = Vec::new();
        // Depth first, in order: a section's items stand where the section does.
        // Sections nest; a bound keeps a malformed model from looping.
        let mut pending = vec![(menu, 0usize)];
        while let Some((m, from)) = pending.pop() {
            if pending.len() > 16 {
                return Err(Error::Failed("the menu's sections nest too deep".into()));
            }
            if !menus.contains_key(&m) && !started.contains(&m.0) {
                let more = self
                    .start(&[m.0])
                    .await
                    .map_err(|e| Error::Failed(format!("reading the menu: {e}")))?;
                started.push(m.0);
                menus.extend(more);
            }
            let Some(items) = menus.get(&m) else { continue };
            for (i, item) in items.iter().enumerate().skip(from) {
                if let Some(section) = item.section {
                    pending.push((m, i + 1));
                    pending.push((section, 0));
                    break;
                }
                out.push(item.clone());
            }
        }
        Ok(out)
    }

    /// Run a chosen item: refused while its action is disabled; answers once
    /// the app's handler has returned. `window` is the app's number for the
    /// window, for "win." actions.
    pub async fn activate(&self, chosen: &Chosen, window: u32) -> Result<(), Error> {
        let path = match chosen.group.as_str() {
            "app" => self.app_path.clone(),
            "win" => format!("{}/window/{window}", self.app_path),
            other => {
                return Err(Error::Unsupported(format!(
                    "the item runs an action of the widget group {other:?}, which the app does not export"
                )))
            }
        };
        let described = self
            .conn
            .call_method(
                Some(self.bus_name.as_str()),
                path.as_str(),
                Some(ACTIONS),
                "Describe",
                &(chosen.name.as_str(),),
            )
            .await
            .map_err(|e| Error::Failed(format!("the item's action {}: {e}", chosen.name)))?;
        let ((enabled, _, _),): ((bool, zbus::zvariant::Signature, Vec<OwnedValue>),) = described
            .body()
            .deserialize()
            .map_err(|e| Error::Failed(format!("the item's action {}: {e}", chosen.name)))?;
        if !enabled {
            return Err(Error::Failed(format!(
                "the item is disabled (its action {}.{} is)",
                chosen.group, chosen.name
            )));
        }
        let parameter: Vec<Value> = chosen
            .target
            .iter()
            .map(|t| Value::from(t.clone()))
            .collect();
        let platform: HashMap<&str, Value> = HashMap::new();
        self.conn
            .call_method(
                Some(self.bus_name.as_str()),
                path.as_str(),
                Some(ACTIONS),
                "Activate",
                &(chosen.name.as_str(), parameter, platform),
            )
            .await
            .map_err(|e| Error::Failed(format!("running {}: {e}", chosen.name)))?;
        Ok(())
    }
}

fn item(fields: &HashMap<String, OwnedValue>) -> Item {
    let text = |k: &str| {
        fields
            .get(k)
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
    };
    let link = |k: &str| {
        fields
            .get(k)
            .and_then(|v| <(u32, u32)>::try_from(v.try_clone().ok()?).ok())
    };
    Item {
        label: text("label").unwrap_or_default(),
        action: text("action"),
        target: fields.get("target").and_then(|v| v.try_clone().ok()),
        submenu: link(":submenu"),
        section: link(":section"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_ids_map_to_object_paths() {
        assert_eq!(
            app_path("org.gtk.WidgetFactory4").as_deref(),
            Some("/org/gtk/WidgetFactory4")
        );
        assert_eq!(
            app_path("org.example.my-app").as_deref(),
            Some("/org/example/my_app")
        );
        assert_eq!(app_path("foot"), None);
        assert_eq!(app_path("a.b c"), None);
    }

    #[test]
    fn mnemonics_are_not_part_of_labels() {
        assert_eq!(plain_label("_File"), "File");
        assert_eq!(plain_label("Save __As"), "Save _As");
        assert_eq!(plain_label("Plain"), "Plain");
    }
}
