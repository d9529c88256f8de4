//! The menus of menu buttons (GTK 4's primary menu and mode button, a GTK 3
//! combo box): listed with their rows, and an item chosen by the button's
//! label and the labels along the menu, as a hand opens and chooses.

use wayrig_host::WindowHandle;

use super::act::{ActOptions, Action, ElementRef, Path};
use super::elements::is_control;
use super::menus::{entries_under, rows_under, Menu, MENU_OPENS};
use super::Session;
use crate::menu_labels::{only_labelled, several_rows};
use crate::model::{Error, Node, Role, Tree};

/// The menu buttons that show in the window, each with the menu it opens:
/// a menu inside the button (GTK keeps a popover's elements under its
/// button, open or not) or one it says it controls. A menu bar's items and
/// the items of menus are not menu buttons.
pub(super) fn menu_buttons(tree: &Tree) -> Vec<(&Node, u64)> {
    let in_a_menu = |n: &Node| {
        tree.ancestors(n)
            .any(|p| matches!(p.role, Role::Menu | Role::MenuBar))
    };
    let holds_items =
        |menu: &Node| menu.role == Role::Menu && !entries_under(tree, menu.id).is_empty();
    tree.nodes
        .iter()
        .filter(|n| {
            is_control(n)
                && !n.states.offscreen
                && !matches!(n.role, Role::MenuItem | Role::Menu)
                && n.shown_label().is_some()
                && !in_a_menu(n)
        })
        .filter_map(|n| {
            let controlled = n.relations.controls.iter().filter_map(|c| tree.node(*c));
            let menu = tree
                .descendants(n)
                .filter(|d| !is_control(d) || d.role == Role::Menu)
                .chain(controlled)
                .find(|m| holds_items(m))?;
            Some((n, menu.id))
        })
        .collect()
}

/// The menu button read by `label`, with its menu, if any; several is
/// `Ambiguous`.
fn menu_button<'t>(tree: &'t Tree, label: &str) -> Result<Option<(&'t Node, u64)>, Error> {
    // An unlabelled button reads as "", which no path's label is.
    only_labelled(menu_buttons(tree), label, |(b, _)| {
        b.shown_label().unwrap_or_default().to_string()
    })
    .map_err(|several| Error::Ambiguous {
        what: format!("the menu button {label:?}"),
        ids: several.iter().map(|(b, _)| b.id).collect(),
    })
}

/// The item of the open menu read by `label`, where it shows: `None` while
/// none does, `Some(Err)` when several do (`path` names the menu, for it).
fn shown_item(tree: &Tree, menu: u64, path: &[String], label: &str) -> Option<Result<Node, Error>> {
    let top = tree.node(menu)?;
    let shown = tree
        .descendants(top)
        .filter(|n| !n.states.offscreen && n.role != Role::Menu && super::menus::is_menu_item(n));
    only_labelled(shown, label, |n| super::menus::row_label(n).0)
        .map_err(|several| several_rows(path, label, several.iter().map(|n| Some(n.id))))
        .transpose()
        .map(|found| found.cloned())
}

impl Session {
    /// The menus of the window's menu buttons, each titled by its button as
    /// a snapshot reads it.
    pub async fn button_menus(&self, handle: WindowHandle) -> Result<Vec<Menu>, Error> {
        let tree = self.tree(handle).await?;
        Ok(menu_buttons(&tree)
            .into_iter()
            .map(|(button, menu)| Menu {
                title: button.shown_label().unwrap_or_default().to_string(),
                rows: rows_under(&tree, menu, 0),
            })
            .collect())
    }

    /// Choose an item of the menu of the button `path[0]` names, if the
    /// window shows such a button (`None` when not): press the button, then
    /// each row along `path` once it shows (a row before the last opens its
    /// submenu); answers once the item ran. What a failed walk opened is
    /// closed before the answer.
    pub(super) async fn menu_by_button(
        &self,
        handle: WindowHandle,
        path: &[String],
    ) -> Result<Option<Path>, Error> {
        let tree = self.tree(handle).await?;
        let Some((button, menu)) = path
            .first()
            .map(|label| menu_button(&tree, label))
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        let rows = &path[1..];
        if rows.is_empty() {
            return Err(Error::InvalidRequest(format!(
                "{:?} is a menu button: add the labels of the item to choose in its menu",
                path[0]
            )));
        }
        let open = tree
            .node(menu)
            .is_some_and(|m| tree.descendants(m).any(|n| !n.states.offscreen));
        if !open {
            let press = ElementRef::Id(button.id);
            self.act(handle, press, Action::Press, ActOptions::default())
                .await?;
        }
        let walked = self.walk_open_menu(handle, menu, path, rows).await;
        if walked.is_err() {
            // Closed as a click outside would, and waited for.
            let _ = self.close_menus_in_turn(handle).await;
        }
        walked.map(Some)
    }

    /// Choose along `rows` in the open menu `menu` (`path` names it all, for
    /// errors), each row once it shows.
    async fn walk_open_menu(
        &self,
        handle: WindowHandle,
        menu: u64,
        path: &[String],
        rows: &[String],
    ) -> Result<Path, Error> {
        for (depth, label) in rows.iter().enumerate() {
            let shown = self
                .wait_until(handle, MENU_OPENS, |tree| {
                    shown_item(tree, menu, &path[..=depth], label)
                })
                .await?
                .transpose()?;
            let Some(item) = shown else {
                let tree = self.tree(handle).await?;
                let has: Vec<String> = tree
                    .node(menu)
                    .map(|m| {
                        tree.descendants(m)
                            .filter(|n| !n.states.offscreen && super::menus::is_menu_item(n))
                            .map(|n| super::menus::row_label(n).0)
                            .collect()
                    })
                    .unwrap_or_default();
                return Err(Error::NoElement(format!(
                    "{path:?}: the menu of {:?} shows no item {label:?}; it shows {has:?}",
                    path[0]
                )));
            };
            let last = depth + 1 == rows.len();
            if last && item.states.disabled {
                return Err(Error::Failed(format!("the item {path:?} is disabled")));
            }
            let ran = self.run_item(handle, item.id).await?;
            self.settle_briefly(handle).await?;
            if last {
                return Ok(ran);
            }
        }
        Err(Error::InvalidRequest("path names no item".into()))
    }
}
