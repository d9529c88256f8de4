//! Menus: every menu listed with its rows, the open menu reported and closed,
//! and an item chosen by the labels along its path.
//!
//! The model the app exports on the session bus is read where there is one
//! (GTK); else the menu bar in the window's tree (GTK 3, Qt), or the menus
//! the app draws in its window (egui, see `drawn_menus`).

use std::time::Duration;

use wayrig_host::{
    FrameWait, InputEvent, InputOptions, Rect, WindowCommand, WindowHandle, WindowInfo, WindowKind,
};

use super::act::{ActOptions, Action, ElementRef, Path};
use super::drawn_menus::drawn_bar;
use super::Session;
use crate::access::{ExportedMenus, MenubarAt};
use crate::menu_labels::{label_matches, only_labelled, plain_label, several_rows};
use crate::model::{is_class_name, Checked, Error, Node, Role, Tree};

/// How long an opened menu gets to show its items.
pub(super) const MENU_OPENS: Duration = Duration::from_secs(2);

/// How a menu item was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuPath {
    /// The action of the item in the menu the app exports on the session bus.
    Exported,
    /// The item in the window's menu bar, through accessibility or input.
    Tree(Path),
}

/// One menu of the menu bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    pub title: String,
    pub rows: Vec<MenuRow>,
}

/// A row of a menu.
#[derive(Debug, Clone, PartialEq)]
pub enum MenuRow {
    Item {
        /// As a person reads it: mnemonic underscores gone.
        label: String,
        /// Its element, where the menu was read from the window's tree.
        id: Option<u64>,
        /// The keys that run it, as menus write them (`Ctrl+Q`).
        shortcut: Option<String>,
        enabled: bool,
        /// For check and radio items.
        checked: Option<Checked>,
        /// The rows of the submenu it opens.
        submenu: Option<Vec<MenuRow>>,
    },
    Separator,
}

/// The menu that is open now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenMenu {
    /// The title of the menu bar item (or button) that opened it; empty when
    /// the toolkit does not say.
    pub title: String,
    /// The highlighted row's label at each open level, `None` where none is.
    pub path: Vec<Option<String>>,
    /// The level the keyboard acts on (1 for the first menu).
    pub depth: usize,
}

impl Session {
    /// Where the window's app exports its menu bar, if it does, with its
    /// number for the window (GTK numbers an app's windows as made).
    async fn exported(&self, window: &WindowInfo) -> Option<(&dyn ExportedMenus, MenubarAt, u32)> {
        let (pid, menus) = (window.pid?, self.exported_menus()?);
        let at = menus.menubar_of(pid, &window.app_id).await?;
        let number = self
            .windows()
            .iter()
            .filter(|w| w.pid == Some(pid) && w.kind == WindowKind::Normal)
            .filter(|w| w.handle.id <= window.handle.id)
            .count() as u32;
        Some((menus, at, number.max(1)))
    }

    /// Every menu of the window's menu bar with its rows.
    pub async fn menus(&self, handle: WindowHandle) -> Result<Vec<Menu>, Error> {
        self.in_turn(handle, Box::pin(self.menus_in_turn(handle)))
            .await
    }

    async fn menus_in_turn(&self, handle: WindowHandle) -> Result<Vec<Menu>, Error> {
        let window = self.window(&super::WindowPick::Handle(handle)).await?;
        if self.draws_menus(handle).await? {
            return self.list_drawn(handle).await;
        }
        if let Some((menus, at, number)) = self.exported(&window).await {
            return menus.list(&at, number).await;
        }
        let tree = self.tree(handle).await?;
        // A window that shows no menu bar has no menus to list.
        let Ok(bar) = menu_bar(&tree) else {
            return Ok(Vec::new());
        };
        Ok(items_under(&tree, bar)
            .into_iter()
            .map(|top| Menu {
                title: row_label(top).0,
                rows: rows_under(&tree, top.id, 0),
            })
            .collect())
    }

    /// A menu or menu button of the window says it is expanded while no
    /// popup of the window shows yet: its menu is on its way.
    async fn popup_opening(&self, handle: WindowHandle) -> Result<bool, Error> {
        let tree = self.tree(handle).await?;
        // An app that draws its menus in its window opens no popup for them.
        if drawn_bar(&tree).is_some() {
            return Ok(false);
        }
        Ok(tree.nodes.iter().any(|n| opens_popup(&tree, n)))
    }

