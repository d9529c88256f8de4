//! The one model's roles in AccessKit's names, the words MixOS's `ui.tree`
//! reports and filters by.
//!
//! The mapping table of this face; the model keeps no AccessKit word itself.

use wayrig_services::Role;

/// AccessKit's name for a model role.
pub fn accesskit_role(role: Role) -> &'static str {
    match role {
        Role::Window => "Window",
        Role::Dialog => "Dialog",
        Role::Alert => "Alert",
        Role::AlertDialog => "AlertDialog",
        Role::RadioGroup => "RadioGroup",
        Role::PopUpButton => "ComboBox",
        Role::Disclosure => "DisclosureTriangle",
        Role::Application => "Application",
        Role::Button | Role::MenuButton => "Button",
        Role::ToggleButton => "ToggleButton",
        Role::CheckBox => "CheckBox",
        Role::RadioButton => "RadioButton",
        Role::Switch => "Switch",
        Role::ComboBox => "ComboBox",
        Role::TextInput => "TextInput",
        Role::PasswordInput => "PasswordInput",
        Role::TextArea => "MultilineTextInput",
        Role::SearchInput => "SearchInput",
        Role::SpinButton => "SpinButton",
        Role::Slider => "Slider",
        Role::ProgressBar => "ProgressIndicator",
        Role::ScrollBar => "ScrollBar",
        Role::Label => "Label",
        Role::Paragraph => "Paragraph",
        Role::Heading => "Heading",
        Role::Link => "Link",
        Role::Image => "Image",
        Role::List => "List",
        Role::ListItem => "ListItem",
        Role::Tree => "Tree",
        Role::TreeItem => "TreeItem",
        Role::Table => "Table",
        Role::Row => "Row",
        Role::Cell => "Cell",
        Role::ColumnHeader => "ColumnHeader",
        Role::RowHeader => "RowHeader",
        Role::TabList => "TabList",
        Role::Tab => "Tab",
        Role::TabPanel => "TabPanel",
        Role::MenuBar => "MenuBar",
        Role::Menu => "Menu",
        Role::MenuItem => "MenuItem",
        Role::CheckMenuItem => "MenuItemCheckBox",
        Role::RadioMenuItem => "MenuItemRadio",
        Role::Toolbar => "Toolbar",
        Role::StatusBar => "Status",
        Role::Tooltip => "Tooltip",
        Role::Document => "Document",
        Role::Region => "Region",
        Role::Meter => "Meter",
        Role::Log => "Log",
        Role::Timer => "Timer",
        Role::Article => "Article",
        Role::Navigation => "Navigation",
        Role::Main => "Main",
        Role::Banner => "Banner",
        Role::ContentInfo => "ContentInfo",
        Role::Complementary => "Complementary",
        Role::Search => "Search",
        Role::Deletion => "ContentDeletion",
        Role::Insertion => "ContentInsertion",
        Role::Grid => "Grid",
        Role::TreeGrid => "TreeGrid",
        Role::Splitter => "Splitter",
        Role::Group => "Group",
        Role::Panel => "Pane",
        Role::ScrollView => "ScrollView",
        Role::Canvas => "Canvas",
        // AccessKit has no separator role; a plain container is what it draws.
        Role::Separator => "GenericContainer",
        Role::Unknown => "Unknown",
    }
}

/// Whether AccessKit's name names a kind of text node, whose text MixOS
/// reports as its label.
pub fn is_text(role: Role) -> bool {
    matches!(role, Role::Label | Role::Paragraph | Role::Heading)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_multiline_fields_have_accesskits_names() {
        assert_eq!(accesskit_role(Role::TextInput), "TextInput");
        assert_eq!(accesskit_role(Role::TextArea), "MultilineTextInput");
        assert_eq!(accesskit_role(Role::Button), "Button");
        assert_eq!(accesskit_role(Role::CheckBox), "CheckBox");
        assert_eq!(accesskit_role(Role::CheckMenuItem), "MenuItemCheckBox");
        assert_eq!(accesskit_role(Role::ProgressBar), "ProgressIndicator");
    }

    #[test]
    fn text_nodes_are_the_label_kinds() {
        assert!(is_text(Role::Label));
        assert!(!is_text(Role::Button));
    }
}
