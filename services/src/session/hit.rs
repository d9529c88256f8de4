//! Where a pointer action would land, checked before it is sent: the
//! compositor names the surface that takes the point, the app the element.

use std::collections::HashMap;

use wayrig_host::{HostError, Rect, WindowHandle};

use super::seen::{gtk3_popover_of, in_combo_menu, in_menu_bar_menu, in_popup};
use super::Session;
use crate::model::{positions, Error, Node, Tree};

/// Levels at most to go down through toolkits that name only the child at
/// a point (GTK 3, Qt), and up from an object a read left out.
const PICK_DEPTH: usize = 32;

/// What the app says lies at the point, against the element aimed at.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The element or something inside it: the click lands on it.
    Lands,
    /// A node of the tree that is not the element, nor inside it, nor
    /// around it.
    Elsewhere(u64),
    /// Ask again inside this node, an ancestor of the element (toolkits
    /// that name one level at a time).
    Deeper(u64),
    /// The app names nothing finer than an ancestor of the element there
    /// (Qt's tree views name the view for a point on a row): it cannot
    /// tell, and the compositor's word stands.
    Undecided,
}

/// Weigh one answer: `hit` is the node the app named at the point while
/// asked inside `within` (`None`: nothing there), `parents` the tree's.
fn verdict(parents: &HashMap<u64, u64>, aimed: u64, within: u64, hit: Option<u64>) -> Verdict {
    let holds = |outer: u64, mut inner: u64| loop {
        if inner == outer {
            return true;
        }
        match parents.get(&inner) {
            Some(p) => inner = *p,
            None => return false,
        }
    };
    match hit {
        Some(hit) if holds(aimed, hit) => Verdict::Lands,
        Some(hit) if hit != within && holds(hit, aimed) => Verdict::Deeper(hit),
        Some(hit) if hit == within => Verdict::Undecided,
        Some(hit) => Verdict::Elsewhere(hit),
        None => Verdict::Undecided,
    }
}

impl Session {
    /// Where to point to click element `id` of the window, relative to its
    /// content: the middle of what shows of it, once checked to land on it
    /// (see `check_hit`). For faces that send their own pointer input.
    pub async fn aim(&self, window: WindowHandle, id: u64) -> Result<(f64, f64), Error> {
        let tree = self.tree(window).await?;
        let node = tree
            .node(id)
            .ok_or_else(|| Error::NoElement(format!("{id} in window {window}")))?;
        if node.states.concealed {
            return Err(concealed(node));
        }
        let bounds = super::act::in_view(&tree, node).ok_or_else(|| {
            Error::NotShown(format!(
                "{id} ({:?} {:?}) has no place in the window to click: it is not laid out, \
                 or lies outside the window or its scrolled view",
                node.role, node.name
            ))
        })?;
        let (x, y) = super::act::centre(bounds);
        self.check_hit(&tree, node, x, y).await?;
        Ok((x, y))
    }

