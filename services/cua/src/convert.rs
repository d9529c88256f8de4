//! The one model in cua.env.v1's words: window handles, window descriptions,
//! roles, states and actions, and rectangles in global logical points.
//!
//! The mapping table of this face; the model keeps no cua word itself.

use tonic::Status;
use wayrig_cua_proto::v1;
use wayrig_host::{DisplayInfo, Rect, WindowHandle, WindowInfo, WindowKind};
use wayrig_services::session::display_of;
use wayrig_services::{AppIdentity, Element, Node, Offered, Role, Session, StateFlag};

use crate::errors::invalid;

/// A window's handle on the wire: its id in decimal, its epoch as is.
pub fn window_ref(handle: WindowHandle) -> v1::WindowRef {
    v1::WindowRef {
        id: handle.id.to_string(),
        epoch: handle.epoch as u64,
    }
}

/// The handle a `WindowRef` names; a ref this server never gave out is
/// INVALID_ARGUMENT.
pub fn handle_of(r: Option<&v1::WindowRef>) -> Result<WindowHandle, Status> {
    let r = r.ok_or_else(|| invalid("window is required: give a WindowRef from ListWindows"))?;
    let id = r.id.parse::<u64>().map_err(|_| {
        invalid(format!(
            "window id {:?} is not one this server gave out; take one from ListWindows",
            r.id
        ))
    })?;
    let epoch = u32::try_from(r.epoch).map_err(|_| {
        invalid(format!(
            "window epoch {} is not one this server gave out; take one from ListWindows",
            r.epoch
        ))
    })?;
    Ok(WindowHandle { id, epoch })
}

pub fn rect(r: Rect) -> v1::Rect {
    v1::Rect {
        x: r.x as f64,
        y: r.y as f64,
        width: r.width as f64,
        height: r.height as f64,
    }
}

/// A rectangle relative to a window's content, in global points.
pub fn global_rect(r: Rect, window: &WindowInfo) -> v1::Rect {
    rect(Rect::new(
        r.x + window.content.x,
        r.y + window.content.y,
        r.width,
        r.height,
    ))
}

pub fn display_id(d: &DisplayInfo) -> String {
    d.id.to_string()
}

pub fn display(d: &DisplayInfo) -> v1::Display {
    v1::Display {
        id: display_id(d),
        name: d.name.clone(),
        primary: d.primary,
        bounds: Some(rect(d.bounds)),
        native_size: Some(v1::PixelSize {
            width: d.pixel_width,
            height: d.pixel_height,
        }),
        scale_factor: d.scale,
        refresh_rate_hz: (d.refresh_mhz + 500) / 1000,
        rotation_degrees: 0,
    }
}

fn state(w: &WindowInfo) -> v1::WindowState {
    if w.minimized {
        v1::WindowState::Minimized
    } else if w.fullscreen {
        v1::WindowState::Fullscreen
    } else if w.maximized {
        v1::WindowState::Maximized
    } else {
        v1::WindowState::Normal
    }
}

fn kind(k: WindowKind) -> v1::WindowKind {
    match k {
        WindowKind::Normal => v1::WindowKind::Standard,
        WindowKind::Dialog => v1::WindowKind::Dialog,
        WindowKind::Menu => v1::WindowKind::Menu,
        WindowKind::Tooltip => v1::WindowKind::Tooltip,
    }
}

/// A window as cua describes it; `z_order` is its place among the windows
/// listed with it. Bounds are the window's content (its xdg geometry):
/// what the app calls the window, without shadows.
pub fn window_info(
    w: &WindowInfo,
    app: &AppIdentity,
    displays: &[DisplayInfo],
    z_order: u32,
) -> v1::WindowInfo {
    v1::WindowInfo {
        r#ref: Some(window_ref(w.handle)),
        title: w.title.clone(),
        app: Some(v1::AppInfo {
            name: app.name.clone(),
            app_id: app.desktop_id.clone().unwrap_or_else(|| w.app_id.clone()),
            pid: app.pid.unwrap_or(0),
        }),
        bounds: Some(rect(w.content)),
        display_id: display_of(&w.content, displays)
            .map(display_id)
            .unwrap_or_default(),
        state: state(w) as i32,
        kind: kind(w.kind) as i32,
        focused: w.focused,
        on_screen: on_screen(w, displays),
        z_order,
    }
}