    /// The window may draw its own menus: its last tree read has such a menu
    /// bar, or it was never read. Spares reading the tree of an app whose
    /// menus are popups when none is open.
    fn may_draw_menus(&self, handle: WindowHandle) -> bool {
        self.mirror
            .lock()
            .unwrap()
            .get(&handle)
            .is_none_or(|kept| drawn_bar(&kept.tree).is_some())
    }

    /// The window draws its menus in its tree (egui), so it exports none:
    /// asked before the session bus, which such an app may never answer.
    async fn draws_menus(&self, handle: WindowHandle) -> Result<bool, Error> {
        Ok(self.may_draw_menus(handle) && drawn_bar(&self.tree(handle).await?).is_some())
    }

    /// The menus (popups that took a grab) open over the window, outermost first.
    fn open_popups(&self, handle: WindowHandle) -> Vec<WindowInfo> {
        let mut popups = self.popups_of(handle);
        popups.retain(|w| w.kind == WindowKind::Menu);
        popups.sort_by_key(|w| w.handle.id);
        popups
    }

    /// The menu open over the window now, if any.
    pub async fn shown_menu(&self, handle: WindowHandle) -> Result<Option<OpenMenu>, Error> {
        let mut popups = self.open_popups(handle);
        if popups.is_empty() && self.popup_opening(handle).await? {
            // A press that opened a menu is answered once the app drew; its
            // popup maps a configure later: the menu is waited for, briefly.
            let opened = |list: &[WindowInfo]| {
                list.iter()
                    .any(|w| w.kind == WindowKind::Menu && w.parent == Some(handle))
            };
            let _ = self.windows.wait_for(MENU_OPENS, opened).await;
            popups = self.open_popups(handle);
        }
        if popups.is_empty() {
            if !self.may_draw_menus(handle) {
                return Ok(None);
            }
            // A drawn menu shows a frame after the press that opened it
            // (egui lays a new menu out unseen first): the window settles.
            self.settle_briefly(handle).await?;
            let tree = self.tree(handle).await?;
            return Ok(match drawn_bar(&tree) {
                Some(bar) => self.shown_drawn(handle, &tree, bar).await,
                None => None,
            });
        }
        let tree = self.tree(handle).await?;
        // What opened it: an expanded menu or button (GTK 4), else the menu
        // bar's item that is selected while its menu shows (GTK 3).
        let opener = tree
            .nodes
            .iter()
            .find(|n| opens_popup(&tree, n))
            .or_else(|| {
                let bar = menu_bar(&tree).ok()?;
                items_under(&tree, bar)
                    .into_iter()
                    .find(|n| n.states.selected || n.states.focused)
            });
        let title = opener.map(|n| opener_title(&tree, n)).unwrap_or_default();
        // Level by level: the row highlighted is the one focused or selected,
        // or the one whose submenu is open, which leads to the next level.
        let depth = popups.len();
        let mut path = Vec::with_capacity(depth);
        let mut container = opener.map(|n| n.id);
        while let Some(c) = container.take() {
            if path.len() == depth {
                break;
            }
            let rows = items_under(&tree, c);
            // Neither GTK marks a row whose submenu is open; that submenu is
            // laid out, while closed ones have no bounds. GTK 4 names it in
            // the row's relations, GTK 3 holds its rows under the row (a
            // named menu).
            let laid_out = |m: &Node| m.bounds.is_some_and(|b| !b.is_empty());
            let opens = |n: &Node| {
                n.states.expanded
                    || n.relations
                        .controls
                        .iter()
                        .any(|m| tree.node(*m).is_some_and(laid_out))
                    || (n.role == Role::Menu && items_under(&tree, n.id).into_iter().any(laid_out))
            };
            let lit = rows
                .iter()
                .find(|n| n.states.focused || n.states.selected)
                .or_else(|| rows.iter().find(|n| opens(n)));
            path.push(lit.map(|n| plain_label(&n.name)));
            container = lit.filter(|n| opens(n)).map(|n| n.id);
        }
        path.resize(depth, None);
        Ok(Some(OpenMenu { title, path, depth }))
    }

    /// Close every menu open over the window; answers whether one was open.
    pub async fn close_menus(&self, handle: WindowHandle) -> Result<bool, Error> {
        self.in_turn(handle, Box::pin(self.close_menus_in_turn(handle)))
            .await
    }

