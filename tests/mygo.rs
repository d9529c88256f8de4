//! The MyGo automation face over its socket to `wayrig run` hosting the GTK4
//! fixture: every method, the error codes, ids echoed, bad lines. Requests a
//! client could write are typed calls; bad ones are written raw.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;

mod support;
use std::process::{Command, Stdio};
use support::{element_id, ProtocolClient as Client, Wayrig, APP_START};

use serde_json::{json, Value};
use wayrig_proto::mygo::{Action, Call, Code, ElementPick, Event};

fn tree_of(window: Option<u64>) -> Call {
    Call::Tree { window }
}

fn idle(window: Option<u64>, timeout_ms: u64) -> Call {
    Call::Idle {
        window,
        timeout_ms: Some(timeout_ms),
    }
}

fn menu(window: Option<u64>, path: &[&str]) -> Call {
    Call::Menu {
        window,
        path: path.iter().map(|l| l.to_string()).collect(),
    }
}

#[test]
fn the_protocol_end_to_end() {
    if !Path::new("/usr/bin/python3").exists() {
        panic!("Debian's python3 with python3-gi is needed (scripts/install-deps)");
    }
    let wayrig = Wayrig::start();
    let mode = std::fs::metadata(&wayrig.socket).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        mode.permissions().mode() & 0o777,
        0o600,
        "the socket is private"
    );
    let mut c = Client::connect(&wayrig.socket);

    // windows: wait for the fixture's window through idle on the default window.
    let win = &c.first_window();
    assert_eq!(win["title"], "wayrig-gtk4-fixture");
    assert_eq!(win["kind"], "content");
    assert!(win["contentBounds"]["width"].as_i64().unwrap() > 100);
    let id = win["id"].as_u64().unwrap();
    c.call(idle(Some(id), 10000));

    // tree: nodes in tree order with string ids, parents, MyGo roles.
    let tree = c.call(tree_of(Some(id)));
    assert_eq!(tree["window"], id);
    let nodes = tree["nodes"].as_array().unwrap();
    let press = nodes
        .iter()
        .find(|n| n["role"] == "button" && n["label"] == "Press")
        .expect("the Press button");
    assert!(press["id"]
        .as_str()
        .unwrap()
        .chars()
        .all(|c| c.is_ascii_digit()));
    assert!(press["actions"]
        .as_array()
        .unwrap()
        .contains(&json!("press")));
    assert!(press.get("parent").is_some());
    let second = nodes
        .iter()
        .find(|n| n["role"] == "textField" && n["label"] == "Second")
        .expect("the Second field");

    // act: press by id, setValue on a field; a read after idle shows them.
    c.call(Call::Act {
        window: Some(id),
        element: element_id(press),
        action: Action::Press,
    });
    c.call(Call::Act {
        window: None,
        element: element_id(second),
        action: Action::SetValue {
            text: "Ada Lovelace".into(),
        },
    });
    c.call(idle(None, 10000));
    assert_eq!(
        c.error(Call::Act {
            window: None,
            element: ElementPick::Id(123),
            action: Action::Press,
        }),
        Code::NoElement
    );
    assert_eq!(
        c.error(Call::Act {
            window: None,
            element: ElementPick::Key("nobody".into()),
            action: Action::Press,
        }),
        Code::NoElement
    );
    assert_eq!(
        c.raw_error("act", json!({"id": press["id"], "action": "fly"})),
        "invalid_request"
    );

    // scrollIntoView: a row far down the list shows afterwards.
    let row = |c: &mut Client| -> Value {
        let tree = c.call(tree_of(Some(id)));
        tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["label"] == "row 250")
            .expect("row 250")
            .clone()
    };
    let far = row(&mut c);
    c.call(Call::Act {
        window: Some(id),
        element: element_id(&far),
        action: Action::ScrollIntoView,
    });
    c.call(idle(None, 10000));
    let shown = row(&mut c);
    let height = win["contentBounds"]["height"].as_i64().unwrap();
    let top = shown["bounds"]["y"].as_i64().expect("bounds once shown");
    assert!(
        (0..height).contains(&top),
        "row 250 shows after scrollIntoView: {shown}"
    );

    // menu: the application menu by the labels along its path, answered
    // once the item ran: the fixture shows what ran in its status label.
    let status = |c: &mut Client| -> String {
        c.call(idle(None, 10000));
        let tree = c.call(tree_of(None));
        tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n["label"].as_str())
            .find(|l| l.starts_with("ran ") || *l == "ready")
            .expect("the status label")
            .to_string()
    };
    for (path, ran) in [
        (&["File", "New"][..], "ran app.new"),
        (&["File", "Save"], "ran win.save"),
        (&["File", "Recent", "one.txt"], "ran app.recent one.txt"),
        (&["Edit", "Copy"], "ran app.copy"),
    ] {
        c.call(menu(Some(id), path));
        assert_eq!(status(&mut c), ran, "menu {path:?}");
    }
    assert_eq!(c.error(menu(None, &["File", "Nope"])), Code::NoElement);
    assert_eq!(c.error(menu(None, &["Nope"])), Code::NoElement);
    assert_eq!(
        c.error(menu(None, &["File", "Disabled Item"])),
        Code::Failed
    );
    assert_eq!(
        status(&mut c),
        "ran app.copy",
        "a disabled item runs nothing"
    );
    assert_eq!(c.error(menu(None, &["File"])), Code::InvalidRequest);
    assert_eq!(
        c.raw_error("menu", json!({"path": "File"})),
        "invalid_request"
    );
    assert_eq!(c.error(menu(None, &[])), Code::InvalidRequest);

    // input: every event type, written raw: a foreign client may leave out
    // what a typed call always writes (button, clicks, mods, precise).
    let b = &press["bounds"];
    let (x, y) = (
        b["x"].as_f64().unwrap() + 5.0,
        b["y"].as_f64().unwrap() + 5.0,
    );
    c.raw_call(
        "input",
        json!({"window": id, "events": [
            {"type": "pointerMove", "x": x, "y": y},
            {"type": "pointerDown", "x": x, "y": y},
            {"type": "pointerUp", "x": x, "y": y},
            {"type": "click", "x": x, "y": y, "button": "left", "clicks": 1, "mods": ["shift"]},
            {"type": "wheel", "x": x, "y": y, "dx": 0, "dy": 15},
            {"type": "keyDown", "key": "Shift"},
            {"type": "keyUp", "key": "Shift"},
            {"type": "key", "key": "CmdOrCtrl+A"},
            {"type": "text", "text": "ü"}
        ]}),
    );
    assert_eq!(
        c.error(Call::Input {
            window: None,
            events: vec![Event::Key { key: "Nope".into() }],
        }),
        Code::InvalidRequest
    );
    assert_eq!(
        c.raw_error("input", json!({"events": [{"type": "teleport"}]})),
        "invalid_request"
    );
    assert_eq!(
        c.error(Call::Input {
            window: Some(999),
            events: vec![],
        }),
        Code::NoWindow
    );

    // capture: a PNG of the window's content size.
    let shot = c.call(Call::Capture { window: Some(id) });
    assert_eq!(shot["width"], win["contentBounds"]["width"]);
    assert!(
        shot["png"].as_str().unwrap().starts_with("iVBORw0KGgo"),
        "base64 of a PNG"
    );

    // eval on native UI, unknown methods, bad lines.
    assert_eq!(
        c.error(Call::Eval {
            window: None,
            script: "1".into(),
        }),
        Code::Unsupported
    );
    assert_eq!(c.raw_error("teleport", json!({})), "unknown_method");
    assert_eq!(
        c.raw_error("tree", json!({"window": "one"})),
        "invalid_request"
    );
    assert_eq!(c.raw_error("tree", json!({"colour": 1})), "invalid_request");
    let parse = c.send_line("this is not json");
    assert_eq!(
        (parse["id"].clone(), parse["error"]["code"].clone()),
        (Value::Null, json!("parse_error"))
    );
    assert_eq!(c.send_line("[1, 2]")["error"]["code"], "parse_error");
    assert_eq!(
        c.send_line(r#"{"id": 3}"#)["error"]["code"],
        "invalid_request"
    );

    // ids of every JSON type come back as they went.
    for id in [
        json!("abc"),
        json!(42),
        json!(1.5),
        json!(null),
        json!({"a": [1]}),
        json!([true]),
    ] {
        let answer = c.send_line(&json!({"id": id, "method": "windows"}).to_string());
        assert_eq!(answer["id"], id);
    }
    // ... and exactly as written, past what a float holds; whole numbers
    // written as floats are taken where the spec wants milliseconds or ids.
    for raw in ["123456789012345678901234567890", "1e2", "7.0"] {
        let answer = c.exchange(&format!(
            "{{\"id\": {raw}, \"method\": \"idle\", \"params\": {{\"window\": {id}.0, \"timeout\": 10000.0}}}}\n"
        ));
        assert_eq!(answer, format!("{{\"id\":{raw},\"result\":{{}}}}\n"));
    }

    // A line over the limit is refused; the connection goes on.
    let long = format!(
        r#"{{"id": 1, "method": "input", "params": {{"events": [{{"type": "text", "text": "{}"}}]}}}}"#,
        "a".repeat(9 * 1024 * 1024)
    );
    assert_eq!(c.send_line(&long)["error"]["code"], "invalid_request");
    c.call(Call::Windows);

    // Two connections side by side: one idles while the other works.
    let mut other = Client::connect(&wayrig.socket);
    other.call(Call::Windows);
    c.call(idle(None, 10000));

    // A client that leaves mid-line does no harm.
    {
        let mut gone = UnixStream::connect(&wayrig.socket).unwrap();
        gone.write_all(br#"{"id": 1, "method": "win"#).unwrap();
    }
    other.call(Call::Windows);
}

#[test]
fn a_live_socket_or_a_plain_file_is_not_replaced() {
    let dir = std::env::temp_dir().join(format!("wayrig-mygo-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain");
    std::fs::write(&plain, b"keep me").unwrap();
    let out = Command::new(support::shipped("wayrig"))
        .args(["run", "--mygo-socket"])
        .arg(&plain)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a socket"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&plain).unwrap(), b"keep me");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn widget_factories_answer_and_settle_beside_their_spinners() {
    for app in ["gtk4-widget-factory", "gtk3-widget-factory"] {
        let wayrig = Wayrig::start_app(&[app]);
        let mut c = Client::connect(&wayrig.socket);
        let window = c.first_window();
        let id = window["id"].as_u64().unwrap();
        let tree = c.call(tree_of(Some(id)));
        let nodes = tree["nodes"].as_array().unwrap();
        assert!(nodes.len() > 100, "{app}: {} elements", nodes.len());
        assert!(
            nodes.iter().any(|n| n["role"] == "checkBox"),
            "{app} has check boxes"
        );
        assert!(nodes.iter().all(|n| n["id"]
            .as_str()
            .is_some_and(|s| s.chars().all(|c| c.is_ascii_digit()))));
        let shot = c.call(Call::Capture { window: Some(id) });
        // The window may have been resized since it mapped: compare with now.
        let windows = c.call(Call::Windows);
        let now = windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == window["id"])
            .unwrap();
        assert_eq!(shot["width"], now["contentBounds"]["width"], "{app}");
        // Both factories keep a spinner going: it is their animation, and
        // idle answers beside it.
        c.call(idle(Some(id), 10_000));
        if app == "gtk3-widget-factory" {
            gtk3_menu_bar(&mut c, id);
        }
    }
}

/// GTK 3's menu bar (on the factory's second page) is chosen from through
/// accessibility: its items are in the tree while their menus are closed.
fn gtk3_menu_bar(c: &mut Client, id: u64) {
    // A page switched or a check toggled may reach accessibility a little
    // after the frame that shows it, so look again after each idle until the
    // element is there and as `want` says.
    let find_where = |c: &mut Client, role: &str, label: &str, want: &dyn Fn(&Value) -> bool| {
        for _ in 0..50 {
            let tree = c.call(tree_of(Some(id)));
            if let Some(n) = tree["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["role"] == role && n["label"] == label && want(n))
            {
                return n.clone();
            }
            // It may time out: the factory never settles.
            let _ = c.answer(idle(Some(id), 100));
        }
        panic!("no {role} {label:?} as wanted")
    };
    let find = |c: &mut Client, role: &str, label: &str| find_where(c, role, label, &|_| true);
    let checked = |n: &Value| {
        n["states"]
            .as_array()
            .is_some_and(|s| s.contains(&json!("checked")))
    };
    let page = find(c, "radio", "Page 2");
    c.call(Call::Act {
        window: Some(id),
        element: element_id(&page),
        action: Action::Press,
    });
    let before = checked(&find(c, "menuItemCheckBox", "Statusbar"));
    c.call(menu(Some(id), &["View", "Statusbar"]));
    let after = checked(&find_where(c, "menuItemCheckBox", "Statusbar", &|n| {
        checked(n) != before
    }));
    assert_ne!(before, after, "View > Statusbar toggled its check");
    assert_eq!(c.error(menu(Some(id), &["View", "Nope"])), Code::NoElement);
}

/// Processes whose command line or environment name this Wayrig's bus directory.
fn bus_processes(wayrig_pid: u32) -> Vec<i32> {
    support::processes_naming(&format!("wayrig-bus-{wayrig_pid}-"), true)
}

/// `wayrig run --mygo-socket DIR/app.sock -- foot`, once foot has started,
/// with its stderr; its process group ends when the first is dropped.
fn wayrig_hosting_foot(
    dir: &Path,
) -> (
    support::OwnedGroup,
    std::io::BufReader<std::process::ChildStderr>,
) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(dir).unwrap();
    let mut child = support::OwnedGroup(
        Command::new(support::shipped("wayrig"))
            .args(["run", "--mygo-socket"])
            .arg(dir.join("app.sock"))
            .args(["--", "foot"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap(),
    );
    let mut stderr = std::io::BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    let (mut said, by) = (String::new(), std::time::Instant::now() + APP_START);
    while !line.contains("started foot") {
        line.clear();
        if stderr.buffer().is_empty() {
            let left = by.saturating_duration_since(std::time::Instant::now());
            assert!(
                readable_within(stderr.get_ref(), left),
                "wayrig did not start foot within {APP_START:?}; it said:\n{said}\nits threads:\n{}",
                support::thread_stacks(child.0.id())
            );
        }
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "wayrig ended early"
        );
        said.push_str(&line);
    }
    assert!(
        !bus_processes(child.0.id()).is_empty(),
        "the session has its buses"
    );
    (child, stderr)
}

/// Whether `pipe` has something to read (or has closed) within `limit`.
fn readable_within(pipe: &impl std::os::fd::AsRawFd, limit: std::time::Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: poll(2) on one descriptor this test owns, for the time given.
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

/// Told to stop, `wayrig run` ends the session's buses with its apps, even
/// when whoever read its stderr has gone.
#[test]
fn stopping_ends_the_session_bus_even_with_stderr_closed() {
    let dir = std::env::temp_dir().join(format!("wayrig-stop-test-{}", std::process::id()));
    let (mut child, stderr) = wayrig_hosting_foot(&dir);
    let pid = child.0.id();
    drop(stderr);
    // SAFETY: kill(2) on the wayrig process this test started.
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let exited = support::wait_ended(&[pid as i32], std::time::Duration::from_secs(20));
    assert!(exited.is_empty(), "wayrig did not stop");
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Wayrig killed them as it stopped: wait for each to be gone.
    assert_eq!(
        support::wait_ended(&bus_processes(pid), std::time::Duration::from_secs(10)),
        Vec::<i32>::new(),
        "no bus process is left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Killed outright (SIGKILL), `wayrig run` still leaves no bus behind: the
/// kernel ends the bus daemon with it, and the rest of the bus follows.
#[test]
fn a_killed_wayrig_leaves_no_bus_behind() {
    let dir = std::env::temp_dir().join(format!("wayrig-kill-test-{}", std::process::id()));
    let (mut child, _stderr) = wayrig_hosting_foot(&dir);
    let bus = bus_processes(child.0.id());
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    // The bus processes end on their own after the kill: wait for each.
    assert_eq!(
        support::wait_ended(&bus, std::time::Duration::from_secs(10)),
        Vec::<i32>::new(),
        "bus processes left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_last_request_ended_by_closing_the_write_side_is_answered_and_the_socket_is_private() {
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let wayrig = Wayrig::start();
    let mode = std::fs::metadata(&wayrig.socket)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // The socket was made in a private directory beside it, now gone.
    let dir = wayrig.socket.parent().unwrap();
    let staging: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".wayrig-bind"))
        .collect();
    assert!(staging.is_empty(), "{staging:?}");

    let mut stream = std::os::unix::net::UnixStream::connect(&wayrig.socket).unwrap();
    stream
        .write_all(br#"{"id": 7, "method": "windows"}"#)
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let answer: Value = serde_json::from_str(answer.trim()).unwrap();
    assert_eq!(answer["id"], 7);
    assert!(answer["result"]["windows"].is_array(), "{answer}");
}

#[test]
fn an_empty_mygo_automation_means_no_socket() {
    let client = support::workspace_binary("wayrig-testclient");
    let shot = std::env::temp_dir().join(format!("wayrig-empty-env-{}.png", std::process::id()));
    let out = Command::new(support::shipped("wayrig"))
        .args(["run", "--once", "--screenshot"])
        .arg(&shot)
        .arg("--")
        .arg(&client)
        .env("MYGO_AUTOMATION", "")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("automation socket"), "{stderr}");
    assert!(shot.exists(), "it ran the app all the same");
    let _ = std::fs::remove_file(shot);
}

#[test]
fn pressing_what_offers_no_press_is_refused_not_clicked() {
    let wayrig = Wayrig::start();
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window();
    let id = window["id"].as_u64().unwrap();
    let tree = c.call(Call::Tree { window: Some(id) });
    let label = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == "text" && n["label"] == "ready")
        .expect("the status label")
        .clone();
    assert!(label.get("actions").is_none(), "{label}");
    let code = c.error(Call::Act {
        window: Some(id),
        element: element_id(&label),
        action: Action::Press,
    });
    assert_eq!(code, Code::Unsupported);
}

/// An app started with its accessibility off has no tree, and the answer
/// says which setting turned it off, not just that the tree is empty.
#[test]
fn an_app_with_accessibility_turned_off_is_told_what_turned_it_off() {
    let wayrig = Wayrig::start_with(&["--env", "NO_AT_BRIDGE=1"], &["gtk3-widget-factory"]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    let refused = c.answer(Call::Tree { window: Some(id) }).unwrap_err();
    assert_eq!(refused.code, Code::Unsupported, "{refused:?}");
    assert!(
        refused
            .message
            .contains("NO_AT_BRIDGE=1 (read by GTK 3 and ATK)"),
        "{refused:?}"
    );
}

fn nodes_of(c: &mut Client, window: u64) -> Vec<Value> {
    c.call(tree_of(Some(window)))["nodes"]
        .as_array()
        .unwrap()
        .clone()
}

fn has(n: &Value, list: &str, word: &str) -> bool {
    n[list].as_array().is_some_and(|l| l.contains(&json!(word)))
}

/// The tree once `want` holds of it, reading again after each frame (or
/// short idle) of a window that may never settle.
fn tree_where(c: &mut Client, window: u64, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        let tree = c.call(tree_of(Some(window)));
        if want(&tree) {
            return tree;
        }
        let _ = c.answer(idle(Some(window), 100));
    }
    panic!("the tree never showed {what}")
}

fn node_by_id<'a>(tree: &'a Value, id: &Value) -> &'a Value {
    tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == *id)
        .expect("the element is still there")
}

