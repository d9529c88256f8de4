//! MyGo automation's wire: newline-delimited JSON requests, their answers and
//! error codes, as `shared/spec/mygo-automation.md` gives them, parsed strictly.
//!
//! A request parses into a typed [`Call`] (or the error its answer carries);
//! a client builds the same `Call` and writes it with [`Request::to_line`].

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// The longest request line a server takes; longer ones are answered with an error.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// An error's code, for clients to test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The line is not a JSON object (its id is then null).
    ParseError,
    /// No method, params the method does not take, or values it cannot use.
    InvalidRequest,
    UnknownMethod,
    /// No window has the id, or the app has none.
    NoWindow,
    /// No element of the window's last frame has the id or the key.
    NoElement,
    /// The window cannot do it.
    Unsupported,
    /// `idle` gave up after its timeout.
    Timeout,
    /// The app could not do it.
    Failed,
}

/// An answer's error: a code to test and a message to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    pub code: Code,
    pub message: String,
}

impl WireError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        WireError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        WireError::new(Code::InvalidRequest, message)
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One request: its id (any JSON value, which the answer repeats) and its call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Value,
    pub call: Call,
}

/// A request's id as its client wrote it, for the answer to repeat byte for
/// byte: a 30-digit integer or `1e2` comes back as written, not as a float.
#[derive(Debug, Clone)]
pub struct RawId(Box<RawValue>);

impl RawId {
    /// The id of a line that is no JSON object, or that has none.
    pub fn null() -> RawId {
        RawId(RawValue::from_string("null".into()).expect("null is JSON"))
    }

    /// The id's JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

/// The id of a request line already known to be a JSON object.
fn raw_id(line: &[u8]) -> RawId {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Box<RawValue>>,
    }
    // A line naming its id twice fails here: its id is then null, as serde
    // reads no duplicate field.
    serde_json::from_slice::<IdOnly>(line)
        .ok()
        .and_then(|r| r.id)
        .map_or_else(RawId::null, RawId)
}

/// What a request asks, with its params checked. `window` is the id `windows`
/// lists; left out, the focused window, else the first.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Windows,
    Tree {
        window: Option<u64>,
    },
    Act {
        window: Option<u64>,
        element: ElementPick,
        action: Action,
    },
    Input {
        window: Option<u64>,
        events: Vec<Event>,
    },
    Menu {
        window: Option<u64>,
        path: Vec<String>,
    },
    Capture {
        window: Option<u64>,
    },
    Eval {
        window: Option<u64>,
        script: String,
    },
    /// `timeout_ms` left out waits as long as it takes.
    Idle {
        window: Option<u64>,
        timeout_ms: Option<u64>,
    },
    /// Wayrig's extension `wayrig.waitFor`, no MyGo method: wait until an
    /// element shows (or, `gone`, until none shows), reading the window again
    /// only when it draws or its app reports a change. An app's own MyGo
    /// answers it `unknown_method`.
    WaitFor {
        window: Option<u64>,
        awaited: Awaited,
        gone: bool,
        timeout_ms: Option<u64>,
    },
    /// Wayrig's extension `wayrig.launch`, no MyGo method: start another
    /// app in the session, under its display and private buses, and answer
    /// once it mapped its first window (or `timeout_ms` ran out: 10 s when
    /// left out, at once when 0).
    Launch {
        app: LaunchApp,
        timeout_ms: Option<u64>,
    },
    /// Wayrig's extension `wayrig.menus`, no MyGo method: the window's menus
    /// with their rows, those of its menu bar and of its menu buttons, each
    /// chosen from by `menu` with its title first.
    Menus {
        window: Option<u64>,
    },
    /// Wayrig's extension `wayrig.record`, no MyGo method: start recording
    /// the session (`on`: true) into a new folder of the user's, as
    /// `wayrig run --record` does, or end the recording (`on`: false).
    Record {
        on: bool,
    },
    /// Wayrig's extension `wayrig.step`, no MyGo method: in a session paced
    /// `step`, advance every window `frames` frames, each drawn (or shown by
    /// a ping to need no drawing) before the next.
    Step {
        frames: u32,
    },
}

/// The member Wayrig adds to an `act` or `input` answer that came before the
/// window settled (its effect wait ran out), saying why: namespaced as
/// Wayrig's methods are, so MyGo clients that know nothing of it read `{}`.
pub const UNSETTLED_MEMBER: &str = "wayrig.unsettled";

/// The name of Wayrig's `WaitFor` extension on the wire: namespaced, so that
/// it can never be a method MyGo defines.
pub const WAIT_FOR_METHOD: &str = "wayrig.waitFor";

/// The name of Wayrig's `Launch` extension on the wire.
pub const LAUNCH_METHOD: &str = "wayrig.launch";

/// The name of Wayrig's `Menus` extension on the wire.
pub const MENUS_METHOD: &str = "wayrig.menus";

/// The name of Wayrig's `Record` extension on the wire.
pub const RECORD_METHOD: &str = "wayrig.record";

/// The name of Wayrig's `Step` extension on the wire.
pub const STEP_METHOD: &str = "wayrig.step";

