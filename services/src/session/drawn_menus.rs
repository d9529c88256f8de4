//! Menus an app draws inside its own window (egui): the menu bar is an unnamed
//! menu of buttons, and an open menu hangs in the tree below the row that opened it.
//!
//! They take no popup surface and their rows exist only while they are open,
//! so they are listed by opening each in turn, found open by reading the
//! tree, highlighted with the pointer and keyboard focus, and closed with Escape.

use std::future::Future;
use std::pin::Pin;

use wayrig_host::{Button, InputEvent, InputOptions, Mods, WindowHandle};

use super::act::{ActOptions, Action, ElementRef, Path};
use super::menus::{
    entries_under, items_under, menu_bar, row_label, Menu, MenuRow, OpenMenu, MENU_OPENS,
};
use super::Session;
use crate::menu_labels::{label_matches, only_labelled, several_rows};
use crate::model::{Error, Node, Role, Tree};

/// Tries at closing the drawn menus before saying they would not close.
const CLOSE_TRIES: usize = 3;
/// Submenus within submenus read at most.
const LIST_DEPTH: usize = 8;

/// The window's menu bar, if it is one the app draws.
pub(super) fn drawn_bar(tree: &Tree) -> Option<u64> {
    menu_bar(tree)
        .ok()
        .filter(|bar| tree.node(*bar).is_some_and(|n| n.role == Role::Menu))
}

/// The row whose menu is open: one hangs below it.
fn opens(tree: &Tree, row: &Node) -> bool {
    row.children
        .iter()
        .filter_map(|c| tree.node(*c))
        .any(|c| c.role == Role::Menu)
}

/// The rows whose menus are open along the bar, outermost first.
fn open_chain(tree: &Tree, bar: u64) -> Vec<&Node> {
    let mut chain: Vec<&Node> = Vec::new();
    let mut container = bar;
    while chain.len() < LIST_DEPTH + 1 {
        let Some(row) = items_under(tree, container)
            .into_iter()
            .find(|n| opens(tree, n))
        else {
            break;
        };
        chain.push(row);
        container = row.id;
    }
    chain
}

/// The menu open over the bar: its title, at each level the row whose
/// submenu is open, else the focused row, else the row under the pointer
/// (`pointer` in the window's points).
pub(super) fn shown(tree: &Tree, bar: u64, pointer: Option<(f64, f64)>) -> Option<OpenMenu> {
    let chain = open_chain(tree, bar);
    let first = chain.first()?;
    let under = |n: &&&Node| {
        pointer.is_some_and(|(x, y)| {
            n.bounds.is_some_and(|b| {
                x >= f64::from(b.x)
                    && x < f64::from(b.x + b.width)
                    && y >= f64::from(b.y)
                    && y < f64::from(b.y + b.height)
            })
        })
    };
    let path = chain
        .iter()
        .enumerate()
        .map(|(level, opener)| {
            let rows = items_under(tree, opener.id);
            chain
                .get(level + 1)
                .copied()
                .or_else(|| rows.iter().find(|n| n.states.focused).copied())
                .or_else(|| rows.iter().find(under).copied())
                .map(|n| row_label(n).0)
        })
        .collect();
    Some(OpenMenu {
        title: row_label(first).0,
        path,
        depth: chain.len(),
    })
}

impl Session {
    /// The pointer in the window's points, where the host says.
    async fn pointer_in(&self, handle: WindowHandle) -> Option<(f64, f64)> {
        let window = self.window(&super::WindowPick::Handle(handle)).await.ok()?;
        let p = self.pointer().await.ok()?;
        Some((
            p.x - f64::from(window.content.x),
            p.y - f64::from(window.content.y),
        ))
    }

    /// The drawn menu open now, if any.
    pub(super) async fn shown_drawn(
        &self,
        handle: WindowHandle,
        tree: &Tree,
        bar: u64,
    ) -> Option<OpenMenu> {
        shown(tree, bar, self.pointer_in(handle).await)
    }

