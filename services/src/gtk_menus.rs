//! Apps' menus as they export them on the session bus: org.gtk.Menus for the
//! menu bar's model, org.gtk.Actions for what its items run and their state.
//!
//! The exported model is the app's own: it lists menus whether or not they are
//! open, and an action's Activate returns once the item's handler has run.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use zbus::zvariant::{OwnedValue, Value};

use crate::access::{ExportedMenus, MenubarAt};
use crate::menu_labels::{only_labelled, plain_label, several_rows, shortcut_of};
use crate::model::{Checked, Error};
use crate::session::{Menu, MenuRow};

/// The menus apps export on one session bus.
pub struct GtkMenus {
    conn: zbus::Connection,
    /// Apps' connections that answered no call (AccessKit's reads none):
    /// not asked again.
    silent_bus_names: Mutex<HashSet<String>>,
}

impl GtkMenus {
    pub async fn connect(address: &str) -> Result<Self, Error> {
        let conn = zbus::connection::Builder::address(address)
            .map_err(|e| Error::Failed(format!("bad session bus address: {e}")))?
            .method_timeout(Duration::from_secs(5))
            .build()
            .await
            .map_err(|e| Error::Failed(format!("cannot reach the session bus: {e}")))?;
        Ok(GtkMenus {
            conn,
            silent_bus_names: Mutex::default(),
        })
    }

    fn exported(&self, at: &MenubarAt) -> Exported<'_> {
        Exported {
            conn: &self.conn,
            bus_name: at.bus_name.clone(),
            app_path: at.app_path.clone(),
        }
    }

    /// The unique names on the bus that belong to a process.
    async fn names_of(&self, pid: u32) -> Vec<String> {
        let Ok(dbus) = zbus::fdo::DBusProxy::new(&self.conn).await else {
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
}

#[async_trait::async_trait]
impl ExportedMenus for GtkMenus {
    async fn menubar_of(&self, pid: u32, app_id: &str) -> Option<MenubarAt> {
        let app_path = app_path(app_id)?;
        for bus_name in self.names_of(pid).await {
            if self.silent_bus_names.lock().unwrap().contains(&bus_name) {
                continue;
            }
            let at = MenubarAt {
                bus_name: bus_name.clone(),
                app_path: app_path.clone(),
            };
            match self.exported(&at).has_menubar().await {
                Some(true) => return Some(at),
                Some(false) => {}
                None => {
                    self.silent_bus_names.lock().unwrap().insert(bus_name);
                }
            }
        }
        None
    }

    async fn list(&self, at: &MenubarAt, window: u32) -> Result<Vec<Menu>, Error> {
        self.exported(at).list(window).await
    }

    async fn choose(&self, at: &MenubarAt, path: &[String], window: u32) -> Result<(), Error> {
        let exported = self.exported(at);
        let chosen = exported.find(path).await?;
        exported.activate(&chosen, window).await
    }
}

/// An item of an exported menu: what it says and what it runs.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    label: String,
    /// The accelerator, as GTK writes it (`<Control>q`).
    accel: Option<String>,
    action: Option<String>,
    target: Option<OwnedValue>,
    submenu: Option<(u32, u32)>,
    section: Option<(u32, u32)>,
}

impl Item {
    /// The line between two sections.
    fn separator() -> Item {
        Item {
            label: String::new(),
            accel: None,
            action: None,
            target: None,
            submenu: None,
            section: None,
        }
    }
}

/// A chosen item, ready to run: its action's group, name and parameter.
#[derive(Debug, Clone, PartialEq)]
struct Chosen {
    /// "app" or "win" (or another group the app exports).
    group: String,
    name: String,
    target: Option<OwnedValue>,
}

/// One app's exported menus and actions on the session bus.
struct Exported<'a> {
    conn: &'a zbus::Connection,
    /// The app's unique bus name.
    bus_name: String,
    /// The app's object path ("/org/gtk/WidgetFactory4").
    app_path: String,
}

/// A menu's items as org.gtk.Menus gives them: (group, menu, items).
type MenuGroups = Vec<(u32, u32, Vec<HashMap<String, OwnedValue>>)>;
/// An action as org.gtk.Actions describes it: enabled, parameter type, state.
type ActionDescription = (bool, zbus::zvariant::Signature, Vec<OwnedValue>);

