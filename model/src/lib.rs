//! The one model every face serves: windows (from the host) and their elements
//! (from accessibility), with roles, states and bounds in one vocabulary.
//!
//! Faces map these to their wire words; the AT-SPI layer maps toolkit roles to them.
//! Pure: no bus, no compositor, so a client (the agent CLI) can use it too.

pub mod reading;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use wayrig_host::{Rect, WindowInfo};

/// What an element is, across toolkits. The native role is kept beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    Window,
    Dialog,
    Alert,
    Application,
    Button,
    ToggleButton,
    CheckBox,
    RadioButton,
    Switch,
    ComboBox,
    MenuButton,
    TextInput,
    PasswordInput,
    SearchInput,
    TextArea,
    SpinButton,
    Slider,
    ProgressBar,
    ScrollBar,
    Label,
    Heading,
    Paragraph,
    Link,
    Image,
    List,
    ListItem,
    Tree,
    TreeItem,
    Table,
    Row,
    Cell,
    ColumnHeader,
    RowHeader,
    TabList,
    Tab,
    TabPanel,
    MenuBar,
    Menu,
    MenuItem,
    CheckMenuItem,
    RadioMenuItem,
    Separator,
    Toolbar,
    StatusBar,
    Tooltip,
    Group,
    Panel,
    ScrollView,
    Document,
    Canvas,
    Meter,
    Log,
    Timer,
    Article,
    Region,
    Navigation,
    Main,
    Banner,
    ContentInfo,
    Complementary,
    Search,
    Deletion,
    Insertion,
    Grid,
    TreeGrid,
    Splitter,
    /// A group of radio buttons (ARIA radiogroup).
    RadioGroup,
    /// A dialog that alerts (ARIA alertdialog, AT-SPI's alert).
    AlertDialog,
    /// A combo box that only pops up a list to choose from: no text to edit.
    PopUpButton,
    /// A button that shows or hides a section (an expander).
    Disclosure,
    Unknown,
}

impl Role {
    /// An item of a list, tree or table.
    pub fn is_item(self) -> bool {
        matches!(
            self,
            Role::ListItem | Role::TreeItem | Role::Row | Role::Cell
        )
    }
}

/// A column's or a table header's sort order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Sort {
    Ascending,
    Descending,
    Other,
}

/// States an element can be in; all false by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct States {
    pub focusable: bool,
    pub focused: bool,
    pub disabled: bool,
    /// It can be checked (a check box, a switch, a checkable menu item),
    /// whether it is now or not.
    pub checkable: bool,
    pub checked: bool,
    pub mixed: bool,
    pub selected: bool,
    pub selectable: bool,
    pub expanded: bool,
    pub expandable: bool,
    pub multiline: bool,
    pub multiselectable: bool,
    pub password: bool,
    pub read_only: bool,
    pub editable: bool,
    pub offscreen: bool,
    /// Offscreen behind what must be shown first, where no scroll reaches
    /// it: a stack's other page, an unselected tab's panel, a closed
    /// popover. Never acted on.
    pub concealed: bool,
    pub invalid: bool,
    pub busy: bool,
    pub vertical: bool,
    pub horizontal: bool,
    pub pressed: bool,
    pub sort: Option<Sort>,
}

/// A checkable element's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Checked {
    True,
    False,
    Mixed,
}

/// Where an element sits in a set, a tree or a table, as the app numbered it
/// (from 1, as ARIA's aria-level, aria-posinset, aria-rowindex and the like).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Place {
    pub level: Option<i32>,
    pub pos_in_set: Option<i32>,
    pub set_size: Option<i32>,
    pub row_count: Option<i32>,
    pub col_count: Option<i32>,
    pub row_index: Option<i32>,
    pub col_index: Option<i32>,
    pub row_span: Option<i32>,
    pub col_span: Option<i32>,
}

/// Other elements an element points at, by node id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Relations {
    pub controls: Vec<u64>,
    /// The elements whose text labels it (a field's label, as aria-labelledby).
    pub labelled_by: Vec<u64>,
    pub described_by: Vec<u64>,
    pub error_message: Vec<u64>,
}

/// What the app says of an element beyond its role and states, in ARIA's terms.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Annotations {
    pub placeholder: Option<String>,
    /// What it is the current one of: true, page, step, location, date or time.
    pub current: Option<String>,
    /// What a text field's suggestions complete: inline, list or both.
    pub auto_complete: Option<String>,
    pub role_description: Option<String>,
    /// The kind of popup it opens: menu, listbox, tree, grid or dialog.
    pub has_popup: Option<String>,
    /// Keys that press or focus it, as menus write them ("Ctrl+O"), space-separated.
    pub key_shortcuts: Option<String>,
}