    pub(super) async fn close_menus_in_turn(&self, handle: WindowHandle) -> Result<bool, Error> {
        self.window(&super::WindowPick::Handle(handle)).await?;
        let popups = self.open_popups(handle);
        if popups.is_empty() {
            if self.may_draw_menus(handle) {
                return self.close_drawn(handle).await;
            }
            return Ok(false);
        }
        self.dismiss_popups(handle, &popups).await?;
        Ok(true)
    }

    /// Close every popup of the window, as a person does before clicking
    /// beside it: an open drop-down's list with Escape, which the app
    /// handles itself (Chromium's `<select>`, dismissed from outside, keeps
    /// saying it is open), else, or where Escape left them, the compositor
    /// dismisses them. `tree`: the window as last read.
    pub(super) async fn close_popups(&self, tree: &Tree) -> Result<(), Error> {
        let handle = tree.window.handle;
        let mut popups = self.popups_of(handle);
        if popups.is_empty() {
            return Ok(());
        }
        popups.sort_by_key(|w| w.handle.id);
        let gone = |list: &[WindowInfo]| {
            !list
                .iter()
                .any(|w| popups.iter().any(|p| p.handle == w.handle))
        };
        let list_open = tree
            .nodes
            .iter()
            .any(|n| matches!(n.role, Role::PopUpButton | Role::ComboBox) && n.states.expanded);
        if list_open {
            let escape = InputEvent::Key {
                key: "Escape".into(),
            };
            self.input(handle, vec![escape], InputOptions::default())
                .await?;
            if self.windows.wait_for(MENU_OPENS, gone).await.is_ok() {
                return Ok(());
            }
        }
        self.dismiss_popups(handle, &popups).await
    }