/// `wayrig.step`'s answer: the frames advanced, and the frame callbacks
/// answered over them in all windows (0: no window asked to draw).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepAnswer {
    pub frames: u32,
    pub callbacks: u64,
}

/// `wayrig.record`'s answer: the recording's folder, and whether it records
/// now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordAnswer {
    pub dir: String,
    pub recording: bool,
    /// Why the ended recording is not whole: a write failed (a full disk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// `wayrig.menus`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MenusAnswer {
    pub menus: Vec<MenuWire>,
}

/// A menu: the title `menu` names it by, whether the menu bar or a menu
/// button opens it (`bar`, `button`), and its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MenuWire {
    pub title: String,
    pub kind: String,
    pub rows: Vec<MenuRowWire>,
}

/// A row of a menu: an item, or a separator (`separator: true`, nothing else).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MenuRowWire {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub separator: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcut: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// `true`, `false` or `mixed`, for check and radio items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submenu: Vec<MenuRowWire>,
}

/// What `wayrig.launch` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchApp {
    /// A program (on PATH, or a path) and its arguments: `command`.
    Command(Vec<String>),
    /// An installed app by its desktop id, with arguments after its Exec
    /// line's: `desktopId`, `args`.
    DesktopId { id: String, args: Vec<String> },
}

/// `wayrig.launch`'s answer: the app's process and the windows it mapped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchAnswer {
    pub pid: u32,
    pub windows: Vec<Window>,
    /// The app ended before its wait did (its output is `wayrig run`'s).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
}

/// What `wayrig.waitFor` waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Awaited {
    /// An element whose label or value contains the text.
    Text(String),
    /// The element with this id or key.
    Element(ElementPick),
}

/// How `act` names its element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementPick {
    Id(u64),
    /// The app's own name for the element, as the tree writes it.
    Key(String),
}

/// An `act` action with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Press,
    Focus,
    SetValue {
        text: String,
    },
    InsertText {
        text: String,
    },
    /// Runes `from` to `to` of a text field.
    SelectText {
        from: i32,
        to: i32,
    },
    Increment,
    Decrement,
    ScrollIntoView,
    Expand,
    Collapse,
}

impl Action {
    /// The action's name on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Press => "press",
            Action::Focus => "focus",
            Action::SetValue { .. } => "setValue",
            Action::InsertText { .. } => "insertText",
            Action::SelectText { .. } => "selectText",
            Action::Increment => "increment",
            Action::Decrement => "decrement",
            Action::ScrollIntoView => "scrollIntoView",
            Action::Expand => "expand",
            Action::Collapse => "collapse",
        }
    }
}

/// A pointer button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Button {
    #[default]
    Left,
    Right,
    Middle,
}

/// Modifier keys held during a pointer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mods {
    pub shift: bool,
    /// `ctrl`, or `cmdOrCtrl` (Ctrl off macOS).
    pub ctrl: bool,
    pub alt: bool,
    pub logo: bool,
}

/// One `input` event; coordinates are DIPs relative to the window's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    PointerMove {
        x: f64,
        y: f64,
        mods: Mods,
    },
    PointerDown {
        x: f64,
        y: f64,
        button: Button,
        clicks: u32,
        mods: Mods,
    },
    PointerUp {
        x: f64,
        y: f64,
        button: Button,
        clicks: u32,
        mods: Mods,
    },
    Click {
        x: f64,
        y: f64,
        button: Button,
        clicks: u32,
        mods: Mods,
    },
    Wheel {
        x: f64,
        y: f64,
        dx: f64,
        dy: f64,
        precise: bool,
        mods: Mods,
    },
    KeyDown {
        key: String,
    },
    KeyUp {
        key: String,
    },
    Key {
        key: String,
    },
    Text {
        text: String,
    },
}

impl Request {
    /// Parse one request line into its id as written and its call. A line
    /// that is no JSON object fails with its id null.
    pub fn parse(line: &[u8]) -> (RawId, Result<Call, WireError>) {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(request)) => (raw_id(line), Call::parse(&request)),
            _ => (
                RawId::null(),
                Err(WireError::new(
                    Code::ParseError,
                    "the line is not a JSON object",
                )),
            ),
        }
    }

    /// The request as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut o = Map::new();
        o.insert("id".into(), self.id.clone());
        o.insert("method".into(), Value::String(self.call.method().into()));
        let params = self.call.params();
        if !params.is_empty() {
            o.insert("params".into(), Value::Object(params));
        }
        let mut line = Value::Object(o).to_string();
        line.push('\n');
        line
    }
}

