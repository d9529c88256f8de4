//! Elements: one query layer for every face (role, names, values, states,
//! label, placeholder or the words beside it, keys), with its ambiguity rule,
//! and pre-order reads that leave out layout-only containers and, when
//! asked, hidden elements.

use wayrig_host::WindowHandle;

use super::Session;
use crate::model::{is_class_name, Error, Node, Role, Tree};

/// What an element must be; every field set must hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The element's id, as reads give it.
    pub id: Option<u64>,
    /// The model's role.
    pub role: Option<Role>,
    /// The toolkit's own role name, in any case ("push button").
    pub native_role: Option<String>,
    /// The whole name, case and all.
    pub name: Option<String>,
    /// A case-insensitive substring of the name.
    pub name_contains: Option<String>,
    /// A case-insensitive substring of the value.
    pub value_contains: Option<String>,
    /// A case-insensitive substring of the name or of the value: text the
    /// element shows, whichever it shows it as.
    pub text_contains: Option<String>,
    /// The app's own name for the element.
    pub key: Option<String>,
    /// The whole label, else (when no element has it) the whole placeholder,
    /// else the words a control without a label is read by (the label
    /// beside it, its tooltip).
    pub label: Option<String>,
    /// A case-insensitive substring of the label as faces report it
    /// (`Node::shown_label`), matched element by element.
    pub shown_label_contains: Option<String>,
    /// The whole label as faces report it, case and all.
    pub shown_label_is: Option<String>,
    /// States that must hold.
    pub states: Vec<StateFlag>,
    /// Hidden elements (offscreen, unsized, outside the window) may match.
    pub include_hidden: bool,
}

/// The value an element shows: a field's text, else a slider's or a
/// spinner's number.
fn shown_value(n: &Node) -> Option<String> {
    n.value
        .clone()
        .or_else(|| n.range.as_ref().map(|r| r.now.to_string()))
}

/// A state a query can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFlag {
    Focusable,
    Focused,
    Enabled,
    Disabled,
    Checkable,
    Checked,
    Mixed,
    Selectable,
    Selected,
    Expandable,
    Expanded,
    Editable,
    ReadOnly,
    Multiline,
    Pressed,
    Offscreen,
}

impl StateFlag {
    fn holds(self, n: &Node) -> bool {
        let s = &n.states;
        match self {
            StateFlag::Focusable => s.focusable,
            StateFlag::Focused => s.focused,
            StateFlag::Enabled => !s.disabled,
            StateFlag::Disabled => s.disabled,
            StateFlag::Checkable => n.checked().is_some(),
            StateFlag::Checked => n.checked() == Some(crate::model::Checked::True),
            StateFlag::Mixed => n.checked() == Some(crate::model::Checked::Mixed),
            StateFlag::Selectable => s.selectable,
            StateFlag::Selected => s.selected,
            StateFlag::Expandable => s.expandable,
            StateFlag::Expanded => s.expanded,
            StateFlag::Editable => s.editable,
            StateFlag::ReadOnly => s.read_only,
            StateFlag::Multiline => s.multiline,
            StateFlag::Pressed => s.pressed,
            StateFlag::Offscreen => is_hidden(n),
        }
    }
}

/// How to read a window's elements.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOptions {
    /// Levels below the root; `None` for all.
    pub max_depth: Option<u32>,
    /// Elements at most; `None` for all.
    pub max_nodes: Option<usize>,
    pub include_hidden: bool,
    /// Leave out containers that only lay others out (unnamed panels and
    /// groups); their children hang from the nearest element kept.
    pub prune_layout: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_depth: None,
            max_nodes: None,
            include_hidden: true,
            prune_layout: true,
        }
    }
}

/// One element of a pre-order read.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub node: Node,
    /// The nearest ancestor kept in the read; `None` for the root.
    pub parent: Option<u64>,
    /// Kept ancestors above it; the root is 0.
    pub depth: u32,
}

