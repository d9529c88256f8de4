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
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SKILL: &str = include_str!("../docs/SKILL.md");

/// How long `--settle` and `wait` wait by default, in ms.
const SETTLE_MS: u64 = 5000;

#[derive(Args, Debug)]
pub struct Common {
    /// Session name (default: MYGO_AUTOMATION_SESSION, else "default").
    #[arg(long, global = true, env = "MYGO_AUTOMATION_SESSION")]
    pub session: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Start a session on an automation socket.
    Open {
        #[arg(long)]
        socket: PathBuf,
        /// Window id (default: the focused window).
        #[arg(long)]
        window: Option<u64>,
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
        #[arg(long, default_value = "left")]
        button: String,
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
    window: Option<u64>,
    /// Element id -> ref number; refs are never given to another element.
    refs: BTreeMap<String, u64>,
    next_ref: u64,
    /// The last snapshot's lines by element id, for diffs.
    last: Vec<(String, String)>,
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

    fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({"id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.stream
            .write_all(line.as_bytes())
            .map_err(|e| format!("the app went away: {e}"))?;
        let mut answer = String::new();
        self.reader
            .read_line(&mut answer)
            .map_err(|e| format!("the app went away: {e}"))?;
        let answer: Value =
            serde_json::from_str(&answer).map_err(|_| "the app answered garbage".to_string())?;
        match answer.get("error") {
            Some(err) => Err(format!(
                "{}: {}",
                err["code"].as_str().unwrap_or("error"),
                err["message"].as_str().unwrap_or("")
            )),
            None => Ok(answer["result"].clone()),
        }
    }
}

static EMPTY: Vec<Value> = Vec::new();

/// The one-line form of an element: ref, role, label, value, key, states
/// (with `focused` for the element that has the keyboard focus).
fn line(r: u64, n: &Value, focused: bool) -> String {
    let mut s = format!("@e{r} [{}]", n["role"].as_str().unwrap_or("?"));
    if let Some(label) = n["label"].as_str() {
        s.push_str(&format!(" {label:?}"));
    }
    if let Some(value) = n["value"].as_str() {
        s.push_str(&format!(" value={value:?}"));
    }
    if let Some(now) = n["now"].as_f64() {
        s.push_str(&format!(" now={now}"));
    }
    if let Some(key) = n["key"].as_str() {
        s.push_str(&format!(" key={key}"));
    }
    if let Some(states) = n["states"].as_array().or(focused.then_some(&EMPTY)) {
        let mut shown: Vec<&str> = states
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| !matches!(*s, "focusable" | "selectable" | "horizontal" | "vertical"))
            .collect();
        if focused {
            shown.insert(0, "focused");
        }
        if !shown.is_empty() {
            s.push_str(&format!(" ({})", shown.join(" ")));
        }
    }
    s
}

fn window_params(state: &State) -> Value {
    match state.window {
        Some(w) => json!({"window": w}),
        None => json!({}),
    }
}

/// An element as a snapshot shows it.
struct Shown {
    id: String,
    line: String,
    control: bool,
}

/// Read the tree and give refs to the elements worth a line: those with a
/// label, a value or actions.
fn snapshot(client: &mut Client, state: &mut State) -> Result<(Value, Vec<Shown>), String> {
    let tree = client.call("tree", window_params(state))?;
    let mut shown = Vec::new();
    for n in tree["nodes"].as_array().into_iter().flatten() {
        let id = n["id"].as_str().unwrap_or_default().to_string();
        let control = n["actions"].as_array().is_some_and(|a| !a.is_empty());
        if n["label"].is_null() && n["value"].is_null() && !control {
            continue;
        }
        let r = match state.refs.get(&id) {
            Some(r) => *r,
            None => {
                state.next_ref += 1;
                state.refs.insert(id.clone(), state.next_ref);
                state.next_ref
            }
        };
        let focused = tree["focus"].as_str() == Some(id.as_str());
        shown.push(Shown {
            line: line(r, n, focused),
            id,
            control,
        });
    }
    Ok((tree, shown))
}

fn remember(state: &mut State, shown: &[Shown]) {
    state.last = shown
        .iter()
        .map(|s| (s.id.clone(), s.line.clone()))
        .collect();
}

/// Resolve @ref, key=<key> or id=<digits> to act parameters.
fn target(state: &State, t: &str, tree: &Value) -> Result<Value, String> {
    if let Some(r) = t.strip_prefix("@e") {
        let r: u64 = r.parse().map_err(|_| format!("bad ref {t}"))?;
        let id = state
            .refs
            .iter()
            .find(|(_, v)| **v == r)
            .map(|(k, _)| k.clone())
            .ok_or_else(|| format!("unknown ref {t}: take a snapshot"))?;
        let shows = tree["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|n| n["id"] == id.as_str());
        if !shows {
            return Err(format!(
                "stale ref {t}: its element went; take a new snapshot"
            ));
        }
        return Ok(json!({"id": id}));
    }
    if let Some(k) = t.strip_prefix("key=") {
        return Ok(json!({"key": k}));
    }
    if let Some(id) = t.strip_prefix("id=") {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("bad id {id:?}: digits only"));
        }
        return Ok(json!({"id": id}));
    }
    Err(format!(
        "bad target {t:?}: use @eN, key=<key> or id=<digits>"
    ))
}

