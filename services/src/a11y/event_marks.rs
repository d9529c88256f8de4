//! What accessibility events say changed since a read: objects that moved,
//! objects whose cache item (state, name) went stale, objects whose children
//! came or went, apps whose tree changed shape.

use std::collections::HashMap;

use zbus::message::Sequence;

/// What one event means for what a read keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// The object, and everything inside it, may be somewhere else.
    Moved,
    /// What is read per node (text, caret, value) changed; the app's cache
    /// items did not.
    Facts,
    /// The object's cache item (its states, name or description) is stale.
    Restated,
    /// Objects came into the object or left it: the app's whole cache must
    /// be read again, or a walked tree walked again below the object.
    ChildrenChanged,
    /// Objects changed parent or role, a document loaded, or what changed
    /// is not known: the app's whole cache must be read again, or its whole
    /// tree walked.
    Reshaped,
}

/// What an event of `member` (its interface's signal name) with `kind` (an
/// object event's first field) means. What is not known reshapes, the safe side.
pub(crate) fn meaning(member: &str, kind: &str) -> Meaning {
    match member {
        "BoundsChanged" => Meaning::Moved,
        "TextCaretMoved"
        | "TextSelectionChanged"
        | "TextAttributesChanged"
        | "ActiveDescendantChanged"
        | "Announcement"
        | "Focus" => Meaning::Facts,
        "PropertyChange" => match kind {
            "accessible-value" => Meaning::Facts,
            "accessible-name" | "accessible-description" => Meaning::Restated,
            _ => Meaning::Reshaped,
        },
        // A label's name follows its text in GTK 4.
        "StateChanged" | "TextChanged" | "VisibleDataChanged" => Meaning::Restated,
        "ChildrenChanged" => Meaning::ChildrenChanged,
        _ => Meaning::Reshaped,
    }
}

/// Where the events were marked, kept by the event task and read by reads.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// The change count of the last event that moved each object.
    moved: HashMap<u64, u64>,
    /// Where on the connection the last event restating each object arrived.
    restated: HashMap<u64, Sequence>,
    /// Where the last event reshaping each app (by bus name) arrived, its
    /// objects' children changing included.
    reshaped: HashMap<String, Sequence>,
    /// Where the last event reshaping each app other than by an object's
    /// children changing arrived.
    reshaped_otherwise: HashMap<String, Sequence>,
    /// Per app, where the last event changing each object's children arrived.
    children_changed: HashMap<String, HashMap<u64, Sequence>>,
}

impl Marks {
    /// Mark an event from `sender` about node `id`, counted `count`, that
    /// arrived at `position`.
    pub(crate) fn mark(
        &mut self,
        meaning: Meaning,
        sender: &str,
        id: u64,
        count: u64,
        position: Sequence,
    ) {
        match meaning {
            Meaning::Moved => {
                self.moved.insert(id, count);
            }
            Meaning::Facts => {}
            Meaning::Restated => {
                self.restated.insert(id, position);
            }
            Meaning::ChildrenChanged => {
                self.reshaped.insert(sender.to_string(), position);
                self.children_changed
                    .entry(sender.to_string())
                    .or_default()
                    .insert(id, position);
            }
            Meaning::Reshaped => {
                self.reshaped.insert(sender.to_string(), position);
                self.reshaped_otherwise.insert(sender.to_string(), position);
            }
        }
    }

    /// The objects an event moved after change count `since`.
    pub(crate) fn moved_since(&self, since: u64) -> std::collections::HashSet<u64> {
        self.moved
            .iter()
            .filter(|(_, &at)| at > since)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Whether an event moved the object after change count `since`.
    pub(crate) fn moved_after(&self, id: u64, since: u64) -> bool {
        self.moved.get(&id).is_some_and(|&at| at > since)
    }

    /// Whether the app's tree changed shape after `position`.
    pub(crate) fn reshaped_after(&self, app: &str, position: Sequence) -> bool {
        self.reshaped.get(app).is_some_and(|&at| at > position)
    }

    /// The objects of `app` whose children changed after `position`, when
    /// nothing else reshaped it since (else `None`: walk it whole). Marks at
    /// or before `position` are forgotten: no read looks before it again.
    pub(crate) fn children_changed_after(
        &mut self,
        app: &str,
        position: Sequence,
    ) -> Option<Vec<u64>> {
        let changed = self.children_changed.get_mut(app);
        let ids = changed.map_or(Vec::new(), |changed| {
            changed.retain(|_, at| *at > position);
            changed.keys().copied().collect()
        });
        let otherwise = self
            .reshaped_otherwise
            .get(app)
            .is_some_and(|&at| at > position);
        (!otherwise).then_some(ids)
    }

    /// Which of `ids` were restated after `position`.
    pub(crate) fn restated_after(
        &self,
        ids: impl Iterator<Item = u64>,
        position: Sequence,
    ) -> Vec<u64> {
        ids.filter(|id| self.restated.get(id).is_some_and(|&at| at > position))
            .collect()
    }

    /// Forget the apps that left the bus: all but `apps` (by bus name).
    pub(crate) fn forget_all_but(&mut self, apps: &[&str]) {
        self.reshaped.retain(|app, _| apps.contains(&app.as_str()));
        self.reshaped_otherwise
            .retain(|app, _| apps.contains(&app.as_str()));
        self.children_changed
            .retain(|app, _| apps.contains(&app.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_and_caret_keep_the_cache_while_state_and_children_do_not() {
        assert_eq!(meaning("BoundsChanged", ""), Meaning::Moved);
        assert_eq!(meaning("TextCaretMoved", ""), Meaning::Facts);
        assert_eq!(
            meaning("PropertyChange", "accessible-value"),
            Meaning::Facts
        );
        assert_eq!(meaning("StateChanged", "checked"), Meaning::Restated);
        assert_eq!(
            meaning("PropertyChange", "accessible-name"),
            Meaning::Restated
        );
        assert_eq!(meaning("TextChanged", "insert"), Meaning::Restated);
        assert_eq!(meaning("ChildrenChanged", "add"), Meaning::ChildrenChanged);
        assert_eq!(meaning("LoadComplete", ""), Meaning::Reshaped);
        assert_eq!(meaning("AddAccessible", ""), Meaning::Reshaped);
        assert_eq!(
            meaning("PropertyChange", "accessible-parent"),
            Meaning::Reshaped
        );
        assert_eq!(meaning("SomethingNew", ""), Meaning::Reshaped);
    }
}
