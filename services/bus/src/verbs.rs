//! The drive verbs as session calls: `ui.tree`, `ui.click`, `ui.key`,
//! `ui.type`, `ui.capture`, `window`, `window.state`, `HELP` and `app.describe`.
//!
//! No rule lives here: elements are found, input stepped and windows changed
//! by the session; this file reads arguments and writes MixOS's answers.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use wayrig_host::{Button, InputEvent, InputOptions, Mods, WindowHandle, WindowInfo};
use wayrig_proto::abp::Refusal;
use wayrig_services::{
    Checked, Element, ElementClick, ElementRef, Error, MenuRow, Node, OpenMenu, PassVerdicts,
    Query, ReadOptions, Session, ShotRequest, ShotSource, Step, StepReport, WindowFilter, WindowOp,
    WindowPick,
};

use crate::captures::{self, CaptureDir};
use crate::keys;

/// How long `ui.capture` waits for its screenshot.
const CAPTURE_LIMIT: Duration = Duration::from_secs(10);
use crate::roles::{accesskit_role, ACCESSKIT_ROLES};

/// A refusal with one of the spec's codes.
fn refuse(code: &str, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

fn argument(message: impl Into<String>) -> Refusal {
    refuse("ARGUMENT", message)
}

/// The session's errors as the spec's codes, one to one.
fn refusal(e: Error) -> Refusal {
    let code = match &e {
        Error::NoElement(_)
        | Error::StaleElement(_)
        | Error::NotShown(_)
        | Error::Ambiguous { .. }
        | Error::InvalidRequest(_)
        | Error::TooLarge(_)
        | Error::NotFound(_)
        | Error::StaleGeometry(_) => "ARGUMENT",
        Error::NoWindow(_) | Error::StaleWindow(_) | Error::Busy(_) | Error::Timeout(_) => "BUSY",
        Error::Cancelled(_) | Error::Interrupted { .. } => "CANCELLED",
        Error::Unsupported(_) | Error::WouldActivate(_) | Error::Failed(_) => "UNAVAILABLE",
    };
    let message = match &e {
        Error::NoWindow(_) | Error::StaleWindow(_) => {
            format!("the app shows no window now (none drawn yet, or closing): {e}")
        }
        _ => e.to_string(),
    };
    refuse(code, message)
}

/// One verb: its name, what it does, whether it only reads, its arguments.
struct Verb {
    name: &'static str,
    description: &'static str,
    read_only: bool,
    /// Takes `trace: true` (the input verbs).
    traced: bool,
    args: &'static [(&'static str, &'static str, bool, &'static str)],
}

const VERBS: &[Verb] = &[
    Verb {
        name: "ui.tree",
        description: "The window's widget tree, depth first from the root: {root, focus, nodes}.",
        read_only: true,
        traced: false,
        args: &[
            ("label", "string", false, "a case-insensitive substring of the label"),
            ("exact", "bool", false, "label matches the whole label, case and all"),
            ("role", "string", false, "an AccessKit role name such as Button or TextInput"),
        ],
    },
    Verb {
        name: "ui.click",
        description: "Moves to a node's centre in one frame, presses and releases in the next: {target, at, menu, focused, pointer}.",
        read_only: false,
        traced: true,
        args: &[
            ("label", "string", false, "the exact label (else placeholder); give label or id"),
            ("id", "string|integer", false, "a node id as decimal text; give label or id"),
            ("button", "string", false, "primary (default), secondary or middle"),
            ("double", "bool", false, "a double-click"),
        ],
    },
    Verb {
        name: "ui.pointer",
        description: "One pointer event at a point in the window's points: {menu, focused, pointer}. Press and release are separate requests, so a caller can drag.",
        read_only: false,
        traced: true,
        args: &[
            ("x", "number", true, "points from the window's left"),
            ("y", "number", true, "points from the window's top"),
            ("action", "string", true, "move, press or release"),
            ("button", "string", false, "primary (default), secondary or middle"),
        ],
    },
    Verb {
        name: "ui.scroll",
        description: "Moves the pointer to x, y and scrolls there by dx, dy points; a positive dy reveals what is above: {menu, focused, pointer}.",
        read_only: false,
        traced: true,
        args: &[
            ("x", "number", true, "points from the window's left"),
            ("y", "number", true, "points from the window's top"),
            ("dx", "number", false, "points; positive reveals what is left"),
            ("dy", "number", false, "points; positive reveals what is above"),
        ],
    },
    Verb {
        name: "ui.key",
        description: "Presses and releases one key with modifiers: {menu, focused, pointer}.",
        read_only: false,
        traced: true,
        args: &[
            ("key", "string", true, "an egui key name: Enter, Escape, Tab, ArrowDown, A, Num0, F1 to F12, ..."),
            ("modifiers", "list", false, "ctrl, shift, alt or command (Ctrl off macOS)"),
        ],
    },
    Verb {
        name: "ui.type",
        description: "Types text into the focused widget; a newline presses Enter: {menu, focused, pointer}.",
        read_only: false,
        traced: true,
        args: &[("text", "string", true, "any Unicode text")],
    },
    Verb {
        name: "ui.menu",
        description: "The open menu: {menu: {menu, path, depth}}, or {menu: null}.",
        read_only: true,
        traced: false,
        args: &[],
    },
    Verb {
        name: "ui.menu.list",
        description: "Every menu as the menu bar draws it: {menus: [{title, rows}]}.",
        read_only: true,
        traced: false,
        args: &[],
    },
    Verb {
        name: "ui.menu.open",
        description: "Opens a menu and submenus by label and highlights the last row without running it: the open menu.",
        read_only: false,
        traced: false,
        args: &[
            ("path", "list", false, "a menu title, then a row's label at each level; give path or menu"),
            ("menu", "string", false, "a menu title alone; give path or menu"),
        ],
    },
    Verb {
        name: "ui.menu.close",
        description: "Closes every open menu: {closed}, whether one was open.",
        read_only: false,
        traced: false,
        args: &[],
    },
    Verb {
        name: "ui.capture",
        description: "A screenshot of the window, written to a new PNG file under $XDG_RUNTIME_DIR/<app>/captures/: {path, width, height}, in physical pixels.",
        read_only: false,
        traced: false,
        args: &[(
            "name",
            "string",
            false,
            "a file name ending in .png, no path, not hidden; default capture-<pid>-<n>.png",
        )],
    },
    Verb {
        name: "window",
        description: "A window command, answered with the window state then plus requested.",
        read_only: false,
        traced: false,
        args: &[(
            "action",
            "string",
            true,
            "minimize, maximize, restore, close or focus",
        )],
    },
    Verb {
        name: "window.state",
        description: "{size, outer_size, maximized, minimized, fullscreen, focused, pixels_per_point}.",
        read_only: true,
        traced: false,
        args: &[],
    },
    Verb {
        name: "wayrig.record",
        description: "Wayrig's own: records the session from now on (on: true) into a new folder of the user's state directory, as wayrig run --record does, or ends the recording (on: false): {dir, recording}.",
        read_only: true,
        traced: false,
        args: &[("on", "bool", true, "true starts a recording, false ends it")],
    },
    Verb {
        name: "wayrig.step",
        description: "Wayrig's own, for a session paced step (wayrig run --pacing step), where apps draw only when asked: advances every window the given frames, each drawn before the next: {frames, callbacks}. Input and waits ask for the frames they need themselves.",
        read_only: true,
        traced: false,
        args: &[(
            "frames",
            "number",
            false,
            "frames to advance, 1 to 600 (default 1)",
        )],
    },
    Verb {
        name: "app.describe",
        description: "Every verb with its arguments. Traces give what the seat delivered in each frame and the compositor's own verdicts (clicked, hovered, no_longer_a_click, from the pointer and the nodes' rects); egui's own are not visible to a compositor.",
        read_only: true,
        traced: false,
        args: &[],
    },
    Verb {
        name: "HELP",
        description: "Every verb with its arguments, as app.describe.",
        read_only: true,
        traced: false,
        args: &[],
    },
];