/// Some part is visible on a display, as cua means it: covered is still on
/// screen; minimized, or moved off every display, is not.
pub fn on_screen(w: &WindowInfo, displays: &[DisplayInfo]) -> bool {
    !w.minimized && displays.iter().any(|d| d.bounds.intersects(&w.content))
}

/// Windows as cua lists them, front to back, numbered in that order.
pub fn window_infos<'a>(
    session: &Session,
    windows: impl IntoIterator<Item = &'a WindowInfo>,
    displays: &[DisplayInfo],
) -> Vec<v1::WindowInfo> {
    windows
        .into_iter()
        .enumerate()
        .map(|(z, w)| window_info(w, &session.app_of(w), displays, z as u32))
        .collect()
}

/// The one role vocabulary of cua, snake_case.
pub fn role(r: Role) -> &'static str {
    match r {
        Role::Window => "window",
        Role::Dialog => "dialog",
        Role::Alert => "alert",
        Role::Application => "application",
        Role::Button => "button",
        Role::ToggleButton => "toggle_button",
        Role::CheckBox => "check_box",
        Role::RadioButton => "radio_button",
        Role::Switch => "switch",
        Role::ComboBox => "combo_box",
        Role::MenuButton => "menu_button",
        Role::TextInput => "text_field",
        Role::PasswordInput => "password_field",
        Role::SearchInput => "search_field",
        Role::TextArea => "text_area",
        Role::SpinButton => "spin_button",
        Role::Slider => "slider",
        Role::ProgressBar => "progress_bar",
        Role::ScrollBar => "scroll_bar",
        Role::Label => "static_text",
        Role::Heading => "heading",
        Role::Paragraph => "paragraph",
        Role::Link => "link",
        Role::Image => "image",
        Role::List => "list",
        Role::ListItem => "list_item",
        Role::Tree => "tree",
        Role::TreeItem => "tree_item",
        Role::Table => "table",
        Role::Row => "row",
        Role::Cell => "cell",
        Role::ColumnHeader => "column_header",
        Role::RowHeader => "row_header",
        Role::TabList => "tab_list",
        Role::Tab => "tab",
        Role::TabPanel => "tab_panel",
        Role::MenuBar => "menu_bar",
        Role::Menu => "menu",
        Role::MenuItem => "menu_item",
        Role::CheckMenuItem => "check_menu_item",
        Role::RadioMenuItem => "radio_menu_item",
        Role::Separator => "separator",
        Role::Toolbar => "toolbar",
        Role::StatusBar => "status_bar",
        Role::Tooltip => "tooltip",
        Role::Group => "group",
        Role::Panel => "panel",
        Role::ScrollView => "scroll_area",
        Role::Document => "document",
        Role::Canvas => "canvas",
        Role::Meter => "meter",
        Role::Log => "log",
        Role::Timer => "timer",
        Role::Article => "article",
        Role::Region => "region",
        Role::Navigation => "navigation",
        Role::Main => "main",
        Role::Banner => "banner",
        Role::ContentInfo => "content_info",
        Role::Complementary => "complementary",
        Role::Search => "search",
        Role::Deletion => "deletion",
        Role::Insertion => "insertion",
        Role::Grid => "grid",
        Role::TreeGrid => "tree_grid",
        Role::Splitter => "splitter",
        Role::RadioGroup => "radio_group",
        Role::AlertDialog => "alert_dialog",
        Role::PopUpButton => "pop_up_button",
        Role::Disclosure => "disclosure",
        Role::Unknown => "unknown",
    }
}