    /// Close the drawn menus with Escape, as a person does; answers whether
    /// one was open.
    pub(super) async fn close_drawn(&self, handle: WindowHandle) -> Result<bool, Error> {
        let mut was_open = false;
        for _ in 0..CLOSE_TRIES {
            let tree = self.tree(handle).await?;
            let Some(bar) = drawn_bar(&tree) else {
                return Ok(was_open);
            };
            if open_chain(&tree, bar).is_empty() {
                return Ok(was_open);
            }
            was_open = true;
            let escape = InputEvent::Key {
                key: "Escape".into(),
            };
            self.input(handle, vec![escape], InputOptions::default())
                .await?;
            self.settle_briefly(handle).await?;
        }
        Err(Error::Failed(format!(
            "the menus of window {handle} stayed open after {CLOSE_TRIES} presses of Escape"
        )))
    }

    /// Every drawn menu with its rows: each is opened in turn (its rows exist
    /// only while it is open), each row that could open a submenu is hovered
    /// to see whether one opens, and every menu is closed again.
    pub(super) async fn list_drawn(&self, handle: WindowHandle) -> Result<Vec<Menu>, Error> {
        self.close_drawn(handle).await?;
        let tree = self.tree(handle).await?;
        let bar = menu_bar(&tree)?;
        let tops: Vec<(u64, String)> = items_under(&tree, bar)
            .into_iter()
            .map(|n| (n.id, row_label(n).0))
            .collect();
        let mut menus = Vec::with_capacity(tops.len());
        for (id, title) in tops {
            self.press_row(handle, id).await?;
            let rows = self.drawn_rows(handle, id, 0).await;
            self.close_drawn(handle).await?;
            menus.push(Menu { title, rows: rows? });
        }
        Ok(menus)
    }

    /// The rows of the open menu below `opener`, submenus read by hovering.
    fn drawn_rows(
        &self,
        handle: WindowHandle,
        opener: u64,
        depth: usize,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<MenuRow>, Error>> + Send + '_>> {
        Box::pin(async move {
            let tree = self.tree(handle).await?;
            let entries: Vec<Node> = entries_under(&tree, opener).into_iter().cloned().collect();
            let mut rows = Vec::with_capacity(entries.len());
            for entry in entries {
                if entry.role == Role::Separator {
                    rows.push(MenuRow::Separator);
                    continue;
                }
                let mut submenu = None;
                if depth < LIST_DEPTH && entry.role == Role::Button && !entry.states.disabled {
                    self.hover(handle, &entry).await?;
                    let tree = self.tree(handle).await?;
                    if tree.node(entry.id).is_some_and(|n| opens(&tree, n)) {
                        submenu = Some(self.drawn_rows(handle, entry.id, depth + 1).await?);
                    }
                }
                rows.push(MenuRow::of(&entry, submenu));
            }
            Ok(rows)
        })
    }