/// Wait to settle, then print what changed since the last snapshot.
fn settle_and_diff(client: &mut Client, state: &mut State) -> Result<(), String> {
    let mut params = window_params(state);
    params["timeout"] = json!(SETTLE_MS);
    // A window that animates forever never settles: after the wait, what
    // changed is still the answer, with a note that it may go on changing.
    if let Err(e) = client.call("idle", params) {
        if !e.starts_with("timeout:") {
            return Err(e);
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
                    println!("= {line}");
                }
            }
            Some(old) => {
                println!("- {old}");
                println!("+ {line}");
            }
            None => println!("+ {line}"),
        }
    }
    for (id, old) in &state.last {
        if !after.contains_key(id) {
            println!("- {old}");
        }
    }
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
            println!("wayrig {}", env!("CARGO_PKG_VERSION"));
            return Ok(());
        }
        _ => {}
    }
    let name = common.session.unwrap_or_else(|| "default".into());
    let path = session_path(&name)?;
    if let AgentCommand::Open { socket, window } = command {
        let mut client = Client::connect(&socket)?;
        let windows = client.call("windows", json!({}))?;
        let count = windows["windows"].as_array().map_or(0, Vec::len);
        let state = State {
            socket: socket.clone(),
            window,
            ..State::default()
        };
        save(&path, &state)?;
        println!("session {name}: {} ({count} windows)", socket.display());
        return Ok(());
    }
    if let AgentCommand::Close = command {
        let _ = std::fs::remove_file(&path);
        println!("session {name} closed");
        return Ok(());
    }
    let mut state = load(&path)?;
    let mut client = Client::connect(&state.socket)?;
    let result = command_on(&mut client, &mut state, command);
    save(&path, &state)?;
    result
}

/// After an action: the diff once settled, or just "ok".
fn finish(client: &mut Client, state: &mut State, settle: bool) -> Result<(), String> {
    if settle {
        settle_and_diff(client, state)
    } else {
        println!("ok");
        Ok(())
    }
}

fn act(
    client: &mut Client,
    state: &mut State,
    t: &str,
    action: &str,
    extra: Value,
    settle: bool,
) -> Result<(), String> {
    let tree = client.call("tree", window_params(state))?;
    let mut params = target(state, t, &tree)?;
    params["action"] = json!(action);
    if let Some(w) = state.window {
        params["window"] = json!(w);
    }
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    client.call("act", params)?;
    finish(client, state, settle)
}

fn input(client: &mut Client, state: &mut State, event: Value, settle: bool) -> Result<(), String> {
    let mut params = window_params(state);
    params["events"] = json!([event]);
    client.call("input", params)?;
    finish(client, state, settle)
}

