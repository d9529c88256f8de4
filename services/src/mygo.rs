//! The MyGo automation face: newline-delimited JSON over a Unix socket, one
//! request per line, answered in order, translating the one model into MyGo's words.
//!
//! Socket rules: mode 0600; a socket left by an ended process is replaced, a
//! live one or a file that is no socket is not; removed when the server stops.

use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use wayrig_host::{Button, InputEvent, InputOptions, Mods, Rect, WindowInfo};

use crate::actions::Action;
use crate::model::{Error, Node, Place, Role, Sort, Tree};
use crate::session::Session;

/// The longest request line taken; longer ones are answered with an error.
pub const MAX_LINE: usize = 8 * 1024 * 1024;
/// `idle` without a timeout waits this long at most.
const IDLE_FOREVER: Duration = Duration::from_secs(24 * 3600);

/// A bound automation socket; dropping it removes the socket file.
pub struct Listener {
    listener: UnixListener,
    path: PathBuf,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bind the socket at `path`, following the protocol's rules.
pub async fn bind(path: &Path) -> Result<Listener, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(format!(
                "{} exists and is not a socket; not replacing it",
                path.display()
            ));
        }
        Ok(_) => {
            if UnixStream::connect(path).await.is_ok() {
                return Err(format!("another process listens on {}", path.display()));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot replace the stale socket {}: {e}", path.display()))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot use {}: {e}", path.display())),
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    Ok(Listener {
        listener,
        path: path.to_path_buf(),
    })
}

/// Serve connections until the task is dropped; each connection runs on its own.
pub async fn serve(listener: Listener, session: Arc<Session>) {
    loop {
        match listener.listener.accept().await {
            Ok((stream, _)) => {
                let session = session.clone();
                tokio::spawn(async move { connection(stream, session).await });
            }
            Err(e) => {
                tracing::warn!(%e, "automation socket accept failed");
                return;
            }
        }
    }
}

/// One client: requests in order, each answered before the next is read.
async fn connection(stream: UnixStream, session: Arc<Session>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let answer = match read_line(&mut reader, &mut line).await {
            Ok(Line::End) => return,
            Ok(Line::TooLong) => error_answer(
                Value::Null,
                "invalid_request",
                &format!("request line longer than {MAX_LINE} bytes"),
            ),
            Ok(Line::Complete) => answer(&session, &line).await,
            Err(_) => return,
        };
        let mut out = answer.to_string();
        out.push('\n');
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

enum Line {
    Complete,
    TooLong,
    End,
}

/// Read one line, keeping at most `MAX_LINE` bytes; a half line at the end is dropped.
async fn read_line(
    reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(Line::End);
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() <= MAX_LINE {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

fn error_answer(id: Value, code: &str, message: &str) -> Value {
    json!({"id": id, "error": {"code": code, "message": message}})
}

/// A protocol error: its code and message.
struct Fail(&'static str, String);

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::NoWindow(_) => "no_window",
            Error::NoElement(_) | Error::Stale(_) => "no_element",
            Error::Unsupported(_) => "unsupported",
            Error::Timeout(_) => "timeout",
            Error::InvalidRequest(_) => "invalid_request",
            Error::Failed(_) => "failed",
        };
        Fail(code, e.to_string())
    }
}

impl From<wayrig_host::HostError> for Fail {
    fn from(e: wayrig_host::HostError) -> Self {
        Error::from(e).into()
    }
}

fn invalid(message: impl Into<String>) -> Fail {
    Fail("invalid_request", message.into())
}

async fn answer(session: &Session, line: &[u8]) -> Value {
    let request: Map<String, Value> = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) => map,
        _ => return error_answer(Value::Null, "parse_error", "the line is not a JSON object"),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = match request.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => return error_answer(id, "invalid_request", "method must be a string"),
        None => return error_answer(id, "invalid_request", "no method"),
    };
    let params = match request.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return error_answer(id, "invalid_request", "params must be an object"),
    };
    match dispatch(session, &method, &params).await {
        Ok(result) => json!({"id": id, "result": result}),
        Err(Fail(code, message)) => error_answer(id, code, &message),
    }
}

