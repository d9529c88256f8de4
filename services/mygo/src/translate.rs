//! MyGo's calls as session calls, and the one model in MyGo's words: roles,
//! states and actions, windows and elements, errors as the spec's codes.
//!
//! No rule lives here: windows are picked, elements found and pruned, and
//! actions offered by the session; this file only names them.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use wayrig_host::{InputEvent, InputOptions, WindowInfo};
use wayrig_proto::mygo::{
    self as wire, Call, CaptureAnswer, Code, ElementPick, TreeAnswer, WindowsAnswer, WireError,
};
use wayrig_services::model::{LabelFallback, Place, Sort};
use wayrig_services::session::{offered, Expect, Offered};
use wayrig_services::{
    encode_capture, ActOptions, Action, AnnouncementsRead, AppSpec, Checked, Element, ElementRef,
    Error, ImageFormat, Launch, Menu, MenuRow, Node, Query, ReadOptions, Role, Session, Step,
    WindowFilter, WindowPick,
};

/// `idle` without a timeout waits this long at most.
const IDLE_FOREVER: Duration = Duration::from_secs(24 * 3600);

/// `wayrig.launch` without a timeout waits this long for the app's window.
const LAUNCH_WAIT: Duration = Duration::from_secs(10);

/// The session's errors as MyGo's codes.
fn wire_error(e: Error) -> WireError {
    let code = match &e {
        Error::NoWindow(_) | Error::StaleWindow(_) | Error::Interrupted { .. } => Code::NoWindow,
        Error::NoElement(_)
        | Error::StaleElement(_)
        | Error::NotShown(_)
        | Error::Ambiguous { .. } => Code::NoElement,
        Error::Unsupported(_) | Error::WouldActivate(_) => Code::Unsupported,
        Error::Timeout(_) => Code::Timeout,
        Error::InvalidRequest(_)
        | Error::TooLarge(_)
        | Error::NotFound(_)
        | Error::StaleGeometry(_) => Code::InvalidRequest,
        Error::Busy(_) | Error::Cancelled(_) | Error::Failed(_) => Code::Failed,
    };
    WireError::new(code, e.to_string())
}

/// Answer one call of a connection that has read `announced` so far.
pub async fn answer(
    session: &Session,
    announced: &mut AnnouncementsRead,
    call: Call,
) -> Result<Value, WireError> {
    run(session, announced, call).await.map_err(wire_error)
}