/// Where the words come from that name an element whose own name says
/// nothing, most telling first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LabelSource {
    /// The text of the element its labelled-by relation names.
    LabelledBy,
    /// The text it holds: a GTK 4.8 notebook tab's caption, a list row's
    /// label, a drop-down's chosen item, the button a menu button wraps.
    Content,
    /// Its description (GTK gives a widget's tooltip as its description).
    Description,
    /// The name of the icon it shows.
    Icon,
    /// The text of the label just before it: left of it, else above it.
    Beside,
    /// The hint a text field shows while empty, when nothing else names it.
    Placeholder,
}

impl LabelSource {
    /// Its name in camelCase, as the faces' JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelSource::LabelledBy => "labelledBy",
            LabelSource::Content => "content",
            LabelSource::Description => "description",
            LabelSource::Icon => "icon",
            LabelSource::Beside => "beside",
            LabelSource::Placeholder => "placeholder",
        }
    }
}

/// The words a person would use for an element whose name says nothing,
/// and where they come from: never its accessible name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelFallback {
    pub source: LabelSource,
    pub text: String,
}

/// One element of a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Stable for the life of the accessible object.
    pub id: u64,
    pub parent: Option<u64>,
    pub children: Vec<u64>,
    pub role: Role,
    /// The toolkit's own role name ("push button").
    pub native_role: String,
    /// The accessible name, with the toolkit's mnemonic markers removed
    /// where its names carry them ("Page _1" reads "Page 1").
    pub name: String,
    /// The name is only the toolkit's stand-in, as GTK names a widget nobody
    /// labeled after its class ("GtkToggleButton") and every notebook tab
    /// "Tab": it says nothing of what it is for.
    pub name_is_stand_in: bool,
    /// For a control whose name says nothing: what a person would call it.
    pub label_fallback: Option<LabelFallback>,
    pub description: String,
    /// The app's own name for the element (AccessibleId, GtkBuildable id, objectName).
    pub key: Option<String>,
    pub states: States,
    /// The text of a text field (not of a password field).
    pub value: Option<String>,
    /// Minimum, maximum, current value and step of sliders, spinners, progress bars.
    pub range: Option<Range>,
    /// Selected text of a text field, in characters; the caret when empty.
    pub selection: Option<(i32, i32)>,
    /// Relative to the window's content, logical points; `None` when the element
    /// reports no size (not laid out, or on a hidden page).
    pub bounds: Option<Rect>,
    /// The actions the element offers, as the toolkit shows them to people
    /// (AT-SPI GetActions: GTK 4 "Click", Qt "Press").
    pub actions: Vec<String>,
    pub place: Place,
    pub relations: Relations,
    pub annotations: Annotations,
}

impl Node {
    /// A container that only lays others out: an unnamed panel or group.
    pub fn is_layout(&self) -> bool {
        is_layout(self.role, &self.name)
    }

    /// The name, when it says what the element is: not empty, not only the
    /// toolkit's stand-in.
    pub fn label(&self) -> Option<&str> {
        (!self.name.is_empty() && !self.name_is_stand_in).then_some(self.name.as_str())
    }

    /// The words a person reads it by: its label, else what stands in for
    /// a name that says nothing (the label beside it, its tooltip...).
    pub fn read_as(&self) -> Option<&str> {
        self.label()
            .or(self.label_fallback.as_ref().map(|f| f.text.as_str()))
    }

    /// Its label as faces report it: the words it is read by, else the text
    /// a text element (a label, paragraph or heading) shows as its value.
    pub fn shown_label(&self) -> Option<&str> {
        self.read_as().or_else(|| {
            matches!(self.role, Role::Label | Role::Paragraph | Role::Heading)
                .then_some(self.value.as_deref())
                .flatten()
        })
    }

    /// Checked, unchecked or mixed; `None` for what cannot be checked.
    /// Check boxes, switches, radio and toggle buttons and their menu items
    /// are checkable whether or not the toolkit says so.
    pub fn checked(&self) -> Option<Checked> {
        let checkable = self.states.checkable
            || matches!(
                self.role,
                Role::CheckBox
                    | Role::Switch
                    | Role::RadioButton
                    | Role::ToggleButton
                    | Role::CheckMenuItem
                    | Role::RadioMenuItem
            );
        if self.states.mixed {
            Some(Checked::Mixed)
        } else if self.states.checked {
            Some(Checked::True)
        } else if checkable {
            Some(Checked::False)
        } else {
            None
        }
    }
}