async fn dispatch(
    session: &Session,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Value, Fail> {
    let host = session.host();
    match method {
        "windows" => {
            check_params(params, &[])?;
            let windows = host.windows().await?;
            Ok(
                json!({"windows": windows.iter().filter(|w| is_top(w)).map(window_json).collect::<Vec<_>>()}),
            )
        }
        "tree" => {
            check_params(params, &["window"])?;
            let window = pick_window(session, params).await?;
            let tree = session.tree(window.handle).await?;
            let mut result = tree_json(&tree);
            let announcements = session.announcements(window.handle).await?;
            if !announcements.is_empty() {
                result["announcements"] = json!(announcements);
            }
            Ok(result)
        }
        "act" => {
            check_params(
                params,
                &["window", "id", "key", "action", "text", "from", "to"],
            )?;
            let window = pick_window(session, params).await?;
            let tree = session.tree(window.handle).await?;
            let node = find_node(&tree, params)?;
            let action = action_of(params)?;
            session.act(window.handle, node.id, action).await?;
            Ok(json!({}))
        }
        "input" => {
            check_params(params, &["window", "events"])?;
            let window = pick_window(session, params).await?;
            let events = match params.get("events") {
                Some(Value::Array(events)) => events
                    .iter()
                    .enumerate()
                    .map(|(i, e)| input_event(i, e))
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(invalid("input needs events, a list")),
            };
            host.input(window.handle, events, InputOptions::default())
                .await?;
            Ok(json!({}))
        }
        "capture" => {
            check_params(params, &["window"])?;
            let window = pick_window(session, params).await?;
            let capture = host.capture_window(window.handle).await?;
            let png = base64::engine::general_purpose::STANDARD.encode(&capture.png);
            Ok(json!({"png": png, "width": capture.width, "height": capture.height}))
        }
        "idle" => {
            check_params(params, &["window", "timeout"])?;
            let window = pick_window(session, params).await?;
            let timeout = match params.get("timeout") {
                None | Some(Value::Null) => IDLE_FOREVER,
                Some(v) => Duration::from_millis(
                    v.as_u64()
                        .ok_or_else(|| invalid("timeout is a number of milliseconds"))?,
                ),
            };
            session.settle(window.handle, timeout).await?;
            Ok(json!({}))
        }
        "eval" => {
            check_params(params, &["window", "script"])?;
            pick_window(session, params).await?;
            Err(Fail(
                "unsupported",
                "the window shows native UI, not a page: there is no script to evaluate".into(),
            ))
        }
        "menu" => {
            check_params(params, &["window", "path"])?;
            let window = pick_window(session, params).await?;
            let path = match params.get("path") {
                Some(Value::Array(labels)) => labels
                    .iter()
                    .map(|l| l.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| invalid("path is a list of labels (strings)"))?,
                _ => return Err(invalid("menu needs path, a list of labels")),
            };
            session.menu(window.handle, &path).await?;
            Ok(json!({}))
        }
        other => Err(Fail("unknown_method", format!("no method {other:?}"))),
    }
}

fn check_params(params: &Map<String, Value>, allowed: &[&str]) -> Result<(), Fail> {
    match params.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid(format!("unknown parameter {k:?}"))),
        None => Ok(()),
    }
}

/// Windows clients address: top-level ones (menus and tooltips belong to them).
fn is_top(w: &WindowInfo) -> bool {
    matches!(
        w.kind,
        wayrig_host::WindowKind::Normal | wayrig_host::WindowKind::Dialog
    )
}

/// The window a request names, else the focused one, else the first.
async fn pick_window(session: &Session, params: &Map<String, Value>) -> Result<WindowInfo, Fail> {
    let windows: Vec<WindowInfo> = session
        .host()
        .windows()
        .await?
        .into_iter()
        .filter(is_top)
        .collect();
    match params.get("window") {
        None | Some(Value::Null) => windows
            .iter()
            .find(|w| w.focused)
            .or_else(|| windows.first())
            .cloned()
            .ok_or_else(|| Fail("no_window", "the app has no window".into())),
        Some(v) => {
            let id = v
                .as_u64()
                .ok_or_else(|| invalid("window is the number windows lists"))?;
            windows
                .into_iter()
                .find(|w| w.handle.id == id)
                .ok_or_else(|| Fail("no_window", format!("no window {id}")))
        }
    }
}

