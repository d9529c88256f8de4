//! Acting by pointer: a click where an element shows, checked to land on it,
//! and wheeling an element's viewport until it shows, reading where it went.

use wayrig_host::{Button, FrameWait, HostError, InputEvent, Mods, Rect, WindowInfo};

use super::{Delivered, Path, Target};
use crate::model::{Error, Node, Tree};
use crate::session::seen::{clipping_views, shows_on_popup};
use crate::session::Session;

/// Frames at most to wait for an element to stop moving.
const STILL_FRAMES: usize = 120;

/// How long a window may take to settle after a scroll, and to draw its
/// next frame while it draws on.
const STILL_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Wheel clicks scroll this many points each (as the compositor sends them).
const WHEEL_CLICK: f64 = 15.0;

/// Rounds of wheeling towards an element before giving up.
const WHEEL_ROUNDS: usize = 8;

/// Rounds of wheeling a page at a time towards an element not laid out.
const PAGE_ROUNDS: usize = 64;

/// Wheel clicks to move `delta` points in a viewport `extent` long:
/// toolkits scroll about extent^(2/3) per click (GTK's step).
fn clicks(delta: f64, extent: i32) -> f64 {
    let step = (extent.max(1) as f64).powf(2.0 / 3.0);
    let n = (delta / step).round();
    if n == 0.0 && delta != 0.0 {
        delta.signum()
    } else {
        n.clamp(-40.0, 40.0)
    }
}

/// Whether an element without bounds comes after the nearest sibling that
/// has them (so lies further down its list), `None` when no sibling has.
fn follows_laid_out(tree: &Tree, node: &Node) -> Option<bool> {
    let siblings = &tree.node(node.parent?)?.children;
    let at = siblings.iter().position(|c| *c == node.id)?;
    let laid_out = |i: &usize| {
        tree.node(siblings[*i])
            .is_some_and(|n| n.bounds.is_some_and(|b| !b.is_empty()))
    };
    let before = (0..at).rev().find(laid_out);
    let after = (at + 1..siblings.len()).find(laid_out);
    match (before, after) {
        (Some(b), Some(a)) => Some(at - b <= a - at),
        (Some(_), None) => Some(true),
        (None, Some(_)) => Some(false),
        (None, None) => None,
    }
}

/// The element's bounds where its centre shows: inside the window's content
/// (or on an open popover's popup, past its edges too) and inside the
/// scrolled views around it (a row scrolled out of its list has bounds over
/// whatever lies beside the list).
pub(in crate::session) fn in_view(tree: &Tree, node: &Node) -> Option<Rect> {
    let b = node
        .bounds
        .filter(|b| shows_in(*b, &tree.window) || shows_on_popup(tree, node))?;
    let (x, y) = centre(b);
    clipping_views(node, |id| tree.node(id))
        .iter()
        .all(|view| view.contains_point(x, y))
        .then_some(b)
}

/// The element's centre lies inside the window's content.
fn shows_in(b: Rect, window: &WindowInfo) -> bool {
    let (x, y) = centre(b);
    Rect::new(0, 0, window.content.width, window.content.height).contains_point(x, y)
}

pub(in crate::session) fn centre(r: Rect) -> (f64, f64) {
    (
        r.x as f64 + r.width as f64 / 2.0,
        r.y as f64 + r.height as f64 / 2.0,
    )
}

/// The target's element in a read made since, while it is the same element:
/// one of another role, or named otherwise once it had a name, is an object
/// its app gave another item as it scrolled (GTK 4's list rows are reused),
/// and a click there would land on that item.
fn found_again<'t>(target: &Target<'_>, tree: &'t Tree) -> Result<&'t Node, Error> {
    let then = target.node;
    let now = tree
        .node(then.id)
        .ok_or_else(|| Error::NoElement(then.id.to_string()))?;
    if now.role != then.role || (!then.name.is_empty() && now.name != then.name) {
        return Err(Error::StaleElement(format!(
            "element {} ({:?} {:?}) shows as {:?} {:?} once scrolled to: its app gave it \
             to another item; read the tree again",
            then.id, then.role, then.name, now.role, now.name
        )));
    }
    Ok(now)
}