/// insertText types where the field had its caret, not where a click to
/// focus it would put it: in an entry and in a text view.
#[test]
fn insert_text_types_at_the_fields_caret() {
    let wayrig = Wayrig::start();
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    c.call(idle(Some(id), 10000));
    let nodes = nodes_of(&mut c, id);
    let find = |role: &str, label: &str| {
        nodes
            .iter()
            .find(|n| n["role"] == role && n["label"] == label)
            .unwrap_or_else(|| panic!("no {role} {label:?}"))
            .clone()
    };
    let first = find("textField", "First");
    let press = find("button", "Press");
    let view = nodes
        .iter()
        .find(|n| {
            n["value"]
                .as_str()
                .is_some_and(|v| v.starts_with("alpha beta"))
        })
        .expect("the text view")
        .clone();
    let act = |c: &mut Client, n: &Value, action: Action| {
        c.call(Call::Act {
            window: Some(id),
            element: element_id(n),
            action,
        });
        c.call(idle(Some(id), 10000));
    };
    act(
        &mut c,
        &first,
        Action::SetValue {
            text: "abcd".into(),
        },
    );
    for (field, at) in [(&first, 2), (&view, 6)] {
        act(&mut c, field, Action::SelectText { from: at, to: at });
        // Focus goes elsewhere; the field keeps its caret.
        act(&mut c, &press, Action::Press);
        act(&mut c, field, Action::InsertText { text: "X".into() });
    }
    let tree = c.call(tree_of(Some(id)));
    assert_eq!(node_by_id(&tree, &first["id"])["value"], "abXcd");
    let text = node_by_id(&tree, &view["id"])["value"].clone();
    assert!(
        text.as_str().unwrap().starts_with("alpha Xbeta gamma"),
        "{text}"
    );
}