async fn run(
    session: &Session,
    announced: &mut AnnouncementsRead,
    call: Call,
) -> Result<Value, Error> {
    let named = call.window();
    let window = || async {
        session
            .window(&match named {
                Some(id) => WindowPick::Id(id),
                None => WindowPick::Default,
            })
            .await
    };
    // A wait with no window named waits, within its timeout, for the app's
    // first window too: a client started beside the app has nothing to poll.
    // Answers the window and the time left.
    let window_within = |timeout: Duration| async move {
        let started = std::time::Instant::now();
        let window = match named {
            Some(_) => window().await?,
            None => session.window_shown(&WindowPick::Default, timeout).await?,
        };
        Ok::<_, Error>((window, timeout.saturating_sub(started.elapsed())))
    };
    match call {
        Call::Windows => {
            let windows = session
                .list_windows(&WindowFilter::default())
                .iter()
                .map(window_wire)
                .collect();
            Ok(value(WindowsAnswer { windows }))
        }
        Call::Tree { .. } => {
            let handle = window().await?.handle;
            let read = session.snapshot(handle, &ReadOptions::default()).await?;
            let announcements = session.announcements(handle, announced).await?;
            Ok(value(tree_wire(&read.elements, handle.id, announcements)))
        }
        Call::Act {
            element, action, ..
        } => {
            let handle = window().await?.handle;
            let element = match element {
                ElementPick::Id(id) => ElementRef::Id(id),
                ElementPick::Key(key) => ElementRef::Query(Box::new(Query::key(key))),
            };
            let report = session
                .act(handle, element, action_of(action), ActOptions::default())
                .await?;
            Ok(effect_answer(report.unsettled))
        }
        Call::Input { events, .. } => {
            let handle = window().await?.handle;
            let events = events.into_iter().map(event_of).collect();
            // In the window's queue, as every face's input is, and answered
            // once the app drew what it did.
            let steps = session
                .input_steps(handle, vec![Step::drawn(events)], InputOptions::default())
                .await?;
            Ok(effect_answer(
                steps.last().and_then(|s| s.unsettled.clone()),
            ))
        }
        Call::Capture { .. } => {
            let capture = session.capture(window().await?.handle).await?;
            let (width, height) = (capture.width, capture.height);
            let png = encode_capture(capture, ImageFormat::Png).await?;
            Ok(value(CaptureAnswer {
                png: base64::engine::general_purpose::STANDARD.encode(&png),
                width,
                height,
            }))
        }
        Call::Idle { timeout_ms, .. } => {
            let timeout = timeout_ms.map_or(IDLE_FOREVER, Duration::from_millis);
            let (window, left) = window_within(timeout).await?;
            session.settle(window.handle, left).await?;
            Ok(json!({}))
        }
        Call::WaitFor {
            awaited,
            gone,
            timeout_ms,
            ..
        } => {
            let query = match awaited {
                wire::Awaited::Text(text) => Query {
                    text_contains: Some(text),
                    ..Query::default()
                },
                wire::Awaited::Element(ElementPick::Id(id)) => Query {
                    id: Some(id),
                    ..Query::default()
                },
                wire::Awaited::Element(ElementPick::Key(key)) => Query::key(key),
            };
            let expect = if gone {
                Expect::Gone(query)
            } else {
                Expect::Shown(query)
            };
            let timeout = timeout_ms.map_or(IDLE_FOREVER, Duration::from_millis);
            let (window, left) = window_within(timeout).await?;
            let found = session.wait_for(window.handle, &expect, left).await?;
            Ok(match found {
                Some(node) => json!({"id": node.id.to_string()}),
                None => json!({}),
            })
        }
        Call::Eval { script, .. } => {
            let value = session.evaluate(window().await?.handle, &script).await?;
            Ok(json!({ "value": value }))
        }
        Call::Menu { path, .. } => {
            session.menu(window().await?.handle, &path).await?;
            Ok(json!({}))
        }
        Call::Record { on } => {
            let (dir, incomplete) = match on {
                true => (session.start_recording().await?, None),
                false => session.end_recording().await?,
            };
            let answer = wire::RecordAnswer {
                dir: dir.display().to_string(),
                recording: on,
                incomplete,
            };
            Ok(serde_json::to_value(answer).expect("an answer serializes"))
        }
        Call::Step { frames } => {
            let stepped = session.step(frames).await?;
            let answer = wire::StepAnswer {
                frames: stepped.frames,
                callbacks: stepped.callbacks,
            };
            Ok(serde_json::to_value(answer).expect("an answer serializes"))
        }
        Call::Menus { .. } => {
            let handle = window().await?.handle;
            let bar = session.menus(handle).await?;
            let buttons = session.button_menus(handle).await?;
            let titled = |kind: &str, m: Menu| wire::MenuWire {
                title: m.title,
                kind: kind.into(),
                rows: m.rows.into_iter().map(row_wire).collect(),
            };
            let menus = bar
                .into_iter()
                .map(|m| titled("bar", m))
                .chain(buttons.into_iter().map(|m| titled("button", m)))
                .collect();
            Ok(value(wire::MenusAnswer { menus }))
        }
        Call::Launch { app, timeout_ms } => {
            let (app, args) = match app {
                wire::LaunchApp::Command(mut command) => {
                    let program = command.remove(0);
                    (AppSpec::Executable(program), command)
                }
                wire::LaunchApp::DesktopId { id, args } => (AppSpec::DesktopId(id), args),
            };
            let launched = session
                .launch(Launch {
                    app: Some(app),
                    args,
                    env: Vec::new(),
                    cwd: None,
                    background: false,
                    wait_for_window: Some(timeout_ms.map_or(LAUNCH_WAIT, Duration::from_millis)),
                })
                .await?;
            Ok(value(wire::LaunchAnswer {
                pid: launched.pid,
                windows: launched.windows.iter().map(window_wire).collect(),
                ended: launched.ended,
            }))
        }
    }
}

