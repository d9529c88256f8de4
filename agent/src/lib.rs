//! The agent CLI (`wayrig <command>`, also answering as `mygo-automation`): short
//! commands over the MyGo automation socket, short refs (@e1), settle diffs.
//!
//! A session keeps the socket, window and refs in a file under the user's
//! cache directory; refs last while their element shows and are never reused.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use base64::Engine;
use clap::{Args, Subcommand};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wayrig_model::reading::{reading_order, Placement};
use wayrig_proto::mygo::{
    Action, Awaited, Button, Call, CaptureAnswer, Code, Element, ElementPick, Event, LaunchAnswer,
    LaunchApp, MenuRowWire, MenusAnswer, Mods, StepAnswer, TreeAnswer, WindowsAnswer, WireError,
    LAUNCH_METHOD, MENUS_METHOD, UNSETTLED_MEMBER, WAIT_FOR_METHOD,
};
use wayrig_proto::mygo_client::{coded, CallError, Client};

pub const SKILL: &str = include_str!("../../docs/SKILL.md");

/// How long `--settle` and `wait` wait by default, in ms.
const SETTLE_MS: u64 = 5000;

/// How long a command waits for a just-launched app's first window, in ms.
const FIRST_WINDOW_MS: u64 = 10_000;

/// Values (and other texts) longer than this many characters are cut.
const CUT_AT: usize = 80;

/// What an action prints: `ok`, or with `--settle` what changed.
#[derive(Args, Debug, Clone, Copy)]
pub struct Settle {
    /// Wait for the window to settle, then print what changed.
    #[arg(long)]
    settle: bool,
    /// With --settle: unchanged elements to print around each change.
    #[arg(long, value_name = "N", default_value_t = 0)]
    context: usize,
    /// Print long values whole (they are cut at 80 characters).
    #[arg(long)]
    full: bool,
}

#[derive(Args, Debug)]
pub struct Common {
    /// Session name (default: MYGO_AUTOMATION_SESSION, else "default").
    #[arg(long, global = true, env = "MYGO_AUTOMATION_SESSION")]
    pub session: Option<String>,
    /// Window id: an action moves the session there; a read (snapshot,
    /// screenshot, wait, eval, windows) only looks at it (default: the
    /// session's window, the one it opened).
    #[arg(long, global = true)]
    pub window: Option<u64>,
}

