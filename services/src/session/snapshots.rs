//! Snapshots: every read can be named, and the session keeps a bounded history
//! per window, so an element named through an older read acts only while it
//! shows unchanged.

use std::collections::{HashMap, VecDeque};

use wayrig_host::{WindowHandle, WindowInfo};

use super::elements::{pre_order, Element, ReadOptions};
use super::Session;
use crate::model::{Error, Node, Tree};

/// Reads kept per window; older ones are forgotten.
const KEPT_PER_WINDOW: usize = 16;

/// A named read of a window's elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub id: String,
    pub window: WindowInfo,
    /// Pre-order, as the read's options kept them.
    pub elements: Vec<Element>,
    /// `max_depth` or `max_nodes` cut the read short.
    pub truncated: bool,
}

/// The kept reads of every window.
#[derive(Default)]
pub(crate) struct History {
    next: u64,
    kept: HashMap<WindowHandle, VecDeque<(String, Tree)>>,
}

impl History {
    fn record(&mut self, tree: Tree) -> String {
        self.next += 1;
        let id = format!("s{}", self.next);
        let reads = self.kept.entry(tree.window.handle).or_default();
        if reads.len() == KEPT_PER_WINDOW {
            reads.pop_front();
        }
        reads.push_back((id.clone(), tree));
        id
    }

    fn find(&self, id: &str) -> Option<&Tree> {
        self.kept
            .values()
            .flat_map(|reads| reads.iter())
            .find(|(kept, _)| kept == id)
            .map(|(_, tree)| tree)
    }

    /// The newest kept read that holds element `id`.
    fn newest_holding(&self, id: u64) -> Option<&str> {
        let number = |name: &str| name[1..].parse::<u64>().unwrap_or(0);
        self.kept
            .values()
            .flat_map(|reads| reads.iter())
            .filter(|(_, tree)| tree.node(id).is_some())
            .max_by_key(|(name, _)| number(name))
            .map(|(name, _)| name.as_str())
    }

    fn forget_closed(&mut self, open: &[WindowInfo]) {
        self.kept
            .retain(|handle, _| open.iter().any(|w| w.handle == *handle));
    }
}

/// An element shows unchanged when what a person sees of it is the same:
/// role, name, value, states, bounds.
fn shows_unchanged(then: &Node, now: &Node) -> bool {
    then.role == now.role
        && then.name == now.name
        && then.value == now.value
        && then.states == now.states
        && then.bounds == now.bounds
}

/// The element `id` of an older read, as it is now, if it shows unchanged.
pub(crate) fn still_shown<'t>(then: &Tree, now: &'t Tree, id: u64) -> Result<&'t Node, Error> {
    let was = then
        .node(id)
        .ok_or_else(|| Error::NoElement(format!("{id} in that snapshot")))?;
    match now.node(id) {
        Some(is) if shows_unchanged(was, is) => Ok(is),
        Some(_) => Err(Error::StaleElement(format!(
            "element {id} changed since the snapshot was read; read the tree again"
        ))),
        None => Err(Error::StaleElement(format!(
            "element {id} is gone since the snapshot was read; read the tree again"
        ))),
    }
}

impl Session {
    /// Read a window's elements in pre-order and name the read.
    pub async fn snapshot(
        &self,
        window: WindowHandle,
        options: &ReadOptions,
    ) -> Result<Snapshot, Error> {
        let tree = self.tree(window).await?;
        let (elements, truncated) = pre_order(&tree, options);
        let info = tree.window.clone();
        let mut history = self.snapshots.lock().unwrap();
        history.forget_closed(&self.windows.now());
        let id = history.record(tree);
        Ok(Snapshot {
            id,
            window: info,
            elements,
            truncated,
        })
    }

    /// The window a kept snapshot read; an unknown or forgotten id is stale.
    pub fn snapshot_window(&self, id: &str) -> Result<WindowHandle, Error> {
        Ok(self.snapshot_tree(id)?.window.handle)
    }

    /// The newest kept snapshot that read element `id`: what a client that
    /// names no snapshot means ("the latest"). The element still acts only
    /// if it shows unchanged since.
    pub fn newest_snapshot_of(&self, id: u64) -> Result<String, Error> {
        self.snapshots
            .lock()
            .unwrap()
            .newest_holding(id)
            .map(str::to_string)
            .ok_or_else(|| {
                Error::StaleElement(format!(
                    "no kept snapshot holds element {id}; read the tree again"
                ))
            })
    }

    /// The tree a snapshot read, if it is still kept.
    pub(crate) fn snapshot_tree(&self, id: &str) -> Result<Tree, Error> {
        self.snapshots
            .lock()
            .unwrap()
            .find(id)
            .cloned()
            .ok_or_else(|| {
                Error::StaleElement(format!(
                    "snapshot {id:?} is unknown or expired; read the tree again"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::session::elements::tests::{node, tree_of};
    use wayrig_host::Rect;

    fn tree() -> Tree {
        tree_of(vec![
            node(1, None, Role::Window, "Main"),
            node(2, Some(1), Role::Button, "Add"),
            node(3, Some(1), Role::CheckBox, "Bold"),
        ])
    }

    #[test]
    fn an_element_that_shows_unchanged_acts_through_an_older_snapshot() {
        let then = tree();
        let mut now = tree();
        // Another element changed: this one did not.
        now.nodes[2].states.checked = true;
        assert_eq!(still_shown(&then, &now, 2).unwrap().id, 2);
    }

    #[test]
    fn an_element_that_moved_changed_or_went_is_stale() {
        let then = tree();
        let mut now = tree();
        now.nodes[1].bounds = Some(Rect::new(5, 5, 10, 10));
        assert!(matches!(
            still_shown(&then, &now, 2),
            Err(Error::StaleElement(_))
        ));
        now.nodes[2].states.checked = true;
        assert!(matches!(
            still_shown(&then, &now, 3),
            Err(Error::StaleElement(_))
        ));
        now.nodes.truncate(1);
        assert!(matches!(
            still_shown(&then, &now, 2),
            Err(Error::StaleElement(_))
        ));
        assert!(matches!(
            still_shown(&then, &now, 99),
            Err(Error::NoElement(_))
        ));
    }

    #[test]
    fn the_history_keeps_a_bounded_number_of_reads_per_window() {
        let mut history = History::default();
        let first = history.record(tree());
        for _ in 0..KEPT_PER_WINDOW {
            history.record(tree());
        }
        assert!(
            history.find(&first).is_none(),
            "the oldest read is forgotten"
        );
        let last = history.record(tree());
        assert!(history.find(&last).is_some());
        assert_eq!(history.newest_holding(2), Some(last.as_str()));
        assert_eq!(history.newest_holding(99), None);
        history.forget_closed(&[]);
        assert!(history.find(&last).is_none(), "closed windows' reads go");
    }
}