/// Whether an element of this role and name only lays others out. A scroll
/// area is not: it is what a user scrolls.
pub fn is_layout(role: Role, name: &str) -> bool {
    matches!(
        role,
        Role::Panel | Role::Group | Role::Unknown | Role::Canvas
    ) && name.is_empty()
}

/// A name GTK gives an element of this role that nobody named: its class
/// (`GtkPopoverMenu`, `GtkToggleButton`), or GTK 4.8's "Tab" for every
/// notebook tab and its panel. It says nothing of what the element is for.
pub fn is_stand_in_name(role: Role, name: &str) -> bool {
    is_class_name(name) || matches!(role, Role::Tab | Role::Group) && name == "Tab"
}

/// A name that is only a toolkit's class, as GTK and libadwaita name an
/// unlabeled widget (`GtkPopoverMenu`, `GtkToggleButton`, `AdwGizmo`): it
/// says nothing of what it is for.
pub fn is_class_name(name: &str) -> bool {
    ["Gtk", "Adw"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_uppercase())
                && rest.chars().all(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// A name as a person reads it, without the mnemonic markers a toolkit's
/// labels carry: a `_` before a character goes, `__` is a literal `_`.
pub fn without_mnemonics(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' {
            match chars.next() {
                Some(next) => out.push(next),
                // A trailing `_` marks nothing.
                None => out.push('_'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A ranged value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    pub now: f64,
    pub step: f64,
}

/// A window and its elements, root first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub window: WindowInfo,
    pub nodes: Vec<Node>,
}

/// Each node's position in `nodes`, by its id.
pub fn positions(nodes: &[Node]) -> HashMap<u64, usize> {
    nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect()
}

/// The nodes above `n`, its parent first, found through `index` (see
/// `positions`): a lookup per level where `Tree::ancestors` searches.
pub fn ancestors<'a, 'i>(
    nodes: &'a [Node],
    index: &'i HashMap<u64, usize>,
    n: &Node,
) -> impl Iterator<Item = &'a Node> + use<'a, 'i> {
    let up = move |id: Option<u64>| id.and_then(|p| index.get(&p)).map(|i| &nodes[*i]);
    std::iter::successors(up(n.parent), move |p| up(p.parent))
}

impl Tree {
    pub fn node(&self, id: u64) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The nodes above `n`, its parent first.
    pub fn ancestors<'a>(&'a self, n: &Node) -> impl Iterator<Item = &'a Node> + 'a {
        std::iter::successors(n.parent.and_then(|p| self.node(p)), |up| {
            up.parent.and_then(|p| self.node(p))
        })
    }

    /// The nodes below `n`, each before its children, in the order the
    /// app gives them.
    pub fn descendants<'a>(&'a self, n: &Node) -> impl Iterator<Item = &'a Node> + 'a {
        let mut stack: Vec<u64> = n.children.iter().rev().copied().collect();
        std::iter::from_fn(move || loop {
            let node = self.node(stack.pop()?);
            if let Some(node) = node {
                stack.extend(node.children.iter().rev());
                return Some(node);
            }
        })
    }

    /// Nodes with this role and name.
    pub fn find<'a>(&'a self, role: Role, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes
            .iter()
            .filter(move |n| n.role == role && n.name == name)
    }

    /// Global bounds of a node: the window's content origin plus its bounds.
    pub fn global_bounds(&self, node: &Node) -> Option<Rect> {
        node.bounds.map(|b| {
            Rect::new(
                self.window.content.x + b.x,
                self.window.content.y + b.y,
                b.width,
                b.height,
            )
        })
    }
}