impl Call {
    /// The method's name on the wire.
    pub fn method(&self) -> &'static str {
        match self {
            Call::Windows => "windows",
            Call::Tree { .. } => "tree",
            Call::Act { .. } => "act",
            Call::Input { .. } => "input",
            Call::Menu { .. } => "menu",
            Call::Capture { .. } => "capture",
            Call::Eval { .. } => "eval",
            Call::Idle { .. } => "idle",
            Call::WaitFor { .. } => WAIT_FOR_METHOD,
            Call::Launch { .. } => LAUNCH_METHOD,
            Call::Menus { .. } => MENUS_METHOD,
            Call::Record { .. } => RECORD_METHOD,
            Call::Step { .. } => STEP_METHOD,
        }
    }

    /// The window the call names, if any.
    pub fn window(&self) -> Option<u64> {
        match self {
            Call::Windows | Call::Launch { .. } | Call::Record { .. } | Call::Step { .. } => None,
            Call::Tree { window }
            | Call::Act { window, .. }
            | Call::Input { window, .. }
            | Call::Menu { window, .. }
            | Call::Capture { window }
            | Call::Eval { window, .. }
            | Call::Idle { window, .. }
            | Call::WaitFor { window, .. }
            | Call::Menus { window } => *window,
        }
    }

    fn parse(request: &Map<String, Value>) -> Result<Call, WireError> {
        let method = match request.get("method") {
            Some(Value::String(m)) => m.as_str(),
            Some(_) => return Err(WireError::invalid("method must be a string")),
            None => return Err(WireError::invalid("no method")),
        };
        let empty = Map::new();
        let params = match request.get("params") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return Err(WireError::invalid("params must be an object")),
        };
        let p = Params(params);
        let call = match method {
            "windows" => {
                p.only(&[])?;
                Call::Windows
            }
            "tree" => {
                p.only(&["window"])?;
                Call::Tree {
                    window: p.window()?,
                }
            }
            "act" => {
                p.only(&["window", "id", "key", "action", "text", "from", "to"])?;
                // The action first: a name no element could take is wrong
                // whatever the element.
                let action = p.action()?;
                Call::Act {
                    window: p.window()?,
                    element: p.element()?,
                    action,
                }
            }
            "input" => {
                p.only(&["window", "events"])?;
                let events = match params.get("events") {
                    Some(Value::Array(events)) => events
                        .iter()
                        .enumerate()
                        .map(|(i, e)| parse_event(i, e))
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => return Err(WireError::invalid("input needs events, a list")),
                };
                Call::Input {
                    window: p.window()?,
                    events,
                }
            }
            "menu" => {
                p.only(&["window", "path"])?;
                let path = match params.get("path") {
                    Some(Value::Array(labels)) => labels
                        .iter()
                        .map(|l| l.as_str().map(str::to_string))
                        .collect::<Option<Vec<String>>>()
                        .ok_or_else(|| WireError::invalid("path is a list of labels (strings)"))?,
                    _ => return Err(WireError::invalid("menu needs path, a list of labels")),
                };
                Call::Menu {
                    window: p.window()?,
                    path,
                }
            }
            "capture" => {
                p.only(&["window"])?;
                Call::Capture {
                    window: p.window()?,
                }
            }
            "eval" => {
                p.only(&["window", "script"])?;
                let script = match params.get("script") {
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err(WireError::invalid("script is a string")),
                    None => return Err(WireError::invalid("eval needs a script")),
                };
                Call::Eval {
                    window: p.window()?,
                    script,
                }
            }
            "idle" => {
                p.only(&["window", "timeout"])?;
                Call::Idle {
                    window: p.window()?,
                    timeout_ms: p.timeout()?,
                }
            }
            WAIT_FOR_METHOD => {
                p.only(&["window", "text", "id", "key", "gone", "timeout"])?;
                let awaited = match params.get("text") {
                    Some(Value::String(t))
                        if params.contains_key("id") || params.contains_key("key") =>
                    {
                        return Err(WireError::invalid(format!(
                            "give text, id or key, not more than one (text {t:?})"
                        )))
                    }
                    Some(Value::String(t)) if t.is_empty() => {
                        return Err(WireError::invalid(
                            "text is empty: every element contains it",
                        ))
                    }
                    Some(Value::String(t)) => Awaited::Text(t.clone()),
                    Some(_) => return Err(WireError::invalid("text is a string")),
                    None if params.contains_key("id") || params.contains_key("key") => {
                        Awaited::Element(p.element()?)
                    }
                    None => {
                        return Err(WireError::invalid(format!(
                            "{WAIT_FOR_METHOD} needs text, an id or a key"
                        )))
                    }
                };
                let gone = match params.get("gone") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(WireError::invalid("gone is true or false")),
                };
                Call::WaitFor {
                    window: p.window()?,
                    awaited,
                    gone,
                    timeout_ms: p.timeout()?,
                }
            }
            RECORD_METHOD => {
                p.only(&["on"])?;
                let on = match params.get("on") {
                    Some(Value::Bool(on)) => *on,
                    Some(_) => return Err(WireError::invalid("on is true or false")),
                    None => {
                        return Err(WireError::invalid(format!(
                            "{RECORD_METHOD} needs on: true to start, false to end"
                        )))
                    }
                };
                Call::Record { on }
            }
            STEP_METHOD => {
                p.only(&["frames"])?;
                let frames = match params.get("frames") {
                    None | Some(Value::Null) => 1,
                    Some(v) => whole(v)
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|n| *n > 0)
                        .ok_or_else(|| WireError::invalid("frames is a whole number from 1"))?,
                };
                Call::Step { frames }
            }
            MENUS_METHOD => {
                p.only(&["window"])?;
                Call::Menus {
                    window: p.window()?,
                }
            }
            LAUNCH_METHOD => {
                p.only(&["command", "desktopId", "args", "timeout"])?;
                let strings = |name: &str| -> Result<Option<Vec<String>>, WireError> {
                    match params.get(name) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::Array(items)) => items
                            .iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<Vec<String>>>()
                            .map(Some)
                            .ok_or_else(|| {
                                WireError::invalid(format!("{name} is a list of strings"))
                            }),
                        Some(_) => Err(WireError::invalid(format!("{name} is a list of strings"))),
                    }
                };
                let app = match (strings("command")?, params.get("desktopId")) {
                    (Some(_), Some(_)) => {
                        return Err(WireError::invalid("give command or desktopId, not both"))
                    }
                    (Some(_), None) if params.contains_key("args") => {
                        return Err(WireError::invalid(
                            "args go with desktopId; a command holds its own arguments",
                        ))
                    }
                    (Some(command), None) if command.first().is_none_or(|p| p.is_empty()) => {
                        return Err(WireError::invalid(
                            "command is the program and its arguments: its first is the program",
                        ))
                    }
                    (Some(command), None) => LaunchApp::Command(command),
                    (None, Some(Value::String(id))) if !id.is_empty() => LaunchApp::DesktopId {
                        id: id.clone(),
                        args: strings("args")?.unwrap_or_default(),
                    },
                    (None, Some(_)) => {
                        return Err(WireError::invalid(
                            "desktopId is an app's desktop id, as org.gnome.Calculator",
                        ))
                    }
                    (None, None) => {
                        return Err(WireError::invalid(format!(
                        "{LAUNCH_METHOD} needs command (a list: program, arguments) or desktopId"
                    )))
                    }
                };
                Call::Launch {
                    app,
                    timeout_ms: p.timeout()?,
                }
            }
            other => {
                return Err(WireError::new(
                    Code::UnknownMethod,
                    format!("no method {other:?}"),
                ))
            }
        };
        Ok(call)
    }

    /// The call's params as the wire writes them.
    pub fn params(&self) -> Map<String, Value> {
        let mut o = Map::new();
        if let Some(w) = self.window() {
            o.insert("window".into(), json!(w));
        }
        match self {
            Call::Windows | Call::Tree { .. } | Call::Capture { .. } | Call::Menus { .. } => {}
            Call::Act {
                element, action, ..
            } => {
                match element {
                    ElementPick::Id(id) => o.insert("id".into(), json!(id.to_string())),
                    ElementPick::Key(k) => o.insert("key".into(), json!(k)),
                };
                o.insert("action".into(), json!(action.name()));
                match action {
                    Action::SetValue { text } | Action::InsertText { text } => {
                        o.insert("text".into(), json!(text));
                    }
                    Action::SelectText { from, to } => {
                        o.insert("from".into(), json!(from));
                        o.insert("to".into(), json!(to));
                    }
                    _ => {}
                }
            }
            Call::Input { events, .. } => {
                o.insert(
                    "events".into(),
                    Value::Array(events.iter().map(event_json).collect()),
                );
            }
            Call::Menu { path, .. } => {
                o.insert("path".into(), json!(path));
            }
            Call::Eval { script, .. } => {
                o.insert("script".into(), json!(script));
            }
            Call::Idle { timeout_ms, .. } => {
                if let Some(t) = timeout_ms {
                    o.insert("timeout".into(), json!(t));
                }
            }
            Call::WaitFor {
                awaited,
                gone,
                timeout_ms,
                ..
            } => {
                match awaited {
                    Awaited::Text(t) => o.insert("text".into(), json!(t)),
                    Awaited::Element(ElementPick::Id(id)) => {
                        o.insert("id".into(), json!(id.to_string()))
                    }
                    Awaited::Element(ElementPick::Key(k)) => o.insert("key".into(), json!(k)),
                };
                if *gone {
                    o.insert("gone".into(), json!(true));
                }
                if let Some(t) = timeout_ms {
                    o.insert("timeout".into(), json!(t));
                }
            }
            Call::Record { on } => {
                o.insert("on".into(), json!(on));
            }
            Call::Step { frames } => {
                o.insert("frames".into(), json!(frames));
            }
            Call::Launch { app, timeout_ms } => {
                match app {
                    LaunchApp::Command(command) => o.insert("command".into(), json!(command)),
                    LaunchApp::DesktopId { id, args } => {
                        if !args.is_empty() {
                            o.insert("args".into(), json!(args));
                        }
                        o.insert("desktopId".into(), json!(id))
                    }
                };
                if let Some(t) = timeout_ms {
                    o.insert("timeout".into(), json!(t));
                }
            }
        }
        o
    }
}