/// What can be done to an element, by what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Press,
    Focus,
    SetValue,
    InsertText,
    SelectText,
    Increment,
    Decrement,
    Expand,
    Collapse,
}

/// The actions an element offers now: pressing controls, focusing what
/// takes focus and shows, editing text fields, stepping ranges, expanding
/// what expands; nothing while something else covers it.
pub fn offered(n: &Node) -> Vec<Offered> {
    let mut actions = Vec::new();
    if n.states.concealed {
        return actions;
    }
    // A named menu is a menu bar's or a menu's item that opens a submenu
    // (GTK 3); GTK 4's popover menus are containers named after their class.
    let opens_menu = n.role == Role::Menu && !n.name.is_empty() && !is_class_name(&n.name);
    if is_pressable(n.role) || opens_menu || is_selectable_cell(n) {
        actions.push(Offered::Press);
    }
    if n.states.focusable && !n.states.offscreen {
        actions.push(Offered::Focus);
    }
    match n.role {
        Role::TextInput | Role::PasswordInput | Role::TextArea | Role::SearchInput => {
            actions.extend([Offered::SetValue, Offered::InsertText, Offered::SelectText])
        }
        Role::Slider | Role::SpinButton => {
            actions.extend([Offered::SetValue, Offered::Increment, Offered::Decrement])
        }
        _ => {}
    }
    if n.states.expandable {
        actions.extend([Offered::Expand, Offered::Collapse]);
    }
    actions
}

/// A cell or row of a table or tree a click selects (a GTK 3 tree view's
/// rows are their cells): pressed as a person selects it, with a click.
pub(crate) fn is_selectable_cell(n: &Node) -> bool {
    matches!(n.role, Role::Cell | Role::Row) && n.states.selectable
}

/// The list or tree item a press on `n` means, when `n` is a group that is
/// the item's whole content and holds no control: gtk4-demo's sidebar rows
/// hold a tree expander (a group offering only focus, read by its text),
/// and a person pressing that text selects the row.
pub(crate) fn item_shown_by<'t>(tree: &'t Tree, n: &Node) -> Option<&'t Node> {
    if !matches!(n.role, Role::Group | Role::Panel) || is_control(n) {
        return None;
    }
    let item = tree.node(n.parent?)?;
    let whole = matches!(item.role, Role::ListItem | Role::TreeItem) && item.children == [n.id];
    let holds_a_control = tree.descendants(n).any(is_control);
    (whole && !holds_a_control).then_some(item)
}

fn is_pressable(role: Role) -> bool {
    matches!(
        role,
        Role::Button
            | Role::ToggleButton
            | Role::CheckBox
            | Role::RadioButton
            | Role::Switch
            | Role::MenuButton
            | Role::ComboBox
            | Role::PopUpButton
            | Role::Disclosure
            | Role::Link
            | Role::MenuItem
            | Role::CheckMenuItem
            | Role::RadioMenuItem
            | Role::Tab
            | Role::ListItem
            | Role::TreeItem
    )
}

/// Among several elements found, keep the controls when any is one: text
/// that repeats a control's name (its label, a result line showing "=") is
/// not what a person means by that name.
pub fn prefer_controls(found: &mut Vec<&Node>) {
    if found.len() > 1 && found.iter().any(|n| is_control(n)) {
        found.retain(|n| is_control(n));
    }
}

/// A control, as opposed to text that may repeat a control's name (its
/// tooltip, the label beside it).
pub(crate) fn is_control(n: &Node) -> bool {
    is_pressable(n.role)
        || matches!(
            n.role,
            Role::TextInput
                | Role::PasswordInput
                | Role::TextArea
                | Role::SearchInput
                | Role::SpinButton
                | Role::Slider
                | Role::ScrollBar
        )
}

/// Not shown: offscreen as the session marks what it reads (on a hidden
/// page, wholly outside the window and the popups it shows, scrolled away),
/// or without a size.
pub fn is_hidden(n: &Node) -> bool {
    n.states.offscreen || n.bounds.is_none_or(|b| b.is_empty())
}