fn rect_json(r: &Rect) -> Value {
    json!({"x": r.x, "y": r.y, "width": r.width, "height": r.height})
}

fn window_json(w: &WindowInfo) -> Value {
    json!({
        "id": w.handle.id,
        "title": w.title,
        "kind": "content",
        "bounds": rect_json(&w.frame),
        "contentBounds": rect_json(&w.content),
        "focused": w.focused,
        "visible": w.on_screen,
    })
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
        Role::ScrollBar => "scroll",
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
        | Role::ScrollView
        | Role::Canvas
        | Role::Unknown => "group",
    }
}

fn state_words(n: &Node) -> Vec<&'static str> {
    let s = &n.states;
    [
        (s.focusable, "focusable"),
        (s.disabled, "disabled"),
        (s.checked, "checked"),
        (s.mixed, "mixed"),
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
    .filter_map(|(on, word)| on.then_some(word))
    .collect()
}

fn action_words(n: &Node) -> Vec<&'static str> {
    let mut actions = Vec::new();
    match n.role {
        Role::Button
        | Role::ToggleButton
        | Role::CheckBox
        | Role::RadioButton
        | Role::Switch
        | Role::MenuButton
        | Role::ComboBox
        | Role::Link
        | Role::MenuItem
        | Role::CheckMenuItem
        | Role::RadioMenuItem
        | Role::Tab
        | Role::ListItem
        | Role::TreeItem => actions.push("press"),
        _ => {}
    }
    if n.states.focusable {
        actions.push("focus");
    }
    match n.role {
        Role::TextInput | Role::PasswordInput | Role::TextArea | Role::SearchInput => {
            actions.extend(["setValue", "insertText", "selectText"])
        }
        Role::Slider | Role::SpinButton => actions.extend(["setValue", "increment", "decrement"]),
        _ => {}
    }
    if n.states.expandable {
        actions.extend(["expand", "collapse"]);
    }
    actions
}

/// Layout-only containers (unnamed panels and groups) have no node; their
/// children hang from the nearest element that does.
fn is_element(n: &Node, root: u64) -> bool {
    n.id == root || !n.is_layout()
}

fn tree_json(tree: &Tree) -> Value {
    let root = tree.nodes.first().map(|n| n.id).unwrap_or_default();
    let kept: HashSet<u64> = tree
        .nodes
        .iter()
        .filter(|n| is_element(n, root))
        .map(|n| n.id)
        .collect();
    let parent_of = |n: &Node| -> Option<u64> {
        let mut parent = n.parent;
        while let Some(p) = parent {
            if kept.contains(&p) {
                return Some(p);
            }
            parent = tree.node(p)?.parent;
        }
        None
    };
    let nodes: Vec<Value> = tree
        .nodes
        .iter()
        .filter(|n| kept.contains(&n.id))
        .map(|n| {
            let mut o = Map::new();
            o.insert("id".into(), Value::String(n.id.to_string()));
            if let Some(p) = parent_of(n) {
                o.insert("parent".into(), Value::String(p.to_string()));
            }
            o.insert("role".into(), Value::String(role_word(n.role).into()));
            if let Some(k) = &n.key {
                o.insert("key".into(), Value::String(k.clone()));
            }
            if !n.name.is_empty() {
                o.insert("label".into(), Value::String(n.name.clone()));
            }
            if !n.description.is_empty() {
                o.insert("description".into(), Value::String(n.description.clone()));
            }
            if let Some(v) = &n.value {
                o.insert("value".into(), Value::String(v.clone()));
            }
            if let Some(b) = &n.bounds {
                o.insert("bounds".into(), rect_json(b));
            }
            if let Some(r) = &n.range {
                o.insert("min".into(), json!(r.min));
                o.insert("max".into(), json!(r.max));
                o.insert("now".into(), json!(r.now));
                o.insert("step".into(), json!(r.step));
            }
            if let Some((from, to)) = n.selection {
                o.insert("selection".into(), json!([from, to]));
            }
            place_json(&mut o, &n.place);
            annotations_json(&mut o, n, &kept);
            let states = state_words(n);
            if !states.is_empty() {
                o.insert("states".into(), json!(states));
            }
            let actions = action_words(n);
            if !actions.is_empty() {
                o.insert("actions".into(), json!(actions));
            }
            Value::Object(o)
        })
        .collect();
    let mut result = json!({"window": tree.window.handle.id, "nodes": nodes});
    if let Some(f) = tree
        .nodes
        .iter()
        .find(|n| n.states.focused && kept.contains(&n.id))
    {
        result["focus"] = Value::String(f.id.to_string());
    }
    result
}