/// A menu's row in MyGo's words.
fn row_wire(row: MenuRow) -> wire::MenuRowWire {
    match row {
        MenuRow::Separator => wire::MenuRowWire {
            separator: true,
            ..wire::MenuRowWire::default()
        },
        MenuRow::Item {
            label,
            shortcut,
            enabled,
            checked,
            submenu,
            ..
        } => wire::MenuRowWire {
            label,
            shortcut,
            disabled: !enabled,
            checked: checked.map(|c| {
                match c {
                    Checked::True => "true",
                    Checked::False => "false",
                    Checked::Mixed => "mixed",
                }
                .into()
            }),
            submenu: submenu
                .unwrap_or_default()
                .into_iter()
                .map(row_wire)
                .collect(),
            ..wire::MenuRowWire::default()
        },
    }
}

/// An answer as JSON; these plain types always serialise.
fn value(answer: impl serde::Serialize) -> Value {
    serde_json::to_value(answer).expect("answers are plain data")
}

fn action_of(a: wire::Action) -> Action {
    match a {
        wire::Action::Press => Action::Press,
        wire::Action::Focus => Action::Focus,
        wire::Action::SetValue { text } => Action::SetValue { text },
        wire::Action::InsertText { text } => Action::InsertText { text },
        wire::Action::SelectText { from, to } => Action::SelectText { from, to },
        wire::Action::Increment => Action::Increment,
        wire::Action::Decrement => Action::Decrement,
        wire::Action::ScrollIntoView => Action::ScrollIntoView,
        wire::Action::Expand => Action::Expand,
        wire::Action::Collapse => Action::Collapse,
    }
}

fn mods_of(m: wire::Mods) -> wayrig_host::Mods {
    wayrig_host::Mods {
        shift: m.shift,
        ctrl: m.ctrl,
        alt: m.alt,
        logo: m.logo,
    }
}

fn button_of(b: wire::Button) -> wayrig_host::Button {
    match b {
        wire::Button::Left => wayrig_host::Button::Left,
        wire::Button::Right => wayrig_host::Button::Right,
        wire::Button::Middle => wayrig_host::Button::Middle,
    }
}

fn event_of(e: wire::Event) -> InputEvent {
    use wire::Event as E;
    match e {
        E::PointerMove { x, y, mods } => InputEvent::PointerMove {
            x,
            y,
            mods: mods_of(mods),
        },
        E::PointerDown {
            x,
            y,
            button,
            clicks,
            mods,
        } => InputEvent::PointerDown {
            x,
            y,
            button: button_of(button),
            clicks,
            mods: mods_of(mods),
        },
        E::PointerUp {
            x,
            y,
            button,
            clicks,
            mods,
        } => InputEvent::PointerUp {
            x,
            y,
            button: button_of(button),
            clicks,
            mods: mods_of(mods),
        },
        E::Click {
            x,
            y,
            button,
            clicks,
            mods,
        } => InputEvent::Click {
            x,
            y,
            button: button_of(button),
            clicks,
            mods: mods_of(mods),
        },
        E::Wheel {
            x,
            y,
            dx,
            dy,
            precise,
            mods,
        } => InputEvent::Wheel {
            x,
            y,
            dx,
            dy,
            precise,
            mods: mods_of(mods),
        },
        E::KeyDown { key } => InputEvent::KeyDown { key },
        E::KeyUp { key } => InputEvent::KeyUp { key },
        E::Key { key } => InputEvent::Key { key },
        E::Text { text } => InputEvent::Text { text },
    }
}

fn rect_wire(r: &wayrig_host::Rect) -> wire::Rect {
    wire::Rect {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    }
}

fn window_wire(w: &WindowInfo) -> wire::Window {
    wire::Window {
        id: w.handle.id,
        title: w.title.clone(),
        kind: "content".into(),
        url: None,
        bounds: rect_wire(&w.frame),
        content_bounds: rect_wire(&w.content),
        focused: w.focused,
        visible: w.on_screen,
    }
}