impl Query {
    /// An element by the app's own name for it.
    pub fn key(key: impl Into<String>) -> Self {
        Query {
            key: Some(key.into()),
            include_hidden: true,
            ..Query::default()
        }
    }

    /// What the query asks, for messages.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(id) = self.id {
            parts.push(format!("id {id}"));
        }
        if let Some(r) = self.role {
            parts.push(format!("role {r:?}"));
        }
        for (what, v) in [
            ("native role", &self.native_role),
            ("name", &self.name),
            ("name containing", &self.name_contains),
            ("value containing", &self.value_contains),
            ("text containing", &self.text_contains),
            ("key", &self.key),
            ("label or placeholder", &self.label),
        ] {
            if let Some(v) = v {
                parts.push(format!("{what} {v:?}"));
            }
        }
        if !self.states.is_empty() {
            parts.push(format!("states {:?}", self.states));
        }
        if parts.is_empty() {
            "any element".into()
        } else {
            parts.join(", ")
        }
    }

    /// Whether the element matches all the query asks but `label`, which
    /// is weighed against the whole tree (see `find`).
    pub fn matches_besides_label(&self, n: &Node) -> bool {
        let contains =
            |hay: &str, needle: &str| hay.to_lowercase().contains(&needle.to_lowercase());
        self.id.is_none_or(|id| n.id == id)
            && self.role.is_none_or(|r| n.role == r)
            && self
                .native_role
                .as_deref()
                .is_none_or(|r| n.native_role.eq_ignore_ascii_case(r))
            && self.name.as_deref().is_none_or(|x| n.name == x)
            && self
                .name_contains
                .as_deref()
                .is_none_or(|x| contains(&n.name, x))
            && self
                .value_contains
                .as_deref()
                .is_none_or(|x| shown_value(n).is_some_and(|v| contains(&v, x)))
            // The window's title names its root: a title is not content.
            && self.text_contains.as_deref().is_none_or(|x| {
                n.parent.is_some()
                    && (contains(&n.name, x) || shown_value(n).is_some_and(|v| contains(&v, x)))
            })
            && self
                .key
                .as_deref()
                .is_none_or(|k| n.key.as_deref() == Some(k))
            && self
                .shown_label_contains
                .as_deref()
                .is_none_or(|x| contains(n.shown_label().unwrap_or(""), x))
            && self
                .shown_label_is
                .as_deref()
                .is_none_or(|x| n.shown_label().unwrap_or("") == x)
            && self.states.iter().all(|s| s.holds(n))
            && (self.include_hidden || !is_hidden(n))
    }

    /// Every element of the tree the query matches, in tree order.
    pub fn find<'t>(&self, tree: &'t Tree) -> Vec<&'t Node> {
        let candidates = tree.nodes.iter().filter(|n| self.matches_besides_label(n));
        let Some(label) = self.label.as_deref() else {
            return candidates.collect();
        };
        let candidates: Vec<&Node> = candidates.collect();
        // Its label is its name, or for a control the app names by nothing,
        // what a person reads for it (the label beside it, its tooltip): a
        // field and the label beside it both match, and `find_one` then
        // takes the field.
        let labelled: Vec<&Node> = candidates
            .iter()
            .copied()
            .filter(|n| {
                n.name == label
                    || (n.label().is_none()
                        && n.label_fallback.as_ref().is_some_and(|f| {
                            f.text == label && f.source != crate::model::LabelSource::Placeholder
                        }))
                    // A text element named by nothing is read by its text,
                    // as the trees faces give report it.
                    || (n.read_as().is_none() && n.shown_label() == Some(label))
            })
            .collect();
        if !labelled.is_empty() {
            return labelled;
        }
        candidates
            .into_iter()
            .filter(|n| n.annotations.placeholder.as_deref() == Some(label))
            .collect()
    }

    /// The one element the query means: a control wins over text repeating
    /// its name; several still matching is `Ambiguous`, none `NoElement`.
    pub fn find_one<'t>(&self, tree: &'t Tree) -> Result<&'t Node, Error> {
        let mut found = self.find(tree);
        prefer_controls(&mut found);
        // A control that wraps another read by the same words (GTK 4's menu
        // button and its toggle) is one thing to a person: the inner acts.
        if found.len() > 1 {
            let ids: Vec<u64> = found.iter().map(|n| n.id).collect();
            let wraps = |outer: &Node| {
                ids.iter().any(|id| {
                    *id != outer.id
                        && std::iter::successors(tree.node(*id), |n| {
                            n.parent.and_then(|p| tree.node(p))
                        })
                        .any(|up| up.id == outer.id)
                })
            };
            found.retain(|n| !wraps(n));
        }
        match found.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::NoElement(format!(
                "matching {} in window {}",
                self.describe(),
                tree.window.handle
            ))),
            many => Err(Error::Ambiguous {
                what: self.describe(),
                ids: many.iter().map(|n| n.id).collect(),
            }),
        }
    }
}