/// The metadata key that says an input or action answered before its
/// window settled, and why.
pub const UNSETTLED_KEY: &str = "wayrig-unsettled";

/// A response; when the window had not settled as its answer's wait for the
/// effect ran out, with `UNSETTLED_KEY` saying why (in ASCII, as metadata
/// must be).
pub fn answered<T>(message: T, unsettled: Option<&str>) -> tonic::Response<T> {
    let mut response = tonic::Response::new(message);
    if let Some(why) = unsettled {
        let ascii = wayrig_services::unsettled_in_ascii(why);
        if let Ok(value) = ascii.parse() {
            response.metadata_mut().insert(UNSETTLED_KEY, value);
        }
    }
    response
}

/// A delivery report's detail, with why the window had not settled.
pub fn detail_with(detail: String, unsettled: Option<&str>) -> String {
    match unsettled {
        Some(why) => format!("{detail}; {why}"),
        None => detail,
    }
}

/// Every role, for the word each is named by.
const ALL_ROLES: [Role; 71] = [
    Role::Window,
    Role::Dialog,
    Role::Alert,
    Role::Application,
    Role::Button,
    Role::ToggleButton,
    Role::CheckBox,
    Role::RadioButton,
    Role::Switch,
    Role::ComboBox,
    Role::MenuButton,
    Role::TextInput,
    Role::PasswordInput,
    Role::SearchInput,
    Role::TextArea,
    Role::SpinButton,
    Role::Slider,
    Role::ProgressBar,
    Role::ScrollBar,
    Role::Label,
    Role::Heading,
    Role::Paragraph,
    Role::Link,
    Role::Image,
    Role::List,
    Role::ListItem,
    Role::Tree,
    Role::TreeItem,
    Role::Table,
    Role::Row,
    Role::Cell,
    Role::ColumnHeader,
    Role::RowHeader,
    Role::TabList,
    Role::Tab,
    Role::TabPanel,
    Role::MenuBar,
    Role::Menu,
    Role::MenuItem,
    Role::CheckMenuItem,
    Role::RadioMenuItem,
    Role::Separator,
    Role::Toolbar,
    Role::StatusBar,
    Role::Tooltip,
    Role::Group,
    Role::Panel,
    Role::ScrollView,
    Role::Document,
    Role::Canvas,
    Role::Meter,
    Role::Log,
    Role::Timer,
    Role::Article,
    Role::Region,
    Role::Navigation,
    Role::Main,
    Role::Banner,
    Role::ContentInfo,
    Role::Complementary,
    Role::Search,
    Role::Deletion,
    Role::Insertion,
    Role::Grid,
    Role::TreeGrid,
    Role::Splitter,
    Role::RadioGroup,
    Role::AlertDialog,
    Role::PopUpButton,
    Role::Disclosure,
    Role::Unknown,
];

/// The state words cua knows, in the order they are listed.
pub const STATE_WORDS: [&str; 16] = [
    "enabled",
    "disabled",
    "focusable",
    "focused",
    "selectable",
    "selected",
    "checkable",
    "checked",
    "mixed",
    "expandable",
    "expanded",
    "editable",
    "read_only",
    "multiline",
    "pressed",
    "offscreen",
];

/// An element's states as words; `hidden` says whether it shows in its window.
pub fn states(n: &Node, hidden: bool) -> Vec<String> {
    let s = &n.states;
    let checked = n.checked();
    let holds = |word: &str| match word {
        "enabled" => !s.disabled,
        "disabled" => s.disabled,
        "focusable" => s.focusable,
        "focused" => s.focused,
        "selectable" => s.selectable,
        "selected" => s.selected,
        "checkable" => checked.is_some(),
        "checked" => checked == Some(wayrig_services::Checked::True),
        "mixed" => checked == Some(wayrig_services::Checked::Mixed),
        "expandable" => s.expandable,
        "expanded" => s.expanded,
        "editable" => s.editable,
        "read_only" => s.read_only,
        "multiline" => s.multiline,
        "pressed" => s.pressed,
        "offscreen" => hidden,
        _ => false,
    };
    STATE_WORDS
        .iter()
        .filter(|w| holds(w))
        .map(|w| w.to_string())
        .collect()
}