/// Every verb an app answers, named under its prefix, for `HELP` and `app.describe`.
pub fn describe(app: &str) -> Value {
    let verbs: Vec<Value> = VERBS
        .iter()
        .map(|v| {
            let name = if v.name == "HELP" {
                v.name.to_string()
            } else {
                format!("{app}.{}", v.name)
            };
            let mut args: Vec<Value> = v
                .args
                .iter()
                .map(|(n, t, required, d)| {
                    json!({"name": n, "type": t, "required": required, "description": d})
                })
                .collect();
            if v.traced {
                args.push(json!({
                    "name": "trace", "type": "bool", "required": false,
                    "description": TRACE_ARG,
                }));
            }
            json!({
                "name": name,
                "description": v.description,
                "read_only": v.read_only,
                "args": args,
            })
        })
        .collect();
    json!({"app": app, "verbs": verbs})
}

/// What `trace: true` adds, as `HELP` says it.
const TRACE_ARG: &str = "answer with passes: per frame the request ran, the events the seat \
     delivered (in order), the frame time in seconds, the pointer, whether a button is down, \
     the window hit, and clicked, drag_started, dragged, drag_stopped, hovered, \
     contains_pointer and no_longer_a_click: the compositor's verdicts (not the app's), from \
     the pointer, its buttons and the nodes' rects, with a 6-point click distance, within \
     one request";

/// A request's arguments: its body as a JSON object, only known keys.
#[derive(Debug)]
struct Args(Map<String, Value>);