    /// Check that a pointer event at `(x, y)` of the tree's window would land
    /// on `node`: the compositor's surface there is the window's own (or,
    /// for an element of a popover, a popup of it), and the app names the
    /// element, or something inside it, at that point. Refused with what
    /// lies there instead; where the host or the app cannot tell, the other
    /// one's word stands. Popups open over the window, which would take the
    /// click to close themselves, are closed first (the one thing it changes).
    pub(super) async fn check_hit(
        &self,
        tree: &Tree,
        node: &Node,
        x: f64,
        y: f64,
    ) -> Result<(), Error> {
        let window = tree.window.handle;
        let refused = |what: String| {
            Error::NotShown(format!(
                "{} ({:?} {:?}) is not at ({x:.0}, {y:.0}) where it would be clicked: {what}; \
                 read the tree again",
                node.id, node.role, node.name
            ))
        };
        let index = positions(&tree.nodes);
        let of_popup = in_popup(&tree.nodes, &index, node);
        let on_combo_menu = in_combo_menu(&tree.nodes, &index, node);
        let on_menu_bar_menu = in_menu_bar_menu(&tree.nodes, &index, node);
        let Some(root) = tree.nodes.first() else {
            return Ok(());
        };
        let parents: HashMap<u64, u64> = tree
            .nodes
            .iter()
            .filter_map(|n| Some((n.id, n.parent?)))
            .collect();
        // A frame read into the window (Chromium's permission prompt and
        // context menu) is no child of the window's frame to its app.
        let read_in = read_in_frame_holding(tree, &parents, root.id, node.id);
        // A frame read in as a popup's (a context menu's) lies on it.
        let popup_frame = read_in
            .filter(|f| self.app_placing(window).on_a_popup(*f))
            .and_then(|f| tree.node(f));
        match self.host.window_at(window, x, y).await {
            Ok(hit) if hit == window && (of_popup || popup_frame.is_some()) => {
                return Err(refused("the popup it is in is closed".into()))
            }
            // GTK 3 measures a menu bar's open menu from the popup it shows
            // on, and places its items there once it knows which popup:
            // the point on the window is not the item (it was not placed),
            // and a click would close the menu and land on what lies under
            // it. Refused; the item's action still presses it. (egui draws
            // its menus in the window, with no popup.)
            Ok(hit) if hit == window && on_menu_bar_menu && !self.popups_of(window).is_empty() => {
                return Err(refused(
                    "it is on a menu bar's menu, which shows on a popup of its own where \
                     its place is not known; choose it through the menu verbs instead \
                     (the agent's `menu`, MyGo's menu, the Bus's ui.menu with a path)"
                        .into(),
                ))
            }
            // A popup open over the window takes a click outside it to close
            // itself, and the element would never get it (Chromium's
            // `<select>` list, a GTK popover): closed first, as a person would.
            Ok(hit) if hit == window => self.close_popups(tree).await?,
            // GTK 4 keeps a popover's elements in its window's tree, measured
            // on the popup's own surface, and GTK 3 a combo box's and a menu
            // bar's menu: the app cannot be asked of them. The popup at the
            // point must be the one they were placed on, not another over it
            // (a submenu's over its menu's items).
            Ok(hit) if of_popup || on_combo_menu || on_menu_bar_menu => {
                if self.popup_holds(hit, tree, node) {
                    return Ok(());
                }
                return Err(refused(format!(
                    "popup window {hit} of the app lies over it"
                )));
            }
            // The popup that shows the element's frame: the app is asked
            // below, from the frame down.
            Ok(hit) if popup_frame.is_some_and(|f| self.popup_shows(hit, tree, f)) => {}
            Ok(hit) => {
                return Err(refused(format!(
                    "popup window {hit} of the app lies over it"
                )))
            }
            Err(HostError::Unsupported(_)) => {}
            Err(HostError::InvalidRequest(why)) => return Err(refused(why)),
            Err(e) => return Err(e.into()),
        }
        if of_popup {
            return Ok(());
        }
        let (ax, ay) = self.app_placing(window).point_to_app(node.id, x, y);
        let a11y = self.a11y()?;
        // A frame read into the window is asked from itself down, and so is
        // a GTK 3 popover, which the window's answer leaves out.
        let mut within = read_in
            .or_else(|| gtk3_popover_of(&tree.nodes, &index, node))
            .unwrap_or(root.id);
        for _ in 0..PICK_DEPTH {
            let picked = match a11y.at_point(within, ax, ay).await {
                Ok(picked) => picked,
                Err(e) => {
                    tracing::debug!(id = node.id, %e, "the app cannot tell what lies at a point");
                    return Ok(());
                }
            };
            // An object the read left out (GTK 4's text inside an entry):
            // the nearest of its ancestors the tree holds.
            let unread = picked.clone().filter(|p| tree.node(p.id()).is_none());
            let mut hit = picked;
            for _ in 0..PICK_DEPTH {
                match &hit {
                    Some(p) if tree.node(p.id()).is_none() => {
                        hit = a11y.parent_of(p).await;
                    }
                    _ => break,
                }
            }
            let hit = hit.map(|p| p.id()).filter(|id| tree.node(*id).is_some());
            let verdict = match (verdict(&parents, node.id, within, hit), &unread) {
                // Its parents reach an ancestor of the element, not the
                // element: an object the read did not hold lies there. The
                // element itself, named by an object made for the asking
                // (Qt's tree view cells), is of its role and name; anything
                // else (a row or a dialog come since) would take the click.
                (Verdict::Deeper(_) | Verdict::Undecided, Some(object)) => {
                    let named = a11y.role_and_name(object).await;
                    if named.is_some_and(|(role, name)| is_named_as(node, role, &name)) {
                        return Ok(());
                    }
                    let inside = hit
                        .and_then(|h| tree.node(h))
                        .map(|n| format!(", inside {},", describe(Some(n))))
                        .unwrap_or_default();
                    return Err(refused(format!(
                        "something the tree does not hold{inside} is there"
                    )));
                }
                (verdict, _) => verdict,
            };
            match verdict {
                // Where the toolkit itself says the element does not show,
                // an ancestor named at its place is what a click would hit.
                Verdict::Undecided if node.states.offscreen => {
                    let there = hit.and_then(|h| tree.node(h));
                    return Err(refused(format!(
                        "the app says it does not show, and names {} there",
                        describe(there)
                    )));
                }
                Verdict::Lands | Verdict::Undecided => return Ok(()),
                Verdict::Deeper(next) => within = next,
                Verdict::Elsewhere(other) => {
                    return Err(refused(format!("{} is there", describe(tree.node(other)))))
                }
            }
        }
        Ok(())
    }
}