/// The tree's elements in pre-order, as `options` keep them; true when
/// `max_depth` or `max_nodes` cut the read short.
pub fn pre_order(tree: &Tree, options: &ReadOptions) -> (Vec<Element>, bool) {
    let mut out = Vec::new();
    let mut truncated = false;
    let Some(root) = tree.nodes.first() else {
        return (out, truncated);
    };
    let by_id: std::collections::HashMap<u64, &Node> =
        tree.nodes.iter().map(|n| (n.id, n)).collect();
    // (node, nearest kept ancestor, its depth + 1)
    let mut stack: Vec<(&Node, Option<u64>, u32)> = vec![(root, None, 0)];
    let mut seen = std::collections::HashSet::new();
    while let Some((n, parent, depth)) = stack.pop() {
        if !seen.insert(n.id) {
            continue;
        }
        let is_root = n.id == root.id;
        // A hidden element is left out, not its subtree: a container the
        // toolkit gives no bounds (a stack page) holds elements that show.
        let left_out =
            (!options.include_hidden && is_hidden(n)) || (options.prune_layout && n.is_layout());
        let kept = is_root || !left_out;
        let (child_parent, child_depth) = if kept {
            if options.max_depth.is_some_and(|m| depth > m) {
                truncated = true;
                continue;
            }
            if options.max_nodes.is_some_and(|m| out.len() >= m) {
                truncated = true;
                break;
            }
            out.push(Element {
                node: n.clone(),
                parent,
                depth,
            });
            (Some(n.id), depth + 1)
        } else {
            (parent, depth)
        };
        for c in n.children.iter().rev() {
            if let Some(child) = by_id.get(c) {
                stack.push((child, child_parent, child_depth));
            }
        }
    }
    (out, truncated)
}

impl Session {
    /// Every element of the window matching the query, in tree order.
    pub async fn find(&self, window: WindowHandle, query: &Query) -> Result<Vec<Node>, Error> {
        let tree = self.tree(window).await?;
        Ok(query.find(&tree).into_iter().cloned().collect())
    }

    /// The one element of the window the query means.
    pub async fn find_one(&self, window: WindowHandle, query: &Query) -> Result<Node, Error> {
        let tree = self.tree(window).await?;
        query.find_one(&tree).cloned()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wayrig_host::{Rect, WindowInfo, WindowKind};

    pub(crate) use crate::session::fake_access::node;

    /// A tree from nodes given parent first; children lists are filled in.
    pub(crate) fn tree_of(mut nodes: Vec<Node>) -> Tree {
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent {
                let id = nodes[i].id;
                if let Some(parent) = nodes.iter_mut().find(|n| n.id == p) {
                    parent.children.push(id);
                }
            }
        }
        Tree {
            window: WindowInfo {
                handle: WindowHandle { id: 1, epoch: 1 },
                title: "Main".into(),
                app_id: String::new(),
                pid: Some(1),
                kind: WindowKind::Normal,
                parent: None,
                frame: Rect::new(0, 0, 200, 100),
                surface: Rect::new(0, 0, 200, 100),
                content: Rect::new(0, 0, 200, 100),
                maximized: false,
                fullscreen: false,
                configuring: false,
                minimized: false,
                focused: true,
                on_screen: true,
                z: 0,
                scale: 1.0,
            },
            nodes,
        }
    }