impl Args {
    fn parse(body: &str, verb: &Verb) -> Result<Args, Refusal> {
        let value: Value = if body.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(body)
                .map_err(|e| argument(format!("the body is not JSON: {e}")))?
        };
        let Value::Object(map) = value else {
            return Err(argument("the body is a JSON object of arguments"));
        };
        for key in map.keys() {
            if key == "trace" && verb.traced {
                continue;
            }
            if !verb.args.iter().any(|(n, ..)| n == key) {
                let known: Vec<&str> = verb.args.iter().map(|(n, ..)| *n).collect();
                return Err(argument(format!(
                    "{} takes no argument {key:?}; it takes {}",
                    verb.name,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        Ok(Args(map))
    }

    fn str(&self, key: &str) -> Result<Option<&str>, Refusal> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(argument(format!("{key} is text, not {other}"))),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, Refusal> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(argument(format!("{key} is true or false, not {other}"))),
        }
    }

    fn required_str(&self, key: &str) -> Result<&str, Refusal> {
        self.str(key)?
            .ok_or_else(|| argument(format!("{key} is required")))
    }
}

/// Answer one drive verb (its app prefix already taken off) for the app
/// whose process is `pid`.
pub async fn answer(
    session: &Arc<Session>,
    app: &str,
    pid: u32,
    verb: &str,
    body: &str,
) -> Result<Value, Refusal> {
    let Some(spec) = VERBS.iter().find(|v| v.name == verb) else {
        return Err(refuse(
            "UNKNOWN_VERB",
            format!("{app} has no verb {verb:?}; send {app}.app.describe for the list"),
        ));
    };
    let args = Args::parse(body, spec)?;
    match verb {
        "HELP" | "app.describe" => Ok(describe(app)),
        "ui.tree" => tree(session, pid, &args).await,
        "ui.click" => click(session, pid, &args).await,
        "ui.pointer" => pointer(session, pid, &args).await,
        "ui.scroll" => scroll(session, pid, &args).await,
        "ui.key" => key(session, pid, &args).await,
        "ui.type" => type_text(session, pid, &args).await,
        "ui.menu" => {
            let handle = app_window(session, pid).await?.handle;
            Ok(json!({"menu": open_menu_wire(session.shown_menu(handle).await.map_err(refusal)?)}))
        }
        "ui.menu.list" => {
            let handle = app_window(session, pid).await?.handle;
            let menus = session.menus(handle).await.map_err(refusal)?;
            Ok(json!({"menus": menus.iter().map(|m| json!({
                "title": m.title,
                "rows": rows_wire(&m.rows),
            })).collect::<Vec<_>>()}))
        }
        "ui.menu.open" => menu_open(session, pid, &args).await,
        "ui.menu.close" => {
            let handle = app_window(session, pid).await?.handle;
            let closed = session.close_menus(handle).await.map_err(refusal)?;
            Ok(json!({"closed": closed}))
        }
        "ui.capture" => capture(session, app, pid, &args).await,
        "window" => window(session, pid, &args).await,
        "window.state" => Ok(window_state(&app_window(session, pid).await?)),
        "wayrig.record" => {
            let on = args.bool("on")?;
            let (dir, incomplete) = match on {
                true => session.start_recording().await.map(|dir| (dir, None)),
                false => session.end_recording().await,
            }
            .map_err(refusal)?;
            let mut answer = json!({"dir": dir.display().to_string(), "recording": on});
            if let Some(why) = incomplete {
                answer["incomplete"] = json!(why);
            }
            Ok(answer)
        }
        "wayrig.step" => {
            let frames = match args.number("frames")? {
                None => 1,
                Some(n) if n.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&n) => n as u32,
                Some(n) => {
                    return Err(argument(format!(
                        "frames is a whole number from 1, not {n}"
                    )))
                }
            };
            let stepped = session.step(frames).await.map_err(refusal)?;
            Ok(json!({"frames": stepped.frames, "callbacks": stepped.callbacks}))
        }
        _ => Err(refuse("UNKNOWN_VERB", format!("{verb} is not wired"))),
    }
}

/// The pick of an app's frontmost top-level window.
pub(crate) fn app_pick(pid: u32) -> WindowPick {
    WindowPick::Filter(WindowFilter {
        pid: Some(pid),
        ..WindowFilter::default()
    })
}

/// The app's frontmost top-level window.
async fn app_window(session: &Session, pid: u32) -> Result<WindowInfo, Refusal> {
    session.window(&app_pick(pid)).await.map_err(refusal)
}

fn rect(n: &Node) -> Value {
    n.bounds.map_or(Value::Null, |b| {
        json!([b.x, b.y, b.x + b.width, b.y + b.height])
    })
}

fn node_wire(e: &Element, children: &[String]) -> Value {
    let n = &e.node;
    let checked = n.checked().map(|c| match c {
        wayrig_services::Checked::True => "true",
        wayrig_services::Checked::False => "false",
        wayrig_services::Checked::Mixed => "mixed",
    });
    let mut node = json!({
        "id": n.id.to_string(),
        "role": accesskit_role(n.role),
        // For a control whose name says nothing, the words a person would
        // use (marked by `labelFrom`); a toolkit's class name is no label.
        "label": n.shown_label().unwrap_or(""),
        "value": n.value.clone().or_else(|| n.range.map(|r| r.now.to_string())),
        "placeholder": n.annotations.placeholder,
        "rect": rect(n),
        "enabled": !n.states.disabled,
        "focused": n.states.focused,
        "selected": n.states.selected,
        "checked": checked,
        "children": children,
        "depth": e.depth,
    });
    // A label the toolkit did not give says where it comes from.
    if let (None, Some(f)) = (n.label(), &n.label_fallback) {
        node["labelFrom"] = f.source.as_str().into();
    }
    node
}

async fn tree(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let label = args.str("label")?;
    let exact = args.bool("exact")?;
    let role = args.str("role")?;
    if let Some(role) = role.filter(|r| !ACCESSKIT_ROLES.contains(r)) {
        return Err(argument(format!(
            "role {role:?} is no AccessKit role name; give one such as Button, TextInput, \
             CheckBox or Label"
        )));
    }
    let handle = app_window(session, pid).await?.handle;
    // What the last frame shows: no closed popover, hidden page or element
    // scrolled away; what a hidden container holds that shows is kept.
    let read = session
        .snapshot(
            handle,
            &ReadOptions {
                include_hidden: false,
                ..ReadOptions::default()
            },
        )
        .await
        .map_err(refusal)?;
    let Some(root) = read.elements.first() else {
        return Err(refuse(
            "BUSY",
            "the window has drawn no widgets yet; ask again after its first frame",
        ));
    };
    let mut children: std::collections::HashMap<u64, Vec<String>> = Default::default();
    for e in &read.elements {
        if let Some(p) = e.parent {
            children.entry(p).or_default().push(e.node.id.to_string());
        }
    }
    let query = Query {
        shown_label_contains: label.filter(|_| !exact).map(str::to_string),
        shown_label_is: label.filter(|_| exact).map(str::to_string),
        // The read left out what does not show.
        include_hidden: true,
        ..Query::default()
    };
    let nodes: Vec<Value> = read
        .elements
        .iter()
        .filter(|e| query.matches_besides_label(&e.node))
        // AccessKit's role names are the wire's words for the model's roles.
        .filter(|e| role.is_none_or(|r| accesskit_role(e.node.role) == r))
        .map(|e| node_wire(e, children.get(&e.node.id).map_or(&[], Vec::as_slice)))
        .collect();
    Ok(json!({
        "root": root.node.id.to_string(),
        "focus": focused_id(&read.elements),
        "nodes": nodes,
    }))
}

fn focused_id(elements: &[Element]) -> Value {
    elements
        .iter()
        .find(|e| e.node.states.focused)
        .map_or(Value::Null, |e| Value::String(e.node.id.to_string()))
}

/// A node id given as decimal text or an exact integer.
fn node_id(v: &Value) -> Result<u64, Refusal> {
    match v {
        Value::String(s) => s.parse().map_err(|_| {
            argument(format!(
                "id {s:?} is not a node id: pass the decimal text ui.tree gives"
            ))
        }),
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            argument(format!(
                "id {n} is not a node id: pass the decimal text ui.tree gives"
            ))
        }),
        other => Err(argument(format!("id is decimal text, not {other}"))),
    }
}