impl Session {
    /// Whether popup window `popup` holds what shows of the element placed
    /// on a popup: the popup it lies on, not one over it.
    fn popup_holds(&self, popup: WindowHandle, tree: &Tree, node: &Node) -> bool {
        let Some([surface, _]) = self.popup_in_content(popup, tree) else {
            return false;
        };
        super::act::in_view(tree, node).is_some_and(|b| surface.contains_rect(&b))
    }

    /// Where popup window `popup` lies in the tree's window's content, as
    /// its surface and as its content (see `popup_places`).
    fn popup_in_content(&self, popup: WindowHandle, tree: &Tree) -> Option<[Rect; 2]> {
        let windows = self.windows.now();
        let p = windows.iter().find(|w| w.handle == popup)?;
        let content = tree.window.content;
        Some(super::tree::popup_places(p, (content.x, content.y)))
    }

    /// Whether popup window `popup` shows the frame `frame` read into the
    /// tree's window: the popup lies where the frame is placed, as the read
    /// that took the frame in found it (see `popup_places`).
    fn popup_shows(&self, popup: WindowHandle, tree: &Tree, frame: &Node) -> bool {
        let Some(places) = self.popup_in_content(popup, tree) else {
            return false;
        };
        frame
            .bounds
            .is_some_and(|b| places.iter().any(|p| super::tree::same_place(&b, p)))
    }
}

/// The frame read in beside the window's that `id` is in, where the read
/// put one under the window's frame `root` (an alert or a popup's frame, see
/// `read_frames_over`).
fn read_in_frame_holding(
    tree: &Tree,
    parents: &HashMap<u64, u64>,
    root: u64,
    id: u64,
) -> Option<u64> {
    let mut at = id;
    for _ in 0..tree.nodes.len() {
        let parent = *parents.get(&at)?;
        if parent == root {
            return tree
                .node(at)
                .is_some_and(|n| matches!(n.native_role.as_str(), "alert" | "frame"))
                .then_some(at);
        }
        at = parent;
    }
    None
}

/// The refusal of an action on a concealed element.
pub(super) fn concealed(node: &Node) -> Error {
    Error::NotShown(format!(
        "{} ({:?} {:?}) does not show: the page, tab or popover it is on is not shown; \
         show that first, then read the tree again",
        node.id, node.role, node.name
    ))
}

/// Whether an object of `role` named `name` is `node` as far as they tell:
/// of its role, and of its name where both have one.
fn is_named_as(node: &Node, role: crate::model::Role, name: &str) -> bool {
    role == node.role && (name.is_empty() || node.name.is_empty() || name == node.name)
}

/// An element as errors name it: its role and, where it has one, its name.
fn describe(node: Option<&Node>) -> String {
    match node {
        Some(n) if !n.name.is_empty() => format!("{:?} {:?}", n.role, n.name),
        Some(n) => format!("an unnamed {:?}", n.role),
        None => "something the tree does not hold".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window (1) holding a keypad (2) of two keys (3, 5), each with its
    /// label (4, 6).
    fn parents() -> HashMap<u64, u64> {
        HashMap::from([(2, 1), (3, 2), (4, 3), (5, 2), (6, 5)])
    }

    #[test]
    fn a_click_lands_on_the_element_or_what_it_holds() {
        assert_eq!(verdict(&parents(), 3, 1, Some(3)), Verdict::Lands);
        assert_eq!(verdict(&parents(), 3, 1, Some(4)), Verdict::Lands);
    }

    #[test]
    fn another_element_at_the_point_is_refused() {
        assert_eq!(verdict(&parents(), 3, 1, Some(6)), Verdict::Elsewhere(6));
        assert_eq!(verdict(&parents(), 3, 1, Some(5)), Verdict::Elsewhere(5));
    }

    #[test]
    fn toolkits_naming_one_level_are_asked_again_inside() {
        assert_eq!(verdict(&parents(), 4, 1, Some(2)), Verdict::Deeper(2));
        assert_eq!(verdict(&parents(), 4, 2, Some(3)), Verdict::Deeper(3));
    }

    #[test]
    fn an_app_naming_nothing_finer_than_an_ancestor_cannot_tell() {
        assert_eq!(verdict(&parents(), 4, 2, Some(2)), Verdict::Undecided);
        assert_eq!(verdict(&parents(), 4, 3, None), Verdict::Undecided);
    }
}