/// MyGo's role word for a model role.
pub fn role_word(role: Role) -> &'static str {
    match role {
        Role::Dialog => "dialog",
        Role::Alert => "alert",
        Role::Button => "button",
        Role::ToggleButton => "toggleButton",
        Role::CheckBox => "checkBox",
        Role::RadioButton => "radio",
        Role::Switch => "switch",
        Role::ComboBox => "comboBox",
        Role::MenuButton => "menuButton",
        Role::TextInput | Role::PasswordInput | Role::TextArea | Role::SearchInput => "textField",
        Role::SpinButton => "stepper",
        Role::Slider => "slider",
        Role::ProgressBar => "progress",
        // A scroll area; a scroll bar shows as one only where nothing else
        // scrolls (see `tree_wire`).
        Role::ScrollView | Role::ScrollBar => "scroll",
        Role::RadioGroup => "radioGroup",
        Role::AlertDialog => "alertDialog",
        Role::PopUpButton => "popUpButton",
        Role::Disclosure => "disclosure",
        Role::Label | Role::Paragraph => "text",
        Role::Heading => "heading",
        Role::Link => "link",
        Role::Image => "image",
        Role::List => "list",
        Role::ListItem => "listItem",
        Role::Tree => "tree",
        Role::TreeItem => "treeItem",
        Role::Table => "table",
        Role::Row => "row",
        Role::Cell => "cell",
        Role::ColumnHeader => "columnHeader",
        Role::RowHeader => "rowHeader",
        Role::TabList => "tabList",
        Role::Tab => "tab",
        Role::TabPanel => "tabPanel",
        Role::MenuBar => "menuBar",
        Role::Menu => "menu",
        Role::MenuItem => "menuItem",
        Role::CheckMenuItem => "menuItemCheckBox",
        Role::RadioMenuItem => "menuItemRadio",
        Role::Separator => "separator",
        Role::Toolbar => "toolbar",
        Role::StatusBar => "status",
        Role::Tooltip => "tooltip",
        Role::Document | Role::Region => "region",
        Role::Meter => "meter",
        Role::Log => "log",
        Role::Timer => "timer",
        Role::Article => "article",
        Role::Navigation => "navigation",
        Role::Main => "main",
        Role::Banner => "banner",
        Role::ContentInfo => "contentInfo",
        Role::Complementary => "complementary",
        Role::Search => "search",
        Role::Deletion => "deletion",
        Role::Insertion => "insertion",
        Role::Grid => "grid",
        Role::TreeGrid => "treeGrid",
        Role::Splitter => "splitter",
        Role::Window
        | Role::Application
        | Role::Group
        | Role::Panel
        | Role::Canvas
        | Role::Unknown => "group",
    }
}

fn state_words(n: &Node) -> Vec<String> {
    let s = &n.states;
    [
        (s.focusable, "focusable"),
        (s.disabled, "disabled"),
        // Mixed wins over checked, as every face reads it.
        (n.checked() == Some(Checked::True), "checked"),
        (n.checked() == Some(Checked::Mixed), "mixed"),
        (s.selected, "selected"),
        (s.expanded, "expanded"),
        (s.multiline, "multiline"),
        (s.password, "password"),
        (s.read_only, "readOnly"),
        (s.selectable, "selectable"),
        (s.offscreen, "offscreen"),
        (s.multiselectable, "multiselectable"),
        (s.invalid, "invalid"),
        (s.expandable, "expandable"),
        (s.vertical, "vertical"),
        (s.busy, "busy"),
        (s.horizontal, "horizontal"),
        (n.role == Role::SearchInput, "search"),
        (s.sort == Some(Sort::Ascending), "sortAscending"),
        (s.sort == Some(Sort::Descending), "sortDescending"),
        (s.sort == Some(Sort::Other), "sortOther"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, word)| word.to_string())
    .collect()
}

fn action_word(a: Offered) -> &'static str {
    match a {
        Offered::Press => "press",
        Offered::Focus => "focus",
        Offered::SetValue => "setValue",
        Offered::InsertText => "insertText",
        Offered::SelectText => "selectText",
        Offered::Increment => "increment",
        Offered::Decrement => "decrement",
        Offered::Expand => "expand",
        Offered::Collapse => "collapse",
    }
}

/// A scroll bar inside a scroll area: MyGo has no word for it, and the area,
/// a `scroll` node itself, is what scrolls.
fn inside_a_scroll_area(e: &Element, by_id: &HashMap<u64, &Element>) -> bool {
    let mut up = e.parent;
    while let Some(p) = up.and_then(|p| by_id.get(&p)) {
        if p.node.role == Role::ScrollView {
            return true;
        }
        up = p.parent;
    }
    false
}