#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Start a session on an automation socket, on the window `--window`
    /// names, else the focused one.
    Open {
        #[arg(long)]
        socket: PathBuf,
    },
    /// Print the window's elements, a line each, with refs.
    Snapshot {
        /// Only the controls that show (elements with actions), and a count
        /// of those that do not.
        #[arg(short = 'i')]
        interactive: bool,
        /// The protocol's answer as JSON.
        #[arg(long)]
        json: bool,
        /// Print long values whole (they are cut at 80 characters).
        #[arg(long)]
        full: bool,
    },
    /// Press an element (@ref, key=<key> or id=<digits>).
    Press {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Focus an element.
    Focus {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Replace a field's value.
    Fill {
        target: String,
        /// Text or a number ("-5" too).
        #[arg(allow_hyphen_values = true)]
        text: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Type text at a field's caret.
    Insert {
        target: String,
        #[arg(allow_hyphen_values = true)]
        text: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Select characters FROM..TO of a field.
    Select {
        target: String,
        from: i32,
        to: i32,
        #[command(flatten)]
        settle: Settle,
    },
    /// Step a slider or spinner up.
    Increment {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Step a slider or spinner down.
    Decrement {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Scroll the containers around an element until it shows.
    ScrollIntoView {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Open an item of a tree (or anything expandable).
    Expand {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Close an item of a tree (or anything expandable).
    Collapse {
        target: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Click at X, Y (DIPs in the window's content).
    #[command(allow_negative_numbers = true)]
    Click {
        #[arg(value_parser = finite)]
        x: f64,
        #[arg(value_parser = finite)]
        y: f64,
        #[arg(long, default_value = "left", value_parser = parse_button)]
        button: Button,
        #[arg(long, default_value_t = 1)]
        clicks: u32,
        #[command(flatten)]
        settle: Settle,
    },
    /// Move the pointer to X, Y.
    #[command(allow_negative_numbers = true)]
    Pointer {
        #[arg(value_parser = finite)]
        x: f64,
        #[arg(value_parser = finite)]
        y: f64,
        #[command(flatten)]
        settle: Settle,
    },
    /// Scroll by DX, DY at X, Y (a negative DY scrolls up).
    #[command(allow_negative_numbers = true)]
    Wheel {
        #[arg(value_parser = finite)]
        x: f64,
        #[arg(value_parser = finite)]
        y: f64,
        #[arg(value_parser = finite)]
        dx: f64,
        #[arg(value_parser = finite)]
        dy: f64,
        #[arg(long)]
        precise: bool,
        #[command(flatten)]
        settle: Settle,
    },
    /// Type text into the focused element.
    Type {
        #[arg(allow_hyphen_values = true)]
        text: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Press a key with modifiers (Enter, Shift+Tab, CmdOrCtrl+Z).
    Key {
        key: String,
        #[command(flatten)]
        settle: Settle,
    },
    /// Choose a menu item by the labels along its path: a menu bar's title
    /// or a menu button's label first. With no labels, list the menus.
    Menu {
        path: Vec<String>,
        #[command(flatten)]
        settle: Settle,
    },
    /// Evaluate a script in a page.
    Eval { script: String },
    /// Record the session from now on (on), or end the recording (off);
    /// prints its folder, which `wayrig trace view DIR` reads.
    Record {
        #[arg(value_parser = ["on", "off"])]
        switch: String,
    },
    /// Wait for the window to settle; with --text or --ref, wait instead for
    /// what you expect to show (or, --gone, to go), however the app works.
    Wait {
        #[arg(long, default_value_t = SETTLE_MS)]
        timeout: u64,
        /// Wait until an element whose label or value contains TEXT shows
        /// (case-insensitive); with --gone, until none does.
        #[arg(long, conflicts_with = "element")]
        text: Option<String>,
        /// Wait on one element (@eN, key=<key> or id=<digits>); give
        /// --shown or --gone.
        #[arg(long = "ref", value_name = "TARGET")]
        element: Option<String>,
        /// With --ref: until the element shows.
        #[arg(long, conflicts_with = "gone")]
        shown: bool,
        /// With --text or --ref: until it no longer shows.
        #[arg(long)]
        gone: bool,
    },
    /// Save a PNG of the window.
    Screenshot { file: PathBuf },
    /// Start another app in the running session, on its display and private
    /// buses: `launch -- PROGRAM ARGS...` or `launch --desktop ID [-- ARGS...]`.
    /// Prints its windows once mapped; the session stays on its window.
    Launch {
        /// An installed app's desktop id (org.gnome.Calculator) to start
        /// by its Exec line; what follows `--` is added to it.
        #[arg(long, value_name = "ID")]
        desktop: Option<String>,
        /// How long to wait for its first window, in ms.
        #[arg(long, default_value_t = FIRST_WINDOW_MS)]
        timeout: u64,
        /// The program and its arguments (with --desktop, the arguments).
        #[arg(last = true, value_name = "PROGRAM ARGS")]
        command: Vec<String>,
    },
    /// In a session started with `--pacing step`, let every window draw
    /// FRAMES more frames (1 to 600), then stand still again.
    Step {
        #[arg(default_value_t = 1)]
        frames: u32,
    },
    /// List the app's windows.
    Windows,
    /// End the session (the app keeps running).
    Close,
    /// Print the usage guide for agents.
    Skills,
    /// Print the version.
    Version,
}

impl AgentCommand {
    /// The element an action names (@ref, key=<key> or id=<digits>).
    fn element_target(&self) -> Option<&str> {
        use AgentCommand as C;
        match self {
            C::Press { target, .. }
            | C::Focus { target, .. }
            | C::Fill { target, .. }
            | C::Insert { target, .. }
            | C::Select { target, .. }
            | C::Increment { target, .. }
            | C::Decrement { target, .. }
            | C::ScrollIntoView { target, .. }
            | C::Expand { target, .. }
            | C::Collapse { target, .. } => Some(target),
            _ => None,
        }
    }
}

/// What a session remembers between commands.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    socket: PathBuf,
    /// The session's window: the one it opened, until `--window` names another.
    window: Option<u64>,
    /// Element id -> ref number; refs are never given to another element.
    refs: BTreeMap<String, u64>,
    /// Element id -> the window it last showed in, to tell a ref of another
    /// window from one whose element went.
    #[serde(default)]
    windows_of: BTreeMap<String, u64>,
    next_ref: u64,
    /// The last snapshot's lines by element id, for diffs.
    last: Vec<(String, String)>,
    /// What the command prints, held until the session is saved: a reader
    /// that goes away early (`| head`) must not cost the session its refs.
    #[serde(skip)]
    out: Vec<String>,
    /// The title of the window an action goes to, read before it: the
    /// diff line for the window if the action closes it.
    #[serde(skip)]
    acting_on: Option<String>,
    /// The windows the session has told of (`None` before it first looked).
    #[serde(default)]
    windows_seen: Option<Vec<u64>>,
    /// Another window a command only reads (`--window` on `snapshot`,
    /// `screenshot`, `wait`): the session stays on its own.
    #[serde(skip)]
    viewing: Option<u64>,
}

impl State {
    /// The window the command reads: the one it views, else the session's.
    fn shown_window(&self) -> Option<u64> {
        self.viewing.or(self.window)
    }

    fn print(&mut self, line: String) {
        self.out.push(line);
    }
}

fn session_path(name: &str) -> Result<PathBuf, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || name.starts_with('.')
    {
        return Err(format!(
            "bad session name {name:?}: letters, digits, - _ . only"
        ));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or("no cache directory: set XDG_CACHE_HOME or HOME")?;
    Ok(base
        .join("wayrig")
        .join("sessions")
        .join(format!("{name}.json")))
}

fn load(path: &Path) -> Result<State, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|_| "no session: run `open --socket PATH` first".to_string())?;
    serde_json::from_str(&text)
        .map_err(|e| format!("the session file {} is damaged: {e}", path.display()))
}

fn save(path: &Path, state: &State) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string(state).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The answer to a Wayrig extension; an app's own MyGo, which has none,
/// makes it `unsupported`, saying what to do `instead`.
fn extension(
    answer: Result<Value, CallError>,
    method: &str,
    instead: &str,
) -> Result<Value, String> {
    match answer {
        Err(CallError::App(e)) if e.code == Code::UnknownMethod => Err(coded(&WireError::new(
            Code::Unsupported,
            format!("this app's automation socket has no {method} (a Wayrig extension): {instead}"),
        ))),
        other => other.map_err(Into::into),
    }
}

/// A result read as its method's answer type.
fn typed<T: DeserializeOwned>(result: Value) -> Result<T, String> {
    serde_json::from_value(result).map_err(|e| format!("the app answered garbage: {e}"))
}

/// `--button`: a pointer button by its wire name.
/// A coordinate or a distance: Rust reads `nan` and `inf` as numbers, which
/// no window has and JSON cannot carry.
fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(n),
        Ok(_) => Err("not a finite number".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_button(name: &str) -> Result<Button, String> {
    match name {
        "left" => Ok(Button::Left),
        "right" => Ok(Button::Right),
        "middle" => Ok(Button::Middle),
        other => Err(format!("unknown button {other:?}: left, right or middle")),
    }
}

/// A text as a line shows it: quoted, and past 80 characters cut with the
/// count of what was cut, unless `full`.
fn quoted(text: &str, full: bool) -> String {
    let count = text.chars().count();
    if full || count <= CUT_AT {
        return quote(text);
    }
    let kept: String = text.chars().take(CUT_AT).collect();
    format!(
        "{} (+{} chars)",
        quote(&format!("{kept}…")),
        thousands(count - CUT_AT)
    )
}

/// Text in double quotes as a person reads it: quotes, backslashes and
/// control characters escaped, every other character as itself (a thin
/// space is a thin space, not `\u{2009}`).
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A count with thousands separated: 1,043.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What names an element in its line: its label; for a control whose label
/// says nothing, the words a person would use, marked with where they come
/// from (`~"Name"` for a label beside it or the caption a tab holds,
/// `(description "…")`, `(icon "…")`).
fn naming(n: &Element, full: bool) -> Option<String> {
    if let Some(label) = n.label.as_ref().filter(|_| !n.label_is_class_name) {
        return Some(quoted(label, full));
    }
    let fallback = n.label_fallback.as_ref()?;
    let text = quoted(&fallback.text, full);
    Some(match fallback.from.as_str() {
        "labelledBy" | "content" | "beside" => format!("~{text}"),
        from => format!("({from} {text})"),
    })
}

/// The one-line form of an element: ref, role, label, value, key, states
/// (with `focused` for the element that has the keyboard focus).
fn line(r: u64, n: &Element, focused: bool, full: bool) -> String {
    let role = if n.role.is_empty() { "?" } else { &n.role };
    let mut s = format!("@e{r} [{role}]");
    if let Some(name) = naming(n, full) {
        s.push_str(&format!(" {name}"));
    }
    let password = n.states.iter().any(|s| s == "password");
    match n.value.as_deref().filter(|v| !v.is_empty()) {
        // A password's value is counted, never printed.
        Some(value) if password => {
            s.push_str(&format!(" value=•••• ({} chars)", value.chars().count()))
        }
        Some(value) => s.push_str(&format!(" value={}", quoted(value, full))),
        None => {}
    }
    // A stepper's value is its number: said once.
    if let Some(now) = n
        .now
        .filter(|now| n.value.as_deref() != Some(&now.to_string()))
    {
        s.push_str(&format!(" now={now}"));
    }
    if let Some(key) = n.key.as_deref().filter(|k| !k.is_empty()) {
        s.push_str(&format!(" key={key}"));
    }
    let mut shown: Vec<&str> = n
        .states
        .iter()
        .map(String::as_str)
        // What does not show is said once, by where a snapshot lists it.
        .filter(|s| {
            !matches!(
                *s,
                "focusable" | "selectable" | "horizontal" | "vertical" | "offscreen"
            )
        })
        .collect();
    if focused {
        shown.insert(0, "focused");
    }
    if !shown.is_empty() {
        s.push_str(&format!(" ({})", shown.join(" ")));
    }
    s
}

/// The ref of an element, given when it is first printed and never reused.
fn ref_of(state: &mut State, id: &str) -> u64 {
    if let Some(window) = state.shown_window() {
        state.windows_of.insert(id.to_string(), window);
    }
    if let Some(r) = state.refs.get(id) {
        return *r;
    }
    state.next_ref += 1;
    state.refs.insert(id.to_string(), state.next_ref);
    state.next_ref
}

/// An element as a snapshot shows it.
struct Shown {
    id: String,
    line: String,
    control: bool,
    /// Offscreen, as the session tells: on a hidden page, in a closed
    /// popover, scrolled out of view, or without a size.
    hidden: bool,
}

/// A control: an element with actions, or one that takes the keyboard focus.
fn is_control(n: &Element) -> bool {
    !n.actions.is_empty() || n.states.iter().any(|s| s == "focusable")
}

/// Worth a line: a label (a toolkit's class name is none), a value or a key
/// to read, or a control to act on.
fn worth_a_line(n: &Element) -> bool {
    let has = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    (has(&n.label) && !n.label_is_class_name) || has(&n.value) || has(&n.key) || is_control(n)
}

/// The words an element is read by: its label, else what stands in for it.
fn read_as(n: &Element) -> Option<&str> {
    n.label
        .as_deref()
        .filter(|l| !l.is_empty() && !n.label_is_class_name)
        .or(n.label_fallback.as_ref().map(|f| f.text.as_str()))
}

fn shows(n: &Element) -> bool {
    !n.states.iter().any(|s| s == "offscreen")
}

/// Lines that say nothing another line does not, left out:
/// - a control wrapping a control that shows and is read by the same words
///   (GTK 4's menu button and the toggle button inside it), or wrapping
///   just one control that shows where neither has words (an icon's menu
///   button): one thing to a person, so one line, the inner one's, which
///   is the one that acts (as the session's `find_one` takes it); never a
///   drop-down's own items (a GTK 3 combo is named after its chosen item);
/// - a view with no words of its own (a scrolled view, a list, a table)
///   that holds controls that show, unless it has the focus;
/// - text that says what a control holding it is read by, or part of it (a
///   menu item's label, a button's caption, a history row's parts);
/// - the button and item a drop-down is drawn with: it is one control.
fn said_elsewhere<'n>(nodes: &'n [Element], focus: Option<&str>) -> HashSet<&'n str> {
    let by_id: HashMap<&str, &Element> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let ancestors = |n: &'n Element| {
        std::iter::successors(n.parent.as_deref().and_then(|p| by_id.get(p)), |up| {
            up.parent.as_deref().and_then(|p| by_id.get(p))
        })
        .copied()
    };
    let is_item = |n: &Element| n.role.starts_with("menuItem");
    let mut out = HashSet::new();
    // Showing controls below each element, by id.
    let mut held: HashMap<&str, Vec<&Element>> = HashMap::new();
    for inner in nodes
        .iter()
        .filter(|n| is_control(n) && shows(n) && !is_item(n))
    {
        for outer in ancestors(inner) {
            held.entry(outer.id.as_str()).or_default().push(inner);
            if is_control(outer) && read_as(inner).is_some() && read_as(outer) == read_as(inner) {
                out.insert(outer.id.as_str());
            }
        }
    }
    for outer in nodes.iter().filter(|n| read_as(n).is_none()) {
        let Some(inner) = held.get(outer.id.as_str()) else {
            continue;
        };
        let view = matches!(
            outer.role.as_str(),
            "scroll" | "list" | "tabList" | "table" | "tree" | "treeGrid" | "grid"
        );
        // Buttons both: a combo box around its entry is two controls.
        let button = |n: &Element| n.role.ends_with("utton");
        let lone_twin = is_control(outer)
            && button(outer)
            && matches!(inner.as_slice(), [one] if read_as(one).is_none() && button(one));
        if (view && focus != Some(outer.id.as_str())) || (lone_twin && !view) {
            out.insert(outer.id.as_str());
        }
    }
    for text in nodes.iter().filter(|n| !is_control(n) && n.value.is_none()) {
        let said = |h: &Element| match (read_as(h), read_as(text)) {
            (Some(whole), Some(part)) => is_control(h) && whole.contains(part),
            _ => false,
        };
        if ancestors(text).any(said) {
            out.insert(text.id.as_str());
        }
    }
    // A drop-down is one control: the unnamed button and item it is drawn
    // with are it.
    for dropdown in nodes
        .iter()
        .filter(|n| matches!(n.role.as_str(), "popUpButton" | "comboBox") && shows(n))
    {
        for inner in held.get(dropdown.id.as_str()).into_iter().flatten() {
            if inner.role != "textField" {
                out.insert(inner.id.as_str());
            }
        }
    }
    out
}

/// The elements in the order a person reads them (the session's reading
/// order): what does not show is placed nowhere.
fn in_reading_order(nodes: &[Element]) -> impl Iterator<Item = &Element> {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let placements: Vec<Placement> = nodes
        .iter()
        .map(|n| Placement {
            parent: n.parent.as_deref().and_then(|p| index.get(p).copied()),
            bounds: n
                .bounds
                .filter(|_| !n.states.iter().any(|s| s == "offscreen"))
                .map(|b| wayrig_host::Rect::new(b.x, b.y, b.width, b.height)),
        })
        .collect();
    reading_order(&placements).into_iter().map(|i| &nodes[i])
}

/// Read the tree and write the elements worth a line (those with a label, a
/// value or actions) in reading order, hidden ones only when `hidden` asks
/// for them. The tree comes back as the app wrote it too.
fn snapshot(
    client: &mut Client,
    state: &mut State,
    hidden: bool,
    full: bool,
) -> Result<(Value, Vec<Shown>), String> {
    let raw = client.call(Call::Tree {
        window: state.shown_window(),
    })?;
    let tree: TreeAnswer = typed(raw.clone())?;
    let shown = shown_of(state, &tree, hidden, full);
    Ok((raw, shown))
}

/// The elements of a tree worth a line, in reading order (see `snapshot`).
fn shown_of(state: &mut State, tree: &TreeAnswer, hidden: bool, full: bool) -> Vec<Shown> {
    let said_elsewhere = said_elsewhere(&tree.nodes, tree.focus.as_deref());
    let mut shown = Vec::new();
    for n in in_reading_order(&tree.nodes) {
        if !worth_a_line(n) || said_elsewhere.contains(n.id.as_str()) {
            continue;
        }
        let control = is_control(n);
        let offscreen = n.states.iter().any(|s| s == "offscreen");
        let line = if offscreen && !hidden {
            String::new()
        } else {
            let focused = tree.focus.as_deref() == Some(n.id.as_str());
            line(ref_of(state, &n.id), n, focused, full)
        };
        shown.push(Shown {
            id: n.id.clone(),
            line,
            control,
            hidden: offscreen,
        });
    }
    shown
}

/// The lines of what shows, as a diff compares them.
fn showing(shown: Vec<Shown>) -> Vec<(String, String)> {
    shown
        .into_iter()
        .filter(|s| !s.hidden)
        .map(|s| (s.id, s.line))
        .collect()
}

/// What the next diff compares with: the lines of what shows.
fn remember(state: &mut State, shown: &[Shown]) {
    // A snapshot of another window (`--window` on a read) is no baseline.
    if state.viewing.is_some() {
        return;
    }
    state.last = shown
        .iter()
        .filter(|s| !s.hidden)
        .map(|s| (s.id.clone(), s.line.clone()))
        .collect();
}

/// The element id a ref (`@eN`) was given to; `no_element` for a ref the
/// session never gave.
fn id_of_ref<'s>(state: &'s State, t: &str) -> Result<&'s str, String> {
    let r: u64 = t
        .strip_prefix("@e")
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| invalid(format!("bad ref {t}")))?;
    state
        .refs
        .iter()
        .find(|(_, v)| **v == r)
        .map(|(k, _)| k.as_str())
        .ok_or_else(|| {
            coded(&WireError::new(
                Code::NoElement,
                format!("unknown ref {t}: take a snapshot"),
            ))
        })
}

/// Resolve @ref, key=<key> or id=<digits> to the element `act` names; a
/// ref that names no element shown is `no_element`, as the app would say.
fn target(state: &State, t: &str, tree: &TreeAnswer) -> Result<ElementPick, String> {
    let invalid = |m: String| coded(&WireError::new(Code::InvalidRequest, m));
    let no_element = |m: String| coded(&WireError::new(Code::NoElement, m));
    if t.starts_with("@e") {
        let id = id_of_ref(state, t)?;
        if !tree.nodes.iter().any(|n| n.id == id) {
            let home = state.windows_of.get(id).copied();
            if let Some(home) = home.filter(|w| Some(*w) != state.window) {
                return Err(no_element(format!(
                    "{t} is an element of window {home}, not of window {}: leave out --window \
                     to act there",
                    tree.window
                )));
            }
            return Err(no_element(format!(
                "stale ref {t}: its element went; take a new snapshot"
            )));
        }
        let id = id
            .parse()
            .map_err(|_| invalid(format!("the app gave {t} the id {id:?}, not digits")))?;
        return Ok(ElementPick::Id(id));
    }
    if let Some(k) = t.strip_prefix("key=") {
        return Ok(ElementPick::Key(k.to_string()));
    }
    if let Some(id) = t.strip_prefix("id=") {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(invalid(format!("bad id {id:?}: digits only")));
        }
        let id = id
            .parse()
            .map_err(|_| invalid(format!("bad id {id:?}: too large for an id")))?;
        return Ok(ElementPick::Id(id));
    }
    Err(invalid(format!(
        "bad target {t:?}: use @eN, key=<key> or id=<digits>"
    )))
}

/// The window a session opens on: the one named, else the focused one, else
/// the first; none while the app has no window yet.
fn window_to_keep(client: &mut Client, named: Option<u64>) -> Result<Option<u64>, String> {
    if named.is_some() {
        return Ok(named);
    }
    let mut windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    if windows.is_empty() {
        // The app was just launched: `idle` waits for its first window.
        let first = Call::Idle {
            window: None,
            timeout_ms: Some(FIRST_WINDOW_MS),
        };
        match client.call(first) {
            Ok(_) | Err(CallError::App(_)) => {}
            Err(e) => return Err(e.into()),
        }
        windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    }
    Ok(windows
        .iter()
        .find(|w| w.focused)
        .or(windows.first())
        .map(|w| w.id))
}

/// An error in the protocol's `invalid_request` terms.
fn invalid(message: String) -> String {
    coded(&WireError::new(Code::InvalidRequest, message))
}

/// The element `wait --ref` waits on: @ref, key=<key> or id=<digits>. A ref
/// is not checked against the tree: the element it names may be gone already,
/// which is what `--gone` waits for.
fn awaited_element(state: &State, t: &str) -> Result<ElementPick, String> {
    if t.starts_with("@e") {
        let id = id_of_ref(state, t)?;
        return id
            .parse()
            .map(ElementPick::Id)
            .map_err(|_| invalid(format!("the app gave {t} the id {id:?}, not digits")));
    }
    let empty = TreeAnswer {
        window: 0,
        focus: None,
        nodes: Vec::new(),
        announcements: Vec::new(),
    };
    target(state, t, &empty)
}

/// `wait --text` and `wait --ref`: Wayrig's `wayrig.waitFor`, then the line of
/// the element that showed, or `gone`.
fn wait_for(
    client: &mut Client,
    state: &mut State,
    awaited: Awaited,
    gone: bool,
    timeout: u64,
) -> Result<(), String> {
    let answer = client.call(Call::WaitFor {
        window: state.shown_window(),
        awaited,
        gone,
        timeout_ms: Some(timeout),
    });
    let found = extension(
        answer,
        WAIT_FOR_METHOD,
        "run the app under `wayrig run` (or `wayrig attach`), or use `wait` alone",
    )?;
    let Some(id) = found["id"].as_str() else {
        state.print("gone".to_string());
        return Ok(());
    };
    let (_, shown) = snapshot(client, state, false, false)?;
    match shown.iter().find(|s| s.id == id && !s.line.is_empty()) {
        Some(s) => state.print(format!("shown {}", s.line)),
        None => state.print(format!("shown id={id}")),
    }
    Ok(())
}

/// The name the command was called by (`wayrig`, `mygo-automation`).
fn called_as() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "wayrig".into())
}