fn button_of(args: &Args) -> Result<Button, Refusal> {
    match args.str("button")? {
        None | Some("primary") => Ok(Button::Left),
        Some("secondary") => Ok(Button::Right),
        Some("middle") => Ok(Button::Middle),
        Some(other) => Err(argument(format!(
            "button {other:?} is none of primary, secondary, middle"
        ))),
    }
}

async fn click(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let button = button_of(args)?;
    let double = args.bool("double")?;
    let label = args.str("label")?;
    let id = args.0.get("id").filter(|v| !v.is_null());
    let handle = app_window(session, pid).await?.handle;
    let element = match (label, id) {
        (Some(""), None) => return Err(argument("label is empty: give the text to click")),
        (Some(label), None) => ElementRef::Query(Box::new(Query {
            label: Some(label.to_string()),
            ..Query::default()
        })),
        (None, Some(id)) => ElementRef::Id(node_id(id)?),
        _ => return Err(argument("give exactly one of label and id")),
    };
    let click = ElementClick {
        button,
        count: if double { 2 } else { 1 },
    };
    let (outcome, clicked) = match session.click_element(handle, element, click).await {
        Ok(clicked) => (Ok(clicked.steps), Some((clicked.element, clicked.at))),
        Err(e) => (Err(e), None),
    };
    let mut answer = input_answer(session, pid, handle, outcome, args.bool("trace")?).await?;
    if let Some((element, (x, y))) = clicked {
        answer["target"] = Value::String(element.to_string());
        answer["at"] = json!([x, y]);
    }
    Ok(answer)
}

/// The open menu as the spec writes it, or null.
fn open_menu_wire(menu: Option<OpenMenu>) -> Value {
    match menu {
        Some(m) => json!({"menu": m.title, "path": m.path, "depth": m.depth}),
        None => Value::Null,
    }
}

/// Menu rows as the spec writes them: `{label, id, shortcut, enabled,
/// checked}` with `submenu` rows (and a null id), or `{separator: true}`.
fn rows_wire(rows: &[MenuRow]) -> Vec<Value> {
    rows.iter()
        .map(|r| match r {
            MenuRow::Separator => json!({"separator": true}),
            MenuRow::Item {
                label,
                id,
                shortcut,
                enabled,
                checked,
                submenu,
            } => {
                let mut row = json!({
                    "label": label,
                    "id": if submenu.is_some() { Value::Null } else { json!(id.map(|i| i.to_string())) },
                    "shortcut": shortcut,
                    "enabled": enabled,
                    "checked": checked.map(|c| match c {
                        Checked::True => "true",
                        Checked::False => "false",
                        Checked::Mixed => "mixed",
                    }),
                });
                if let Some(sub) = submenu {
                    row["submenu"] = Value::Array(rows_wire(sub));
                }
                row
            }
        })
        .collect()
}

async fn menu_open(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let path: Vec<String> = match (args.0.get("path"), args.str("menu")?) {
        (Some(Value::Array(labels)), None) => labels
            .iter()
            .map(|l| l.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| argument("path is a list of labels (text)"))?,
        (None, Some(title)) => vec![title.to_string()],
        (Some(_), Some(_)) => return Err(argument("give path or menu, not both")),
        (Some(_), None) => return Err(argument("path is a list of labels (text)")),
        (None, None) => return Err(argument("give path (a menu title, then rows) or menu")),
    };
    if path.is_empty() {
        return Err(argument("path names at least a menu title"));
    }
    let handle = app_window(session, pid).await?.handle;
    let open = session.open_menu(handle, &path).await.map_err(refusal)?;
    Ok(json!({"menu": open_menu_wire(Some(open))}))
}