/// GTK's exported menu models (GMenuModel over D-Bus).
#[zbus::proxy(interface = "org.gtk.Menus", assume_defaults = false)]
trait GtkMenus {
    /// Subscribe to groups: their menus' items.
    fn start(&self, groups: &[u32]) -> zbus::Result<MenuGroups>;
    /// Unsubscribe.
    fn end(&self, groups: &[u32]) -> zbus::Result<()>;
}

/// GTK's exported actions (GActionGroup over D-Bus).
#[zbus::proxy(interface = "org.gtk.Actions", assume_defaults = false)]
trait GtkActions {
    fn describe(&self, name: &str) -> zbus::Result<ActionDescription>;
    fn describe_all(&self) -> zbus::Result<HashMap<String, ActionDescription>>;
    fn activate(
        &self,
        name: &str,
        parameter: Vec<Value<'_>>,
        platform_data: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<()>;
}

/// The object path GApplication exports under for an application id.
fn app_path(app_id: &str) -> Option<String> {
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

impl Exported<'_> {
    /// The menu bar's model.
    async fn menubar(&self) -> zbus::Result<GtkMenusProxy<'_>> {
        GtkMenusProxy::builder(self.conn)
            .destination(self.bus_name.as_str())?
            .path(format!("{}/menus/menubar", self.app_path))?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
    }

    /// An action group: the app's (`app.`) or a window's (`win.`).
    async fn actions(&self, path: &str) -> zbus::Result<GtkActionsProxy<'_>> {
        GtkActionsProxy::builder(self.conn)
            .destination(self.bus_name.as_str())?
            .path(path.to_string())?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
    }

    /// Subscribe to groups and read their menus.
    async fn start(&self, groups: &[u32]) -> Result<HashMap<(u32, u32), Vec<Item>>, zbus::Error> {
        let menus = self.menubar().await?.start(groups).await?;
        Ok(menus
            .into_iter()
            .map(|(group, menu, items)| ((group, menu), items.iter().map(item).collect()))
            .collect())
    }

    async fn end(&self, groups: &[u32]) {
        if let Ok(menubar) = self.menubar().await {
            let _ = menubar.end(groups).await;
        }
    }

    /// Whether the app exports a menu bar at all; `None` when its connection
    /// answered nothing (AccessKit's session bus connection reads no calls).
    async fn has_menubar(&self) -> Option<bool> {
        match self.start(&[0]).await {
            Ok(menus) => {
                self.end(&[0]).await;
                Some(menus.contains_key(&(0, 0)))
            }
            Err(zbus::Error::MethodError(..) | zbus::Error::FDO(_)) => Some(false),
            Err(_) => None,
        }
    }

    /// The item at the end of `path`, by labels along it (mnemonics ignored).
    async fn find(&self, path: &[String]) -> Result<Chosen, Error> {
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
            // An exported menu's items have no elements to name.
            let found =
                only_labelled(items.iter(), label, |i| i.label.clone()).map_err(|several| {
                    several_rows(&path[..depth], label, several.iter().map(|_| None))
                })?;
            let Some(item) = found else {
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
                    // A section stands apart from what comes before it.
                    if !out.is_empty() {
                        out.push(Item::separator());
                    }
                    pending.push((m, i + 1));
                    pending.push((section, 0));
                    break;
                }
                out.push(item.clone());
            }
        }
        Ok(out)
    }

    /// Every menu of the menu bar with its rows, as the app's model has them,
    /// with each item's enabled and checked state from its action.
    async fn list(&self, window: u32) -> Result<Vec<Menu>, Error> {
        let mut started = vec![0];
        let mut menus = self
            .start(&[0])
            .await
            .map_err(|e| Error::Unsupported(format!("the app exports no menu bar: {e}")))?;
        let mut actions = self.action_states("app", &self.app_path).await;
        actions.extend(
            self.action_states("win", &format!("{}/window/{window}", self.app_path))
                .await,
        );
        let listed = self.list_from(&mut menus, &mut started, &actions).await;
        self.end(&started).await;
        listed
    }

    async fn list_from(
        &self,
        menus: &mut HashMap<(u32, u32), Vec<Item>>,
        started: &mut Vec<u32>,
        actions: &HashMap<String, (bool, Option<OwnedValue>)>,
    ) -> Result<Vec<Menu>, Error> {
        let mut out = Vec::new();
        for top in self.items((0, 0), menus, started).await? {
            let Some(sub) = top.submenu else { continue };
            out.push(Menu {
                title: plain_label(&top.label),
                rows: self.rows(sub, menus, started, actions).await?,
            });
        }
        Ok(out)
    }

    /// A menu's rows, submenus read to the bottom (depth bounded).
    async fn rows(
        &self,
        menu: (u32, u32),
        menus: &mut HashMap<(u32, u32), Vec<Item>>,
        started: &mut Vec<u32>,
        actions: &HashMap<String, (bool, Option<OwnedValue>)>,
    ) -> Result<Vec<MenuRow>, Error> {
        // Submenus are read breadth first into a list of (menu, rows slot).
        let mut levels: Vec<((u32, u32), Vec<Item>)> = Vec::new();
        let mut pending = vec![menu];
        while let Some(m) = pending.pop() {
            if levels.len() > 64 {
                return Err(Error::Failed("the menus nest too deep".into()));
            }
            let items = self.items(m, menus, started).await?;
            pending.extend(items.iter().filter_map(|i| i.submenu));
            levels.push((m, items));
        }
        Ok(build_rows(menu, &levels, actions, 0))
    }

    /// Each action of a group: enabled, and its state (checks, radios).
    async fn action_states(
        &self,
        group: &str,
        path: &str,
    ) -> HashMap<String, (bool, Option<OwnedValue>)> {
        let described = match self.actions(path).await {
            Ok(actions) => actions.describe_all().await,
            Err(e) => Err(e),
        };
        let Ok(described) = described else {
            return HashMap::new();
        };
        described
            .into_iter()
            .map(|(name, (enabled, _, mut state))| {
                (format!("{group}.{name}"), (enabled, state.pop()))
            })
            .collect()
    }

    /// Run a chosen item: refused while its action is disabled; answers once
    /// the app's handler has returned. `window` is the app's number for the
    /// window, for "win." actions.
    async fn activate(&self, chosen: &Chosen, window: u32) -> Result<(), Error> {
        let path = match chosen.group.as_str() {
            "app" => self.app_path.clone(),
            "win" => format!("{}/window/{window}", self.app_path),
            other => {
                return Err(Error::Unsupported(format!(
                    "the item runs an action of the widget group {other:?}, which the app does not export"
                )))
            }
        };
        let failed =
            |e: zbus::Error| Error::Failed(format!("the item's action {}: {e}", chosen.name));
        let actions = self.actions(&path).await.map_err(failed)?;
        let (enabled, _, _) = actions
            .describe(chosen.name.as_str())
            .await
            .map_err(failed)?;
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
        actions
            .activate(chosen.name.as_str(), parameter, platform)
            .await
            .map_err(|e| Error::Failed(format!("running {}: {e}", chosen.name)))?;
        Ok(())
    }
}