/// The lines of a diff: each changed element as `- old` and `+ new`, new
/// ones as `+`, gone ones (or ones that no longer show) as `-`, and
/// `context` unchanged neighbours around each change as `=`.
fn diff(before: &[(String, String)], now: &[(String, String)], context: usize) -> Vec<String> {
    let then: BTreeMap<&str, &str> = before
        .iter()
        .map(|(id, l)| (id.as_str(), l.as_str()))
        .collect();
    let changed: Vec<bool> = now
        .iter()
        .map(|(id, l)| then.get(id.as_str()) != Some(&l.as_str()))
        .collect();
    let near_change = |i: usize| {
        let from = i.saturating_sub(context);
        let to = i.saturating_add(context).min(now.len() - 1);
        context > 0 && changed[from..=to].iter().any(|c| *c)
    };
    let mut out = Vec::new();
    for (i, (id, l)) in now.iter().enumerate() {
        match then.get(id.as_str()) {
            Some(old) if *old == l => {
                if near_change(i) {
                    out.push(format!("= {l}"));
                }
            }
            Some(old) => {
                out.push(format!("- {old}"));
                out.push(format!("+ {l}"));
            }
            None => out.push(format!("+ {l}")),
        }
    }
    let after: std::collections::BTreeSet<&str> = now.iter().map(|(id, _)| id.as_str()).collect();
    out.extend(
        before
            .iter()
            .filter(|(id, _)| !after.contains(id.as_str()))
            .map(|(_, old)| format!("- {old}")),
    );
    out
}