/// A node's place in its set, tree or table, in the spec's field names.
fn place_json(o: &mut Map<String, Value>, p: &Place) {
    for (name, value) in [
        ("level", p.level),
        ("posInSet", p.pos_in_set),
        ("setSize", p.set_size),
        ("rowCount", p.row_count),
        ("colCount", p.col_count),
        ("rowIndex", p.row_index),
        ("colIndex", p.col_index),
        ("rowSpan", p.row_span),
        ("colSpan", p.col_span),
    ] {
        if let Some(v) = value {
            o.insert(name.into(), json!(v));
        }
    }
}

/// ARIA-like facts and relations; relations name only elements in the tree.
fn annotations_json(o: &mut Map<String, Value>, n: &Node, kept: &HashSet<u64>) {
    let a = &n.annotations;
    if let Some(current) = &a.current {
        let value = if current == "true" {
            Value::Bool(true)
        } else {
            Value::String(current.clone())
        };
        o.insert("current".into(), value);
    }
    for (name, value) in [
        ("placeholder", &a.placeholder),
        ("autoComplete", &a.auto_complete),
        ("roleDescription", &a.role_description),
        ("hasPopup", &a.has_popup),
        ("keyShortcuts", &a.key_shortcuts),
    ] {
        if let Some(v) = value {
            o.insert(name.into(), Value::String(v.clone()));
        }
    }
    for (name, ids) in [
        ("controls", &n.relations.controls),
        ("describedBy", &n.relations.described_by),
        ("errorMessage", &n.relations.error_message),
    ] {
        let ids: Vec<Value> = ids
            .iter()
            .filter(|id| kept.contains(id))
            .map(|id| Value::String(id.to_string()))
            .collect();
        if !ids.is_empty() {
            o.insert(name.into(), Value::Array(ids));
        }
    }
}

fn find_node<'a>(tree: &'a Tree, params: &Map<String, Value>) -> Result<&'a Node, Fail> {
    match (params.get("id"), params.get("key")) {
        (Some(id), None) => {
            let id: u64 = match id {
                Value::String(s) => s.parse().map_err(|_| invalid("id is a string of digits"))?,
                Value::Number(n) => n
                    .as_u64()
                    .ok_or_else(|| invalid("id is a string of digits"))?,
                _ => return Err(invalid("id is a string of digits")),
            };
            tree.node(id)
                .ok_or_else(|| Fail("no_element", format!("no element {id}")))
        }
        (None, Some(key)) => {
            let key = key
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| key.to_string());
            let found: Vec<&Node> = tree
                .nodes
                .iter()
                .filter(|n| n.key.as_deref() == Some(&key))
                .collect();
            match found.as_slice() {
                [one] => Ok(one),
                [] => Err(Fail("no_element", format!("no element has key {key:?}"))),
                many => Err(Fail(
                    "no_element",
                    format!("{} elements have key {key:?}; use an id", many.len()),
                )),
            }
        }
        (Some(_), Some(_)) => Err(invalid("give id or key, not both")),
        (None, None) => Err(invalid("act needs an id or a key")),
    }
}