/// What input left: the open menu, the focused node and the pointer in the
/// window's points.
async fn after_input(session: &Session, window: &WindowInfo, reports: &[StepReport]) -> Value {
    let handle = window.handle;
    // The app's accessibility events up to now are in before focus is read.
    if let Err(e) = session.sync_apps(handle).await {
        tracing::debug!(%e, "no accessibility sync after input");
    }
    let menu = open_menu_wire(session.shown_menu(handle).await.ok().flatten());
    let focused = match session.snapshot(handle, &ReadOptions::default()).await {
        Ok(read) => focused_id(&read.elements),
        Err(_) => Value::Null,
    };
    let pointer = match reports.last().map(|r| r.pointer.clone()) {
        Some(p) => Some(p),
        None => session.pointer().await.ok(),
    };
    let pointer = pointer.map_or(Value::Null, |p| json!(window_point(window, p.x, p.y)));
    json!({"menu": menu, "focused": focused, "pointer": pointer})
}

/// A global point in a window's points.
fn window_point(window: &WindowInfo, x: f64, y: f64) -> [f64; 2] {
    [
        x - f64::from(window.content.x),
        y - f64::from(window.content.y),
    ]
}

/// The answer to input on `handle`: what it left, `closing` when the app has
/// no window left, `interrupted` when part of it was never sent, and with
/// `trace` its passes.
async fn input_answer(
    session: &Session,
    pid: u32,
    handle: WindowHandle,
    outcome: Result<Vec<StepReport>, Error>,
    trace: bool,
) -> Result<Value, Refusal> {
    let (reports, interrupted) = match outcome {
        Ok(reports) => (reports, false),
        Err(Error::Interrupted { .. }) => (Vec::new(), true),
        Err(e) => return Err(refusal(e)),
    };
    let closed = interrupted || reports.last().is_some_and(|r| r.window_closed);
    // A window the input closed answers with the app's window now, if any.
    let now = if closed {
        app_window(session, pid).await.ok()
    } else {
        session.window(&WindowPick::Handle(handle)).await.ok()
    };
    let mut answer = match &now {
        Some(window) => after_input(session, window, &reports).await,
        None => json!({"menu": null, "focused": null, "pointer": null}),
    };
    if now.is_none() {
        answer["closing"] = Value::Bool(true);
    }
    if interrupted {
        answer["interrupted"] = Value::Bool(true);
    }
    // The answer waited for the effect to show; when the window never
    // settled in that time, it says so (and why) rather than claim it.
    if let Some(why) = reports.last().and_then(|r| r.unsettled.as_ref()) {
        answer["settled"] = Value::Bool(false);
        answer["unsettled"] = Value::String(why.clone());
    }
    if trace {
        // What the input amounted to, by where the elements are now.
        let judged = match &now {
            Some(w) => match session.tree(w.handle).await {
                Ok(tree) => wayrig_services::verdicts(&reports, &tree),
                Err(_) => vec![Default::default(); reports.len()],
            },
            None => vec![Default::default(); reports.len()],
        };
        answer["passes"] = Value::Array(
            reports
                .iter()
                .zip(&judged)
                .map(|(r, v)| pass_wire(r, v, now.as_ref()))
                .collect(),
        );
    }
    Ok(answer)
}

/// One pass of a trace: a step's events as the seat delivered them, with the
/// frame it was answered in.
/// The verdicts are the compositor's, made from the pointer, its buttons
/// and the elements' bounds (HELP says so): ids as decimal text.
fn pass_wire(report: &StepReport, judged: &PassVerdicts, window: Option<&WindowInfo>) -> Value {
    let p = &report.pointer;
    let ids = |ids: &mut dyn Iterator<Item = u64>| ids.map(|id| id.to_string()).collect::<Vec<_>>();
    json!({
        "events": report.events.iter().flat_map(event_wire).collect::<Vec<_>>(),
        "time": report.at.as_secs_f64(),
        "frames": report.commits,
        "pointer": window.map(|w| window_point(w, p.x, p.y)),
        "down": !p.buttons.is_empty(),
        "hit": p.window.map(|h| h.to_string()),
        "clicked": ids(&mut judged.clicked.into_iter()),
        "drag_started": ids(&mut judged.drag_started.into_iter()),
        "dragged": ids(&mut judged.dragged.into_iter()),
        "drag_stopped": ids(&mut judged.drag_stopped.into_iter()),
        "hovered": ids(&mut judged.hovered.into_iter()),
        "contains_pointer": ids(&mut judged.contains_pointer.iter().copied()),
        "no_longer_a_click": judged.no_longer_a_click,
    })
}

fn button_word(button: Button) -> &'static str {
    match button {
        Button::Left => "primary",
        Button::Right => "secondary",
        Button::Middle => "middle",
    }
}

/// An input event under egui's event names, in the window's points; a key
/// or click is its presses and releases, as the seat sends them.
fn event_wire(event: &InputEvent) -> Vec<Value> {
    let button = |x: f64, y: f64, button: Button, pressed: bool| json!({"PointerButton": {"pos": [x, y], "button": button_word(button), "pressed": pressed}});
    let key = |key: &str, pressed: bool| json!({"Key": {"key": key, "pressed": pressed}});
    match event {
        InputEvent::PointerMove { x, y, .. } => vec![json!({"PointerMoved": [x, y]})],
        InputEvent::PointerDown {
            x, y, button: b, ..
        } => vec![button(*x, *y, *b, true)],
        InputEvent::PointerUp {
            x, y, button: b, ..
        } => vec![button(*x, *y, *b, false)],
        InputEvent::Click {
            x,
            y,
            button: b,
            clicks,
            ..
        } => {
            let mut events = vec![json!({"PointerMoved": [x, y]})];
            for _ in 0..*clicks {
                events.push(button(*x, *y, *b, true));
                events.push(button(*x, *y, *b, false));
            }
            events
        }
        // The seat's wheel runs against egui's sign.
        InputEvent::Wheel { dx, dy, .. } => {
            // In points, as ui.scroll takes them, in egui's words and signs.
            vec![json!({"MouseWheel": {"unit": "Point", "delta": [-dx, -dy]}})]
        }
        InputEvent::KeyDown { key: k } => vec![key(k, true)],
        InputEvent::KeyUp { key: k } => vec![key(k, false)],
        InputEvent::Key { key: k } => vec![key(k, true), key(k, false)],
        InputEvent::Text { text } => vec![json!({"Text": text})],
    }
}