/// What an action's diff compares with: the window as it showed just before
/// the action (read now, or from the tree the action was aimed by); none when
/// the session never read this window, whose first read is a snapshot.
fn before_action(
    client: &mut Client,
    state: &mut State,
    how: Settle,
    tree: Option<&TreeAnswer>,
) -> Result<Option<Vec<(String, String)>>, String> {
    if !how.settle || state.last.is_empty() {
        return Ok(None);
    }
    let read;
    let tree = match tree {
        Some(tree) => tree,
        None => {
            read = client.call_as(Call::Tree {
                window: state.window,
            })?;
            &read
        }
    };
    Ok(Some(showing(shown_of(state, tree, false, how.full))))
}

/// Wait to settle, then print what changed among the elements that show
/// since `before` (the window just before the action); `(no change)` when
/// nothing did.
fn settle_and_diff(
    client: &mut Client,
    state: &mut State,
    how: Settle,
    before: Option<Vec<(String, String)>>,
) -> Result<(), String> {
    // A window that animates forever never settles: after the wait, what
    // changed is still the answer, with a note that it may go on changing.
    let idle = Call::Idle {
        window: state.window,
        timeout_ms: Some(SETTLE_MS),
    };
    if let Err(e) = client.call(idle) {
        if matches!(&e, CallError::App(e) if e.code == Code::NoWindow) && closed(client, state)? {
            return Ok(());
        }
        if !matches!(&e, CallError::App(e) if e.code == Code::Timeout) {
            return Err(e.into());
        }
        eprintln!("note: the window did not settle within {SETTLE_MS} ms; changes since then are not shown");
    }
    let (_, shown) = snapshot(client, state, false, how.full)?;
    let now = showing(shown);
    // The first read of a window (`--window` just moved the session) is a
    // snapshot, not a change.
    let lines = match before {
        None => now.iter().map(|(_, line)| line.clone()).collect(),
        Some(before) => diff(&before, &now, how.context),
    };
    if lines.is_empty() {
        state.print("(no change)".to_string());
    }
    state.out.extend(lines);
    state.last = now;
    Ok(())
}

/// Note the title of the window an action goes to.
/// Print `+ window N "Title"` for each window the session has not seen, if
/// `tell`; remember the windows there are now.
fn tell_new_windows(client: &mut Client, state: &mut State, tell: bool) -> Result<(), String> {
    let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    if let (Some(seen), true) = (&state.windows_seen, tell) {
        let new: Vec<String> = windows
            .iter()
            .filter(|w| !seen.contains(&w.id))
            .map(|w| format!("+ window {} {}", w.id, quote(&w.title)))
            .collect();
        state.out.extend(new);
    }
    state.windows_seen = Some(windows.iter().map(|w| w.id).collect());
    Ok(())
}

fn note_title(client: &mut Client, state: &mut State) -> Result<(), String> {
    let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    state.acting_on = windows
        .into_iter()
        .find(|w| Some(w.id) == state.window)
        .map(|w| w.title);
    Ok(())
}

/// The action's window closed in answer to it (a dialog's OK): it was
/// done, and `closed` printed so.
fn closed_in_answer(
    client: &mut Client,
    state: &mut State,
    answer: &Result<Value, CallError>,
) -> Result<bool, String> {
    match answer {
        Err(CallError::App(e)) if e.code == Code::NoWindow => closed(client, state),
        _ => Ok(false),
    }
}

/// When the session's window is gone (its app closed it in answer to the
/// action), print it as the action's change: a diff line for the window and
/// `window closed`. The session then follows the focused window. Answers
/// whether the window is gone.
fn closed(client: &mut Client, state: &mut State) -> Result<bool, String> {
    let Some(window) = state.window else {
        return Ok(false);
    };
    let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    if windows.iter().any(|w| w.id == window) {
        return Ok(false);
    }
    let title = state.acting_on.take().unwrap_or_default();
    state.print(format!("- window {window} {}", quote(&title)));
    state.print("window closed".to_string());
    state.window = None;
    state.last.clear();
    Ok(true)
}

/// An error's message as an agent reads it: the elements it names by the
/// refs the agent knows them by, rather than by their ids.
fn with_refs(state: &State, message: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in message.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        match state.refs.get(&digits) {
            Some(r) => out.push_str(&format!("@e{r}")),
            None => out.push_str(&digits),
        }
        digits.clear();
        out.push(c);
    }
    out.pop();
    out
}