    fn sample() -> Tree {
        let mut entry = node(5, Some(2), Role::TextInput, "");
        entry.annotations.placeholder = Some("Search".into());
        entry.value = Some("Hello World".into());
        let mut hidden = node(6, Some(2), Role::Button, "Save");
        hidden.bounds = Some(Rect::new(10, 57, 0, 0));
        let mut keyed = node(7, Some(1), Role::Button, "Add");
        keyed.key = Some("add".into());
        tree_of(vec![
            node(1, None, Role::Window, "Main"),
            node(2, Some(1), Role::Panel, ""),
            node(3, Some(2), Role::Button, "Save"),
            node(4, Some(2), Role::Label, "Save"),
            entry,
            hidden,
            keyed,
        ])
    }

    #[test]
    fn roles_follow_what_an_element_holds() {
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            node(2, Some(1), Role::ComboBox, "Size"),
            node(3, Some(1), Role::ComboBox, "Font"),
            node(4, Some(3), Role::TextInput, ""),
            node(5, Some(1), Role::Panel, "GtkScrolledWindow"),
            node(6, Some(5), Role::ScrollBar, ""),
        ]);
        crate::model::roles_by_content(&mut tree.nodes);
        let roles: Vec<Role> = tree.nodes.iter().map(|n| n.role).collect();
        let want = [
            Role::Window,
            Role::PopUpButton,
            Role::ComboBox,
            Role::TextInput,
            Role::ScrollView,
            Role::ScrollBar,
        ];
        assert_eq!(roles, want);
    }

    #[test]
    fn a_control_beats_text_that_repeats_its_name() {
        let tree = sample();
        let q = Query {
            label: Some("Save".into()),
            ..Query::default()
        };
        assert_eq!(q.find_one(&tree).unwrap().id, 3);
    }

    #[test]
    fn a_label_named_by_nothing_is_found_by_the_text_trees_report_for_it() {
        let mut status = node(2, Some(1), Role::Label, "");
        status.value = Some("Saved".into());
        let tree = tree_of(vec![node(1, None, Role::Window, "Main"), status]);
        assert_eq!(tree.node(2).unwrap().shown_label(), Some("Saved"));
        let q = Query {
            label: Some("Saved".into()),
            ..Query::default()
        };
        assert_eq!(q.find_one(&tree).map(|n| n.id), Ok(2));
    }

    #[test]
    fn text_in_the_window_title_is_not_text_the_window_shows() {
        let tree = tree_of(vec![
            node(1, None, Role::Window, "Contacts - Address book"),
            node(2, Some(1), Role::ListItem, "Addresses of friends"),
        ]);
        let q = |text: &str| Query {
            text_contains: Some(text.into()),
            ..Query::default()
        };
        let found = |text| -> Vec<u64> { q(text).find(&tree).iter().map(|n| n.id).collect() };
        assert_eq!(found("address"), [2]);
        assert!(found("contacts").is_empty());
    }

    #[test]
    fn two_controls_with_one_label_are_ambiguous_and_name_their_ids() {
        let tree = sample();
        let q = Query {
            label: Some("Save".into()),
            include_hidden: true,
            ..Query::default()
        };
        match q.find_one(&tree) {
            Err(Error::Ambiguous { ids, .. }) => assert_eq!(ids, [3, 6]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_field_named_by_the_label_beside_it_beats_that_label() {
        let mut field = node(3, Some(1), Role::TextInput, "");
        field.label_fallback = Some(crate::model::LabelFallback {
            source: crate::model::LabelSource::Beside,
            text: "Town".into(),
        });
        let tree = tree_of(vec![
            node(1, None, Role::Window, "Form"),
            node(2, Some(1), Role::Label, "Town"),
            field,
        ]);
        let q = Query {
            label: Some("Town".into()),
            ..Query::default()
        };
        assert_eq!(q.find_one(&tree).unwrap().id, 3);
    }

    #[test]
    fn a_control_wrapping_another_of_the_same_words_is_one_target() {
        let mut outer = node(2, Some(1), Role::MenuButton, "");
        outer.label_fallback = Some(crate::model::LabelFallback {
            source: crate::model::LabelSource::Content,
            text: "Mode".into(),
        });
        let tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            outer,
            node(3, Some(2), Role::ToggleButton, "Mode"),
        ]);
        let q = Query {
            label: Some("Mode".into()),
            ..Query::default()
        };
        assert_eq!(q.find_one(&tree).unwrap().id, 3);
    }

    #[test]
    fn a_label_no_element_has_falls_back_to_placeholders() {
        let tree = sample();
        let q = Query {
            label: Some("Search".into()),
            ..Query::default()
        };
        assert_eq!(q.find_one(&tree).unwrap().id, 5);
    }

    #[test]
    fn names_values_roles_and_keys_match_as_documented() {
        let tree = sample();
        let ids = |q: Query| q.find(&tree).iter().map(|n| n.id).collect::<Vec<_>>();
        assert_eq!(
            ids(Query {
                name_contains: Some("sAV".into()),
                include_hidden: true,
                ..Query::default()
            }),
            [3, 4, 6]
        );
        assert_eq!(
            ids(Query {
                value_contains: Some("world".into()),
                ..Query::default()
            }),
            [5]
        );
        assert_eq!(
            ids(Query {
                role: Some(Role::Button),
                name: Some("save".into()),
                ..Query::default()
            }),
            Vec::<u64>::new(),
            "an exact name keeps its case"
        );
        assert_eq!(ids(Query::key("add")), [7]);
        assert!(matches!(
            Query::key("gone").find_one(&tree),
            Err(Error::NoElement(_))
        ));
    }

    #[test]
    fn pre_order_hangs_children_of_layout_containers_on_the_nearest_element() {
        let tree = sample();
        let (elements, truncated) = pre_order(&tree, &ReadOptions::default());
        assert!(!truncated);
        let shape: Vec<(u64, Option<u64>, u32)> = elements
            .iter()
            .map(|e| (e.node.id, e.parent, e.depth))
            .collect();
        assert_eq!(
            shape,
            [
                (1, None, 0),
                (3, Some(1), 1),
                (4, Some(1), 1),
                (5, Some(1), 1),
                (6, Some(1), 1),
                (7, Some(1), 1)
            ]
        );
    }

    #[test]
    fn reads_leave_out_hidden_elements_and_stop_at_their_bounds() {
        let tree = sample();
        let visible = ReadOptions {
            include_hidden: false,
            ..ReadOptions::default()
        };
        let (elements, _) = pre_order(&tree, &visible);
        assert!(!elements.iter().any(|e| e.node.id == 6));
        // An unsized container is left out, and what shows inside it kept.
        let mut unsized_parent = sample();
        unsized_parent.nodes[1].bounds = None;
        unsized_parent.nodes[1].name = "Page".into();
        let (elements, _) = pre_order(&unsized_parent, &visible);
        assert!(!elements.iter().any(|e| e.node.id == 2));
        assert!(elements
            .iter()
            .any(|e| e.node.id == 3 && e.parent == Some(1)));
        let few = ReadOptions {
            max_nodes: Some(2),
            ..ReadOptions::default()
        };
        let (elements, truncated) = pre_order(&tree, &few);
        assert_eq!((elements.len(), truncated), (2, true));
        let shallow = ReadOptions {
            max_depth: Some(0),
            ..ReadOptions::default()
        };
        let (elements, truncated) = pre_order(&tree, &shallow);
        assert_eq!((elements.len(), truncated), (1, true));
    }

    #[test]
    fn actions_follow_what_an_element_is() {
        let mut field = node(1, None, Role::TextInput, "Name");
        field.states.focusable = true;
        assert_eq!(
            offered(&field),
            [
                Offered::Focus,
                Offered::SetValue,
                Offered::InsertText,
                Offered::SelectText
            ]
        );
        assert!(offered(&node(2, None, Role::Label, "Hi")).is_empty());
        let mut hidden = node(3, None, Role::Button, "Go");
        hidden.states.focusable = true;
        hidden.states.offscreen = true;
        assert_eq!(
            offered(&hidden),
            [Offered::Press],
            "no focus while not shown"
        );
        hidden.states.concealed = true;
        assert!(offered(&hidden).is_empty(), "nothing while covered");
        let mut row = node(4, None, Role::Cell, "Assistant");
        assert!(offered(&row).is_empty(), "a cell no click selects");
        row.states.selectable = true;
        assert_eq!(offered(&row), [Offered::Press], "a row a click selects");
    }

    #[test]
    fn shown_labels_are_matched_as_faces_report_them() {
        let mut text = node(2, Some(1), Role::Label, "");
        text.value = Some("Close all tabs".into());
        let mut stand_in = node(3, Some(1), Role::TextInput, "GtkText");
        stand_in.name_is_stand_in = true;
        let tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            text,
            stand_in,
            node(4, Some(1), Role::Button, "Close"),
        ]);
        let ids = |q: Query| q.find(&tree).iter().map(|n| n.id).collect::<Vec<_>>();
        let contains = |x: &str| Query {
            shown_label_contains: Some(x.into()),
            ..Query::default()
        };
        // A text element is labelled by the text it shows; case is ignored.
        assert_eq!(ids(contains("CLOSE")), [2, 4]);
        // A toolkit's class name is no label.
        assert!(ids(contains("gtk")).is_empty());
        let exactly = Query {
            shown_label_is: Some("Close".into()),
            ..Query::default()
        };
        assert_eq!(
            ids(exactly),
            [4],
            "the whole label, so not \"Close all tabs\""
        );
    }

    #[test]
    fn a_group_that_is_a_list_items_whole_content_stands_for_the_item() {
        let tree = tree_of(vec![
            node(1, None, Role::Window, "Demo"),
            node(2, Some(1), Role::List, "Demo list"),
            node(3, Some(2), Role::ListItem, ""),
            node(4, Some(3), Role::Group, "Clipboard"),
            node(5, Some(4), Role::Label, "Clipboard"),
        ]);
        let group = tree.node(4).unwrap();
        assert_eq!(item_shown_by(&tree, group).map(|n| n.id), Some(3));
        // The item itself, and what is not a group, stand for nothing else.
        assert_eq!(item_shown_by(&tree, tree.node(3).unwrap()), None);
        assert_eq!(item_shown_by(&tree, tree.node(5).unwrap()), None);
    }

    #[test]
    fn a_group_beside_others_or_holding_a_control_is_not_its_item() {
        // A row of a group and a remove button: the group is not the row.
        let beside = tree_of(vec![
            node(1, None, Role::Window, "Demo"),
            node(2, Some(1), Role::List, ""),
            node(3, Some(2), Role::ListItem, ""),
            node(4, Some(3), Role::Group, "Clipboard"),
            node(5, Some(3), Role::Button, "Remove"),
        ]);
        assert_eq!(item_shown_by(&beside, beside.node(4).unwrap()), None);
        // A row whose one group holds a check box: pressing the group
        // would press the check box, not the row.
        let holding = tree_of(vec![
            node(1, None, Role::Window, "Demo"),
            node(2, Some(1), Role::List, ""),
            node(3, Some(2), Role::ListItem, ""),
            node(4, Some(3), Role::Group, "Wi-Fi"),
            node(5, Some(4), Role::CheckBox, "Enabled"),
        ]);
        assert_eq!(item_shown_by(&holding, holding.node(4).unwrap()), None);
    }
}