impl Session {
    /// Wheel the element's viewport (its nearest ancestor lying wholly in the
    /// window) towards it until it shows, reading where it went each time;
    /// answers the element and its bounds as it shows. An element the list has not laid
    /// out yet (no bounds) is wheeled towards a page at a time, on the side
    /// of the laid-out siblings it follows or precedes, until it is.
    pub(super) async fn scroll_by_wheel(
        &self,
        target: &Target<'_>,
    ) -> Result<(Tree, Node, Rect), Error> {
        let id = target.node.id;
        let mut aimed = 0;
        for _ in 0..PAGE_ROUNDS {
            let tree = self.when_still(target).await?;
            let node = found_again(target, &tree)?;
            if let Some(b) = in_view(&tree, node) {
                let node = node.clone();
                return Ok((tree, node, b));
            }
            let content = Rect::new(0, 0, tree.window.content.width, tree.window.content.height);
            let mut parent = node.parent;
            let (viewport, viewport_id) = loop {
                let p = tree
                    .node(parent.ok_or_else(|| {
                        Error::Unsupported(format!("nothing scrolls element {id}"))
                    })?)
                    .ok_or_else(|| Error::NoElement(id.to_string()))?;
                match p.bounds {
                    Some(pb) if content.contains_rect(&pb) => break (pb, p.id),
                    _ => parent = p.parent,
                }
            };
            let (vx, vy) = centre(viewport);
            let (dx, dy) = match node.bounds {
                Some(b) => {
                    aimed += 1;
                    if aimed > WHEEL_ROUNDS {
                        break;
                    }
                    let (ex, ey) = centre(b);
                    (
                        clicks(ex - vx, viewport.width),
                        clicks(ey - vy, viewport.height),
                    )
                }
                None => {
                    // The element, or the row holding it (a GTK 3 tree
                    // view's text cell lies in its row's cell), beside the
                    // nearest laid-out item in the viewport.
                    let forward = std::iter::once(node)
                        .chain(tree.ancestors(node))
                        .take_while(|n| n.id != viewport_id)
                        .find_map(|n| follows_laid_out(&tree, n))
                        .ok_or_else(|| {
                            Error::Unsupported(format!(
                                "element {id} is not laid out, nor is any item beside it"
                            ))
                        })?;
                    let page = clicks(f64::from(viewport.height), viewport.height);
                    (0.0, if forward { page } else { -page })
                }
            };
            let wheel = InputEvent::Wheel {
                x: vx,
                y: vy,
                dx: dx * WHEEL_CLICK,
                dy: dy * WHEEL_CLICK,
                precise: false,
                mods: Mods::default(),
            };
            // The next round reads it once the scroll is still.
            self.deliver(target, vec![wheel]).await?;
        }
        Err(Error::Unsupported(format!(
            "element {id} did not come into view"
        )))
    }

    /// Bring `node` of the window's read `tree` into view as a press would
    /// (see `bring_into_view`), by input that may raise the window.
    pub(in crate::session) async fn scroll_for_click(
        &self,
        tree: &Tree,
        node: &Node,
    ) -> Result<(), Error> {
        let target = Target {
            window: tree.window.handle,
            tree,
            node,
            ifaces: self.interfaces_of(node.id)?,
            delivery: &Delivered::default(),
        };
        self.bring_into_view(&target, tree).await.map(|_| ())
    }

    /// Scroll an element into view; an item whose list has the focus on
    /// another item is reached with the arrow keys instead (the list keeps
    /// its focused row in view against the wheel), scrolling as it goes.
    /// Answers the read it shows in, the element as read there, and where.
    pub(super) async fn bring_into_view(
        &self,
        target: &Target<'_>,
        tree: &Tree,
    ) -> Result<(Tree, Node, Rect), Error> {
        if target.node.role.is_item() && self.focus_by_arrows(target, tree).await?.is_some() {
            let tree = self.when_still(target).await?;
            let node = found_again(target, &tree)?;
            if let Some(b) = in_view(&tree, node) {
                let node = node.clone();
                return Ok((tree, node, b));
            }
        }
        // An element with no place (a web page's that does not show: its
        // browser gives none) gives the wheel nothing to aim at: its app is
        // asked to scroll to it first, where it can.
        if target.node.bounds.is_none()
            && target.ifaces.component
            && matches!(self.a11y()?.scroll_to(target.node.id).await, Ok(true))
        {
            let tree = self.when_still(target).await?;
            let node = found_again(target, &tree)?;
            if let Some(b) = in_view(&tree, node) {
                let node = node.clone();
                return Ok((tree, node, b));
            }
        }
        self.scroll_by_wheel(target).await
    }