fn modifiers(args: &Args) -> Result<Vec<String>, Refusal> {
    match args.0.get("modifiers") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .map(|m| {
                m.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| argument(format!("modifier {m} is not text")))
            })
            .collect(),
        Some(other) => Err(argument(format!(
            "modifiers is a list such as [\"ctrl\", \"shift\"], not {other}"
        ))),
    }
}

impl Args {
    fn number(&self, key: &str) -> Result<Option<f64>, Refusal> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|n| n.is_finite())
                .map(Some)
                .ok_or_else(|| argument(format!("{key} is a number of points, not {v}"))),
        }
    }

    fn required_number(&self, key: &str) -> Result<f64, Refusal> {
        self.number(key)?
            .ok_or_else(|| argument(format!("{key} is required")))
    }
}

/// One step of input on the app's window, answered with what it left.
async fn one_step(
    session: &Session,
    pid: u32,
    args: &Args,
    events: Vec<InputEvent>,
) -> Result<Value, Refusal> {
    let handle = app_window(session, pid).await?.handle;
    let outcome = session
        .input_steps(handle, vec![Step::drawn(events)], InputOptions::default())
        .await;
    input_answer(session, pid, handle, outcome, args.bool("trace")?).await
}

async fn pointer(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let (x, y) = (args.required_number("x")?, args.required_number("y")?);
    let button = button_of(args)?;
    let mods = Mods::default();
    let event = match args.required_str("action")? {
        "move" => InputEvent::PointerMove { x, y, mods },
        "press" => InputEvent::PointerDown {
            x,
            y,
            button,
            clicks: 1,
            mods,
        },
        "release" => InputEvent::PointerUp {
            x,
            y,
            button,
            clicks: 1,
            mods,
        },
        other => {
            return Err(argument(format!(
                "action {other:?} is none of move, press, release"
            )))
        }
    };
    one_step(session, pid, args, vec![event]).await
}

async fn scroll(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let (x, y) = (args.required_number("x")?, args.required_number("y")?);
    let (dx, dy) = (
        args.number("dx")?.unwrap_or(0.0),
        args.number("dy")?.unwrap_or(0.0),
    );
    // egui's signs: a positive delta moves the content towards it, revealing
    // what is above (or left); the seat's wheel scrolls the other way. Sent
    // as wheel clicks, which every toolkit takes.
    let wheel = InputEvent::Wheel {
        x,
        y,
        dx: -dx,
        dy: -dy,
        precise: false,
        mods: Mods::default(),
    };
    one_step(
        session,
        pid,
        args,
        vec![
            InputEvent::PointerMove {
                x,
                y,
                mods: Mods::default(),
            },
            wheel,
        ],
    )
    .await
}

async fn key(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let chord = keys::chord(args.required_str("key")?, &modifiers(args)?).map_err(argument)?;
    one_step(session, pid, args, vec![InputEvent::Key { key: chord }]).await
}

/// Text as steps: each line typed in one, each newline pressed as Enter in the next.
fn text_steps(text: &str) -> Vec<Step> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut steps = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if !line.is_empty() {
            steps.push(Step::drawn(vec![InputEvent::Text {
                text: line.to_string(),
            }]));
        }
        if i + 1 < lines.len() {
            steps.push(Step::drawn(vec![InputEvent::Key {
                key: "Enter".into(),
            }]));
        }
    }
    steps
}

async fn type_text(session: &Session, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let text = args.required_str("text")?;
    if text.is_empty() {
        return Err(argument("text is empty: give the text to type"));
    }
    let handle = app_window(session, pid).await?.handle;
    let outcome = session
        .input_steps(handle, text_steps(text), InputOptions::default())
        .await;
    input_answer(session, pid, handle, outcome, args.bool("trace")?).await
}

/// A PNG of the app's window, written where MixOS confines captures.
async fn capture(session: &Session, app: &str, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let name = args.str("name")?;
    let runtime = captures::runtime_dir(std::env::var_os("XDG_RUNTIME_DIR"))?;
    let dir = CaptureDir::open(&runtime, app)?;
    let name = dir.choose(name, pid)?;
    let handle = app_window(session, pid).await?.handle;
    let request = ShotRequest {
        source: ShotSource::Window(handle),
        ..ShotRequest::default()
    };
    let shot = tokio::time::timeout(CAPTURE_LIMIT, session.screenshot(&request))
        .await
        .map_err(|_| {
            refuse(
                "CAPTURE",
                format!("the screenshot did not come within {CAPTURE_LIMIT:?}; ask again"),
            )
        })?
        .map_err(|e| match e {
            Error::NoWindow(_) | Error::StaleWindow(_) => refusal(e),
            other => refuse("CAPTURE", format!("the screenshot failed: {other}")),
        })?;
    let path = tokio::task::spawn_blocking(move || dir.write(&name, &shot.image))
        .await
        .map_err(|e| refuse("CAPTURE", format!("writing the capture failed: {e}")))??;
    Ok(json!({"path": path.to_string_lossy(), "width": shot.width, "height": shot.height}))
}