fn command_on(client: &mut Client, state: &mut State, command: AgentCommand) -> Result<(), String> {
    use AgentCommand as C;
    match command {
        C::Snapshot { interactive, json } => {
            let (tree, shown) = snapshot(client, state)?;
            if json {
                println!("{tree}");
            } else {
                for s in shown.iter().filter(|s| s.control || !interactive) {
                    println!("{}", s.line);
                }
            }
            remember(state, &shown);
            Ok(())
        }
        C::Press { target, settle } => act(client, state, &target, "press", json!({}), settle),
        C::Focus { target, settle } => act(client, state, &target, "focus", json!({}), settle),
        C::Fill {
            target,
            text,
            settle,
        } => act(
            client,
            state,
            &target,
            "setValue",
            json!({"text": text}),
            settle,
        ),
        C::Insert {
            target,
            text,
            settle,
        } => act(
            client,
            state,
            &target,
            "insertText",
            json!({"text": text}),
            settle,
        ),
        C::Select {
            target,
            from,
            to,
            settle,
        } => act(
            client,
            state,
            &target,
            "selectText",
            json!({"from": from, "to": to}),
            settle,
        ),
        C::Increment { target, settle } => {
            act(client, state, &target, "increment", json!({}), settle)
        }
        C::Decrement { target, settle } => {
            act(client, state, &target, "decrement", json!({}), settle)
        }
        C::ScrollIntoView { target, settle } => {
            act(client, state, &target, "scrollIntoView", json!({}), settle)
        }
        C::Expand { target, settle } => act(client, state, &target, "expand", json!({}), settle),
        C::Collapse { target, settle } => {
            act(client, state, &target, "collapse", json!({}), settle)
        }
        C::Click {
            x,
            y,
            button,
            clicks,
            settle,
        } => input(
            client,
            state,
            json!({"type": "click", "x": x, "y": y, "button": button, "clicks": clicks}),
            settle,
        ),
        C::Pointer { x, y, settle } => input(
            client,
            state,
            json!({"type": "pointerMove", "x": x, "y": y}),
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
            json!({"type": "wheel", "x": x, "y": y, "dx": dx, "dy": dy, "precise": precise}),
            settle,
        ),
        C::Type { text, settle } => {
            input(client, state, json!({"type": "text", "text": text}), settle)
        }
        C::Key { key, settle } => input(client, state, json!({"type": "key", "key": key}), settle),
        C::Menu { path, settle } => {
            let mut params = window_params(state);
            params["path"] = json!(path);
            client.call("menu", params)?;
            finish(client, state, settle)
        }
        C::Eval { script } => {
            let mut params = window_params(state);
            params["script"] = json!(script);
            let result = client.call("eval", params)?;
            println!("{}", result["value"]);
            Ok(())
        }
        C::Wait { timeout } => {
            let mut params = window_params(state);
            params["timeout"] = json!(timeout);
            client.call("idle", params)?;
            println!("settled");
            Ok(())
        }
        C::Screenshot { file } => {
            let shot = client.call("capture", window_params(state))?;
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot["png"].as_str().unwrap_or_default())
                .map_err(|e| format!("the app sent a bad image: {e}"))?;
            std::fs::write(&file, png)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            println!("{} {}x{}", file.display(), shot["width"], shot["height"]);
            Ok(())
        }
        C::Windows => {
            let windows = client.call("windows", json!({}))?;
            for w in windows["windows"].as_array().into_iter().flatten() {
                println!(
                    "{} {:?}{}{}",
                    w["id"],
                    w["title"].as_str().unwrap_or(""),
                    if w["focused"] == true { " focused" } else { "" },
                    if w["visible"] == true { "" } else { " hidden" }
                );
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
        let n = json!({"role": "button", "label": "Add", "key": "add", "states": ["focusable", "disabled"]});
        assert_eq!(
            line(2, &n, false),
            r#"@e2 [button] "Add" key=add (disabled)"#
        );
        assert_eq!(
            line(2, &n, true),
            r#"@e2 [button] "Add" key=add (focused disabled)"#
        );
        let n = json!({"role": "textField", "label": "Name", "value": "Ada"});
        assert_eq!(line(3, &n, false), r#"@e3 [textField] "Name" value="Ada""#);
        assert_eq!(
            line(3, &n, true),
            r#"@e3 [textField] "Name" value="Ada" (focused)"#
        );
    }

    #[test]
    fn targets_resolve_and_stale_refs_are_refused() {
        let mut state = State::default();
        state.refs.insert("111".into(), 1);
        let tree = json!({"nodes": [{"id": "111"}]});
        assert_eq!(target(&state, "@e1", &tree).unwrap(), json!({"id": "111"}));
        let gone = json!({"nodes": []});
        assert!(target(&state, "@e1", &gone).unwrap_err().contains("stale"));
        assert!(target(&state, "@e9", &tree)
            .unwrap_err()
            .contains("unknown ref"));
        assert_eq!(
            target(&state, "key=add", &tree).unwrap(),
            json!({"key": "add"})
        );
        assert!(target(&state, "id=12a", &tree).is_err());
        assert!(target(&state, "nonsense", &tree).is_err());
    }

    #[test]
    fn session_names_cannot_escape_the_cache() {
        assert!(session_path("../x").is_err());
        assert!(session_path("a/b").is_err());
        assert!(session_path("").is_err());
        assert!(session_path("agent-1").is_ok());
    }
}