/// The rows of `menu` from its read items; submenus nest to depth 8.
fn build_rows(
    menu: (u32, u32),
    levels: &[((u32, u32), Vec<Item>)],
    actions: &HashMap<String, (bool, Option<OwnedValue>)>,
    depth: usize,
) -> Vec<MenuRow> {
    let Some((_, items)) = levels.iter().find(|(m, _)| *m == menu) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|i| {
            if i.label.is_empty() && i.action.is_none() && i.submenu.is_none() {
                return MenuRow::Separator;
            }
            let action = i.action.as_ref().and_then(|a| actions.get(a));
            let checked = action.and_then(|(_, state)| {
                let state = state.as_ref()?;
                if let Ok(on) = bool::try_from(state) {
                    return Some(if on { Checked::True } else { Checked::False });
                }
                let target = i.target.as_ref()?;
                Some(if **state == **target {
                    Checked::True
                } else {
                    Checked::False
                })
            });
            MenuRow::Item {
                label: plain_label(&i.label),
                id: None,
                shortcut: i.accel.as_deref().and_then(shortcut_of),
                // An item runs nothing when its action is unknown or disabled.
                enabled: i.submenu.is_some() || action.is_some_and(|(on, _)| *on),
                checked,
                submenu: i
                    .submenu
                    .filter(|_| depth < 8)
                    .map(|sub| build_rows(sub, levels, actions, depth + 1)),
            }
        })
        .collect()
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
        accel: text("accel"),
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
}