    /// The window's tree once the element stops moving (GTK animates a
    /// list's scroll to its focused row, and its wheel scrolls): once the
    /// window settles, or, in a window that draws on (a spinner elsewhere),
    /// once two reads a frame apart agree on where the element is.
    pub(super) async fn when_still(&self, target: &Target<'_>) -> Result<Tree, Error> {
        let window = target.window;
        match self.host.settle(window, STILL_LIMIT).await {
            Ok(_) => return self.tree(window).await,
            Err(HostError::Timeout(..) | HostError::Unsupported(..)) => {}
            Err(e) => return Err(e.into()),
        }
        let id = target.node.id;
        let place = |tree: &Tree| tree.node(id).map(|n| n.bounds);
        // Counted before each read: a frame committed during it is the next.
        let mut commits = self.host.commits(window).await?;
        let mut last = self.tree(window).await?;
        for _ in 0..STILL_FRAMES {
            match self
                .host
                .wait_frames(window, FrameWait::Past(commits), STILL_LIMIT)
                .await
            {
                Ok(_) => {}
                Err(HostError::Timeout(..)) => break,
                Err(e) => return Err(e.into()),
            }
            commits = self.host.commits(window).await?;
            let now = self.tree(window).await?;
            if place(&now) == place(&last) {
                return Ok(now);
            }
            last = now;
        }
        Ok(last)
    }

    pub(super) async fn click(&self, target: &Target<'_>, bounds: Rect) -> Result<Path, Error> {
        self.click_with(target, bounds, Button::Left).await
    }

    pub(super) async fn click_with(
        &self,
        target: &Target<'_>,
        bounds: Rect,
        button: Button,
    ) -> Result<Path, Error> {
        let (x, y) = centre(bounds);
        self.click_at(target, x, y, button).await
    }

    /// Click at `(x, y)`, once checked to land on the target.
    pub(super) async fn click_at(
        &self,
        target: &Target<'_>,
        x: f64,
        y: f64,
        button: Button,
    ) -> Result<Path, Error> {
        self.check_hit(target.tree, target.node, x, y).await?;
        let click = InputEvent::Click {
            x,
            y,
            button,
            clicks: 1,
            mods: Mods::default(),
        };
        self.deliver(target, vec![click]).await?;
        Ok(Path::Pointer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Interfaces;
    use crate::model::Role;
    use crate::session::elements::tests::{node, tree_of};

    fn at(mut n: Node, x: i32, y: i32, w: i32, h: i32) -> Node {
        n.bounds = Some(Rect::new(x, y, w, h));
        n
    }

    #[test]
    fn a_row_scrolled_out_of_its_list_is_not_clicked_over_its_neighbours() {
        let tree = tree_of(vec![
            at(node(1, None, Role::Window, "Main"), 0, 0, 200, 100),
            at(node(2, Some(1), Role::TextArea, "Notes"), 0, 0, 200, 30),
            at(node(3, Some(1), Role::ScrollView, ""), 0, 30, 200, 70),
            at(node(4, Some(3), Role::List, ""), 0, -400, 200, 6000),
            // Scrolled up past the list's top: it lies over the notes.
            at(node(5, Some(4), Role::ListItem, "row 1"), 0, 10, 200, 20),
            at(node(6, Some(4), Role::ListItem, "row 4"), 0, 60, 200, 20),
            // A popover opened from the list is measured apart.
            at(node(7, Some(4), Role::Menu, ""), 0, 0, 100, 40),
            at(node(8, Some(7), Role::MenuItem, "Copy"), 0, 5, 100, 20),
        ]);
        let shown = |id| in_view(&tree, tree.node(id).unwrap());
        assert_eq!(shown(5), None, "row 1 is clipped by the list");
        assert_eq!(shown(6), Some(Rect::new(0, 60, 200, 20)));
        assert_eq!(shown(8), Some(Rect::new(0, 5, 100, 20)));
    }

    #[test]
    fn a_row_its_app_gave_another_item_as_it_scrolled_is_stale() {
        let list = |row: Node| {
            tree_of(vec![
                at(node(1, None, Role::Window, "Main"), 0, 0, 200, 100),
                at(node(2, Some(1), Role::List, ""), 0, 0, 200, 100),
                row,
            ])
        };
        let read = list(node(3, Some(2), Role::ListItem, "Apples"));
        let target = Target {
            window: read.window.handle,
            tree: &read,
            node: read.node(3).unwrap(),
            ifaces: Interfaces::default(),
            delivery: &Delivered::default(),
        };
        let same = list(at(
            node(3, Some(2), Role::ListItem, "Apples"),
            0,
            40,
            200,
            20,
        ));
        assert_eq!(
            found_again(&target, &same).map(|n| n.bounds),
            Ok(same.node(3).unwrap().bounds)
        );
        let reused = list(at(
            node(3, Some(2), Role::ListItem, "Pears"),
            0,
            40,
            200,
            20,
        ));
        let stale = found_again(&target, &reused);
        assert!(
            matches!(&stale, Err(Error::StaleElement(why)) if why.contains("\"Pears\"")),
            "{stale:?}"
        );
        let gone = list(at(
            node(4, Some(2), Role::ListItem, "Apples"),
            0,
            40,
            200,
            20,
        ));
        assert!(matches!(
            found_again(&target, &gone),
            Err(Error::NoElement(_))
        ));
    }
}