    /// Open the drawn menus along `path` and highlight its last row: the
    /// pointer rests on it and it takes keyboard focus, so Enter runs it.
    pub(super) async fn open_drawn(
        &self,
        handle: WindowHandle,
        path: &[String],
    ) -> Result<OpenMenu, Error> {
        let (title, rows_path) = path
            .split_first()
            .ok_or_else(|| Error::InvalidRequest("path names a menu title, then rows".into()))?;
        self.close_drawn(handle).await?;
        let tree = self.tree(handle).await?;
        let bar = menu_bar(&tree)?;
        let tops = items_under(&tree, bar);
        let top = only_labelled(tops.iter(), title, |n| row_label(n).0)
            .map_err(|several| several_rows(&[], title, several.iter().map(|n| Some(n.id))))?
            .ok_or_else(|| {
                let titles: Vec<String> = tops.iter().map(|n| row_label(n).0).collect();
                Error::InvalidRequest(format!("no menu {title:?}; the menus are {titles:?}"))
            })?;
        if rows_path.is_empty() {
            if top.states.disabled {
                return Err(Error::InvalidRequest(format!(
                    "the menu {title:?} is disabled"
                )));
            }
            self.press_row(handle, top.id).await?;
            return self.shown_now(handle).await;
        }
        self.press_row(handle, top.id).await?;
        let mut container = top.id;
        for (i, label) in rows_path.iter().enumerate() {
            let tree = self.tree(handle).await?;
            let rows = items_under(&tree, container);
            let found = only_labelled(rows.iter(), label, |n| row_label(n).0).map_err(|several| {
                several_rows(&path[..=i], label, several.iter().map(|n| Some(n.id)))
            });
            let found = match found {
                Ok(found) => found.map(|n| (*n).clone()),
                Err(several) => {
                    self.close_drawn(handle).await?;
                    return Err(several);
                }
            };
            let Some(row) = found else {
                let known: Vec<String> = rows.iter().map(|n| row_label(n).0).collect();
                self.close_drawn(handle).await?;
                return Err(Error::InvalidRequest(format!(
                    "the menu {:?} has no row {label:?}; it has {known:?}",
                    &path[..=i]
                )));
            };
            let last = i + 1 == rows_path.len();
            if row.states.disabled {
                self.close_drawn(handle).await?;
                return Err(Error::InvalidRequest(format!(
                    "the row {:?} is disabled",
                    &path[..=i + 1]
                )));
            }
            self.hover(handle, &row).await?;
            if last {
                // Keyboard focus on the row, so a following Enter runs it.
                self.act(
                    handle,
                    ElementRef::Id(row.id),
                    Action::Focus,
                    ActOptions::default(),
                )
                .await?;
                self.settle_briefly(handle).await?;
                return self.shown_now(handle).await;
            }
            // egui draws the submenu a frame or more after the hover.
            let opened = self
                .wait_until(handle, MENU_OPENS, |tree| {
                    tree.node(row.id).filter(|n| opens(tree, n)).map(|_| ())
                })
                .await?;
            if opened.is_none() {
                self.close_drawn(handle).await?;
                return Err(Error::InvalidRequest(format!(
                    "{:?} opens no submenu",
                    &path[..=i + 1]
                )));
            }
            container = row.id;
        }
        self.shown_now(handle).await
    }