/// A whole number as JSON writes it, `5000` or `5000.0`; floats only where
/// they are exact (below 2^53).
fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 9_007_199_254_740_992.0).then_some(f as u64)
    })
}

/// The fields each input event type takes.
fn event_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "pointerMove" => &["type", "x", "y", "mods"],
        "pointerDown" | "pointerUp" | "click" => &["type", "x", "y", "button", "clicks", "mods"],
        "wheel" => &["type", "x", "y", "dx", "dy", "precise", "mods"],
        "keyDown" | "keyUp" | "key" => &["type", "key"],
        "text" => &["type", "text"],
        _ => return None,
    })
}

/// The presses a pointer event may count: single, double and triple clicks.
const CLICKS: std::ops::RangeInclusive<u64> = 1..=3;

/// A request's params, read with the protocol's checks.
struct Params<'a>(&'a Map<String, Value>);

impl Params<'_> {
    fn only(&self, allowed: &[&str]) -> Result<(), WireError> {
        match self.0.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(WireError::invalid(format!("unknown parameter {k:?}"))),
            None => Ok(()),
        }
    }

    fn window(&self) -> Result<Option<u64>, WireError> {
        match self.0.get("window") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => whole(v)
                .map(Some)
                .ok_or_else(|| WireError::invalid("window is the number windows lists")),
        }
    }

    fn element(&self) -> Result<ElementPick, WireError> {
        match (self.0.get("id"), self.0.get("key")) {
            (Some(id), None) => {
                let bad = || WireError::invalid("id is a string of digits");
                let id = match id {
                    Value::String(s) => s.parse().map_err(|_| bad())?,
                    Value::Number(_) => whole(id).ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                Ok(ElementPick::Id(id))
            }
            // A key is a string, a boolean or an integer as itself.
            (None, Some(key)) => Ok(ElementPick::Key(
                key.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| key.to_string()),
            )),
            (Some(_), Some(_)) => Err(WireError::invalid("give id or key, not both")),
            (None, None) => Err(WireError::invalid("act needs an id or a key")),
        }
    }

    fn timeout(&self) -> Result<Option<u64>, WireError> {
        match self.0.get("timeout") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => Ok(Some(whole(v).ok_or_else(|| {
                WireError::invalid("timeout is a number of milliseconds")
            })?)),
        }
    }

    fn text(&self) -> Result<String, WireError> {
        self.0
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| WireError::invalid("this action needs text"))
    }

    fn rune(&self, k: &str) -> Result<i32, WireError> {
        let v = self
            .0
            .get(k)
            .and_then(whole)
            .ok_or_else(|| WireError::invalid(format!("selectText needs {k}, a rune index")))?;
        i32::try_from(v)
            .map_err(|_| WireError::invalid(format!("{k} {v} is past any text's length")))
    }

    fn action(&self) -> Result<Action, WireError> {
        Ok(match self.0.get("action").and_then(Value::as_str) {
            Some("press") => Action::Press,
            Some("focus") => Action::Focus,
            Some("setValue") => Action::SetValue { text: self.text()? },
            Some("insertText") => Action::InsertText { text: self.text()? },
            Some("selectText") => Action::SelectText {
                from: self.rune("from")?,
                to: self.rune("to")?,
            },
            Some("increment") => Action::Increment,
            Some("decrement") => Action::Decrement,
            Some("scrollIntoView") => Action::ScrollIntoView,
            Some("expand") => Action::Expand,
            Some("collapse") => Action::Collapse,
            Some(other) => return Err(WireError::invalid(format!("unknown action {other:?}"))),
            None => return Err(WireError::invalid("act needs an action")),
        })
    }
}