/// The role a role word names, if it is one of cua's.
pub fn role_named(word: &str) -> Option<Role> {
    ALL_ROLES.into_iter().find(|r| role(*r) == word)
}

/// The session's state a state word requires; an unknown word is
/// INVALID_ARGUMENT.
pub fn state_flag(word: &str) -> Result<StateFlag, Status> {
    Ok(match word {
        "enabled" => StateFlag::Enabled,
        "disabled" => StateFlag::Disabled,
        "focusable" => StateFlag::Focusable,
        "focused" => StateFlag::Focused,
        "selectable" => StateFlag::Selectable,
        "selected" => StateFlag::Selected,
        "checkable" => StateFlag::Checkable,
        "checked" => StateFlag::Checked,
        "mixed" => StateFlag::Mixed,
        "expandable" => StateFlag::Expandable,
        "expanded" => StateFlag::Expanded,
        "editable" => StateFlag::Editable,
        "read_only" => StateFlag::ReadOnly,
        "multiline" => StateFlag::Multiline,
        "pressed" => StateFlag::Pressed,
        "offscreen" => StateFlag::Offscreen,
        _ => {
            return Err(invalid(format!(
                "unknown state {word:?}; states are {}",
                STATE_WORDS.join(", ")
            )))
        }
    })
}

/// The actions an element supports, in cua's enum.
pub fn actions(n: &Node) -> Vec<i32> {
    use v1::AccessibilityAction as A;
    let mut out = Vec::new();
    for o in wayrig_services::offered(n) {
        let a = match o {
            Offered::Press => A::Press,
            Offered::Focus => A::Focus,
            Offered::SetValue => A::SetValue,
            Offered::Increment => A::Increment,
            Offered::Decrement => A::Decrement,
            Offered::Expand => A::Expand,
            Offered::Collapse => A::Collapse,
            Offered::InsertText | Offered::SelectText => continue,
        };
        out.push(a as i32);
    }
    if n.states.selectable {
        out.push(A::Select as i32);
    }
    if !n.actions.is_empty() {
        out.push(A::Custom as i32);
    }
    out
}