    /// Choose the row at the end of `path` as a person does: open the menus
    /// along it, then click the row; the menus are closed if it left them open.
    pub(super) async fn choose_drawn(
        &self,
        handle: WindowHandle,
        path: &[String],
    ) -> Result<Path, Error> {
        let (Some(label), true) = (path.last(), path.len() > 1) else {
            return Err(Error::InvalidRequest(
                "path names a menu title, then the rows down to the one to choose".into(),
            ));
        };
        self.open_drawn(handle, path).await?;
        let tree = self.tree(handle).await?;
        let bar = menu_bar(&tree)?;
        let row = open_chain(&tree, bar)
            .last()
            .and_then(|menu| {
                items_under(&tree, menu.id)
                    .into_iter()
                    .find(|n| label_matches(&row_label(n).0, label))
            })
            .and_then(|row| row.bounds)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| Error::Failed(format!("the menus along {path:?} did not stay open")))?;
        let (x, y) = (
            f64::from(row.x) + f64::from(row.width) / 2.0,
            f64::from(row.y) + f64::from(row.height) / 2.0,
        );
        let (button, clicks, mods) = (Button::Left, 1, Mods::default());
        let click = vec![
            InputEvent::PointerDown {
                x,
                y,
                button,
                clicks,
                mods,
            },
            InputEvent::PointerUp {
                x,
                y,
                button,
                clicks,
                mods,
            },
        ];
        self.input(handle, click, InputOptions::default()).await?;
        self.settle_briefly(handle).await?;
        self.close_drawn(handle).await?;
        Ok(Path::Pointer)
    }

    /// The drawn menu open now, which the caller just opened.
    async fn shown_now(&self, handle: WindowHandle) -> Result<OpenMenu, Error> {
        let tree = self.tree(handle).await?;
        let bar = menu_bar(&tree)?;
        self.shown_drawn(handle, &tree, bar)
            .await
            .ok_or_else(|| Error::Failed(format!("the menu of window {handle} did not open")))
    }

    /// Press a row (a menu bar's title) as a person does, and wait for what it opens.
    async fn press_row(&self, handle: WindowHandle, id: u64) -> Result<(), Error> {
        self.act(
            handle,
            ElementRef::Id(id),
            Action::Press,
            ActOptions::default(),
        )
        .await?;
        self.settle_briefly(handle).await
    }

    /// Rest the pointer on a row, and wait for what that opens.
    async fn hover(&self, handle: WindowHandle, row: &Node) -> Result<(), Error> {
        let b = row.bounds.filter(|b| !b.is_empty()).ok_or_else(|| {
            Error::Unsupported(format!(
                "the menu row {:?} has no place on screen to point at",
                row_label(row).0
            ))
        })?;
        let hover = InputEvent::PointerMove {
            x: f64::from(b.x) + f64::from(b.width) / 2.0,
            y: f64::from(b.y) + f64::from(b.height) / 2.0,
            mods: Mods::default(),
        };
        self.input(handle, vec![hover], InputOptions::default())
            .await?;
        self.settle_briefly(handle).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::elements::tests::{node, tree_of};

    /// egui's shape: a bar of buttons, File open with Recent's submenu open.
    fn egui_tree() -> Tree {
        let mut bar = node(2, Some(1), Role::Menu, "");
        bar.bounds = None;
        let mut file_menu = node(5, Some(3), Role::Menu, "");
        file_menu.bounds = None;
        let mut recent_menu = node(8, Some(7), Role::Menu, "");
        recent_menu.bounds = None;
        let mut quit = node(10, Some(5), Role::Button, "Quit Ctrl+Q");
        quit.bounds = Some(wayrig_host::Rect::new(0, 60, 80, 20));
        tree_of(vec![
            node(1, None, Role::Window, ""),
            bar,
            node(3, Some(2), Role::Button, "File"),
            node(4, Some(2), Role::Button, "Edit"),
            file_menu,
            node(6, Some(5), Role::Button, "New"),
            node(7, Some(5), Role::Button, "Recent"),
            recent_menu,
            node(9, Some(8), Role::Button, "notes.txt"),
            quit,
        ])
    }

    #[test]
    fn an_open_drawn_menu_is_read_from_the_rows_that_hold_menus() {
        let tree = egui_tree();
        let bar = drawn_bar(&tree).expect("egui's bar is a menu of buttons");
        let open = shown(&tree, bar, None).unwrap();
        assert_eq!(open.title, "File");
        assert_eq!(open.depth, 2);
        assert_eq!(open.path, vec![Some("Recent".to_string()), None]);
    }

    #[test]
    fn the_row_under_the_pointer_is_the_one_highlighted_and_its_shortcut_is_apart() {
        let mut tree = egui_tree();
        // Recent's submenu closed: File's menu is the only level.
        tree.nodes.retain(|n| n.id != 8 && n.id != 9);
        tree.nodes
            .iter_mut()
            .find(|n| n.id == 7)
            .unwrap()
            .children
            .clear();
        let bar = drawn_bar(&tree).unwrap();
        let open = shown(&tree, bar, Some((10.0, 65.0))).unwrap();
        assert_eq!(open.path, vec![Some("Quit".to_string())]);
        assert_eq!(
            shown(&tree, bar, Some((500.0, 500.0))).unwrap().path,
            vec![None]
        );
    }

    #[test]
    fn no_drawn_menu_is_open_when_no_row_holds_one() {
        let mut tree = egui_tree();
        tree.nodes.retain(|n| ![5, 6, 7, 8, 9, 10].contains(&n.id));
        tree.nodes
            .iter_mut()
            .find(|n| n.id == 3)
            .unwrap()
            .children
            .clear();
        let bar = drawn_bar(&tree).unwrap();
        assert_eq!(shown(&tree, bar, None), None);
    }
}