/// Errors of the model; each face maps them one to one to its codes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("no window {0}")]
    NoWindow(String),
    /// The window was unmapped and mapped again since it was named.
    #[error("window {0} is stale")]
    StaleWindow(String),
    #[error("no element {0}")]
    NoElement(String),
    /// Its window's tree moved on, and the element cannot be shown unchanged.
    #[error("{0}")]
    StaleElement(String),
    /// The element is not where an action would point at it: something
    /// else (another element, a popup, a page over it) is there now.
    #[error("element {0}")]
    NotShown(String),
    /// What a screenshot showed moved or resized since, so its pixels no
    /// longer map to where they were.
    #[error("stale geometry: {0}")]
    StaleGeometry(String),
    /// Several elements match where one was asked for.
    #[error("{what} matches {} elements ({}); name one by id", ids.len(), ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))]
    Ambiguous { what: String, ids: Vec<u64> },
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// More than a limit of the session takes (the clipboard's 1 MiB...).
    #[error("too large: {0}")]
    TooLarge(String),
    /// What the request names to start or open does not exist: a program,
    /// an installed app, a file.
    #[error("not found: {0}")]
    NotFound(String),
    /// Not now: work is in flight, or the window cannot take it yet.
    #[error("busy: {0}")]
    Busy(String),
    /// Accepted, but never delivered.
    #[error("cancelled: {0}")]
    Cancelled(String),
    /// The window went away while its input ran: `sent` of `total` steps
    /// had been delivered.
    #[error("interrupted: window {window} closed after {sent} of {total} input steps")]
    Interrupted {
        window: String,
        sent: usize,
        total: usize,
    },
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Delivery without activating the window was asked, and the host can
    /// deliver only to the window it activates.
    #[error("would require activation: {0}")]
    WouldActivate(String),
    #[error("timed out: {0}")]
    Timeout(String),
    #[error("{0}")]
    Failed(String),
}

impl From<wayrig_host::HostError> for Error {
    fn from(e: wayrig_host::HostError) -> Self {
        use wayrig_host::HostError as H;
        match e {
            H::NoWindow(h) => Error::NoWindow(h.to_string()),
            H::StaleWindow(h, _) => Error::StaleWindow(h.to_string()),
            H::Timeout(_, why) => Error::Timeout(why),
            H::Unsupported(why) => Error::Unsupported(why),
            H::InvalidRequest(why) => Error::InvalidRequest(why),
            other => Error::Failed(other.to_string()),
        }
    }
}

/// Roles told by what an element holds: a combo box with no text field
/// inside only pops up a list to choose from (a pop-up button), and a plain
/// container holding scroll bars is a scroll area (GTK 4's scrolled window).
/// `nodes` are in pre-order, a parent before its children.
pub fn roles_by_content(nodes: &mut [Node]) {
    let index = positions(nodes);
    let mut edits_text = vec![false; nodes.len()];
    // Children after parents: walking backwards, a child is done before its parent.
    for i in (0..nodes.len()).rev() {
        let own = is_text_field(nodes[i].role) && nodes[i].role != Role::SpinButton;
        let inside = nodes[i]
            .children
            .iter()
            .filter_map(|c| index.get(c))
            .any(|&c| c > i && edits_text[c]);
        edits_text[i] = own || inside;
        if nodes[i].role == Role::ComboBox && !edits_text[i] {
            nodes[i].role = Role::PopUpButton;
        }
        let scrolls = nodes[i]
            .children
            .iter()
            .filter_map(|c| index.get(c))
            .any(|&c| nodes[c].role == Role::ScrollBar);
        if scrolls && matches!(nodes[i].role, Role::Panel | Role::Group | Role::Unknown) {
            nodes[i].role = Role::ScrollView;
        }
    }
}

/// Roles whose text is their value.
pub fn is_text_field(role: Role) -> bool {
    matches!(
        role,
        Role::TextInput
            | Role::TextArea
            | Role::PasswordInput
            | Role::SearchInput
            | Role::SpinButton
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtk_stand_in_names_say_nothing() {
        assert!(is_stand_in_name(Role::Button, "GtkToggleButton"));
        assert!(is_stand_in_name(Role::Panel, "AdwGizmo"));
        assert!(!is_stand_in_name(Role::Button, "Adwaita"));
        assert!(is_stand_in_name(Role::Tab, "Tab"));
        assert!(is_stand_in_name(Role::Group, "Tab"));
        assert!(!is_stand_in_name(Role::Button, "Tab"));
        assert!(!is_stand_in_name(Role::Tab, "Tabs"));
        assert!(!is_stand_in_name(Role::Button, "Gtk"));
    }

    #[test]
    fn gtk_class_fallback_names_are_told_from_real_ones() {
        assert!(is_class_name("GtkPopoverMenu"));
        assert!(is_class_name("GtkToggleButton"));
        assert!(!is_class_name("Gtk"));
        assert!(!is_class_name("Gtkwave"));
        assert!(!is_class_name("GtkWave viewer"));
        assert!(!is_class_name("File"));
    }

    #[test]
    fn mnemonic_markers_go_and_doubled_underscores_stay_single() {
        assert_eq!(without_mnemonics("Page _1"), "Page 1");
        assert_eq!(without_mnemonics("_Inform Inform"), "Inform Inform");
        assert_eq!(without_mnemonics("snake__case"), "snake_case");
        assert_eq!(without_mnemonics("end_"), "end_");
        assert_eq!(without_mnemonics("Plain"), "Plain");
    }
}