fn parse_mods(v: Option<&Value>) -> Result<Mods, String> {
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

fn parse_event(i: usize, e: &Value) -> Result<Event, WireError> {
    let bad = |m: String| WireError::invalid(format!("event {i}: {m}"));
    let obj = e
        .as_object()
        .ok_or_else(|| bad("an event is an object".into()))?;
    let num = |k: &str| -> Result<f64, WireError> {
        obj.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| bad(format!("needs a number {k}")))
    };
    let string = |k: &str| -> Result<String, WireError> {
        obj.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(format!("needs a string {k}")))
    };
    let kind = obj.get("type").and_then(Value::as_str);
    if let Some(fields) = kind.and_then(event_fields) {
        if let Some(k) = obj.keys().find(|k| !fields.contains(&k.as_str())) {
            return Err(bad(format!(
                "a {} event takes no {k:?}",
                kind.unwrap_or_default()
            )));
        }
    }
    let mods = parse_mods(obj.get("mods")).map_err(bad)?;
    let button = match obj.get("button").and_then(Value::as_str) {
        None | Some("left") => Button::Left,
        Some("right") => Button::Right,
        Some("middle") => Button::Middle,
        Some(other) => return Err(bad(format!("unknown button {other:?}"))),
    };
    let clicks = match obj.get("clicks") {
        None => 1,
        Some(v) => whole(v)
            .filter(|c| CLICKS.contains(c))
            .map(|c| c as u32)
            .ok_or_else(|| bad("clicks is 1, 2 or 3 (a single, double or triple click)".into()))?,
    };
    Ok(match obj.get("type").and_then(Value::as_str) {
        Some("pointerMove") => Event::PointerMove {
            x: num("x")?,
            y: num("y")?,
            mods,
        },
        Some("pointerDown") => Event::PointerDown {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("pointerUp") => Event::PointerUp {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("click") => Event::Click {
            x: num("x")?,
            y: num("y")?,
            button,
            clicks,
            mods,
        },
        Some("wheel") => Event::Wheel {
            x: num("x")?,
            y: num("y")?,
            dx: num("dx")?,
            dy: num("dy")?,
            precise: obj.get("precise").and_then(Value::as_bool).unwrap_or(false),
            mods,
        },
        Some("keyDown") => Event::KeyDown {
            key: string("key")?,
        },
        Some("keyUp") => Event::KeyUp {
            key: string("key")?,
        },
        Some("key") => Event::Key {
            key: string("key")?,
        },
        Some("text") => Event::Text {
            text: string("text")?,
        },
        Some(other) => return Err(bad(format!("unknown event type {other:?}"))),
        None => return Err(bad("needs a type".into())),
    })
}

fn event_json(e: &Event) -> Value {
    let mods = |m: &Mods| -> Vec<&'static str> {
        [
            (m.shift, "shift"),
            (m.ctrl, "ctrl"),
            (m.alt, "alt"),
            (m.logo, "super"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect()
    };
    let button = |b: &Button| match b {
        Button::Left => "left",
        Button::Right => "right",
        Button::Middle => "middle",
    };
    let pointer = |kind: &str, x: &f64, y: &f64, b: &Button, clicks: &u32, m: &Mods| json!({"type": kind, "x": x, "y": y, "button": button(b), "clicks": clicks, "mods": mods(m)});
    match e {
        Event::PointerMove { x, y, mods: m } => {
            json!({"type": "pointerMove", "x": x, "y": y, "mods": mods(m)})
        }
        Event::PointerDown {
            x,
            y,
            button: b,
            clicks,
            mods: m,
        } => pointer("pointerDown", x, y, b, clicks, m),
        Event::PointerUp {
            x,
            y,
            button: b,
            clicks,
            mods: m,
        } => pointer("pointerUp", x, y, b, clicks, m),
        Event::Click {
            x,
            y,
            button: b,
            clicks,
            mods: m,
        } => pointer("click", x, y, b, clicks, m),
        Event::Wheel {
            x,
            y,
            dx,
            dy,
            precise,
            mods: m,
        } => json!({"type": "wheel", "x": x, "y": y, "dx": dx, "dy": dy,
                    "precise": precise, "mods": mods(m)}),
        Event::KeyDown { key } => json!({"type": "keyDown", "key": key}),
        Event::KeyUp { key } => json!({"type": "keyUp", "key": key}),
        Event::Key { key } => json!({"type": "key", "key": key}),
        Event::Text { text } => json!({"type": "text", "text": text}),
    }
}

/// The answer line to a request: its id as written, its result or its
/// error, newline included.
pub fn answer_line(id: &RawId, result: Result<Value, WireError>) -> String {
    #[derive(Serialize)]
    struct Answer<'a> {
        id: &'a RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<WireError>,
    }
    let (result, error) = match result {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    };
    let mut line = serde_json::to_string(&Answer {
        id: &id.0,
        result,
        error,
    })
    .expect("answers are plain data");
    line.push('\n');
    line
}

/// Read an answer line: its id and its result or error.
pub fn parse_answer(line: &str) -> Result<(Value, Result<Value, WireError>), String> {
    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        id: Value,
        result: Option<Value>,
        error: Option<WireError>,
    }
    let a: Answer =
        serde_json::from_str(line).map_err(|e| format!("the answer is not MyGo's: {e}"))?;
    match (a.result, a.error) {
        (_, Some(e)) => Ok((a.id, Err(e))),
        (Some(r), None) => Ok((a.id, Ok(r))),
        (None, None) => Err("the answer has neither result nor error".into()),
    }
}