/// One element of a read, in global points.
pub fn node(e: &Element, window: &WindowInfo) -> v1::AccessibilityNode {
    let n = &e.node;
    let hidden = wayrig_services::is_hidden(n);
    let mut attributes = std::collections::HashMap::new();
    if let Some(key) = &n.key {
        attributes.insert("key".to_string(), key.clone());
    }
    if let Some(p) = &n.annotations.placeholder {
        attributes.insert("placeholder".to_string(), p.clone());
    }
    if let Some(k) = &n.annotations.key_shortcuts {
        attributes.insert("key_shortcuts".to_string(), k.clone());
    }
    if let Some(r) = &n.range {
        attributes.insert("min".to_string(), r.min.to_string());
        attributes.insert("max".to_string(), r.max.to_string());
    }
    if !n.actions.is_empty() {
        attributes.insert("native_actions".to_string(), n.actions.join(","));
    }
    v1::AccessibilityNode {
        element_id: n.id.to_string(),
        parent_id: e.parent.map(|p| p.to_string()).unwrap_or_default(),
        depth: e.depth,
        role: role(n.role).to_string(),
        native_role: n.native_role.clone(),
        name: n.name.clone(),
        value: n
            .value
            .clone()
            .or_else(|| n.range.as_ref().map(|r| r.now.to_string()))
            .unwrap_or_default(),
        description: n.description.clone(),
        bounds: n.bounds.map(|b| global_rect(b, window)),
        states: states(n, hidden),
        actions: actions(n),
        attributes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_has_a_word_of_its_own() {
        let words: std::collections::HashSet<_> = ALL_ROLES.iter().map(|r| role(*r)).collect();
        assert_eq!(words.len(), ALL_ROLES.len(), "two roles share a word");
    }

    /// A Find by a state word finds what a read lists with that word, and
    /// a role word names its role.
    #[test]
    fn each_state_word_finds_what_reads_show_with_it() {
        use wayrig_services::{Query, States};
        let with = |role: Role, states: States, shown: bool| Node {
            id: 1,
            parent: None,
            children: Vec::new(),
            role,
            native_role: String::new(),
            name: "n".into(),
            name_is_stand_in: false,
            label_fallback: None,
            description: String::new(),
            key: None,
            states,
            value: None,
            range: None,
            selection: None,
            bounds: shown.then(|| wayrig_host::Rect::new(0, 0, 10, 10)),
            actions: Vec::new(),
            place: Default::default(),
            relations: Default::default(),
            annotations: Default::default(),
        };
        let nodes = [
            with(
                Role::CheckBox,
                States {
                    checked: true,
                    focused: true,
                    focusable: true,
                    ..Default::default()
                },
                true,
            ),
            with(
                Role::CheckBox,
                States {
                    mixed: true,
                    checked: true,
                    disabled: true,
                    ..Default::default()
                },
                true,
            ),
            with(
                Role::TreeItem,
                States {
                    expandable: true,
                    expanded: true,
                    selectable: true,
                    selected: true,
                    ..Default::default()
                },
                false,
            ),
            with(
                Role::TextInput,
                States {
                    editable: true,
                    multiline: true,
                    read_only: true,
                    ..Default::default()
                },
                true,
            ),
            with(
                Role::ToggleButton,
                States {
                    pressed: true,
                    ..Default::default()
                },
                true,
            ),
        ];
        for n in &nodes {
            let listed = states(n, wayrig_services::is_hidden(n));
            for word in STATE_WORDS {
                let query = Query {
                    states: vec![state_flag(word).unwrap()],
                    include_hidden: true,
                    ..Query::default()
                };
                assert_eq!(
                    query.matches_besides_label(n),
                    listed.iter().any(|w| w == word),
                    "{word} of {:?} {:?}",
                    n.role,
                    n.states
                );
            }
        }
        assert!(state_flag("shiny").is_err());
        for r in ALL_ROLES {
            assert_eq!(role_named(role(r)), Some(r));
        }
        assert_eq!(role_named("push button"), None);
    }

    #[test]
    fn a_window_ref_round_trips_and_a_foreign_one_is_refused() {
        let h = WindowHandle { id: 42, epoch: 3 };
        assert_eq!(handle_of(Some(&window_ref(h))).unwrap(), h);
        let foreign = v1::WindowRef {
            id: "0x2a".into(),
            epoch: 3,
        };
        assert_eq!(
            handle_of(Some(&foreign)).unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
        let huge_epoch = v1::WindowRef {
            id: "42".into(),
            epoch: u64::MAX,
        };
        assert_eq!(
            handle_of(Some(&huge_epoch)).unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
    }

    #[test]
    fn a_window_is_on_the_display_it_overlaps_most() {
        let d = |id, x, primary| DisplayInfo {
            id,
            name: format!("D{id}"),
            primary,
            bounds: Rect::new(x, 0, 100, 100),
            pixel_width: 100,
            pixel_height: 100,
            scale: 1.0,
            refresh_mhz: 60_000,
        };
        let displays = [d(1, 0, true), d(2, 100, false)];
        assert_eq!(
            display_of(&Rect::new(80, 0, 50, 10), &displays).unwrap().id,
            2
        );
        assert_eq!(
            display_of(&Rect::new(500, 0, 5, 5), &displays).unwrap().id,
            1
        );
    }
}