fn action_of(params: &Map<String, Value>) -> Result<Action, Fail> {
    let text = || -> Result<String, Fail> {
        params
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| invalid("this action needs text"))
    };
    let int = |k: &str| -> Result<i32, Fail> {
        params
            .get(k)
            .and_then(Value::as_i64)
            .ok_or_else(|| invalid(format!("selectText needs {k}")))
            .and_then(|v| {
                i32::try_from(v).map_err(|_| invalid(format!("{k} {v} is past any text's length")))
            })
    };
    match params.get("action").and_then(Value::as_str) {
        Some("press") => Ok(Action::Press),
        Some("focus") => Ok(Action::Focus),
        Some("setValue") => Ok(Action::SetValue { text: text()? }),
        Some("insertText") => Ok(Action::InsertText { text: text()? }),
        Some("selectText") => Ok(Action::SelectText {
            from: int("from")?,
            to: int("to")?,
        }),
        Some("increment") => Ok(Action::Increment),
        Some("decrement") => Ok(Action::Decrement),
        Some("scrollIntoView") => Ok(Action::ScrollIntoView),
        Some("expand") => Ok(Action::Expand),
        Some("collapse") => Ok(Action::Collapse),
        Some(other) => Err(invalid(format!("unknown action {other:?}"))),
        None => Err(invalid("act needs an action")),
    }
}

fn mods_of(v: Option<&Value>) -> Result<Mods, String> {
    let mut mods = Mods::default();
    let Some(v) = v else { return Ok(mods) };
    let list = v.as_array().ok_or("mods is a list")?;
    for m in list {
        match m.as_str() {
            Some("shift") => mods.shift = true,
            Some("ctrl") | Some("cmdOrCtrl") => mods.ctrl = true,
            Some("alt") => mods.alt = true,
            Some("super") => mods.logo = true,
            other => return Err(format!("unknown modifier {other:?}")),
        }
    }
    Ok(mods)
}

fn input_event(i: usize, e: &Value) -> Result<InputEvent, Fail> {
    let bad = |m: String| invalid(format!("event {i}: {m}"));
    let obj = e
        .as_object()
        .ok_or_else(|| bad("an event is an object".into()))?;
    let num = |k: &str| -> Result<f64, Fail> {
        obj.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| bad(format!("needs a number {k}")))
    };
    let string = |k: &str| -> Result<String, Fail> {
        obj.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(format!("needs a string {k}")))
    };
    let mods = mods_of(obj.get("mods")).map_err(bad)?;
    let button = match obj.get("button").and_then(Value::as_str) {
        None => Button::Left,
        Some("left") => Button::Left,
        Some("right") => Button::Right,
        Some("middle") => Button::Middle,
        Some(other) => return Err(bad(format!("unknown button {other:?}"))),
    };
    let clicks = match obj.get("clicks") {
        None => 1,
        Some(v) => v.as_u64().ok_or_else(|| bad("clicks is a number".into()))? as u32,
    };
    Ok(match obj.get("type").and_then(Value::as_str) {
        Some("pointerMove") => InputEvent::PointerMove {
            x: num("x")?,
            y: num("y")?,
            mods,
        },
        Some("pointerDown") => InputEvent::PointerDown {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("pointerUp") => InputEvent::PointerUp {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("click") => InputEvent::Click {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("wheel") => InputEvent::Wheel {
            x: num("x")?,
            y: num("y")?,
            dx: num("dx")?,
            dy: num("dy")?,
            precise: obj.get("precise").and_then(Value::as_bool).unwrap_or(false),
            mods,
        },
        Some("keyDown") => InputEvent::KeyDown {
            key: string("key")?,
        },
        Some("keyUp") => InputEvent::KeyUp {
            key: string("key")?,
        },
        Some("key") => InputEvent::Key {
            key: string("key")?,
        },
        Some("text") => InputEvent::Text {
            text: string("text")?,
        },
        Some(other) => return Err(bad(format!("unknown event type {other:?}"))),
        None => return Err(bad("needs a type".into())),
    })
}