/// A rectangle in DIPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

/// `windows`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowsAnswer {
    pub windows: Vec<Window>,
}

/// One window as `windows` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    pub id: u64,
    pub title: String,
    /// `content` for native UI, `page` for a web page.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub bounds: Rect,
    pub content_bounds: Rect,
    pub focused: bool,
    pub visible: bool,
}

/// `tree`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeAnswer {
    pub window: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    pub nodes: Vec<Element>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub announcements: Vec<String>,
}

/// The words for an unlabeled control: `from` is `labelledBy` (the text of
/// the element that labels it), `description` (GTK's tooltip), `icon` (its
/// icon's name) or `beside` (the label just before it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelFallback {
    pub from: String,
    pub text: String,
}

/// One element of `tree`, with what it has; ids are strings of digits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Element {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub role: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The accessible label, as the app gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The label is only the toolkit's stand-in, as GTK names a widget
    /// nobody labeled after its class (`GtkToggleButton`) and every
    /// notebook tab "Tab": it says nothing. Wayrig's own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub label_is_class_name: bool,
    /// For an unlabeled control, what a person would call it and where that
    /// comes from; never put in `label`. Wayrig's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_fallback: Option<LabelFallback>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<[i32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pos_in_set: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_size: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_count: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col_count: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_index: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col_index: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_span: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col_span: Option<i32>,
    /// `true`, or what it is the current one of (page, step, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_complete: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_popup: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_shortcuts: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controls: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub described_by: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_message: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
}