    /// Have the compositor dismiss `popups` of the window, innermost first,
    /// as a click outside would, and wait until they are gone.
    pub(super) async fn dismiss_popups(
        &self,
        handle: WindowHandle,
        popups: &[WindowInfo],
    ) -> Result<(), Error> {
        for popup in popups.iter().rev() {
            match self
                .host
                .window_command(popup.handle, WindowCommand::Close)
                .await
            {
                Ok(_) | Err(wayrig_host::HostError::NoWindow(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let gone = |list: &[WindowInfo]| {
            !list
                .iter()
                .any(|w| popups.iter().any(|p| p.handle == w.handle))
        };
        if self.windows.wait_for(MENU_OPENS, gone).await.is_err() {
            return Err(Error::Timeout(format!(
                "the menus over window {handle} did not close"
            )));
        }
        Ok(())
    }

    /// Open the menus along `path` (a menu title, then a row at each level)
    /// and highlight its last row without running it; answers the open menu.
    /// A label the menus do not have, a disabled row, or a row before the
    /// last that opens no submenu is an `InvalidRequest` naming it.
    pub async fn open_menu(
        &self,
        handle: WindowHandle,
        path: &[String],
    ) -> Result<OpenMenu, Error> {
        self.refuse_if_blocked(handle).await?;
        self.in_turn(handle, Box::pin(self.open_menu_in_turn(handle, path)))
            .await
    }

    async fn open_menu_in_turn(
        &self,
        handle: WindowHandle,
        path: &[String],
    ) -> Result<OpenMenu, Error> {
        if self.draws_menus(handle).await? {
            return self.open_drawn(handle, path).await;
        }
        check_menu_path(&self.menus(handle).await?, path)?;
        self.close_menus(handle).await?;
        let mut tree = self.tree(handle).await?;
        let mut container = menu_bar(&tree)?;
        for (depth, label) in path.iter().enumerate() {
            if depth > 0 {
                tree = self.tree(handle).await?;
            }
            let item = item_under(&tree, container, &path[..depth], label)?
                .ok_or_else(|| {
                    Error::NoElement(format!(
                        "{label:?} is not shown in the open menu {:?}",
                        &path[..depth]
                    ))
                })?
                .clone();
            if depth + 1 < path.len() {
                self.open_item(handle, &tree, item.id, depth == 0).await?;
                container = item.id;
                continue;
            }
            // Another row of its menu, for the pointer to come from.
            let beside = items_under(&tree, container)
                .into_iter()
                .filter(|n| n.id != item.id)
                .find_map(|n| n.bounds.filter(|b| !b.is_empty()));
            return self.highlight(handle, &item, beside, path).await;
        }
        Err(Error::InvalidRequest("path names no row".into()))
    }

    /// Put the pointer over a row of an open menu, as a hand does, and answer
    /// the open menu once that row shows highlighted; where it does not, the
    /// pointer comes to it again from the row `beside`. A row the tree placed
    /// on an open menu's popup (GTK 3's) is pointed at there; otherwise
    /// toolkits measure the rows of open menus from the outermost menu:
    /// GTK 4 from its content (as it measures the window), others from its
    /// surface (as they measure the window, shadow included); each is tried
    /// in turn. The host finds the popup under a point given relative to the
    /// window.
    async fn highlight(
        &self,
        handle: WindowHandle,
        row: &Node,
        beside: Option<Rect>,
        path: &[String],
    ) -> Result<OpenMenu, Error> {
        let label = plain_label(&row.name);
        // The row's level among the open menus (`path` begins with the
        // menu's title); a row that opens a submenu opens one level more.
        let level = path.len().saturating_sub(2);
        let b = row.bounds.ok_or_else(|| {
            Error::Unsupported(format!("{label:?} has no place on screen to highlight"))
        })?;
        let window = self.window(&super::WindowPick::Handle(handle)).await?;
        let popups = self.open_popups(handle);
        let on_a_popup = popups.iter().any(|p| {
            let [_, content] = super::tree::popup_places(p, (window.content.x, window.content.y));
            content.contains_rect(&b)
        });
        let mut origins = vec![(0, 0)];
        if let Some(menu) = popups.first().filter(|_| !on_a_popup) {
            origins = vec![
                (
                    menu.content.x - window.content.x,
                    menu.content.y - window.content.y,
                ),
                (
                    menu.surface.x - window.surface.x,
                    menu.surface.y - window.surface.y,
                ),
            ];
            origins.dedup();
        }
        let mut shown = None;
        'origins: for (dx, dy) in origins {
            // GTK 3 keeps a row that was under the pointer when its menu
            // closed (by a key) marked as entered: the same row of its next
            // menu lights only once the pointer has crossed from another row.
            let detour = beside.map(|other| [other, b]);
            for (n, place) in std::iter::once(b)
                .chain(detour.into_iter().flatten())
                .enumerate()
            {
                let hover = InputEvent::PointerMove {
                    x: f64::from(place.x + dx) + f64::from(place.width) / 2.0,
                    y: f64::from(place.y + dy) + f64::from(place.height) / 2.0,
                    mods: wayrig_host::Mods::default(),
                };
                self.input(handle, vec![hover], InputOptions::default())
                    .await?;
                self.settle_briefly(handle).await?;
                if n == 1 {
                    continue;
                }
                shown = self.shown_menu(handle).await?;
                let lit = shown
                    .as_ref()
                    .and_then(|m| m.path.get(level).cloned().flatten());
                if lit.is_some_and(|l| label_matches(&l, &label)) {
                    break 'origins;
                }
            }
        }
        let shown = shown
            .ok_or_else(|| Error::Failed(format!("the menus along {path:?} did not stay open")))?;
        match shown.path.get(level) {
            Some(Some(lit)) if label_matches(lit, &label) => Ok(shown),
            other => Err(Error::Failed(format!(
                "the pointer over {label:?} highlighted {other:?} instead"
            ))),
        }
    }

    /// Choose an item of the window's application menu by the labels along its
    /// path; answers once the item ran.
    pub async fn menu(&self, handle: WindowHandle, path: &[String]) -> Result<MenuPath, Error> {
        self.refuse_if_blocked(handle).await?;
        self.in_turn(handle, Box::pin(self.menu_in_turn(handle, path)))
            .await
    }

    async fn menu_in_turn(&self, handle: WindowHandle, path: &[String]) -> Result<MenuPath, Error> {
        if path.is_empty() || path.iter().any(|l| l.is_empty()) {
            return Err(Error::InvalidRequest(
                "path lists the labels from the menu bar to the item, none empty".into(),
            ));
        }
        let window = self.window(&super::WindowPick::Handle(handle)).await?;
        if self.draws_menus(handle).await? {
            return self.choose_drawn(handle, path).await.map(MenuPath::Tree);
        }
        // A menu button's menu (the primary menu of a GTK 4 header bar).
        if let Some(done) = self.menu_by_button(handle, path).await? {
            return Ok(MenuPath::Tree(done));
        }
        // The app's answer says its action ran, not that its effect shows:
        // the answer waits for that as an act's does.
        if let Some((menus, at, number)) = self.exported(&window).await {
            self.count_act();
            menus.choose(&at, path, number).await?;
            if let Some(why) = self.settle_effect(handle, window.pid).await {
                tracing::debug!(%why, "an exported menu item's effect did not settle");
            }
            return Ok(MenuPath::Exported);
        }
        self.menu_in_tree(handle, path).await.map(MenuPath::Tree)
    }

    /// Walk the menu bar in the window's tree: items in closed menus (GTK 3,
    /// Qt) are there already; a menu that makes its items only once open
    /// (GTK 4 popovers) is opened first.
    async fn menu_in_tree(&self, handle: WindowHandle, path: &[String]) -> Result<Path, Error> {
        let mut tree = self.tree(handle).await?;
        let bar = menu_bar(&tree)?;
        let mut container = bar;
        let mut opened = false;
        for (depth, label) in path.iter().enumerate() {
            let mut found = item_under(&tree, container, &path[..depth], label)?;
            // A menu with no items yet makes them when it opens (GTK 4).
            if found.is_none() && depth > 0 && items_under(&tree, container).is_empty() {
                self.open_item(handle, &tree, container, depth == 1).await?;
                opened = true;
                tree = self.tree(handle).await?;
                found = match item_under(&tree, container, &path[..depth], label) {
                    Ok(found) => found,
                    Err(several) => {
                        self.escape(handle).await;
                        return Err(several);
                    }
                };
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
            let done = self.run_item(handle, item.id).await?;
            self.settle_briefly(handle).await?;
            return Ok(done);
        }
        Err(Error::InvalidRequest("path names no item".into()))
    }

    /// Run a menu item: by its own action where it has one (items in popups
    /// are measured from the popup, and closed menus are not on screen),
    /// else pressed where it shows.
    pub(super) async fn run_item(&self, handle: WindowHandle, id: u64) -> Result<Path, Error> {
        match self.do_named_action(id, &super::act::PRESS_ACTIONS).await {
            Ok(path) => Ok(path),
            Err(_) => Ok(self
                .act(
                    handle,
                    ElementRef::Id(id),
                    Action::Press,
                    ActOptions::default(),
                )
                .await?
                .path),
        }
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
        let node = tree.node(id).ok_or_else(|| {
            Error::StaleElement(format!("element {id} is stale: read the tree again"))
        })?;
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
            let names = ["click", "activate", "press", "expand"];
            self.do_named_action(id, &names).await
        };
        opened?;
        self.settle_briefly(handle).await
    }

    /// Settle, but an app that animates forever gets only a moment; then its
    /// accessibility events are caught up with.
    pub(super) async fn settle_briefly(&self, handle: WindowHandle) -> Result<(), Error> {
        match self
            .host
            .wait_frames(handle, FrameWait::Effect, MENU_OPENS)
            .await
        {
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

pub(super) fn is_menu_item(n: &Node) -> bool {
    // A named menu is an item that opens a submenu (GTK 3); GTK 4's popover
    // menus are containers, named only after their class. Menus an app
    // draws (egui) hold plain buttons and check boxes.
    matches!(
        n.role,
        Role::MenuItem
            | Role::CheckMenuItem
            | Role::RadioMenuItem
            | Role::Button
            | Role::ToggleButton
            | Role::CheckBox
            | Role::RadioButton
    ) || (n.role == Role::Menu && !n.name.is_empty() && !is_class_name(&n.name))
}

/// A row's label as a person reads it and its shortcut: the toolkit's own
/// shortcut, else one the label ends with (egui writes `Quit Ctrl+Q` as one
/// name).
pub(super) fn row_label(n: &Node) -> (String, Option<String>) {
    let label = plain_label(&n.name);
    if let Some(own) = &n.annotations.key_shortcuts {
        return (label, Some(own.clone()));
    }
    match label.rsplit_once(' ') {
        Some((text, keys)) if is_shortcut(keys) && !text.trim().is_empty() => {
            (text.trim_end().to_string(), Some(keys.to_string()))
        }
        _ => (label, None),
    }
}

/// Keys as menus write them: modifiers joined by `+` to a key (`Ctrl+Shift+S`).
fn is_shortcut(keys: &str) -> bool {
    const MODIFIERS: [&str; 9] = [
        "Ctrl", "Shift", "Alt", "Super", "Cmd", "Meta", "⌘", "⇧", "⌥",
    ];
    let mut parts: Vec<&str> = keys.split('+').collect();
    let key = parts.pop().unwrap_or_default();
    !parts.is_empty() && !key.is_empty() && parts.iter().all(|m| MODIFIERS.contains(m))
}

/// What a menu (or menu bar) holds directly, in order: its items and its
/// separators, found below unnamed containers and in the popups it controls.
pub(super) fn entries_under(tree: &Tree, container: u64) -> Vec<&Node> {
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
        if is_menu_item(n) || n.role == Role::Separator {
            out.push(n);
        } else {
            stack.extend(n.children.iter().rev());
        }
    }
    out
}

/// The menu items directly in a menu (or menu bar).
pub(super) fn items_under(tree: &Tree, container: u64) -> Vec<&Node> {
    entries_under(tree, container)
        .into_iter()
        .filter(|n| is_menu_item(n))
        .collect()
}

/// The row of the menu `menu` (the path down to it) read by `label`, if
/// any; several is `Ambiguous`.
fn item_under<'a>(
    tree: &'a Tree,
    container: u64,
    menu: &[String],
    label: &str,
) -> Result<Option<&'a Node>, Error> {
    only_labelled(items_under(tree, container), label, |n| row_label(n).0)
        .map_err(|rows| several_rows(menu, label, rows.iter().map(|n| Some(n.id))))
}

/// Check a path against the menus: each label there, each row before the last
/// opening a submenu, the last row enabled.
fn check_menu_path(menus: &[Menu], path: &[String]) -> Result<(), Error> {
    let (title, rows_path) = path
        .split_first()
        .ok_or_else(|| Error::InvalidRequest("path names a menu title, then rows".into()))?;
    let menu = match only_labelled(menus, title, |m| m.title.clone()) {
        Ok(Some(menu)) => menu,
        Ok(None) => {
            let titles: Vec<&str> = menus.iter().map(|m| m.title.as_str()).collect();
            return Err(Error::InvalidRequest(format!(
                "no menu {title:?}; the menus are {titles:?}"
            )));
        }
        // Several menus read the title: the walk of the menu bar refuses
        // it naming their elements, before it opens any.
        Err(_) => return Ok(()),
    };
    let mut rows = &menu.rows;
    for (i, label) in rows_path.iter().enumerate() {
        let items = rows.iter().filter_map(|r| match r {
            MenuRow::Item {
                label,
                id,
                enabled,
                submenu,
                ..
            } => Some((label, id, enabled, submenu)),
            MenuRow::Separator => None,
        });
        let row = only_labelled(items, label, |(l, ..)| l.to_string()).map_err(|several| {
            several_rows(&path[..=i], label, several.iter().map(|(_, id, ..)| **id))
        })?;
        let Some((_, _, enabled, submenu)) = row else {
            return Err(Error::InvalidRequest(format!(
                "the menu {:?} has no row {label:?}",
                &path[..=i]
            )));
        };
        let last = i + 1 == rows_path.len();
        match (last, submenu) {
            (false, Some(sub)) => rows = sub,
            (false, None) => {
                return Err(Error::InvalidRequest(format!(
                    "{:?} opens no submenu",
                    &path[..=i + 1]
                )))
            }
            (true, _) if !enabled => {
                return Err(Error::InvalidRequest(format!(
                    "the row {path:?} is disabled"
                )))
            }
            (true, _) => {}
        }
    }
    Ok(())
}

/// A control that shows and says its popup is open: a menu, menu item or
/// menu button expanded, or anything expanded that has a popup (GTK 4's
/// menu button reads as a toggle or a disclosure while open).
fn opens_popup(tree: &Tree, n: &Node) -> bool {
    n.states.expanded
        && !n.states.offscreen
        && (n.annotations.has_popup.is_some()
            || n.relations
                .controls
                .iter()
                .any(|c| tree.node(*c).is_some_and(|m| m.role == Role::Menu))
            || matches!(
                n.role,
                Role::MenuButton | Role::Menu | Role::MenuItem | Role::PopUpButton | Role::Button
            ))
}

/// What a person calls the control that opened a menu: its name, else the
/// text of the button inside it (GTK 4's menu button), else what is read
/// for it (its tooltip).
fn opener_title(tree: &Tree, n: &Node) -> String {
    if let Some(name) = n.label() {
        return plain_label(name);
    }
    let inner = n
        .children
        .iter()
        .filter_map(|c| tree.node(*c))
        .find_map(|c| c.label().filter(|_| c.role != Role::Menu));
    match (inner, &n.label_fallback) {
        (Some(text), _) => plain_label(text),
        (None, Some(read)) => read.text.clone(),
        (None, None) => String::new(),
    }
}

/// The window's menu bar that shows: one the toolkit says is, else one the
/// app draws (egui: an unnamed menu of items, in no menu or control itself).
/// One on a hidden page, or a closed popup's menu, is none.
pub(super) fn menu_bar(tree: &Tree) -> Result<u64, Error> {
    let drawn = |n: &Node| {
        n.role == Role::Menu
            && n.name.is_empty()
            && items_under(tree, n.id)
                .iter()
                .any(|item| !item.states.offscreen)
            && tree
                .ancestors(n)
                .all(|p| p.role != Role::Menu && !is_menu_item(p))
    };
    tree.nodes
        .iter()
        .find(|n| n.role == Role::MenuBar && !n.states.offscreen)
        .or_else(|| tree.nodes.iter().find(|n| drawn(n)))
        .map(|n| n.id)
        .ok_or_else(|| {
            Error::Unsupported("the window shows no menu bar and its app exports no menu".into())
        })
}

/// A menu's rows as the tree has them; separators where the tree shows them.
pub(super) fn rows_under(tree: &Tree, container: u64, depth: usize) -> Vec<MenuRow> {
    entries_under(tree, container)
        .into_iter()
        .map(|n| {
            if n.role == Role::Separator {
                return MenuRow::Separator;
            }
            let sub = (depth < 8)
                .then(|| rows_under(tree, n.id, depth + 1))
                .filter(|r| !r.is_empty());
            MenuRow::of(n, sub)
        })
        .collect()
}

impl MenuRow {
    /// The row an element of a menu is, with the rows of its submenu.
    pub(super) fn of(n: &Node, submenu: Option<Vec<MenuRow>>) -> MenuRow {
        let (label, shortcut) = row_label(n);
        MenuRow::Item {
            label,
            id: Some(n.id),
            shortcut,
            enabled: !n.states.disabled,
            checked: matches!(
                n.role,
                Role::CheckMenuItem
                    | Role::RadioMenuItem
                    | Role::CheckBox
                    | Role::RadioButton
                    | Role::ToggleButton
            )
            .then(|| n.checked())
            .flatten(),
            submenu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, submenu: Option<Vec<MenuRow>>) -> MenuRow {
        MenuRow::Item {
            label: label.into(),
            id: None,
            shortcut: None,
            enabled: true,
            checked: None,
            submenu,
        }
    }

    fn path(labels: &[&str]) -> Vec<String> {
        labels.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_path_is_checked_against_the_one_menu_its_title_reads() {
        let menus = [
            Menu {
                title: "_File".into(),
                rows: vec![row("Open", None)],
            },
            Menu {
                title: "Edit".into(),
                rows: vec![row("Copy", None)],
            },
        ];
        assert!(check_menu_path(&menus, &path(&["File", "Open"])).is_ok());
        let missing = check_menu_path(&menus, &path(&["File", "Copy"])).unwrap_err();
        assert!(
            missing.to_string().contains("has no row \"Copy\""),
            "{missing}"
        );
        let no_menu = check_menu_path(&menus, &path(&["View", "Zoom"])).unwrap_err();
        assert!(
            no_menu.to_string().contains("no menu \"View\""),
            "{no_menu}"
        );
    }

    #[test]
    fn a_title_several_menus_read_is_left_to_the_walk_that_names_them() {
        // Before: the first "File" was checked, and its lack of "Open" was
        // said as the path's fault.
        let menus = [
            Menu {
                title: "File".into(),
                rows: vec![row("New", None)],
            },
            Menu {
                title: "File".into(),
                rows: vec![row("Open", None)],
            },
        ];
        assert!(check_menu_path(&menus, &path(&["File", "Open"])).is_ok());
    }
}