pub fn run(common: Common, command: AgentCommand) -> Result<(), String> {
    // Piped into `head`, the tool ends quietly when the reader goes, as Unix
    // tools do (Rust ignores SIGPIPE, and printing would panic).
    // SAFETY: resets one signal's disposition; the CLI starts no threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match command {
        AgentCommand::Skills => {
            print!("{SKILL}");
            return Ok(());
        }
        AgentCommand::Version => {
            println!("{} {}", called_as(), env!("CARGO_PKG_VERSION"));
            return Ok(());
        }
        _ => {}
    }
    let name = common.session.unwrap_or_else(|| "default".into());
    let path = session_path(&name)?;
    if let AgentCommand::Open { socket } = command {
        let mut client = Client::connect(&socket)?;
        let window = window_to_keep(&mut client, common.window)?;
        let mut state = State {
            socket: socket.clone(),
            window,
            ..State::default()
        };
        tell_new_windows(&mut client, &mut state, false)?;
        save(&path, &state)?;
        let on = window.map_or("the first window it maps".into(), |w| format!("window {w}"));
        println!("session {name}: {} on {on}", socket.display());
        return Ok(());
    }
    if let AgentCommand::Close = command {
        let _ = std::fs::remove_file(&path);
        println!("session {name} closed");
        return Ok(());
    }
    let mut state = load(&path)?;
    let mut client = Client::connect(&state.socket)?;
    // `--window` on a command that only reads looks at that window; on an
    // action it moves the session there. A diff compares snapshots of one
    // window only.
    let reads_only = matches!(
        command,
        AgentCommand::Snapshot { .. }
            | AgentCommand::Screenshot { .. }
            | AgentCommand::Wait { .. }
            | AgentCommand::Eval { .. }
            | AgentCommand::Record { .. }
            | AgentCommand::Step { .. }
            | AgentCommand::Windows
    ) || matches!(&command, AgentCommand::Menu { path, .. } if path.is_empty());
    match common.window {
        Some(w) if state.window == Some(w) => {}
        Some(w) if reads_only => state.viewing = Some(w),
        Some(w) => {
            state.last.clear();
            state.window = Some(w);
        }
        None => {}
    }
    // Its window closed after the last command's answer (a dialog its app
    // closed a moment later): said once, and the session follows the
    // focused window, as after an action that closes it.
    if common.window.is_none() {
        if let Some(gone) = state.window {
            let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
            if !windows.is_empty() && !windows.iter().any(|w| w.id == gone) {
                state.print(format!(
                    "window {gone} closed since the last command; the session follows the \
                     focused window"
                ));
                state.window = None;
                state.last.clear();
            }
        }
    }
    // A ref names its window: an action on an element of another window
    // that still shows goes there, and the session with it.
    if common.window.is_none() {
        follow_ref(&mut client, &mut state, &command)?;
    }
    // Opened before the app mapped a window: the session keeps the first
    // window it sees.
    state.window = window_to_keep(&mut client, state.window)?;
    let lists_windows = matches!(command, AgentCommand::Windows);
    let mut result = command_on(&mut client, &mut state, command);
    // A window that opened since the session last looked is told once, by
    // the command that first sees it (the one whose action opened it, when
    // it has mapped by the answer).
    if result.is_ok() {
        result = tell_new_windows(&mut client, &mut state, !lists_windows);
    }
    save(&path, &state)?;
    for line in &state.out {
        println!("{line}");
    }
    result.map_err(|e| with_refs(&state, &e))
}

/// Move the session to the window of the element an action's ref names,
/// when that is another window and it is still open: the ref was given to
/// that element of that window, and to no other. Its first `--settle` there
/// prints the window's lines, as after `--window`.
fn follow_ref(
    client: &mut Client,
    state: &mut State,
    command: &AgentCommand,
) -> Result<(), String> {
    let Some(t) = command.element_target().filter(|t| t.starts_with("@e")) else {
        return Ok(());
    };
    let Ok(id) = id_of_ref(state, t) else {
        return Ok(());
    };
    let Some(home) = state.windows_of.get(id).copied() else {
        return Ok(());
    };
    if state.window.is_none_or(|w| w == home) {
        return Ok(());
    }
    let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    if !windows.iter().any(|w| w.id == home) {
        return Err(coded(&WireError::new(
            Code::NoElement,
            format!("stale ref {t}: its window {home} closed; take a new snapshot"),
        )));
    }
    state.print(format!("the session moves to window {home}, where {t} is"));
    state.window = Some(home);
    state.last.clear();
    Ok(())
}

/// After an action: the diff once settled, or just "ok".
/// Print what an action did: with `--settle`, what changed once the window
/// settled (its own wait notes a window that never does); without, `ok`,
/// and a note on stderr when the answer came before the window settled
/// (MyGo's `wayrig.unsettled`).
fn finish(
    client: &mut Client,
    state: &mut State,
    how: Settle,
    before: Option<Vec<(String, String)>>,
    answer: &Value,
) -> Result<(), String> {
    if how.settle {
        return settle_and_diff(client, state, how, before);
    }
    if let Some(why) = answer[UNSETTLED_MEMBER].as_str() {
        eprintln!("note: {why}; what it changed may show later (`wait` or --settle waits)");
    }
    state.print("ok".to_string());
    Ok(())
}

fn act(
    client: &mut Client,
    state: &mut State,
    t: &str,
    action: Action,
    how: Settle,
) -> Result<(), String> {
    let window = state.window;
    let tree: TreeAnswer = client.call_as(Call::Tree { window })?;
    let element = target(state, t, &tree)?;
    // What was set into a password field is confirmed, never echoed.
    let secret = match (&action, &element) {
        (Action::SetValue { text }, ElementPick::Id(id)) => tree
            .nodes
            .iter()
            .find(|n| n.id == id.to_string() && n.states.iter().any(|s| s == "password"))
            .map(|n| Element {
                value: Some(text.clone()),
                ..n.clone()
            }),
        _ => None,
    };
    let before = before_action(client, state, how, Some(&tree))?;
    note_title(client, state)?;
    let act = client.call(Call::Act {
        window,
        element,
        action,
    });
    if closed_in_answer(client, state, &act)? {
        return Ok(());
    }
    let answer = act?;
    if let Some(field) = secret {
        let r = ref_of(state, &field.id);
        state.print(line(r, &field, false, how.full));
        if !how.settle {
            return Ok(());
        }
    }
    finish(client, state, how, before, &answer)
}

fn input(client: &mut Client, state: &mut State, event: Event, how: Settle) -> Result<(), String> {
    let before = before_action(client, state, how, None)?;
    note_title(client, state)?;
    let sent = client.call(Call::Input {
        window: state.window,
        events: vec![event],
    });
    if closed_in_answer(client, state, &sent)? {
        return Ok(());
    }
    let answer = sent?;
    finish(client, state, how, before, &answer)
}

/// `menu` with no path: each menu of the window (its menu bar's, its menu
/// buttons'), a row a line, submenus indented under their row.
fn list_menus(client: &mut Client, state: &mut State) -> Result<(), String> {
    fn rows(out: &mut Vec<String>, items: &[MenuRowWire], depth: usize) {
        let indent = "  ".repeat(depth);
        for row in items {
            if row.separator {
                out.push(format!("{indent}---"));
                continue;
            }
            let mut line = format!("{indent}{}", quote(&row.label));
            if let Some(keys) = &row.shortcut {
                line.push_str(&format!(" {keys}"));
            }
            let mut marks = Vec::new();
            match row.checked.as_deref() {
                Some("true") => marks.push("checked"),
                Some("mixed") => marks.push("mixed"),
                _ => {}
            }
            if row.disabled {
                marks.push("disabled");
            }
            if !marks.is_empty() {
                line.push_str(&format!(" ({})", marks.join(" ")));
            }
            out.push(line);
            rows(out, &row.submenu, depth + 1);
        }
    }
    let answer = client.call(Call::Menus {
        window: state.shown_window(),
    });
    let menus: MenusAnswer = typed(extension(
        answer,
        MENUS_METHOD,
        "name the menu bar's labels, `menu File Quit`",
    )?)?;
    if menus.menus.is_empty() {
        state.print("(no menus: no menu bar, no menu button)".into());
        return Ok(());
    }
    let mut out = Vec::new();
    for menu in &menus.menus {
        let kind = if menu.kind == "button" {
            "button"
        } else {
            "menu"
        };
        out.push(format!("{kind} {}", quote(&menu.title)));
        rows(&mut out, &menu.rows, 1);
    }
    state.out.extend(out);
    Ok(())
}

/// `launch`: Wayrig's `wayrig.launch`, then a line for the app's process and
/// one for each window it mapped, told once as any window that opens is.
fn launch(
    client: &mut Client,
    state: &mut State,
    desktop: Option<String>,
    command: Vec<String>,
    timeout: u64,
) -> Result<(), String> {
    let app = match desktop {
        Some(id) => LaunchApp::DesktopId { id, args: command },
        None if command.is_empty() => {
            return Err(invalid(
                "launch what? `launch -- PROGRAM ARGS...` or `launch --desktop ID`".into(),
            ))
        }
        None => LaunchApp::Command(command),
    };
    let answer = client.call(Call::Launch {
        app,
        timeout_ms: Some(timeout),
    });
    let launched: LaunchAnswer = typed(extension(
        answer,
        LAUNCH_METHOD,
        "only a session of `wayrig run` starts apps",
    )?)?;
    state.print(format!("started pid {}", launched.pid));
    if launched.ended {
        state.print(
            "(it ended without a window: its output is on the stderr of `wayrig run`)".into(),
        );
    } else if launched.windows.is_empty() {
        state.print(format!(
            "(no window within {timeout} ms: the next command tells it when it maps)"
        ));
    }
    let seen = state.windows_seen.get_or_insert_with(Vec::new);
    for w in &launched.windows {
        if !seen.contains(&w.id) {
            seen.push(w.id);
            state
                .out
                .push(format!("+ window {} {}", w.id, quote(&w.title)));
        }
    }
    Ok(())
}