/// `capture`'s answer: a PNG in base64, in device pixels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureAnswer {
    pub png: String,
    pub width: u32,
    pub height: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Call, WireError> {
        Request::parse(line.as_bytes()).1
    }

    #[test]
    fn a_line_that_is_no_object_is_a_parse_error_with_a_null_id() {
        let (id, call) = Request::parse(b"[1, 2]");
        assert_eq!(
            (id.as_str(), call.unwrap_err().code),
            ("null", Code::ParseError)
        );
    }

    #[test]
    fn ids_come_back_exactly_as_written() {
        for id in [
            "123456789012345678901234567890",
            "1e2",
            "5000.0",
            "-0",
            r#""a""#,
            r#"{"b": [1, 2.50]}"#,
            "null",
        ] {
            let line = format!(r#"{{"id": {id}, "method": "nope"}}"#);
            let (raw, call) = Request::parse(line.as_bytes());
            assert_eq!(raw.as_str(), id);
            let answer = answer_line(&raw, Ok(json!({})));
            assert_eq!(answer, format!("{{\"id\":{id},\"result\":{{}}}}\n"));
            assert_eq!(call.unwrap_err().code, Code::UnknownMethod);
        }
        let (raw, _) = Request::parse(br#"{"method": "windows"}"#);
        assert_eq!(raw.as_str(), "null", "no id is a null id");
    }

    #[test]
    fn rune_indexes_may_be_written_as_floats() {
        let call = parse(
            r#"{"method": "act", "params": {"id": "5", "action": "selectText", "from": 2.0, "to": 3}}"#,
        )
        .unwrap();
        assert!(matches!(
            call,
            Call::Act {
                action: Action::SelectText { from: 2, to: 3 },
                ..
            }
        ));
    }

    #[test]
    fn an_unknown_action_is_refused_before_its_element_is_looked_at() {
        let e = parse(r#"{"method": "act", "params": {"action": "fly"}}"#).unwrap_err();
        assert_eq!(e.code, Code::InvalidRequest);
        assert!(e.message.contains("fly"), "{e}");
    }

    #[test]
    fn eval_without_a_script_is_invalid() {
        let e = parse(r#"{"method": "eval"}"#).unwrap_err();
        assert_eq!(e.code, Code::InvalidRequest);
    }

    #[test]
    fn params_a_method_does_not_take_are_named() {
        let e = parse(r#"{"method": "tree", "params": {"windw": 1}}"#).unwrap_err();
        assert_eq!(e.code, Code::InvalidRequest);
        assert!(e.message.contains("windw"));
    }

    #[test]
    fn a_step_is_one_frame_unless_asked_and_bounded() {
        assert_eq!(
            parse(r#"{"method": "wayrig.step"}"#).unwrap(),
            Call::Step { frames: 1 }
        );
        for bad in ["0", "4294967296", "-1", "1.5", "\"2\""] {
            let line = format!(r#"{{"method": "wayrig.step", "params": {{"frames": {bad}}}}}"#);
            let e = parse(&line).unwrap_err();
            assert!(
                e.message.contains("whole number from 1"),
                "{bad}: {}",
                e.message
            );
        }
        let e = parse(r#"{"method": "wayrig.step", "params": {"window": 1}}"#).unwrap_err();
        assert!(e.message.contains("window"), "{}", e.message);
    }

    #[test]
    fn whole_numbers_may_be_written_as_floats() {
        let call =
            parse(r#"{"method": "idle", "params": {"window": 2.0, "timeout": 5000.0}}"#).unwrap();
        assert_eq!(
            call,
            Call::Idle {
                window: Some(2),
                timeout_ms: Some(5000)
            }
        );
        let e = parse(r#"{"method": "idle", "params": {"timeout": 1.5}}"#).unwrap_err();
        assert_eq!(e.code, Code::InvalidRequest);
    }

    #[test]
    fn events_with_fields_or_clicks_they_cannot_take_are_invalid() {
        for events in [
            r#"[{"type": "key", "key": "a", "mods": ["ctrl"]}]"#,
            r#"[{"type": "click", "x": 1, "y": 1, "colour": "red"}]"#,
            r#"[{"type": "click", "x": 1, "y": 1, "clicks": 0}]"#,
            r#"[{"type": "pointerDown", "x": 1, "y": 1, "clicks": 4}]"#,
            r#"[{"type": "text", "text": "a", "key": "b"}]"#,
        ] {
            let line = format!(r#"{{"method": "input", "params": {{"events": {events}}}}}"#);
            let e = parse(&line).unwrap_err();
            assert_eq!(e.code, Code::InvalidRequest, "{events}");
        }
        let ok = r#"{"method": "input", "params": {"events": [
            {"type": "click", "x": 1, "y": 1, "clicks": 3.0, "mods": ["shift"]}]}}"#;
        assert!(parse(ok).is_ok());
    }

    #[test]
    fn keys_of_any_json_kind_are_kept_as_written() {
        let call = parse(r#"{"method": "act", "params": {"key": 7, "action": "press"}}"#).unwrap();
        assert!(matches!(call, Call::Act { element: ElementPick::Key(k), .. } if k == "7"));
    }

    #[test]
    fn calls_written_by_a_client_parse_back_the_same() {
        let calls = [
            Call::Windows,
            Call::Tree { window: Some(3) },
            Call::Act {
                window: None,
                element: ElementPick::Id(u64::MAX),
                action: Action::SelectText { from: 1, to: 4 },
            },
            Call::Act {
                window: Some(1),
                element: ElementPick::Key("name".into()),
                action: Action::SetValue {
                    text: "Grace".into(),
                },
            },
            Call::Input {
                window: Some(2),
                events: vec![
                    Event::Click {
                        x: 1.5,
                        y: 2.0,
                        button: Button::Right,
                        clicks: 2,
                        mods: Mods {
                            shift: true,
                            ..Mods::default()
                        },
                    },
                    Event::Wheel {
                        x: 0.0,
                        y: 0.0,
                        dx: 0.0,
                        dy: -30.0,
                        precise: true,
                        mods: Mods::default(),
                    },
                    Event::Text { text: "é".into() },
                    Event::Key {
                        key: "CmdOrCtrl+A".into(),
                    },
                ],
            },
            Call::Menu {
                window: None,
                path: vec!["File".into(), "Quit".into()],
            },
            Call::Eval {
                window: None,
                script: "1".into(),
            },
            Call::Idle {
                window: Some(1),
                timeout_ms: Some(5000),
            },
            Call::WaitFor {
                window: Some(1),
                awaited: Awaited::Text("polled 3".into()),
                gone: false,
                timeout_ms: Some(5000),
            },
            Call::WaitFor {
                window: None,
                awaited: Awaited::Element(ElementPick::Id(42)),
                gone: true,
                timeout_ms: None,
            },
            Call::Menus { window: Some(3) },
            Call::Record { on: true },
            Call::Record { on: false },
            Call::Step { frames: 1 },
            Call::Step { frames: 600 },
            Call::Launch {
                app: LaunchApp::Command(vec!["foot".into(), "-e".into(), "sh".into()]),
                timeout_ms: Some(0),
            },
            Call::Launch {
                app: LaunchApp::DesktopId {
                    id: "org.gnome.Calculator".into(),
                    args: vec!["--mode=advanced".into()],
                },
                timeout_ms: None,
            },
        ];
        for call in calls {
            let line = Request {
                id: json!(9),
                call: call.clone(),
            }
            .to_line();
            let (id, back) = Request::parse(line.trim_end().as_bytes());
            assert_eq!(back.unwrap(), call, "{line}");
            assert_eq!(id.as_str(), "9");
        }
    }

    #[test]
    fn wait_for_takes_one_of_text_id_or_key() {
        for bad in [
            r#"{"id":1,"method":"wayrig.waitFor","params":{}}"#,
            r#"{"id":1,"method":"wayrig.waitFor","params":{"text":"a","id":"1"}}"#,
            r#"{"id":1,"method":"wayrig.waitFor","params":{"text":""}}"#,
            r#"{"id":1,"method":"wayrig.waitFor","params":{"text":"a","gone":1}}"#,
        ] {
            assert_eq!(parse(bad).unwrap_err().code, Code::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn launch_takes_a_command_or_a_desktop_id() {
        for bad in [
            r#"{"id":1,"method":"wayrig.launch","params":{}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":[]}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":[""]}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":"foot"}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":["foot", 1]}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":["foot"],"args":["x"]}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"command":["a"],"desktopId":"b"}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"desktopId":""}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"desktopId":"a","window":1}}"#,
            r#"{"id":1,"method":"wayrig.launch","params":{"desktopId":"a","timeout":-1}}"#,
        ] {
            assert_eq!(parse(bad).unwrap_err().code, Code::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn answers_read_back_with_their_error_codes() {
        let (id, _) = Request::parse(br#"{"id": "a"}"#);
        let line = answer_line(&id, Err(WireError::new(Code::NoWindow, "no window 7")));
        assert_eq!(
            line,
            "{\"id\":\"a\",\"error\":{\"code\":\"no_window\",\"message\":\"no window 7\"}}\n"
        );
        let (id, result) = parse_answer(&line).unwrap();
        assert_eq!(id, json!("a"));
        assert_eq!(result.unwrap_err().code, Code::NoWindow);
    }

    #[test]
    fn an_element_leaves_out_what_it_does_not_have() {
        let e = Element {
            id: "5".into(),
            role: "button".into(),
            label: Some("Add".into()),
            ..Element::default()
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"id": "5", "role": "button", "label": "Add"})
        );
    }
}