fn fallback_wire(f: &LabelFallback) -> wire::LabelFallback {
    wire::LabelFallback {
        from: f.source.as_str().into(),
        text: f.text.clone(),
    }
}

fn tree_wire(elements: &[Element], window: u64, announcements: Vec<String>) -> TreeAnswer {
    let by_id: HashMap<u64, &Element> = elements.iter().map(|e| (e.node.id, e)).collect();
    let left_out: HashSet<u64> = elements
        .iter()
        .filter(|e| e.node.role == Role::ScrollBar && inside_a_scroll_area(e, &by_id))
        .map(|e| e.node.id)
        .collect();
    let elements: Vec<&Element> = elements
        .iter()
        .filter(|e| !left_out.contains(&e.node.id))
        .collect();
    // The nearest ancestor still in the tree.
    let parent_of = |e: &Element| {
        let mut up = e.parent;
        while let Some(p) = up.filter(|p| left_out.contains(p)) {
            up = by_id.get(&p).and_then(|p| p.parent);
        }
        up
    };
    let kept: HashSet<u64> = elements.iter().map(|e| e.node.id).collect();
    let ids = |ids: &[u64]| -> Vec<String> {
        ids.iter()
            .filter(|id| kept.contains(id))
            .map(u64::to_string)
            .collect()
    };
    let nodes = elements
        .iter()
        .map(|e| {
            let n = &e.node;
            let a = &n.annotations;
            let Place {
                level,
                pos_in_set,
                set_size,
                row_count,
                col_count,
                row_index,
                col_index,
                row_span,
                col_span,
            } = n.place;
            wire::Element {
                id: n.id.to_string(),
                parent: parent_of(e).map(|p| p.to_string()),
                role: role_word(n.role).into(),
                key: n.key.clone(),
                label: (!n.name.is_empty()).then(|| n.name.clone()),
                label_is_class_name: n.name_is_stand_in,
                label_fallback: n.label_fallback.as_ref().map(fallback_wire),
                description: (!n.description.is_empty()).then(|| n.description.clone()),
                value: n.value.clone(),
                bounds: n.bounds.as_ref().map(rect_wire),
                min: n.range.map(|r| r.min),
                max: n.range.map(|r| r.max),
                now: n.range.map(|r| r.now),
                // Only a step the toolkit gives: 0 means it gave none.
                step: n.range.map(|r| r.step).filter(|s| *s > 0.0),
                selection: n.selection.map(|(from, to)| [from, to]),
                level,
                pos_in_set,
                set_size,
                row_count,
                col_count,
                row_index,
                col_index,
                row_span,
                col_span,
                current: a.current.as_ref().map(|c| {
                    if c == "true" {
                        Value::Bool(true)
                    } else {
                        Value::String(c.clone())
                    }
                }),
                placeholder: a.placeholder.clone(),
                auto_complete: a.auto_complete.clone(),
                role_description: a.role_description.clone(),
                has_popup: a.has_popup.clone(),
                key_shortcuts: a.key_shortcuts.clone(),
                controls: ids(&n.relations.controls),
                described_by: ids(&n.relations.described_by),
                error_message: ids(&n.relations.error_message),
                states: state_words(n),
                actions: offered(n)
                    .into_iter()
                    .map(|a| action_word(a).to_string())
                    .collect(),
            }
        })
        .collect();
    TreeAnswer {
        window,
        focus: elements
            .iter()
            .find(|e| e.node.states.focused)
            .map(|e| e.node.id.to_string()),
        nodes,
        announcements,
    }
}

/// An input's or an action's answer: MyGo's `{}`, with `wayrig.unsettled`
/// saying why when the effect wait ran out before the window settled (a
/// member namespaced as Wayrig's methods are, which MyGo clients ignore;
/// the Bus and cua say the same in their own terms).
fn effect_answer(unsettled: Option<String>) -> Value {
    let mut answer = json!({});
    if let Some(why) = unsettled {
        answer[wire::UNSETTLED_MEMBER] = json!(why);
    }
    answer
}