/// A window that draws every frame, forever, never settles: an action on it
/// still acts. insertText into an unfocused field waits for the field's focus
/// and the frame that shows it, not for the window to go quiet; so does
/// scrollIntoView between its wheel steps.
#[test]
fn an_action_on_a_window_that_never_settles_still_acts() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    let wayrig = Wayrig::start_with(
        &["--env", "WAYRIG_FIXTURE_ANIMATE=1"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    assert_eq!(
        c.error(idle(Some(id), 300)),
        Code::Timeout,
        "it never settles"
    );
    let tree = tree_where(&mut c, id, "the Second field", |t| {
        t["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["label"] == "Second")
    });
    let nodes = tree["nodes"].as_array().unwrap();
    let second = nodes
        .iter()
        .find(|n| n["label"] == "Second")
        .unwrap()
        .clone();
    assert_ne!(tree["focus"], second["id"]);
    c.call(Call::Act {
        window: Some(id),
        element: element_id(&second),
        action: Action::InsertText { text: "zq".into() },
    });
    tree_where(&mut c, id, "the typed text", |t| {
        node_by_id(t, &second["id"])["value"] == "zq"
    });
    let far = nodes
        .iter()
        .find(|n| n["label"] == "row 250")
        .unwrap()
        .clone();
    c.call(Call::Act {
        window: Some(id),
        element: element_id(&far),
        action: Action::ScrollIntoView,
    });
    tree_where(&mut c, id, "row 250 shown", |t| {
        !has(node_by_id(t, &far["id"]), "states", "offscreen")
    });
}

/// An act answered past the effect wait says why, in a member namespaced
/// as Wayrig's methods are (the Bus and cua say it in their own terms); a
/// MyGo client that knows nothing of it reads `{}` as ever.
#[test]
fn an_act_answered_past_the_effect_wait_says_why() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    let wayrig = Wayrig::start_with(
        &["--effect-wait", "300", "--env", "WAYRIG_FIXTURE_ANIMATE=1"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    let mut c = Client::connect(&wayrig.socket);
    // The window never settles: `idle` would wait out its whole timeout.
    let id = (0..300)
        .find_map(|_| {
            let id = c.call(Call::Windows)["windows"][0]["id"].as_u64();
            if id.is_none() {
                let _ = c.answer(idle(None, 100));
            }
            id
        })
        .expect("the fixture's window maps");
    let tree = tree_where(&mut c, id, "the Press button", |t| {
        t["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["label"] == "Press")
    });
    let press = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["label"] == "Press")
        .unwrap()
        .clone();
    let answer = c.call(Call::Act {
        window: Some(id),
        element: element_id(&press),
        action: Action::Press,
    });
    let why = answer["wayrig.unsettled"]
        .as_str()
        .unwrap_or_else(|| panic!("no reason in {answer}"));
    assert!(why.contains("keeps drawing"), "{why}");
}

/// In step pacing apps draw only when asked: a window that would draw every
/// frame stands still between requests, `wayrig.step` advances it a frame at
/// a time, and input asks for the frames its answer needs.
#[test]
fn step_pacing_stands_apps_still_until_a_step_or_input_asks() {
    let wayrig = Wayrig::start_with(
        &["--pacing", "step", "--env", "WAYRIG_FIXTURE_ANIMATE=1"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let mut c = Client::connect(&wayrig.socket);
    c.raw_call(
        "wayrig.waitFor",
        json!({"text": "Second", "timeout": 30000}),
    );
    let id = c.call(Call::Windows)["windows"][0]["id"].as_u64().unwrap();
    let shot = |c: &mut Client| c.call(Call::Capture { window: Some(id) })["png"].clone();
    let stepped = c.raw_call("wayrig.step", json!({}));
    assert_eq!(stepped["frames"], 1, "{stepped}");
    assert!(stepped["callbacks"].as_u64() >= Some(1), "{stepped}");
    let still = shot(&mut c);
    assert!(shot(&mut c) == still, "a frame was drawn between requests");
    // The fixture's ticker changes the window's opacity every frame, back
    // and forth: an odd number of frames shows a change.
    let stepped = c.raw_call("wayrig.step", json!({"frames": 3}));
    assert_eq!(stepped["frames"], 3, "{stepped}");
    let drawn = shot(&mut c);
    assert!(drawn != still, "a step drew no frame");
    assert!(shot(&mut c) == drawn, "a frame was drawn after the step");

    let tree = c.call(tree_of(Some(id)));
    c.call(Call::Act {
        window: Some(id),
        element: support::element_labelled(&tree, "textField", "Second"),
        action: Action::InsertText { text: "zq".into() },
    });
    tree_where(&mut c, id, "the typed text", |t| {
        t["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["label"] == "Second" && n["value"] == "zq")
    });

    let line = json!({"id": 1, "method": "wayrig.step", "params": {"frames": 601}});
    let refused = c.send_line(&line.to_string());
    assert_eq!(refused["error"]["code"], "invalid_request", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 to 600"),
        "{refused}"
    );
    let realtime = Wayrig::start();
    let mut c = Client::connect(&realtime.socket);
    let line = json!({"id": 1, "method": "wayrig.step"});
    let refused = c.send_line(&line.to_string());
    assert_eq!(refused["error"]["code"], "unsupported", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--pacing step"),
        "{refused}"
    );
}

/// `focus` on a check box and a button of gtk4-widget-factory (GTK 4 refuses
/// AT-SPI's GrabFocus on them) moves the keyboard focus there, as the Tab key
/// would, without pressing them.
#[test]
fn focus_reaches_a_check_box_and_a_button_without_pressing_them() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    let shown = |n: &&Value| n.get("bounds").is_some() && !has(n, "states", "offscreen");
    for role in ["checkBox", "button"] {
        let nodes = nodes_of(&mut c, id);
        let target = nodes
            .iter()
            .filter(shown)
            .find(|n| n["role"] == role && has(n, "actions", "focus"))
            .unwrap_or_else(|| panic!("a focusable {role}"))
            .clone();
        c.call(Call::Act {
            window: Some(id),
            element: element_id(&target),
            action: Action::Focus,
        });
        let tree = tree_where(&mut c, id, &format!("the {role} focused"), |t| {
            t["focus"] == target["id"]
        });
        let now = node_by_id(&tree, &target["id"]);
        assert_eq!(
            has(now, "states", "checked"),
            has(&target, "states", "checked"),
            "focus did not press the {role}"
        );
    }
}

/// Elements on gtk4-widget-factory's hidden stack pages are offscreen; those
/// on the page shown are not.
#[test]
fn elements_on_hidden_pages_are_offscreen() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window();
    let id = window["id"].as_u64().unwrap();
    let (width, height) = (
        window["contentBounds"]["width"].as_i64().unwrap(),
        window["contentBounds"]["height"].as_i64().unwrap(),
    );
    let nodes = nodes_of(&mut c, id);
    let inside = |n: &Value| {
        let b = &n["bounds"];
        let (x, y, w, h) = (
            b["x"].as_i64().unwrap(),
            b["y"].as_i64().unwrap(),
            b["width"].as_i64().unwrap(),
            b["height"].as_i64().unwrap(),
        );
        w > 0 && h > 0 && x < width && y < height && x + w > 0 && y + h > 0
    };
    let offscreen = |n: &Value| has(n, "states", "offscreen");
    let controls: Vec<&Value> = nodes
        .iter()
        .filter(|n| {
            ["checkBox", "button", "textField", "slider"].contains(&n["role"].as_str().unwrap())
        })
        .collect();
    for n in &controls {
        let shows = n.get("bounds").is_some() && inside(n);
        assert_ne!(shows, offscreen(n), "{n}");
    }
    let hidden = controls.iter().filter(|n| offscreen(n)).count();
    assert!(
        hidden > 20,
        "{hidden} of {} controls offscreen",
        controls.len()
    );
    assert!(hidden < controls.len(), "the first page's controls show");
    assert!(nodes.iter().filter(|n| offscreen(n)).count() > nodes.len() / 3);
}

/// Roles say what gtk4-widget-factory's widgets are, in the spec's words:
/// combo boxes without text to edit are pop-up buttons, an expander is a
/// disclosure, scrolled windows are `scroll` and their bars are left out.
#[test]
fn roles_say_what_the_widgets_are() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    let nodes = nodes_of(&mut c, id);
    let by_id: std::collections::HashMap<&str, &Value> = nodes
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let ancestors = |n: &Value| {
        let mut up = Vec::new();
        let mut p = n["parent"].as_str();
        while let Some(parent) = p.and_then(|p| by_id.get(p)) {
            up.push(*parent);
            p = parent["parent"].as_str();
        }
        up
    };
    let with_role = |role: &'static str| nodes.iter().filter(move |n| n["role"] == role);
    assert!(
        with_role("popUpButton").count() > 0,
        "GtkComboBox without entry"
    );
    for combo in with_role("comboBox") {
        assert!(
            nodes
                .iter()
                .any(|n| n["role"] == "textField" && ancestors(n).contains(&combo)),
            "a comboBox has text to edit: {combo}"
        );
    }
    assert!(with_role("disclosure").any(|n| n["label"] == "GtkExpander"));
    let scrolls: Vec<&Value> = with_role("scroll").collect();
    assert!(!scrolls.is_empty());
    for s in &scrolls {
        let in_area = ancestors(s).iter().any(|a| a["role"] == "scroll");
        assert!(
            !(in_area && s["label"] == "GtkScrollbar"),
            "a bare scroll bar inside a scroll area: {s}"
        );
    }
    // The factory's scrolled windows hold its lists and text views.
    assert!(
        scrolls
            .iter()
            .any(|s| s["bounds"]["height"].as_i64() > Some(50)),
        "{scrolls:?}"
    );
}

/// `wayrig run` hosting the keypads fixture (tests/fixtures/gtk4-keypads.py),
/// a client, and its window once settled.
fn keypads() -> (Wayrig, Client, u64) {
    let fixture =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let wayrig = Wayrig::start_app(&["/usr/bin/python3", fixture.to_str().unwrap()]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    c.call(idle(Some(id), 10000));
    (wayrig, c, id)
}

/// The window's element with this role whose label starts with `label`.
fn element(c: &mut Client, id: u64, role: &str, label: &str) -> Value {
    nodes_of(c, id)
        .into_iter()
        .find(|n| n["role"] == role && n["label"].as_str().is_some_and(|l| l.starts_with(label)))
        .unwrap_or_else(|| panic!("no {role} {label:?} in window {id}"))
}

/// The keypads fixture: Basic's keys, and Advanced's where they were, in a
/// stack switched from a popover that opens over the keys.
#[test]
fn a_press_never_lands_on_what_covers_its_element_or_on_a_hidden_page() {
    let (_wayrig, mut c, id) = keypads();
    let find = |c: &mut Client, role: &str, label: &str| element(c, id, role, label);
    let press = |node: &Value| json!({"window": id, "id": node["id"], "action": "press"});
    let shows = |node: &Value| !node["states"].to_string().contains("offscreen");
    let one = find(&mut c, "button", "1");

    // The mode menu opens over the first row of keys: "1" is under it.
    let mode = find(&mut c, "button", "Mode");
    c.raw_call("act", press(&mode));
    c.call(idle(Some(id), 5000));
    assert_eq!(c.raw_error("act", press(&one)), "no_element");

    // The Advanced row is pressed where its popup shows it, not where GTK
    // measures it inside the window.
    let advanced = find(&mut c, "menuItem", "Advanced");
    c.raw_call("act", press(&advanced));
    c.call(idle(Some(id), 5000));
    let seven = find(&mut c, "button", "7");
    assert!(shows(&seven), "Advanced's keys show: {seven}");
    let hidden = find(&mut c, "button", "1");
    assert!(
        !shows(&hidden),
        "Basic's keys are on a page the stack hides: {hidden}"
    );
    // Basic's "1" keeps its last bounds, with Advanced's "7" there now: a
    // press of it is refused, and nothing is typed.
    assert_eq!(c.raw_error("act", press(&one)), "no_element");
    c.call(idle(Some(id), 5000));
    assert_eq!(find(&mut c, "text", "keys:")["label"], "keys:");

    c.raw_call("act", press(&seven));
    c.call(idle(Some(id), 5000));
    assert_eq!(find(&mut c, "text", "keys:")["label"], "keys: 7");
}

/// The documents fixture (tests/fixtures/gtk4-documents.py): pages of a
/// stack switched by plain buttons, as libadwaita's tab view is, and a
/// search bar that slides up out of the strip that clips it.
#[test]
fn a_closed_search_bar_and_a_hidden_document_do_not_show() {
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-documents.py");
    let wayrig = Wayrig::start_app(&["/usr/bin/python3", fixture.to_str().unwrap()]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64().unwrap();
    c.call(idle(Some(id), 10000));
    let press = |node: &Value| json!({"window": id, "id": node["id"], "action": "press"});
    let shows = |node: &Value| !node["states"].to_string().contains("offscreen");
    let by_value = |c: &mut Client, value: &str| {
        nodes_of(c, id)
            .into_iter()
            .find(|n| n["value"] == value || n["label"] == value)
            .unwrap_or_else(|| panic!("no element reads {value:?}"))
    };

    let close = element(&mut c, id, "button", "Close search");
    assert!(shows(&close), "the search bar is open: {close}");
    c.raw_call("act", press(&close));
    c.call(idle(Some(id), 5000));
    // Slid up out of its strip, it lies over the window's top, not shown.
    let close = element(&mut c, id, "button", "Close search");
    assert!(!shows(&close), "the closed bar still shows: {close}");
    assert_eq!(c.raw_error("act", press(&close)), "no_element");

    let second = element(&mut c, id, "button", "Show second");
    c.raw_call("act", press(&second));
    c.call(idle(Some(id), 5000));
    assert!(shows(&by_value(&mut c, "second document")));
    let first = by_value(&mut c, "first document");
    assert!(!shows(&first), "the hidden document still shows: {first}");
    let scrolls: Vec<Value> = nodes_of(&mut c, id)
        .into_iter()
        .filter(|n| n["role"] == "scroll" && shows(n))
        .collect();
    assert_eq!(
        scrolls.len(),
        1,
        "only the shown page's scroll: {scrolls:?}"
    );
}

/// An app slow to show its first window: `idle` naming no window waits
/// for it to map, then to settle, so a client need not poll `windows`.
#[test]
fn idle_with_no_window_waits_for_the_apps_first_window() {
    let fixture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-documents.py");
    let wayrig = Wayrig::start_app(&["/usr/bin/python3", fixture.to_str().unwrap(), "--late"]);
    let mut c = Client::connect(&wayrig.socket);
    let none = c.call(Call::Windows);
    assert_eq!(none["windows"], json!([]), "the window shows late");
    c.call(idle(None, 20000));
    let windows = c.call(Call::Windows);
    assert_eq!(windows["windows"][0]["title"], "wayrig-documents");
    // Settled: its elements are there to read at once.
    let id = windows["windows"][0]["id"].as_u64().unwrap();
    element(&mut c, id, "button", "Show second");
}

/// GTK 4 lays a spin button out as its text, then − and +: the middle of
/// one at its natural width is its − button. Focus clicks its text, and
/// leaves its value alone.
#[test]
fn focus_on_a_spin_button_leaves_its_value() {
    let (_wayrig, mut c, id) = keypads();
    let find = |c: &mut Client, role: &str, label: &str| element(c, id, role, label);
    let spin = find(&mut c, "stepper", "Count");
    let key = find(&mut c, "button", "1");
    for _ in 0..3 {
        // Focus elsewhere first, so that focus has to move to the spin button.
        c.raw_call(
            "act",
            json!({"window": id, "id": key["id"], "action": "focus"}),
        );
        c.raw_call(
            "act",
            json!({"window": id, "id": spin["id"], "action": "focus"}),
        );
        c.call(idle(Some(id), 5000));
    }
    let tree = tree_where(&mut c, id, "the spin button focused", |t| {
        t["focus"] == spin["id"]
    });
    assert_eq!(
        node_by_id(&tree, &spin["id"])["now"],
        50.0,
        "focus pressed − or +"
    );
}

/// Press the GTK 4 fixture's "Open window" and answer the id of the second
/// window it opens, once that shows its label.
fn open_second_window(c: &mut Client, main: u64) -> u64 {
    let tree = c.call(tree_of(Some(main)));
    c.call(Call::Act {
        window: Some(main),
        element: support::element_labelled(&tree, "button", "Open window"),
        action: Action::Press,
    });
    let shown = c.raw_call(
        "wayrig.waitFor",
        json!({"window": null, "text": "Second window label", "timeout": 20000}),
    );
    let windows = c.call(Call::Windows);
    windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["title"] == "wayrig-gtk4-second")
        .unwrap_or_else(|| panic!("no second window in {windows} ({shown})"))["id"]
        .as_u64()
        .unwrap()
}

/// The GTK 4 fixture started with `env` (`NAME=VALUE`), a client, its main
/// window's id and the id of the second window "Open window" opened.
fn fixture_and_second_window(env: &str) -> (Wayrig, Client, u64, u64) {
    let wayrig = Wayrig::start_with(
        &["--env", env],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let mut c = Client::connect(&wayrig.socket);
    let main = c.first_window()["id"].as_u64().unwrap();
    let second = open_second_window(&mut c, main);
    (wayrig, c, main, second)
}

/// An app draws all its windows on one main thread: while its main window
/// animates (a spinner, its loop never resting), a second window of it
/// still settles by what it draws itself, not after the wait's limit.
#[test]
fn a_second_window_settles_while_its_apps_main_window_animates() {
    let (_wayrig, mut c, _main, second) =
        fixture_and_second_window("WAYRIG_FIXTURE_BUSY_SPINNER=1");
    // Answered, not a timeout ("its thread ... keeps running").
    c.call(idle(Some(second), 10_000));
}

/// An item chosen through the app's exported menu is answered once the
/// window shows what it did (the status, set 200 ms after the item ran), as
/// an act is: the app's answer on the bus says only that the action ran,
/// and the action draws nothing while the focused entry's caret blinks
/// (its main loop paces, hiding the timer; under load the blink may pass
/// for animation).
#[test]
fn an_exported_menu_items_answer_waits_for_its_effect() {
    let wayrig = Wayrig::start_with(
        &["--env", "WAYRIG_FIXTURE_MENU_LATER=1"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let mut c = Client::connect(&wayrig.socket);
    let main = c.first_window()["id"].as_u64().unwrap();
    c.call(menu(Some(main), &["File", "New"]));
    let nodes = nodes_of(&mut c, main);
    assert!(
        nodes.iter().any(|n| n["label"] == "ran app.new"),
        "the menu was answered before the window showed its effect"
    );
}

/// Input that closes its window (a click on a dialog's OK) is answered as
/// the press through `act` is: once the window its app focuses next shows
/// what closing it did (the main window's status, set 200 ms later).
#[test]
fn input_that_closes_its_window_waits_for_the_window_focus_went_to() {
    let (_wayrig, mut c, main, dialog) = fixture_and_second_window("WAYRIG_FIXTURE_OK_LATER=1");
    let ok = support::node_labelled(&c.call(tree_of(Some(dialog))), "button", "OK");
    let b = &ok["bounds"];
    let x = b["x"].as_f64().unwrap() + b["width"].as_f64().unwrap() / 2.0;
    let y = b["y"].as_f64().unwrap() + b["height"].as_f64().unwrap() / 2.0;
    c.raw_call(
        "input",
        json!({"window": dialog, "events": [{"type": "click", "x": x, "y": y}]}),
    );
    assert!(
        shows_confirmed(&mut c, main),
        "the input was answered before the main window showed its effect"
    );
}

/// Whether the fixture's main window shows, read at once, the status its
/// dialog's OK sets 200 ms after closing it.
fn shows_confirmed(c: &mut Client, main: u64) -> bool {
    nodes_of(c, main)
        .iter()
        .any(|n| n["role"] == "text" && n["label"] == "confirmed")
}

/// A press that closes its window (a dialog's OK) is answered once the
/// window its app focuses next shows what closing it did: the main
/// window's status, set 200 ms later, reads back at once.
#[test]
fn a_press_that_closes_its_window_waits_for_the_window_focus_went_to() {
    let (_wayrig, mut c, main, dialog) = fixture_and_second_window("WAYRIG_FIXTURE_OK_LATER=1");
    let tree = c.call(tree_of(Some(dialog)));
    c.call(Call::Act {
        window: Some(dialog),
        element: support::element_labelled(&tree, "button", "OK"),
        action: Action::Press,
    });
    assert!(
        shows_confirmed(&mut c, main),
        "the press was answered before the main window showed its effect"
    );
}
