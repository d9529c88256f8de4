//! AT-SPI's words in the model's: roles (with the states that refine them),
//! states, and a node from a cache item with what was read of it.

use std::sync::Arc;

use atspi::{CacheItem, Role as AtspiRole, State, StateSet};

use super::facts::Lasting;
use crate::model::{is_stand_in_name, without_mnemonics, Node, Role, States};
use wayrig_host::Rect;

/// A node of the model from an object's cache item and what was read of it.
pub(super) fn to_node(
    id: u64,
    parent: Option<u64>,
    children: Vec<u64>,
    it: &CacheItem,
    (lasting, bounds): (Arc<Lasting>, Option<Rect>),
    hide_by_showing: bool,
) -> Node {
    let mut states = states(&it.states);
    let role = match lasting.role.unwrap_or_else(|| role(it.role, &it.states)) {
        // As ARIA has it: a separator a person can focus (and move) is a splitter.
        Role::Separator if states.focusable => Role::Splitter,
        role => role,
    };
    if role == Role::PasswordInput {
        states.password = true;
    }
    let gtk = lasting
        .toolkit
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("gtk"));
    // GTK 4 says a toggle button is on (`active`) by PRESSED alone, on a
    // push button (4.8 has no toggle button role): on, in the model's words,
    // is checked. Elsewhere PRESSED is a button held down (Qt), no state.
    if gtk && states.pressed && role == Role::Button {
        states.checked = true;
    }
    states.sort = lasting.sort;
    let mut annotations = lasting.annotations.clone();
    if annotations.has_popup.is_none() && it.states.contains(State::HasPopup) {
        annotations.has_popup = Some("menu".into());
    }
    // Firefox keeps what it hides visible (background tabs, its preloaded
    // new tab, the menu bar it does not show) and says so by showing alone;
    // GTK 4.8 says showing of nothing, so elsewhere visible alone will do.
    if hide_by_showing {
        states.offscreen = !it.states.contains(State::Showing);
    }
    // GTK 4.8 names some controls by their label as written, mnemonic
    // marker and all ("Page _1"); text shown as text carries none.
    let name = if gtk && takes_mnemonic(role) {
        without_mnemonics(&it.short_name)
    } else if it.short_name.is_empty() {
        lasting.shown_text.clone().unwrap_or_default()
    } else {
        it.short_name.clone()
    };
    Node {
        id,
        parent,
        children,
        role,
        native_role: it.role.name().to_string(),
        name_is_stand_in: gtk && is_stand_in_name(role, &name),
        name,
        label_fallback: None,
        description: it.name.clone(),
        key: lasting.key.clone(),
        states,
        value: lasting.value.clone(),
        range: lasting.range,
        selection: lasting.selection,
        bounds,
        actions: lasting.actions.clone(),
        place: lasting.place,
        relations: lasting.relations.clone(),
        annotations,
    }
}

/// Controls (and the pages they switch) whose label a toolkit may write
/// with a mnemonic marker.
fn takes_mnemonic(role: Role) -> bool {
    matches!(
        role,
        Role::Button
            | Role::ToggleButton
            | Role::CheckBox
            | Role::RadioButton
            | Role::Switch
            | Role::MenuButton
            | Role::ComboBox
            | Role::Tab
            | Role::MenuItem
            | Role::CheckMenuItem
            | Role::RadioMenuItem
            | Role::Menu
            // A stack page is named by its title, written as its tab's.
            | Role::Group
            | Role::Panel
            | Role::TabPanel
    )
}

fn states(s: &StateSet) -> States {
    States {
        focusable: s.contains(State::Focusable),
        focused: s.contains(State::Focused),
        disabled: !s.contains(State::Sensitive) && !s.contains(State::Enabled),
        checkable: s.contains(State::Checkable),
        checked: s.contains(State::Checked),
        mixed: s.contains(State::Indeterminate),
        selected: s.contains(State::Selected),
        selectable: s.contains(State::Selectable),
        expanded: s.contains(State::Expanded),
        expandable: s.contains(State::Expandable),
        multiline: s.contains(State::MultiLine),
        multiselectable: s.contains(State::Multiselectable),
        password: false,
        read_only: s.contains(State::ReadOnly),
        editable: s.contains(State::Editable),
        offscreen: !s.contains(State::Showing) && !s.contains(State::Visible),
        concealed: false,
        invalid: s.contains(State::InvalidEntry),
        busy: s.contains(State::Busy),
        vertical: s.contains(State::Vertical),
        horizontal: s.contains(State::Horizontal),
        pressed: s.contains(State::Pressed),
        sort: None,
    }
}