fn window_state(w: &WindowInfo) -> Value {
    json!({
        "size": [w.content.width, w.content.height],
        "outer_size": [w.frame.width, w.frame.height],
        "maximized": w.maximized,
        "minimized": w.minimized,
        "fullscreen": w.fullscreen,
        "focused": w.focused,
        "pixels_per_point": w.scale,
    })
}

async fn window(session: &Arc<Session>, pid: u32, args: &Args) -> Result<Value, Refusal> {
    let action = args.required_str("action")?;
    let op = match action {
        "minimize" => Some(WindowOp::Minimize),
        "maximize" => Some(WindowOp::Maximize),
        "restore" => Some(WindowOp::Restore),
        "focus" => Some(WindowOp::Activate),
        "close" => None,
        other => {
            return Err(argument(format!(
                "action {other:?} is none of minimize, maximize, restore, close, focus"
            )))
        }
    };
    let before = app_window(session, pid).await?;
    let now = match op {
        Some(op) => session
            .window_op(before.handle, op)
            .await
            .map_err(refusal)?,
        None => {
            // Answered at once; the app closes as if its close button were pressed.
            session
                .ask_close(before.handle, false)
                .await
                .map_err(refusal)?;
            before
        }
    };
    let mut state = window_state(&now);
    state["requested"] = Value::String(action.to_string());
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    mod hostile {
        use super::*;
        use proptest::prelude::*;
        use proptest::test_runner::TestCaseError;
        use wayrig_services::session::fake_access::{a_form, id, paused_runtime};

        /// What the form's session gives out, that bodies name to reach past
        /// the first checks: its elements' ids (as numbers and strings), a
        /// point inside it, a label it shows.
        fn given() -> impl Strategy<Value = Value> {
            prop_oneof![
                (2u64..8).prop_map(|n| json!(id(n))),
                (2u64..8).prop_map(|n| json!(id(n).to_string())),
                Just(json!(20)),
                Just(json!("Save")),
                Just(json!("Enter")),
            ]
        }

        /// JSON values at their edges: huge and tiny numbers, u64s past
        /// 2^53, long and odd strings, nesting, wrong types.
        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|n| json!(n)),
                any::<u64>().prop_map(|n| json!(n)),
                any::<f64>()
                    .prop_filter("JSON has finite numbers", |f| f.is_finite())
                    .prop_map(|f| json!(f)),
                any::<String>().prop_map(Value::String),
                "[0-9]{1,25}".prop_map(Value::String),
            ];
            leaf.prop_recursive(3, 16, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    prop::collection::hash_map("[a-z]{1,6}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(500))]

            #[test]
            fn drive_verb_bodies_are_read_or_refused_without_panicking(
                verb in 0..VERBS.len(),
                values in prop::collection::vec(value(), 0..8),
                stray in any::<bool>(),
            ) {
                let spec = &VERBS[verb];
                let mut body = Map::new();
                for ((name, ..), v) in spec.args.iter().zip(values) {
                    body.insert(name.to_string(), v);
                }
                if stray {
                    body.insert("nonsense".into(), json!(1));
                }
                let text = Value::Object(body).to_string();
                if let Ok(args) = Args::parse(&text, spec) {
                    for (name, ..) in spec.args {
                        let _ = args.str(name);
                        let _ = args.bool(name);
                        let _ = args.number(name);
                        if let Some(v) = args.0.get(*name) {
                            let _ = node_id(v);
                        }
                    }
                    let _ = button_of(&args);
                    let _ = modifiers(&args);
                } else {
                    prop_assert!(stray, "only a stray key is refused: {}", text);
                }
                // Half a JSON object is refused, not a panic.
                let half: String = text.chars().take(text.chars().count() / 2).collect();
                prop_assert!(Args::parse(&half, spec).is_err() || half.trim().is_empty());
            }

            /// Every drive verb with hostile bodies, answered over a session
            /// (the in-memory host and app): a result or a refusal with a code
            /// and a message, within what it asked to wait and a margin, and
            /// input only from the verbs that send it. Capturing and
            /// recording write files, and are left to their own tests.
            #[test]
            fn drive_verbs_with_hostile_bodies_are_answered_in_the_buss_terms(
                verb in 0..VERBS.len(),
                values in prop::collection::vec(prop_oneof![3 => value(), 1 => given()], 0..8),
            ) {
                const SENDING_INPUT: [&str; 7] = [
                    "ui.click", "ui.pointer", "ui.scroll", "ui.key", "ui.type", "ui.menu.open",
                    "ui.menu.close",
                ];
                let spec = &VERBS[verb];
                if ["ui.capture", "wayrig.record"].contains(&spec.name) {
                    return Ok(());
                }
                let mut body = Map::new();
                for ((name, ..), v) in spec.args.iter().zip(values) {
                    body.insert(name.to_string(), v);
                }
                let text = Value::Object(body).to_string();
                let runtime = paused_runtime();
                runtime.block_on(async {
                    let (session, host) = a_form().await;
                    let session = Arc::new(session);
                    let sent = host.sent().len();
                    let bound = Duration::from_secs(24 * 3600 + 600);
                    let answering = answer(&session, "form", 4242, spec.name, &text);
                    let answered = tokio::time::timeout(bound, answering).await;
                    let Ok(answered) = answered else {
                        return Err(TestCaseError::fail(format!("{} hung on {text}", spec.name)));
                    };
                    if let Err(refusal) = &answered {
                        prop_assert!(
                            !refusal.error_code.is_empty() && !refusal.message.is_empty(),
                            "{:?}",
                            refusal
                        );
                    }
                    prop_assert!(
                        host.sent().len() == sent || SENDING_INPUT.contains(&spec.name),
                        "{} sent input: {}",
                        spec.name,
                        text
                    );
                    Ok(())
                })?;
            }
        }
    }

    #[test]
    fn a_newline_is_typed_as_enter_in_its_own_step() {
        let steps = text_steps("ab\ncd\n");
        let events: Vec<InputEvent> = steps.into_iter().flat_map(|s| s.events).collect();
        assert_eq!(
            events,
            vec![
                InputEvent::Text { text: "ab".into() },
                InputEvent::Key {
                    key: "Enter".into()
                },
                InputEvent::Text { text: "cd".into() },
                InputEvent::Key {
                    key: "Enter".into()
                },
            ]
        );
    }

    #[test]
    fn a_control_named_only_by_its_class_reports_its_fallback_and_where_from() {
        let node: Node = serde_json::from_value(json!({
            "id": 7, "parent": null, "children": [], "role": "textInput",
            "native_role": "text", "name": "GtkEntry", "name_is_stand_in": true,
            "label_fallback": {"source": "beside", "text": "Name"},
            "description": "", "key": null, "states": {}, "value": "Ada",
            "range": null, "selection": null, "bounds": null, "actions": [],
            "place": {}, "relations": {}, "annotations": {}
        }))
        .unwrap();
        let element = Element {
            node,
            parent: None,
            depth: 0,
        };
        let wire = node_wire(&element, &[]);
        assert_eq!(
            (&wire["label"], &wire["labelFrom"]),
            (&json!("Name"), &json!("beside"))
        );
        // A label the toolkit gave is reported as it is, with no labelFrom.
        let mut labeled = element.clone();
        labeled.node.name = "Surname".into();
        labeled.node.name_is_stand_in = false;
        let wire = node_wire(&labeled, &[]);
        assert_eq!(wire["label"], "Surname");
        assert!(wire.get("labelFrom").is_none());
    }

    #[test]
    fn ids_are_decimal_text_or_exact_integers() {
        assert_eq!(node_id(&json!("18446744073709551615")).unwrap(), u64::MAX);
        assert_eq!(node_id(&json!(42)).unwrap(), 42);
        assert_eq!(node_id(&json!(4.5)).unwrap_err().error_code, "ARGUMENT");
        assert_eq!(node_id(&json!("x1")).unwrap_err().error_code, "ARGUMENT");
        assert_eq!(node_id(&json!(-1)).unwrap_err().error_code, "ARGUMENT");
    }

    #[test]
    fn session_errors_map_one_to_one() {
        let code = |e| refusal(e).error_code;
        assert_eq!(code(Error::Busy("x".into())), "BUSY");
        assert_eq!(code(Error::Cancelled("x".into())), "CANCELLED");
        assert_eq!(code(Error::Unsupported("x".into())), "UNAVAILABLE");
        assert_eq!(code(Error::NoElement("x".into())), "ARGUMENT");
        assert_eq!(code(Error::InvalidRequest("x".into())), "ARGUMENT");
        assert_eq!(code(Error::StaleGeometry("x".into())), "ARGUMENT");
        let ambiguous = refusal(Error::Ambiguous {
            what: "label \"Go\"".into(),
            ids: vec![3, 4],
        });
        assert_eq!(ambiguous.error_code, "ARGUMENT");
        assert!(ambiguous.message.contains("3, 4"), "{}", ambiguous.message);
    }

    #[test]
    fn unknown_arguments_and_bodies_that_are_no_object_are_refused() {
        let click = VERBS.iter().find(|v| v.name == "ui.click").unwrap();
        assert!(Args::parse("", click).is_ok());
        assert!(Args::parse(r#"{"label":"Go","trace":false}"#, click).is_ok());
        let e = Args::parse(r#"{"lable":"Go"}"#, click).unwrap_err();
        assert_eq!(e.error_code, "ARGUMENT");
        assert!(e.message.contains("label, id"), "{}", e.message);
        assert_eq!(
            Args::parse("[1]", click).unwrap_err().error_code,
            "ARGUMENT"
        );
        assert_eq!(Args::parse("{", click).unwrap_err().error_code, "ARGUMENT");
        assert!(Args::parse(r#"{"trace":true}"#, click).is_ok());
        let state = VERBS.iter().find(|v| v.name == "window.state").unwrap();
        assert_eq!(
            Args::parse(r#"{"trace":true}"#, state)
                .unwrap_err()
                .error_code,
            "ARGUMENT"
        );
    }

    #[test]
    fn describe_lists_every_verb_under_the_apps_prefix() {
        let d = describe("calc");
        let names: Vec<&str> = d["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        for verb in [
            "calc.ui.tree",
            "calc.ui.click",
            "calc.ui.key",
            "calc.ui.type",
            "calc.ui.capture",
            "calc.window",
            "calc.window.state",
            "calc.wayrig.record",
            "calc.app.describe",
            "HELP",
        ] {
            assert!(names.contains(&verb), "{verb} in {names:?}");
        }
        assert_eq!(d["verbs"][0]["read_only"], true);
        assert_eq!(d["verbs"][0]["args"][0]["name"], "label");
    }
}