/// What a snapshot says of a window whose tree holds nothing to act on.
const NO_CONTROLS: &str = "(no controls in this window's tree: where it shows some, its \
     toolkit does not expose them, as in a browser's own file dialog; `screenshot` shows \
     them, and `click X Y`, `key` and `type` reach them)";

fn command_on(client: &mut Client, state: &mut State, command: AgentCommand) -> Result<(), String> {
    use AgentCommand as C;
    let window = state.shown_window();
    let pointer = |x, y, button, clicks| Event::Click {
        x,
        y,
        button,
        clicks,
        mods: Mods::default(),
    };
    match command {
        C::Snapshot {
            interactive,
            json,
            full,
        } => {
            // Without -i every element is listed, hidden ones too.
            let (tree, shown) = snapshot(client, state, !interactive, full)?;
            if json {
                state.print(format!("{tree}"));
            } else if interactive {
                let controls = shown.iter().filter(|s| s.control);
                let (hidden, showing): (Vec<&Shown>, Vec<&Shown>) =
                    controls.partition(|s| s.hidden);
                if showing.is_empty() && hidden.is_empty() {
                    state.print(NO_CONTROLS.to_string());
                }
                for s in showing {
                    state.print(s.line.clone());
                }
                if !hidden.is_empty() {
                    state.print(format!(
                        "({} controls that do not show left out: hidden pages, closed popups, scrolled away)",
                        hidden.len()
                    ));
                }
            } else {
                // What shows, then what does not, each in reading order.
                let (hidden, showing): (Vec<&Shown>, Vec<&Shown>) =
                    shown.iter().partition(|s| s.hidden);
                if showing.is_empty() && hidden.is_empty() {
                    state.print(NO_CONTROLS.to_string());
                }
                for s in showing {
                    state.print(s.line.clone());
                }
                if !hidden.is_empty() {
                    state.print(
                        "(not showing: on hidden pages, in closed popups, scrolled away)"
                            .to_string(),
                    );
                    for s in hidden {
                        state.print(s.line.clone());
                    }
                }
            }
            remember(state, &shown);
            Ok(())
        }
        C::Press { target, settle } => act(client, state, &target, Action::Press, settle),
        C::Focus { target, settle } => act(client, state, &target, Action::Focus, settle),
        C::Fill {
            target,
            text,
            settle,
        } => act(client, state, &target, Action::SetValue { text }, settle),
        C::Insert {
            target,
            text,
            settle,
        } => act(client, state, &target, Action::InsertText { text }, settle),
        C::Select {
            target,
            from,
            to,
            settle,
        } => act(
            client,
            state,
            &target,
            Action::SelectText { from, to },
            settle,
        ),
        C::Increment { target, settle } => act(client, state, &target, Action::Increment, settle),
        C::Decrement { target, settle } => act(client, state, &target, Action::Decrement, settle),
        C::ScrollIntoView { target, settle } => {
            act(client, state, &target, Action::ScrollIntoView, settle)
        }
        C::Expand { target, settle } => act(client, state, &target, Action::Expand, settle),
        C::Collapse { target, settle } => act(client, state, &target, Action::Collapse, settle),
        C::Click {
            x,
            y,
            button,
            clicks,
            settle,
        } => input(client, state, pointer(x, y, button, clicks), settle),
        C::Pointer { x, y, settle } => input(
            client,
            state,
            Event::PointerMove {
                x,
                y,
                mods: Mods::default(),
            },
            settle,
        ),
        C::Wheel {
            x,
            y,
            dx,
            dy,
            precise,
            settle,
        } => input(
            client,
            state,
            Event::Wheel {
                x,
                y,
                dx,
                dy,
                precise,
                mods: Mods::default(),
            },
            settle,
        ),
        C::Type { text, settle } => input(client, state, Event::Text { text }, settle),
        C::Key { key, settle } => input(client, state, Event::Key { key }, settle),
        C::Menu { path, .. } if path.is_empty() => list_menus(client, state),
        C::Menu { path, settle } => {
            let before = before_action(client, state, settle, None)?;
            let answer = client.call(Call::Menu { window, path })?;
            finish(client, state, settle, before, &answer)
        }
        C::Eval { script } => {
            let result = client.call(Call::Eval { window, script })?;
            state.print(format!("{}", result["value"]));
            Ok(())
        }
        C::Record { switch } => {
            let on = switch == "on";
            let answer = client.call(Call::Record { on })?;
            let dir = answer["dir"].as_str().unwrap_or_default();
            state.print(match (on, answer["incomplete"].as_str()) {
                (true, _) => format!("recording into {dir}"),
                (false, None) => {
                    format!("recorded to {dir}; `wayrig trace view {dir}` writes its viewer")
                }
                (false, Some(why)) => format!(
                    "recorded to {dir}, incomplete: {why}; `wayrig trace view {dir}` writes \
                     the viewer of what was kept"
                ),
            });
            Ok(())
        }
        C::Step { frames } => {
            let answer: StepAnswer = client.call_as(Call::Step { frames })?;
            state.print(match answer.callbacks {
                0 => format!("stepped {} frames; no window asked to draw", answer.frames),
                n => format!("stepped {} frames, {n} frame callbacks", answer.frames),
            });
            Ok(())
        }
        C::Wait {
            timeout,
            text,
            element,
            shown,
            gone,
        } => {
            let awaited = match (text, element) {
                (Some(text), None) if shown => {
                    return Err(invalid(format!(
                        "--shown goes with --ref; --text {text:?} waits until it shows"
                    )))
                }
                (Some(text), None) => Awaited::Text(text),
                (None, Some(_)) if !shown && !gone => {
                    return Err(invalid("--ref needs --shown or --gone".into()))
                }
                (None, Some(t)) => Awaited::Element(awaited_element(state, &t)?),
                (None, None) if shown || gone => {
                    return Err(invalid("--shown and --gone go with --ref or --text".into()))
                }
                (None, None) => {
                    client.call(Call::Idle {
                        window,
                        timeout_ms: Some(timeout),
                    })?;
                    state.print("settled".to_string());
                    return Ok(());
                }
                (Some(_), Some(_)) => return Err(invalid("give --text or --ref, not both".into())),
            };
            wait_for(client, state, awaited, gone, timeout)
        }
        C::Screenshot { file } => {
            let shot: CaptureAnswer = client.call_as(Call::Capture { window })?;
            let png = base64::engine::general_purpose::STANDARD
                .decode(&shot.png)
                .map_err(|e| format!("the app sent a bad image: {e}"))?;
            std::fs::write(&file, png)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            state.print(format!("{} {}x{}", file.display(), shot.width, shot.height));
            Ok(())
        }
        C::Launch {
            desktop,
            timeout,
            command,
        } => launch(client, state, desktop, command, timeout),
        C::Windows => {
            let answer: WindowsAnswer = client.call_as(Call::Windows)?;
            for w in answer.windows {
                state.print(format!(
                    "{} {}{}{}{}",
                    w.id,
                    quote(&w.title),
                    if Some(w.id) == state.window {
                        " session"
                    } else {
                        ""
                    },
                    if w.focused { " focused" } else { "" },
                    if w.visible { "" } else { " hidden" }
                ));
            }
            Ok(())
        }
        C::Open { .. } | C::Close | C::Skills | C::Version => {
            unreachable!("handled before connecting")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wayrig_proto::mygo::LabelFallback;

    /// The agent's commands as the shell passes them.
    fn parsed(args: &[&str]) -> Result<AgentCommand, clap::Error> {
        #[derive(clap::Parser, Debug)]
        struct Line {
            #[command(subcommand)]
            command: AgentCommand,
        }
        use clap::Parser;
        Line::try_parse_from(std::iter::once("wayrig").chain(args.iter().copied()))
            .map(|line| line.command)
    }

    #[test]
    fn negative_numbers_and_text_with_a_leading_hyphen_are_values_not_flags() {
        let wheel = parsed(&["wheel", "100", "100", "0", "-3", "--precise"]).unwrap();
        assert!(
            matches!(wheel, AgentCommand::Wheel { dy, precise: true, .. } if dy == -3.0),
            "{wheel:?}"
        );
        let click = parsed(&["click", "-1", "5"]).unwrap();
        assert!(
            matches!(click, AgentCommand::Click { x, .. } if x == -1.0),
            "{click:?}"
        );
        let fill = parsed(&["fill", "@e5", "-5", "--settle"]).unwrap();
        assert!(
            matches!(&fill, AgentCommand::Fill { text, .. } if text == "-5"),
            "{fill:?}"
        );
        for (verb, text) in [("type", "-x"), ("insert", "-y z")] {
            let args: Vec<&str> = if verb == "type" {
                vec![verb, text]
            } else {
                vec![verb, "@e1", text]
            };
            let command = parsed(&args).unwrap();
            let got = match &command {
                AgentCommand::Type { text, .. } | AgentCommand::Insert { text, .. } => text,
                other => panic!("{other:?}"),
            };
            assert_eq!(got, text);
        }
        // A flag the command lacks is still refused.
        assert!(parsed(&["wheel", "1", "1", "0", "1", "--sideways"]).is_err());
    }

    #[test]
    fn a_menu_button_and_the_toggle_it_wraps_are_one_line() {
        let el = |id: &str, parent: Option<&str>, label: &str| Element {
            id: id.into(),
            parent: parent.map(Into::into),
            role: "button".into(),
            label: Some(label.into()),
            states: vec!["focusable".into()],
            ..Element::default()
        };
        let nodes = vec![
            el("1", None, "Window"),
            el("2", Some("1"), "View"),
            el("3", Some("2"), "View"),
            // Another name inside: both are read.
            el("4", Some("1"), "Open"),
            el("5", Some("4"), "Recent"),
        ];
        let left_out = said_elsewhere(&nodes, None);
        assert_eq!(left_out, HashSet::from(["2"]));
    }

    #[test]
    fn a_combo_named_after_its_hidden_item_stays_and_bare_pairs_are_one_line() {
        let el = |id: &str, parent: Option<&str>, role: &str, label: &str| Element {
            id: id.into(),
            parent: parent.map(Into::into),
            role: role.into(),
            label: (!label.is_empty()).then(|| label.into()),
            actions: vec!["press".into()],
            ..Element::default()
        };
        let mut item = el("4", Some("3"), "menuItem", "Left");
        item.states = vec!["offscreen".into()];
        let mut closed = el("3", Some("2"), "menu", "");
        closed.states = vec!["offscreen".into()];
        let nodes = vec![
            el("1", None, "group", "Window"),
            // GTK 3's combo, named after the item it shows, in its closed menu.
            el("2", Some("1"), "popUpButton", "Left"),
            closed,
            item,
            // An icon's menu button around its toggle: neither has words.
            el("5", Some("1"), "menuButton", ""),
            el("6", Some("5"), "button", ""),
            // A list around its rows, and an unnamed one that has the focus.
            el("7", Some("1"), "list", ""),
            el("8", Some("7"), "listItem", "Row 1"),
            el("9", Some("1"), "list", ""),
            el("10", Some("9"), "listItem", "Row 2"),
            // A menu item's label says the item's name again.
            el("11", Some("1"), "menuItem", "New Window"),
            Element {
                actions: Vec::new(),
                ..el("12", Some("11"), "text", "New Window")
            },
            Element {
                actions: Vec::new(),
                ..el("13", Some("11"), "text", "Ctrl+N")
            },
        ];
        let left_out = said_elsewhere(&nodes, Some("9"));
        assert_eq!(left_out, HashSet::from(["5", "7", "12"]));
    }

    #[test]
    fn lines_are_short_and_leave_out_what_is_empty() {
        let n = Element {
            role: "button".into(),
            label: Some("Add".into()),
            key: Some("add".into()),
            states: vec!["focusable".into(), "disabled".into()],
            ..Element::default()
        };
        assert_eq!(
            line(2, &n, false, false),
            r#"@e2 [button] "Add" key=add (disabled)"#
        );
        assert_eq!(
            line(2, &n, true, false),
            r#"@e2 [button] "Add" key=add (focused disabled)"#
        );
        let n = Element {
            role: "textField".into(),
            label: Some("Name".into()),
            value: Some("Ada".into()),
            ..Element::default()
        };
        assert_eq!(
            line(3, &n, false, false),
            r#"@e3 [textField] "Name" value="Ada""#
        );
        assert_eq!(
            line(3, &n, true, false),
            r#"@e3 [textField] "Name" value="Ada" (focused)"#
        );
    }

    #[test]
    fn an_empty_value_is_left_out_and_an_unnamed_control_still_gets_a_line() {
        let entry = Element {
            role: "textField".into(),
            value: Some(String::new()),
            states: vec!["focusable".into()],
            ..Element::default()
        };
        assert_eq!(line(4, &entry, false, false), "@e4 [textField]");
        assert!(worth_a_line(&entry), "a focusable field is a control");
        let spacer = Element {
            role: "group".into(),
            value: Some(String::new()),
            ..Element::default()
        };
        assert!(!worth_a_line(&spacer));
    }

    #[test]
    fn the_guide_and_the_readme_stub_say_what_the_spec_says() {
        let description = "description: Use when reading a MyGo app's native UI elements and \
            acting on them, sending pointer, wheel, key and text input, choosing items of the \
            application menu, evaluating scripts in pages, or taking screenshots of a running \
            MyGo app.";
        let readme = include_str!("../../README.md");
        for text in [SKILL, readme] {
            assert!(text.contains(description), "the spec's description");
        }
        assert!(readme.contains(
            "This file is a discovery stub, not the usage guide. Before running a \
             mygo-automation command, load the actual workflow from the CLI:"
        ));
        assert!(readme.contains("Do not probe first with --help or --version."));
        // The spec: don't open a context menu with a right click through input.
        assert!(!SKILL.contains("open them with `click --button right`"));
        assert!(SKILL.contains("do not open one with a right click"));
    }

    #[test]
    fn text_is_quoted_as_a_person_reads_it() {
        assert_eq!(quote("10\u{2009}000 ✓"), "\"10\u{2009}000 ✓\"");
        assert_eq!(quote("a \"b\"\\c"), r#""a \"b\"\\c""#);
        assert_eq!(quote("one\ntwo\t\u{7}"), r#""one\ntwo\t\u{7}""#);
    }

    #[test]
    fn long_values_are_cut_with_the_count_of_what_was_cut() {
        let long = "x".repeat(1123);
        let cut = quoted(&long, false);
        assert_eq!(cut, format!("\"{}…\" (+1,043 chars)", "x".repeat(80)));
        assert_eq!(quoted(&long, true), format!("{long:?}"));
        assert_eq!(quoted("short", false), "\"short\"");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn unlabeled_controls_read_by_their_fallback_and_say_where_it_comes_from() {
        let fallback = |from: &str, text: &str| Element {
            role: "button".into(),
            label: Some("GtkToggleButton".into()),
            label_is_class_name: true,
            label_fallback: Some(LabelFallback {
                from: from.into(),
                text: text.into(),
            }),
            ..Element::default()
        };
        assert_eq!(
            line(5, &fallback("icon", "edit-clear"), false, false),
            r#"@e5 [button] (icon "edit-clear")"#
        );
        assert_eq!(
            line(5, &fallback("beside", "Name"), false, false),
            r#"@e5 [button] ~"Name""#
        );
        let nothing = Element {
            label_fallback: None,
            ..fallback("icon", "")
        };
        assert_eq!(line(5, &nothing, false, false), "@e5 [button]");
        let password = Element {
            role: "textField".into(),
            value: Some("hunter2".into()),
            states: vec!["password".into()],
            ..Element::default()
        };
        assert_eq!(
            line(7, &password, false, false),
            "@e7 [textField] value=•••• (7 chars) (password)"
        );
    }

    #[test]
    fn diffs_print_changes_only_and_neighbours_when_asked() {
        let lines = |ls: &[(&str, &str)]| -> Vec<(String, String)> {
            ls.iter()
                .map(|(id, l)| (id.to_string(), l.to_string()))
                .collect()
        };
        let before = lines(&[("1", "a"), ("2", "b"), ("3", "c"), ("4", "gone")]);
        let now = lines(&[("1", "a"), ("2", "B"), ("3", "c"), ("5", "new")]);
        assert_eq!(diff(&before, &now, 0), ["- b", "+ B", "+ new", "- gone"]);
        assert_eq!(
            diff(&before, &now, 1),
            ["= a", "- b", "+ B", "= c", "+ new", "- gone"]
        );
        assert!(diff(&now, &now, 2).is_empty());
    }

    #[test]
    fn errors_name_refs_and_say_their_code_once() {
        let mut state = State::default();
        state.refs.insert("1234567890123456789".into(), 14);
        assert_eq!(
            with_refs(
                &state,
                "failed: element 1234567890123456789 is gone (1 of 2)"
            ),
            "failed: element @e14 is gone (1 of 2)"
        );
    }

    #[test]
    fn targets_resolve_and_stale_refs_are_refused() {
        let mut state = State::default();
        state.refs.insert("111".into(), 1);
        let tree = |ids: &[&str]| TreeAnswer {
            window: 1,
            focus: None,
            nodes: ids
                .iter()
                .map(|id| Element {
                    id: id.to_string(),
                    ..Element::default()
                })
                .collect(),
            announcements: Vec::new(),
        };
        let shows = tree(&["111"]);
        assert_eq!(target(&state, "@e1", &shows).unwrap(), ElementPick::Id(111));
        assert!(target(&state, "@e1", &tree(&[]))
            .unwrap_err()
            .starts_with("no_element: stale ref @e1"));
        assert!(target(&state, "@e9", &shows)
            .unwrap_err()
            .starts_with("no_element: unknown ref @e9"));
        // A ref of another window named there, not called stale.
        state.windows_of.insert("111".into(), 2);
        state.window = Some(1);
        assert!(target(&state, "@e1", &tree(&[]))
            .unwrap_err()
            .starts_with("no_element: @e1 is an element of window 2, not of window 1"));
        assert!(target(&state, "@ex", &shows)
            .unwrap_err()
            .starts_with("invalid_request: "));
        assert_eq!(
            target(&state, "key=add", &shows).unwrap(),
            ElementPick::Key("add".into())
        );
        assert!(target(&state, "id=12a", &shows).is_err());
        assert!(target(&state, "nonsense", &shows).is_err());
    }

    #[test]
    fn session_names_cannot_escape_the_cache() {
        assert!(session_path("../x").is_err());
        assert!(session_path("a/b").is_err());
        assert!(session_path("").is_err());
        assert!(session_path("agent-1").is_ok());
    }

    /// The numbers a pointer command sends as coordinates and distances.
    fn coordinates(command: &AgentCommand) -> Vec<f64> {
        match command {
            AgentCommand::Click { x, y, .. } | AgentCommand::Pointer { x, y, .. } => vec![*x, *y],
            AgentCommand::Wheel { x, y, dx, dy, .. } => vec![*x, *y, *dx, *dy],
            _ => Vec::new(),
        }
    }

    /// A command line's words, at random: a verb, then words the commands
    /// read (refs, flags, numbers at their edges, names that try to leave
    /// the cache) mixed with any text.
    fn command_line() -> impl proptest::strategy::Strategy<Value = Vec<String>> {
        use proptest::prelude::*;
        const VERBS: &str = "open snapshot press focus fill insert select increment decrement \
            scroll-into-view expand collapse click pointer wheel type key menu eval record wait \
            screenshot launch step windows close version";
        const WORDS: &str = "@e1 @e2 @e0 @e18446744073709551616 @e-1 @ @e key= key=save id= \
            id=111 id=99999999999999999999 --settle --context --full --window --session -i \
            --json --button left back --clicks --precise --timeout --text --ref --shown --gone \
            --desktop -- NaN nan inf -inf 1e309 -0 0 -1 1.5 on off ../x a/b .hidden \
            18446744073709551615 4294967296";
        let words: Vec<&str> = WORDS.split_whitespace().chain([""]).collect();
        let word = prop_oneof![
            4 => proptest::sample::select(words).prop_map(str::to_string),
            1 => any::<f64>().prop_map(|n| n.to_string()),
            1 => any::<i64>().prop_map(|n| n.to_string()),
            1 => any::<String>(),
        ];
        (
            proptest::sample::select(VERBS.split_whitespace().collect::<Vec<_>>()),
            proptest::collection::vec(word, 0..7),
        )
            .prop_map(|(verb, words)| {
                std::iter::once(verb.to_string())
                    .chain(words)
                    .collect::<Vec<String>>()
            })
    }

    proptest::proptest! {
        /// Any command line is a command or clap's refusal; a command's
        /// coordinates are numbers a window can have, its session name stays
        /// in the cache, and its element is resolved or refused in the
        /// protocol's terms.
        #[test]
        fn command_lines_are_read_or_refused_in_the_protocols_terms(words in command_line()) {
            #[derive(clap::Parser, Debug)]
            struct Line {
                #[command(flatten)]
                common: Common,
                #[command(subcommand)]
                command: AgentCommand,
            }
            use clap::Parser;
            let argv = std::iter::once("wayrig".to_string()).chain(words);
            let line = match Line::try_parse_from(argv) {
                Ok(line) => line,
                Err(refused) => {
                    proptest::prop_assert!(!refused.to_string().is_empty());
                    return Ok(());
                }
            };
            let coordinates = coordinates(&line.command);
            proptest::prop_assert!(coordinates.iter().all(|n| n.is_finite()), "{line:?}");
            if let Some(name) = &line.common.session {
                if let Ok(path) = session_path(name) {
                    let file = format!("{name}.json");
                    let kept = path.parent().is_some_and(|d| d.ends_with("wayrig/sessions"));
                    proptest::prop_assert!(kept, "{path:?}");
                    let file = Some(std::ffi::OsStr::new(&file));
                    proptest::prop_assert_eq!(path.file_name(), file);
                }
            }
            if let Some(t) = line.command.element_target() {
                let mut state = State::default();
                state.refs.insert("111".into(), 1);
                state.refs.insert("abc".into(), 2);
                let tree = TreeAnswer {
                    window: 1,
                    focus: None,
                    nodes: ["111", "abc"]
                        .iter()
                        .map(|id| Element {
                            id: id.to_string(),
                            ..Element::default()
                        })
                        .collect(),
                    announcements: Vec::new(),
                };
                if let Err(refused) = target(&state, t, &tree) {
                    let coded = ["invalid_request: ", "no_element: "];
                    let in_terms = coded.iter().any(|c| refused.starts_with(c));
                    proptest::prop_assert!(in_terms, "{refused}");
                }
            }
        }

        /// The pointer verbs' coordinates at the edges of what a shell can
        /// write: a command has finite numbers, or clap refuses it.
        #[test]
        fn pointer_coordinates_are_finite_or_refused(
            verb in proptest::sample::select(vec!["click", "pointer", "wheel"]),
            numbers in proptest::collection::vec(
                proptest::sample::select(vec![
                    "0", "-1", "1.5", "nan", "NaN", "inf", "-inf", "infinity", "1e309", "-1e309",
                    "1e308", "-0",
                ]),
                4,
            ),
        ) {
            let args: Vec<&str> = std::iter::once(verb).chain(numbers.iter().copied()).collect();
            if let Ok(command) = parsed(&args) {
                let finite = coordinates(&command).iter().all(|n| n.is_finite());
                proptest::prop_assert!(finite, "{command:?}");
            }
        }

        /// A diff shows every line that changed or came, whatever context
        /// is asked for (`--context` takes any number).
        #[test]
        fn diffs_show_every_change_whatever_the_context(
            before in proptest::collection::vec((0u8..8, 0u8..3), 0..8),
            now in proptest::collection::vec((0u8..8, 0u8..3), 0..8),
            context in proptest::prop_oneof![
                0usize..4,
                proptest::strategy::Just(usize::MAX),
                proptest::prelude::any::<usize>(),
            ],
        ) {
            let lines = |ls: &[(u8, u8)]| -> Vec<(String, String)> {
                let mut seen = HashSet::new();
                ls.iter()
                    .filter(|(id, _)| seen.insert(*id))
                    .map(|(id, l)| (id.to_string(), format!("{id}:{l}")))
                    .collect()
            };
            let (before, now) = (lines(&before), lines(&now));
            let shown = diff(&before, &now, context);
            for (id, l) in &now {
                let was = before.iter().find(|(b, _)| b == id).map(|(_, l)| l);
                if was != Some(l) {
                    proptest::prop_assert!(shown.contains(&format!("+ {l}")), "{shown:?}");
                }
            }
        }
    }
}