/// AT-SPI roles in the model's vocabulary.
pub(super) fn role(r: AtspiRole, states: &StateSet) -> Role {
    use AtspiRole as A;
    match r {
        A::Frame | A::Window | A::InternalFrame => Role::Window,
        A::Dialog | A::FileChooser | A::ColorChooser | A::FontChooser => Role::Dialog,
        A::Alert => Role::AlertDialog,
        A::Notification => Role::Alert,
        A::Application => Role::Application,
        // An expander: a button that shows a section, not one that opens a popup.
        A::Button | A::ToggleButton
            if states.contains(State::Expandable) && !states.contains(State::HasPopup) =>
        {
            Role::Disclosure
        }
        A::Button => Role::Button,
        A::PushButtonMenu => Role::MenuButton,
        A::ToggleButton if states.contains(State::HasPopup) => Role::MenuButton,
        A::ToggleButton => Role::ToggleButton,
        A::CheckBox => Role::CheckBox,
        A::RadioButton => Role::RadioButton,
        A::ComboBox => Role::ComboBox,
        A::PasswordText => Role::PasswordInput,
        A::Entry | A::Text if states.contains(State::MultiLine) => Role::TextArea,
        A::Entry | A::Text | A::Autocomplete | A::Editbar => Role::TextInput,
        A::SpinButton => Role::SpinButton,
        A::Slider | A::Dial => Role::Slider,
        A::ProgressBar => Role::ProgressBar,
        A::LevelBar => Role::Meter,
        A::Log => Role::Log,
        A::Timer => Role::Timer,
        A::Article => Role::Article,
        A::Landmark => Role::Region,
        A::ContentDeletion => Role::Deletion,
        A::ContentInsertion => Role::Insertion,
        A::ScrollBar => Role::ScrollBar,
        A::Label | A::AcceleratorLabel | A::Static | A::Caption => Role::Label,
        A::Heading => Role::Heading,
        A::Paragraph => Role::Paragraph,
        A::Link => Role::Link,
        A::Image | A::Icon | A::Animation => Role::Image,
        A::List | A::ListBox => Role::List,
        A::ListItem => Role::ListItem,
        A::Tree => Role::Tree,
        A::TreeTable => Role::TreeGrid,
        A::TreeItem => Role::TreeItem,
        A::Table => Role::Table,
        A::TableRow => Role::Row,
        A::TableCell => Role::Cell,
        A::TableColumnHeader | A::ColumnHeader => Role::ColumnHeader,
        A::TableRowHeader | A::RowHeader => Role::RowHeader,
        A::PageTabList => Role::TabList,
        A::PageTab => Role::Tab,
        A::MenuBar => Role::MenuBar,
        A::Menu | A::PopupMenu => Role::Menu,
        A::MenuItem | A::TearoffMenuItem => Role::MenuItem,
        A::CheckMenuItem => Role::CheckMenuItem,
        A::RadioMenuItem => Role::RadioMenuItem,
        A::Separator => Role::Separator,
        A::ToolBar => Role::Toolbar,
        A::StatusBar | A::InfoBar => Role::StatusBar,
        A::ToolTip => Role::Tooltip,
        A::Grouping | A::Form | A::Section => Role::Group,
        A::Panel
        | A::Filler
        | A::RootPane
        | A::LayeredPane
        | A::GlassPane
        | A::OptionPane
        | A::SplitPane => Role::Panel,
        A::ScrollPane | A::Viewport => Role::ScrollView,
        A::DocumentFrame
        | A::DocumentText
        | A::DocumentWeb
        | A::DocumentEmail
        | A::DocumentSpreadsheet
        | A::DocumentPresentation
        | A::Terminal => Role::Document,
        A::Canvas | A::DrawingArea => Role::Canvas,
        // A month of days to pick from (GTK 3 shows it without children):
        // a grid, as ARIA's date pickers are, not a layout container.
        A::Calendar => Role::Grid,
        _ => Role::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_expanders_and_aria_groups_have_roles_of_their_own() {
        let none = StateSet::empty();
        assert_eq!(role(AtspiRole::Alert, &none), Role::AlertDialog);
        assert_eq!(role(AtspiRole::Notification, &none), Role::Alert);
        let expandable = StateSet::new(State::Expandable);
        assert_eq!(role(AtspiRole::Button, &expandable), Role::Disclosure);
        assert_eq!(role(AtspiRole::ToggleButton, &expandable), Role::Disclosure);
        let popup = StateSet::new(State::Expandable | State::HasPopup);
        assert_eq!(role(AtspiRole::ToggleButton, &popup), Role::MenuButton);
    }

    #[test]
    fn roles_map_with_states() {
        let none = StateSet::empty();
        let multi = StateSet::new(State::MultiLine);
        assert_eq!(role(AtspiRole::Button, &none), Role::Button);
        assert_eq!(role(AtspiRole::Text, &none), Role::TextInput);
        assert_eq!(role(AtspiRole::Text, &multi), Role::TextArea);
        assert_eq!(
            role(AtspiRole::ToggleButton, &StateSet::new(State::HasPopup)),
            Role::MenuButton
        );
        assert_eq!(role(AtspiRole::Frame, &none), Role::Window);
        assert_eq!(role(AtspiRole::PasswordText, &none), Role::PasswordInput);
        assert_eq!(role(AtspiRole::Calendar, &none), Role::Grid);
    }
}
