//! The agent CLI (`wayrig <command>`, also answering as `mygo-automation`): short
//! commands over the MyGo automation socket, short refs (@e1), settle diffs.
//!
//! A session keeps the socket, window and refs in a file under the user's
//! cache directory; refs last while their element shows and are never reused.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use base64::Engine;
use clap::{Args, Subcommand};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use wayrig_proto::mygo::{
    parse_answer, Action, Button, Call, CaptureAnswer, Code, Element, ElementPick, Event, Mods,
    Request, TreeAnswer, WindowsAnswer, WireError,
};

pub const SKILL: &str = include_str!("../docs/SKILL.md");

/// How long `--settle` and `wait` wait by default, in ms.
const SETTLE_MS: u64 = 5000;

#[derive(Args, Debug)]
pub struct Common {
    /// Session name (default: MYGO_AUTOMATION_SESSION, else "default").
    #[arg(long, global = true, env = "MYGO_AUTOMATION_SESSION")]
    pub session: Option<String>,
    /// Window id: the session uses it from now on (default: the window it opened).
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
        /// Controls only (elements with actions).
        #[arg(short = 'i')]
        interactive: bool,
        /// The protocol's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Press an element (@ref, key=<key> or id=<digits>).
    Press {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Focus an element.
    Focus {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Replace a field's value.
    Fill {
        target: String,
        text: String,
        #[arg(long)]
        settle: bool,
    },
    /// Type text at a field's caret.
    Insert {
        target: String,
        text: String,
        #[arg(long)]
        settle: bool,
    },
    /// Select characters FROM..TO of a field.
    Select {
        target: String,
        from: i32,
        to: i32,
        #[arg(long)]
        settle: bool,
    },
    /// Step a slider or spinner up.
    Increment {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Step a slider or spinner down.
    Decrement {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Scroll the containers around an element until it shows.
    ScrollIntoView {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Open an item of a tree (or anything expandable).
    Expand {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Close an item of a tree (or anything expandable).
    Collapse {
        target: String,
        #[arg(long)]
        settle: bool,
    },
    /// Click at X, Y (DIPs in the window's content).
    Click {
        x: f64,
        y: f64,
        #[arg(long, default_value = "left", value_parser = parse_button)]
        button: Button,
        #[arg(long, default_value_t = 1)]
        clicks: u32,
        #[arg(long)]
        settle: bool,
    },
    /// Move the pointer to X, Y.
    Pointer {
        x: f64,
        y: f64,
        #[arg(long)]
        settle: bool,
    },
    /// Scroll by DX, DY at X, Y.
    Wheel {
        x: f64,
        y: f64,
        dx: f64,
        dy: f64,
        #[arg(long)]
        precise: bool,
        #[arg(long)]
        settle: bool,
    },
    /// Type text into the focused element.
    Type {
        text: String,
        #[arg(long)]
        settle: bool,
    },
    /// Press a key with modifiers (Enter, Shift+Tab, CmdOrCtrl+Z).
    Key {
        key: String,
        #[arg(long)]
        settle: bool,
    },
    /// Choose an application menu item by its labels.
    Menu {
        path: Vec<String>,
        #[arg(long)]
        settle: bool,
    },
    /// Evaluate a script in a page.
    Eval { script: String },
    /// Wait for the window to settle.
    Wait {
        #[arg(long, default_value_t = SETTLE_MS)]
        timeout: u64,
    },
    /// Save a PNG of the window.
    Screenshot { file: PathBuf },
    /// List the app's windows.
    Windows,
    /// End the session (the app keeps running).
    Close,
    /// Print the usage guide for agents.
    Skills,
    /// Print the version.
    Version,
}

/// What a session remembers between commands.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    socket: PathBuf,
    /// The session's window: the one it opened, until `--window` names another.
    window: Option<u64>,
    /// Element id -> ref number; refs are never given to another element.
    refs: BTreeMap<String, u64>,
    next_ref: u64,
    /// The last snapshot's lines by element id, for diffs.
    last: Vec<(String, String)>,
    /// What the command prints, held until the session is saved: a reader
    /// that goes away early (`| head`) must not cost the session its refs.
    #[serde(skip)]
    out: Vec<String>,
}

impl State {
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

/// One connection to the automation socket.
struct Client {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

/// Why a call failed: the app's error, or no answer to read.
enum CallError {
    App(WireError),
    Link(String),
}

/// An error as `code: message`, the code as the wire spells it.
fn coded(e: WireError) -> String {
    let code = serde_json::to_value(e.code)
        .ok()
        .and_then(|c| c.as_str().map(str::to_string))
        .unwrap_or_else(|| "error".into());
    format!("{code}: {}", e.message)
}

impl From<CallError> for String {
    fn from(e: CallError) -> String {
        match e {
            CallError::App(e) => coded(e),
            CallError::Link(e) => e,
        }
    }
}

impl Client {
    fn connect(path: &Path) -> Result<Client, String> {
        let stream = UnixStream::connect(path)
            .map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
        let reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
        Ok(Client {
            stream,
            reader,
            next_id: 1,
        })
    }

    /// One request, its result.
    fn call(&mut self, call: Call) -> Result<Value, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = Request {
            id: json!(id),
            call,
        }
        .to_line();
        let gone = |e: std::io::Error| CallError::Link(format!("the app went away: {e}"));
        self.stream.write_all(line.as_bytes()).map_err(gone)?;
        let mut answer = String::new();
        self.reader.read_line(&mut answer).map_err(gone)?;
        let (_, result) = parse_answer(&answer)
            .map_err(|_| CallError::Link("the app answered garbage".into()))?;
        result.map_err(CallError::App)
    }

    /// One request, its result as its method's answer type.
    fn call_as<T: DeserializeOwned>(&mut self, call: Call) -> Result<T, String> {
        let result = self.call(call)?;
        typed(result)
    }
}

/// A result read as its method's answer type.
fn typed<T: DeserializeOwned>(result: Value) -> Result<T, String> {
    serde_json::from_value(result).map_err(|e| format!("the app answered garbage: {e}"))
}

/// `--button`: a pointer button by its wire name.
fn parse_button(name: &str) -> Result<Button, String> {
    match name {
        "left" => Ok(Button::Left),
        "right" => Ok(Button::Right),
        "middle" => Ok(Button::Middle),
        other => Err(format!("unknown button {other:?}: left, right or middle")),
    }
}

/// The one-line form of an element: ref, role, label, value, key, states
/// (with `focused` for the element that has the keyboard focus).
fn line(r: u64, n: &Element, focused: bool) -> String {
    let role = if n.role.is_empty() { "?" } else { &n.role };
    let mut s = format!("@e{r} [{role}]");
    if let Some(label) = n.label.as_deref().filter(|l| !l.is_empty()) {
        s.push_str(&format!(" {label:?}"));
    }
    if let Some(value) = n.value.as_deref().filter(|v| !v.is_empty()) {
        s.push_str(&format!(" value={value:?}"));
    }
    if let Some(now) = n.now {
        s.push_str(&format!(" now={now}"));
    }
    if let Some(key) = n.key.as_deref().filter(|k| !k.is_empty()) {
        s.push_str(&format!(" key={key}"));
    }
    let mut shown: Vec<&str> = n
        .states
        .iter()
        .map(String::as_str)
        .filter(|s| !matches!(*s, "focusable" | "selectable" | "horizontal" | "vertical"))
        .collect();
    if focused {
        shown.insert(0, "focused");
    }
    if !shown.is_empty() {
        s.push_str(&format!(" ({})", shown.join(" ")));
    }
    s
}

/// An element as a snapshot shows it.
struct Shown {
    id: String,
    line: String,
    control: bool,
}

/// A control: an element with actions, or one that takes the keyboard focus.
fn is_control(n: &Element) -> bool {
    !n.actions.is_empty() || n.states.iter().any(|s| s == "focusable")
}

/// Worth a line: a label, a value or a key to read, or a control to act on.
fn worth_a_line(n: &Element) -> bool {
    let has = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    has(&n.label) || has(&n.value) || has(&n.key) || is_control(n)
}

/// Read the tree and give refs to the elements worth a line. The tree comes
/// back as the app wrote it too.
fn snapshot(client: &mut Client, state: &mut State) -> Result<(Value, Vec<Shown>), String> {
    let raw = client.call(Call::Tree {
        window: state.window,
    })?;
    let tree: TreeAnswer = typed(raw.clone())?;
    let mut shown = Vec::new();
    for n in tree.nodes.iter().filter(|n| worth_a_line(n)) {
        let control = is_control(n);
        let r = match state.refs.get(&n.id) {
            Some(r) => *r,
            None => {
                state.next_ref += 1;
                state.refs.insert(n.id.clone(), state.next_ref);
                state.next_ref
            }
        };
        let focused = tree.focus.as_deref() == Some(n.id.as_str());
        shown.push(Shown {
            line: line(r, n, focused),
            id: n.id.clone(),
            control,
        });
    }
    Ok((raw, shown))
}

fn remember(state: &mut State, shown: &[Shown]) {
    state.last = shown
        .iter()
        .map(|s| (s.id.clone(), s.line.clone()))
        .collect();
}

/// Resolve @ref, key=<key> or id=<digits> to the element `act` names; a
/// ref that names no element shown is `no_element`, as the app would say.
fn target(state: &State, t: &str, tree: &TreeAnswer) -> Result<ElementPick, String> {
    let invalid = |m: String| coded(WireError::new(Code::InvalidRequest, m));
    let no_element = |m: String| coded(WireError::new(Code::NoElement, m));
    if let Some(r) = t.strip_prefix("@e") {
        let r: u64 = r.parse().map_err(|_| invalid(format!("bad ref {t}")))?;
        let id = state
            .refs
            .iter()
            .find(|(_, v)| **v == r)
            .map(|(k, _)| k.as_str())
            .ok_or_else(|| no_element(format!("unknown ref {t}: take a snapshot")))?;
        if !tree.nodes.iter().any(|n| n.id == id) {
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
    let windows = client.call_as::<WindowsAnswer>(Call::Windows)?.windows;
    Ok(windows
        .iter()
        .find(|w| w.focused)
        .or(windows.first())
        .map(|w| w.id))
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

/// Wait to settle, then print what changed since the last snapshot.
fn settle_and_diff(client: &mut Client, state: &mut State) -> Result<(), String> {
    // A window that animates forever never settles: after the wait, what
    // changed is still the answer, with a note that it may go on changing.
    let idle = Call::Idle {
        window: state.window,
        timeout_ms: Some(SETTLE_MS),
    };
    if let Err(e) = client.call(idle) {
        if !matches!(&e, CallError::App(e) if e.code == Code::Timeout) {
            return Err(e.into());
        }
        eprintln!("note: the window did not settle within {SETTLE_MS} ms; changes since then are not shown");
    }
    let before: BTreeMap<String, String> = state.last.iter().cloned().collect();
    let (_, shown) = snapshot(client, state)?;
    let now: Vec<(String, String)> = shown
        .iter()
        .map(|s| (s.id.clone(), s.line.clone()))
        .collect();
    let after: BTreeMap<String, String> = now.iter().cloned().collect();
    for (i, (id, line)) in now.iter().enumerate() {
        match before.get(id) {
            Some(old) if old == line => {
                // Context: unchanged neighbours of a change.
                let near = |j: usize| {
                    now.get(j)
                        .is_some_and(|(nid, nl)| before.get(nid) != Some(nl))
                };
                if (i > 0 && near(i - 1)) || near(i + 1) {
                    state.print(format!("= {line}"));
                }
            }
            Some(old) => {
                state.print(format!("- {old}"));
                state.print(format!("+ {line}"));
            }
            None => state.print(format!("+ {line}")),
        }
    }
    let gone: Vec<String> = state
        .last
        .iter()
        .filter(|(id, _)| !after.contains_key(id))
        .map(|(_, old)| format!("- {old}"))
        .collect();
    state.out.extend(gone);
    state.last = now;
    Ok(())
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
        let state = State {
            socket: socket.clone(),
            window,
            ..State::default()
        };
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
    // Opened before the app mapped a window: the session keeps the first
    // window it sees. A diff compares snapshots of one window only.
    if common.window.is_some_and(|w| state.window != Some(w)) {
        state.last.clear();
    }
    state.window = window_to_keep(&mut client, common.window.or(state.window))?;
    let result = command_on(&mut client, &mut state, command);
    save(&path, &state)?;
    for line in &state.out {
        println!("{line}");
    }
    result
}

/// After an action: the diff once settled, or just "ok".
fn finish(client: &mut Client, state: &mut State, settle: bool) -> Result<(), String> {
    if settle {
        settle_and_diff(client, state)
    } else {
        state.print("ok".to_string());
        Ok(())
    }
}

fn act(
    client: &mut Client,
    state: &mut State,
    t: &str,
    action: Action,
    settle: bool,
) -> Result<(), String> {
    let window = state.window;
    let tree: TreeAnswer = client.call_as(Call::Tree { window })?;
    let element = target(state, t, &tree)?;
    client.call(Call::Act {
        window,
        element,
        action,
    })?;
    finish(client, state, settle)
}

fn input(client: &mut Client, state: &mut State, event: Event, settle: bool) -> Result<(), String> {
    client.call(Call::Input {
        window: state.window,
        events: vec![event],
    })?;
    finish(client, state, settle)
}

fn command_on(client: &mut Client, state: &mut State, command: AgentCommand) -> Result<(), String> {
    use AgentCommand as C;
    let window = state.window;
    let pointer = |x, y, button, clicks| Event::Click {
        x,
        y,
        button,
        clicks,
        mods: Mods::default(),
    };
    match command {
        C::Snapshot { interactive, json } => {
            let (tree, shown) = snapshot(client, state)?;
            if json {
                state.print(format!("{tree}"));
            } else {
                for s in shown.iter().filter(|s| s.control || !interactive) {
                    state.print(s.line.clone());
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
        C::Menu { path, settle } => {
            client.call(Call::Menu { window, path })?;
            finish(client, state, settle)
        }
        C::Eval { script } => {
            let result = client.call(Call::Eval { window, script })?;
            state.print(format!("{}", result["value"]));
            Ok(())
        }
        C::Wait { timeout } => {
            client.call(Call::Idle {
                window,
                timeout_ms: Some(timeout),
            })?;
            state.print("settled".to_string());
            Ok(())
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
        C::Windows => {
            let answer: WindowsAnswer = client.call_as(Call::Windows)?;
            for w in answer.windows {
                state.print(format!(
                    "{} {:?}{}{}",
                    w.id,
                    w.title,
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
            line(2, &n, false),
            r#"@e2 [button] "Add" key=add (disabled)"#
        );
        assert_eq!(
            line(2, &n, true),
            r#"@e2 [button] "Add" key=add (focused disabled)"#
        );
        let n = Element {
            role: "textField".into(),
            label: Some("Name".into()),
            value: Some("Ada".into()),
            ..Element::default()
        };
        assert_eq!(line(3, &n, false), r#"@e3 [textField] "Name" value="Ada""#);
        assert_eq!(
            line(3, &n, true),
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
        assert_eq!(line(4, &entry, false), "@e4 [textField]");
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
        let readme = include_str!("../README.md");
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
}
