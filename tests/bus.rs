//! The MixOS Bus face end to end: a WebSocket ABP client, as MixOS writes one,
//! driving `wayrig run --bus-listen` hosting the GTK 4 fixture and a stock app,
//! and `--bus-connect` registering with a stand-in for MixOS's broker.
//!
//! Registration, ping, the drive verbs, window commands, captures and every
//! refusal of this slice, over one connection that must stay usable after bad frames.

use std::collections::HashMap;

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod support;

use support::abp::{nodes, Client};
use support::Lines;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use wayrig_proto::abp::{Frame, Rc};

/// What wayrig prints when an app's Bus name registers.
const BUS_NAME_LINE: &str = "wayrig: bus name ";

/// `wayrig run` with a Bus face in its own process group, ended when dropped.
struct Hosted {
    child: Child,
    /// Where the Bus is: Wayrig's own broker, or the broker it connects to.
    url: String,
    /// What the hosted app printed on stdout.
    stdout: Arc<Lines>,
    /// Everything wayrig printed on stderr.
    stderr: Arc<Lines>,
}

impl Drop for Hosted {
    fn drop(&mut self) {
        support::end_group(&mut self.child, Duration::from_secs(20));
    }
}

impl Hosted {
    fn start(extra: &[&str], argv: &[&str]) -> Hosted {
        Hosted::start_with_env(extra, argv, &[])
    }

    /// `--bus-listen`, with extra environment for wayrig itself; returns once
    /// the Bus listens.
    fn start_with_env(extra: &[&str], argv: &[&str], env: &[(&str, &Path)]) -> Hosted {
        let mut hosted = Hosted::spawn(&["--bus-listen", "127.0.0.1:0"], extra, argv, env);
        let line = hosted
            .stderr
            .wait_for("wayrig: bus listens at ", "where the Bus listens");
        hosted.url = line
            .split("wayrig: bus listens at ")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        hosted
    }

    /// The GTK 4 fixture, registered with the broker at `url`.
    fn connected(url: &str, extra: &[&str]) -> Hosted {
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
        let mut hosted = Hosted::spawn(
            &["--bus-connect", url],
            extra,
            &["/usr/bin/python3", fixture.to_str().unwrap()],
            &[],
        );
        hosted.url = url.to_string();
        hosted
    }

    fn spawn(bus: &[&str], extra: &[&str], argv: &[&str], env: &[(&str, &Path)]) -> Hosted {
        let mut child = Command::new(support::shipped("wayrig"))
            .arg("run")
            .args(bus)
            .args(extra)
            .args(["--env", "GSK_RENDERER=cairo", "--"])
            .args(argv)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("wayrig runs");
        let (stdout, stderr) = support::follow_output(&mut child);
        Hosted {
            child,
            url: String::new(),
            stdout,
            stderr,
        }
    }

    fn fixture(extra: &[&str]) -> Hosted {
        Hosted::fixture_with_env(extra, &[])
    }

    fn fixture_with_env(extra: &[&str], env: &[(&str, &Path)]) -> Hosted {
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
        Hosted::start_with_env(extra, &["/usr/bin/python3", fixture.to_str().unwrap()], env)
    }

    /// The Bus names wayrig printed as the apps registered, in order.
    fn names(&self) -> Vec<String> {
        let lines = self.stderr.lines.lock().unwrap();
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(BUS_NAME_LINE))
            .map(|rest| {
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    /// The first app's Bus name, once it has one.
    fn first_name(&self) -> String {
        self.stderr.wait_for(BUS_NAME_LINE, "an app's Bus name");
        self.names()[0].clone()
    }

    fn printed(&self, text: &str) -> bool {
        self.stdout.contains(text)
    }
}

#[test]
fn a_mixos_client_drives_the_gtk4_fixture_over_the_bus() {
    let hosted = Hosted::fixture(&["--bus-name", "fx"]);
    let app = hosted.first_name();
    assert_eq!(app, "fx", "--bus-name names the first app");
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;

        // Registration and ping, answered by the broker.
        let reg = c.request("noded", "noded.register", json!({})).await;
        assert_eq!(reg.rc(), Some(Rc::Ok), "{}", reg.body);
        let ping = c.request("noded", "noded.ping", json!({})).await;
        assert_eq!(ping.rc(), Some(Rc::Ok));
        assert_eq!(ping.id(), Some("2"));
        c.send_text("---\n---\n".into()).await;
        assert!(c.receive().await.is_heartbeat(), "a heartbeat is echoed");

        // A second client cannot take a name already held.
        let mut other = Client::connect(&hosted.url, "probe").await;
        let taken = other.request("noded", "noded.register", json!({})).await;
        assert_eq!(taken.rc(), Some(Rc::Error));
        let body: Value = serde_json::from_str(&taken.body).unwrap();
        assert_eq!(body["schema"], "noded.registration-rejection.v1");
        assert_eq!(body["error_code"], "NAME_TAKEN");
        let mut squatter = Client::connect(&hosted.url, "fx").await;
        let taken = squatter.request("noded", "noded.register", json!({})).await;
        assert_eq!(taken.rc(), Some(Rc::Error), "an app's name is taken too");

        // HELP and app.describe list the verbs.
        let help = c.request("fx", "HELP", json!({})).await;
        assert_eq!(help.rc(), Some(Rc::Ok));
        let described = c.ok(&app, "app.describe", json!({})).await;
        let verbs: Vec<&str> = described["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert!(verbs.contains(&"fx.ui.click"), "{verbs:?}");

        // ui.tree: ids as decimal text, AccessKit roles, rects, filters.
        let tree = c.tree(&app, json!({})).await;
        let all = nodes(&tree);
        assert!(tree["root"].as_str().unwrap().parse::<u64>().is_ok());
        let press = all
            .iter()
            .find(|n| n["role"] == "Button" && n["label"] == "Press")
            .unwrap_or_else(|| panic!("the Press button in {tree}"));
        let rect = press["rect"].as_array().expect("a rect");
        assert_eq!(rect.len(), 4);
        assert!(rect[2].as_f64() > rect[0].as_f64());
        assert_eq!(press["enabled"], true);
        assert_eq!(press["checked"], Value::Null);
        for child in press["children"].as_array().unwrap() {
            assert!(child.as_str().unwrap().parse::<u64>().is_ok());
        }
        assert!(
            all.iter().any(|n| n["label"] == "ready"),
            "a text node's text is its label"
        );
        let filtered = c.tree(&app, json!({"label": "pRESS"})).await;
        assert!(nodes(&filtered).iter().any(|n| n["label"] == "Press"));
        assert!(nodes(&filtered).iter().all(|n| n["label"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("press")));
        let exact = c.tree(&app, json!({"label": "pRESS", "exact": true})).await;
        assert!(nodes(&exact).is_empty(), "exact matches case: {exact}");
        let fields = c.tree(&app, json!({"role": "TextInput"})).await;
        assert!(!nodes(&fields).is_empty());
        assert!(nodes(&fields).iter().all(|n| n["role"] == "TextInput"));
        let multiline = c.tree(&app, json!({"role": "MultilineTextInput"})).await;
        assert_eq!(nodes(&multiline).len(), 1, "{multiline}");

        // ui.click by label: the fixture says it was clicked.
        let clicked = c.ok(&app, "ui.click", json!({"label": "Press"})).await;
        assert_eq!(clicked["target"], press["id"]);
        assert_eq!(clicked["at"].as_array().unwrap().len(), 2);
        assert!(clicked.get("menu").is_some() && clicked.get("focused").is_some());
        let pointer = clicked["pointer"].as_array().expect("pointer");
        assert_eq!(pointer[0], clicked["at"][0]);
        hosted
            .stdout
            .wait_for(r#""ev": "clicked""#, "the fixture's click");
        // By id, as text and as an integer.
        let id: u64 = press["id"].as_str().unwrap().parse().unwrap();
        c.ok(&app, "ui.click", json!({"id": press["id"]})).await;
        c.ok(&app, "ui.click", json!({"id": id})).await;

        // Ambiguous labels list their ids; neither or both of label and id is wrong.
        let none = c
            .refused(&app, "ui.click", json!({"label": "no such"}))
            .await;
        assert_eq!(none["error_code"], "ARGUMENT");
        let both = c
            .refused(&app, "ui.click", json!({"label": "Press", "id": id}))
            .await;
        assert_eq!(both["error_code"], "ARGUMENT");
        assert!(both["message"].as_str().unwrap().contains("exactly one"));

        // ui.type into a focused entry; ui.tree then shows the text.
        let first = all
            .iter()
            .find(|n| n["role"] == "TextInput" && n["label"] == "First")
            .unwrap_or_else(|| panic!("the First field in {tree}"));
        let focused = c.ok(&app, "ui.click", json!({"id": first["id"]})).await;
        assert!(focused["focused"].is_string(), "{focused}");
        let typed = c.ok(&app, "ui.type", json!({"text": "hello bus"})).await;
        assert!(typed.get("focused").is_some());
        let after = c.tree(&app, json!({"role": "TextInput"})).await;
        let field = nodes(&after)
            .iter()
            .find(|n| n["id"] == first["id"])
            .expect("the field again");
        assert_eq!(field["value"], "hello bus", "{after}");

        // ui.key with modifiers: select all and type over it.
        c.ok(
            &app,
            "ui.key",
            json!({"key": "A", "modifiers": ["command"]}),
        )
        .await;
        c.ok(&app, "ui.type", json!({"text": "x"})).await;
        let after = c.tree(&app, json!({"role": "TextInput"})).await;
        let field = nodes(&after)
            .iter()
            .find(|n| n["id"] == first["id"])
            .unwrap();
        assert_eq!(field["value"], "x", "Ctrl+A selected all: {after}");
        let bad_key = c.refused(&app, "ui.key", json!({"key": "Hyper"})).await;
        assert_eq!(bad_key["error_code"], "ARGUMENT");
        let bad_mod = c
            .refused(&app, "ui.key", json!({"key": "A", "modifiers": ["hyper"]}))
            .await;
        assert_eq!(bad_mod["error_code"], "ARGUMENT");

        // window maximize, then window.state reports it.
        let before = c.ok(&app, "window.state", json!({})).await;
        assert_eq!(before["maximized"], false);
        let maximized = c.ok(&app, "window", json!({"action": "maximize"})).await;
        assert_eq!(maximized["requested"], "maximize");
        assert_eq!(maximized["maximized"], true);
        let state = c.ok(&app, "window.state", json!({})).await;
        assert_eq!(state["maximized"], true);
        assert!(state["size"][0].as_i64() > before["size"][0].as_i64());
        assert_eq!(state["pixels_per_point"], 1.0);
        let restored = c.ok(&app, "window", json!({"action": "restore"})).await;
        assert_eq!(restored["maximized"], false);
        let bad = c.refused(&app, "window", json!({"action": "fly"})).await;
        assert_eq!(bad["error_code"], "ARGUMENT");

        // Refusals: unknown verb, unknown target, bad arguments.
        let unknown = c.refused(&app, "ui.fly", json!({})).await;
        assert_eq!(unknown["error_code"], "UNKNOWN_VERB");
        let nobody = c.request("nobody", "nobody.ui.tree", json!({})).await;
        assert_eq!(nobody.rc(), Some(Rc::Error), "{}", nobody.body);
        let typo = c.refused(&app, "ui.tree", json!({"lable": "x"})).await;
        assert_eq!(typo["error_code"], "ARGUMENT");
        let not_object = c.request(&app, "fx.ui.tree", json!([1])).await;
        assert_eq!(not_object.rc(), Some(Rc::Error));
    });
}

#[test]
fn malformed_frames_answer_rc_20_and_the_connection_stays_usable() {
    let hosted = Hosted::fixture(&[]);
    let app = hosted.first_name();
    assert_eq!(app, "gtk4fixture", "named from org.wayrig.Gtk4Fixture");
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        let mut many = String::from("---\nid: 6\n");
        for i in 0..65 {
            many.push_str(&format!("h{i:03}: v\n"));
        }
        many.push_str("---\n");
        let huge = format!(
            "---\ncommand: x\nid: 9\nto: noded\ntype: request\n---\n{}",
            "x".repeat(17 << 20)
        );
        // Each answered under its id wherever the id could be read.
        for (bad, id) in [
            ("garbage".to_string(), None),
            (
                "---\ncommand: noded.ping\nto: noded\ntype: request\n".to_string(),
                None,
            ),
            (
                "---\nto: noded\ncommand: noded.ping\nid: 5\ntype: request\n---\n".to_string(),
                Some("5"),
            ),
            (
                "---\ncommand: noded.ping\nid: 7\nid: 8\nto: noded\ntype: request\n---\n".into(),
                Some("7"),
            ),
            (
                "---\ncommand noded.ping\nid: 4\nto: noded\ntype: request\n---\n".into(),
                Some("4"),
            ),
            (many, Some("6")),
            (huge, Some("9")),
        ] {
            c.send_text(bad).await;
            let answer = c.receive().await;
            assert_eq!(answer.id(), id, "{answer:?}");
            assert_eq!(answer.rc(), Some(Rc::Failure), "{answer:?}");
            let body: Value = serde_json::from_str(&answer.body).unwrap();
            assert!(
                body["message"].as_str().unwrap().contains("malformed"),
                "{body}"
            );
        }
        // CRLF line ends are read as MixOS's lenient reader reads them.
        c.send_text(
            "---\r\ncommand: noded.ping\r\nid: 3\r\nto: noded\r\ntype: request\r\n---\r\n{}".into(),
        )
        .await;
        let crlf = c.receive().await;
        assert_eq!(
            (crlf.id(), crlf.rc()),
            (Some("3"), Some(Rc::Ok)),
            "{crlf:?}"
        );
        // Still usable afterwards.
        let ping = c.request("noded", "noded.ping", json!({})).await;
        assert_eq!(ping.rc(), Some(Rc::Ok));
        c.tree(&app, json!({})).await;
    });
}

#[test]
fn a_non_loopback_bus_address_is_refused_at_start() {
    let out = Command::new(support::shipped("wayrig"))
        .args(["run", "--bus-listen", "0.0.0.0:0", "--", "/bin/true"])
        .stdin(Stdio::null())
        .output()
        .expect("wayrig runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    assert!(stderr.contains("127.0.0.1"), "says what to use: {stderr}");
}

#[test]
fn wayrig_send_asks_one_request_and_prints_its_answer() {
    let hosted = Hosted::fixture(&["--bus-name", "fx"]);
    let app = hosted.first_name();
    // The window is there once ui.tree answers.
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        c.tree(&app, json!({})).await;
    });
    let send = |args: &[&str]| {
        Command::new(support::shipped("wayrig"))
            .args(["send", "--url", &hosted.url, "fx"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("wayrig send runs")
    };
    let clicked = send(&["fx.ui.click", r#"{"label": "Press"}"#]);
    assert!(clicked.status.success(), "{clicked:?}");
    let answer: Value = serde_json::from_slice(&clicked.stdout).expect("the answer's body");
    assert!(answer["target"].is_string(), "{answer}");
    hosted.stdout.wait_for("\"clicked\"", "the fixture's click");

    let refused = send(&["fx.ui.click", r#"{"label": "No such control"}"#]);
    assert!(!refused.status.success());
    let answer: Value = serde_json::from_slice(&refused.stdout).expect("the refusal's body");
    assert_eq!(answer["error_code"], "ARGUMENT");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("rc 10"));

    let bad = send(&["fx.ui.click", "label=Press"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not JSON"));

    // The URL may come first, as MixOS's send writes it.
    let state = Command::new(support::shipped("wayrig"))
        .args(["send", &hosted.url, "fx", "fx.window.state", "{}"])
        .env_remove("WAYRIG_BUS")
        .output()
        .unwrap();
    assert!(state.status.success(), "{state:?}");
    let state: Value = serde_json::from_slice(&state.stdout).unwrap();
    assert!(state["size"].is_array(), "{state}");
}

#[test]
fn gtk4_widget_factory_is_driven_by_label() {
    if !support::have("gtk4-widget-factory") {
        panic!("gtk4-widget-factory is needed (scripts/install-deps)");
    }
    let hosted = Hosted::start(&["--bus-name", "factory"], &["gtk4-widget-factory"]);
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        // The factory fills its page after its first frame.
        let checks = c
            .tree_until(&app, json!({"role": "CheckBox"}), |t| nodes(t).len() > 2)
            .await;
        let check = nodes(&checks)
            .iter()
            .find(|n| n["checked"] == "false" && n["enabled"] == true && n["rect"].is_array())
            .unwrap_or_else(|| panic!("an unchecked check box in {checks}"))
            .clone();
        let label = check["label"].as_str().unwrap().to_string();
        let clicked = c.ok(&app, "ui.click", json!({"id": check["id"]})).await;
        assert_eq!(clicked["target"], check["id"]);
        let after = c.tree(&app, json!({"role": "CheckBox"})).await;
        let now = nodes(&after)
            .iter()
            .find(|n| n["id"] == check["id"])
            .expect("the check box again");
        assert_eq!(now["checked"], "true", "{label} is checked: {now}");
        // A disabled check box takes no click: refused, and left as it was.
        let disabled = nodes(&checks)
            .iter()
            .find(|n| n["enabled"] == false && n["rect"].is_array())
            .unwrap_or_else(|| panic!("a disabled check box in {checks}"))
            .clone();
        let refused = c
            .refused(&app, "ui.click", json!({"id": disabled["id"]}))
            .await;
        assert_eq!(refused["error_code"], "ARGUMENT");
        assert!(refused["message"].as_str().unwrap().contains("disabled"));
        // Its check boxes all say "checkbutton": a click by that label is
        // ambiguous, and the refusal lists the ones on screen.
        let shown: Vec<&str> = nodes(&checks)
            .iter()
            .filter(|n| n["label"] == "checkbutton" && n["rect"].is_array())
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        assert!(shown.len() >= 2, "{checks}");
        let ambiguous = c
            .refused(&app, "ui.click", json!({"label": "checkbutton"}))
            .await;
        assert_eq!(ambiguous["error_code"], "ARGUMENT");
        let message = ambiguous["message"].as_str().unwrap();
        assert!(
            shown.iter().all(|id| message.contains(id)),
            "the refusal lists {shown:?}: {message}"
        );

        // A label only one control has: the password entry, which takes focus.
        let entry = c.tree(&app, json!({"role": "PasswordInput"})).await;
        let entry = nodes(&entry).first().expect("the password entry").clone();
        // Named by nothing, it is clicked by its hint text.
        let words = [&entry["label"], &entry["placeholder"]]
            .into_iter()
            .filter_map(Value::as_str)
            .find(|w| !w.is_empty())
            .unwrap_or_else(|| panic!("the entry has words to click it by: {entry}"));
        let clicked = c.ok(&app, "ui.click", json!({"label": words})).await;
        assert_eq!(clicked["target"], entry["id"]);
        assert!(clicked["focused"].is_string(), "{clicked}");
    });
}

#[test]
fn one_session_serves_mygo_and_the_bus_at_once() {
    let dir = std::env::temp_dir().join(format!("wayrig-bus-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("app.sock");
    let hosted = Hosted::fixture(&["--mygo-socket", socket.to_str().unwrap()]);
    let app = hosted.first_name();
    let mut mygo = support::ProtocolClient::connect(&socket);
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        let tree = c
            .tree(&app, json!({"role": "TextInput", "label": "Second"}))
            .await;
        let second = nodes(&tree).first().expect("the Second field").clone();
        c.ok(&app, "ui.click", json!({"id": second["id"]})).await;
        c.ok(&app, "ui.type", json!({"text": "typed on the Bus"}))
            .await;

        // MyGo reads what the Bus typed: one session, one set of ids.
        let window = mygo.first_window();
        let read = mygo.call(wayrig_proto::mygo::Call::Tree {
            window: window["id"].as_u64(),
        });
        let field = read["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == second["id"])
            .unwrap_or_else(|| panic!("the Bus's id {} over MyGo: {read}", second["id"]));
        assert_eq!(field["value"], "typed on the Bus");
    });
    drop(hosted);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn menus_are_listed_opened_to_a_row_reported_and_closed_over_the_bus() {
    let hosted = Hosted::fixture(&["--bus-name", "fx"]);
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "menus").await;
        c.tree(&app, json!({})).await;
        let listed = c.ok(&app, "ui.menu.list", json!({})).await;
        let menus = listed["menus"].as_array().unwrap();
        let titles: Vec<&str> = menus.iter().map(|m| m["title"].as_str().unwrap()).collect();
        assert_eq!(titles, ["File", "Edit"]);
        let file = menus[0]["rows"].as_array().unwrap();
        let disabled = file.iter().find(|r| r["label"] == "Disabled Item").unwrap();
        assert_eq!(disabled["enabled"], false);
        let recent = file.iter().find(|r| r["label"] == "Recent").unwrap();
        assert_eq!(recent["id"], Value::Null, "a submenu row has no id");
        assert_eq!(recent["submenu"][0]["label"], "one.txt");

        assert_eq!(
            c.ok(&app, "ui.menu", json!({})).await,
            json!({"menu": null})
        );
        let refused = c
            .refused(
                &app,
                "ui.menu.open",
                json!({"path": ["File", "Disabled Item"]}),
            )
            .await;
        assert_eq!(refused["error_code"], "ARGUMENT");
        assert!(refused["message"].as_str().unwrap().contains("disabled"));
        let refused = c.refused(&app, "ui.menu.open", json!({})).await;
        assert_eq!(refused["error_code"], "ARGUMENT");

        // Case and a trailing ellipsis do not matter.
        let open = c
            .ok(
                &app,
                "ui.menu.open",
                json!({"path": ["file", "Recent…", "one.txt"]}),
            )
            .await;
        assert_eq!(open["menu"]["menu"], "File");
        assert_eq!(open["menu"]["path"], json!(["Recent", "one.txt"]));
        assert_eq!(open["menu"]["depth"], 2);
        assert_eq!(c.ok(&app, "ui.menu", json!({})).await, open);
        assert_eq!(
            c.ok(&app, "ui.menu.close", json!({})).await,
            json!({"closed": true})
        );
        assert_eq!(
            c.ok(&app, "ui.menu.close", json!({})).await,
            json!({"closed": false})
        );
    });
}

#[test]
fn pointer_press_and_release_click_and_scroll_follows_eguis_sign() {
    let hosted = Hosted::fixture(&["--bus-name", "fx"]);
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "hand").await;
        let tree = c.tree(&app, json!({"label": "Press", "exact": true})).await;
        let press = nodes(&tree)
            .iter()
            .find(|n| n["role"] == "Button")
            .expect("the Press button");
        let r: Vec<f64> = press["rect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let (x, y) = ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0);
        // Press and release as two requests, as a hand that may drag.
        let pressed = c
            .ok(
                &app,
                "ui.pointer",
                json!({"x": x, "y": y, "action": "press"}),
            )
            .await;
        assert_eq!(pressed["pointer"], json!([x, y]));
        assert!(!hosted.printed(r#""ev": "clicked""#), "not on press alone");
        c.ok(
            &app,
            "ui.pointer",
            json!({"x": x, "y": y, "action": "release"}),
        )
        .await;
        hosted.stdout.wait_for(r#""ev": "clicked""#, "the click");
        let refused = c
            .refused(
                &app,
                "ui.pointer",
                json!({"x": x, "y": y, "action": "hover"}),
            )
            .await;
        assert_eq!(refused["error_code"], "ARGUMENT");

        // The list scrolls down for a negative dy: what was below shows.
        let list = c.tree(&app, json!({"role": "List"})).await;
        let rows = nodes(&list)
            .iter()
            .find(|n| n["rect"].is_array())
            .expect("the list");
        let r: Vec<f64> = rows["rect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let (x, y) = ((r[0] + r[2]) / 2.0, (r[1] + 60.0).min(r[3] - 5.0));
        c.ok(&app, "ui.scroll", json!({"x": x, "y": y, "dy": -60}))
            .await;
        let scrolled = hosted
            .stdout
            .wait_for(r#""ev": "scroll""#, "the list's scroll");
        let down = serde_json::from_str::<Value>(&scrolled).unwrap()["value"]
            .as_f64()
            .unwrap();
        assert!(down > 0.0, "scrolled to {down}");
    });
}

/// The permission bits of a file or directory, links not followed.
fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode()
        & 0o777
}

#[test]
fn ui_capture_writes_a_0600_png_where_captures_are_confined_and_refuses_the_rest() {
    let xdg = std::env::temp_dir().join(format!("wayrig-bus-captures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&xdg);
    std::fs::create_dir_all(&xdg).unwrap();
    let hosted = Hosted::fixture_with_env(&["--bus-name", "fx"], &[("XDG_RUNTIME_DIR", &xdg)]);
    let app = hosted.first_name();
    let captures = xdg.join("fx/captures");
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "shots").await;
        c.tree(&app, json!({})).await;

        let shot = c
            .ok(&app, "ui.capture", json!({"name": "settings.png"}))
            .await;
        let path = PathBuf::from(shot["path"].as_str().expect("a path"));
        assert_eq!(path, captures.join("settings.png"));
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&xdg.join("fx")), 0o700);
        assert_eq!(mode(&captures), 0o700);
        let image = support::Image::from_png(&std::fs::read(&path).unwrap());
        assert_eq!(
            json!([image.width, image.height]),
            json!([shot["width"], shot["height"]])
        );
        let state = c.ok(&app, "window.state", json!({})).await;
        assert_eq!(
            state["size"],
            json!([shot["width"], shot["height"]]),
            "at scale 1"
        );
        assert!(image.distinct_colours() > 2, "the window's widgets show");

        // Without a name, a fresh capture-<pid>-<n>.png.
        let fresh = c.ok(&app, "ui.capture", json!({})).await;
        let fresh = PathBuf::from(fresh["path"].as_str().unwrap());
        assert_eq!(fresh.parent(), Some(captures.as_path()));
        let name = fresh.file_name().unwrap().to_str().unwrap();
        let numbers: Vec<&str> = name
            .strip_prefix("capture-")
            .and_then(|n| n.strip_suffix(".png"))
            .map(|n| n.split('-').collect())
            .unwrap_or_default();
        assert!(
            numbers.len() == 2 && numbers.iter().all(|n| n.parse::<u64>().is_ok()),
            "{name}"
        );
        assert_eq!(mode(&fresh), 0o600);

        // Names that are paths, hidden or taken are the caller's to fix.
        for name in [
            "a/b.png",
            "../up.png",
            ".hidden.png",
            "settings.png",
            "shot.jpg",
        ] {
            let refused = c.refused(&app, "ui.capture", json!({"name": name})).await;
            assert_eq!(refused["error_code"], "ARGUMENT", "{name}: {refused}");
        }
        assert!(!xdg.join("fx/up.png").exists());

        // A captures directory that is a link is refused, and nothing is
        // written where it points.
        let elsewhere = xdg.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::remove_dir_all(&captures).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &captures).unwrap();
        let refused = c
            .refused(&app, "ui.capture", json!({"name": "linked.png"}))
            .await;
        assert_eq!(refused["error_code"], "CAPTURE", "{refused}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    });
    drop(hosted);
    let _ = std::fs::remove_dir_all(&xdg);
}

/// A stand-in for MixOS's broker `noded` (not packaged here): it takes
/// `noded.register` (a name held by another connection is NAME_TAKEN) and
/// forwards a request to the name's holder under an id of its own, giving
/// the answer back to the caller under the caller's id.
struct Noded {
    port: u16,
    url: String,
    /// The names registered with it, in order.
    registered: Arc<Lines>,
    /// Each answer it matched to a forwarded request: "<its id> <command>".
    answered: Arc<Lines>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct NodedState {
    /// Who holds each name, by connection.
    owners: HashMap<String, u64>,
    /// Where each connection's frames are written.
    conns: HashMap<u64, mpsc::UnboundedSender<String>>,
    /// Forwarded requests by the broker's id: the caller and its id.
    pending: HashMap<String, (mpsc::UnboundedSender<String>, String)>,
    next_id: u64,
}

impl Noded {
    /// Listen on `127.0.0.1:port` (0 picks one).
    async fn start(port: u16) -> Noded {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the broker listens");
        let port = listener.local_addr().unwrap().port();
        let registered = Arc::new(Lines::default());
        let answered = Arc::new(Lines::default());
        let (reg, ans) = (registered.clone(), answered.clone());
        let task = tokio::spawn(async move {
            let state = Arc::new(Mutex::new(NodedState::default()));
            // Dropped with the task: every connection ends with the broker.
            let mut conns = tokio::task::JoinSet::new();
            for conn in 1.. {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (state, reg, ans) = (state.clone(), reg.clone(), ans.clone());
                conns.spawn(noded_connection(stream, conn, state, reg, ans));
            }
        });
        Noded {
            port,
            url: format!("ws://127.0.0.1:{port}/ws"),
            registered,
            answered,
            task,
        }
    }

    /// Stop listening and drop every connection; returns once they are closed.
    async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

async fn noded_connection(
    stream: TcpStream,
    conn: u64,
    state: Arc<Mutex<NodedState>>,
    registered: Arc<Lines>,
    answered: Arc<Lines>,
) {
    let Ok(ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    state.lock().unwrap().conns.insert(conn, tx.clone());
    loop {
        tokio::select! {
            out = rx.recv() => {
                let Some(text) = out else { break };
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            message = source.next() => {
                let Some(Ok(message)) = message else { break };
                let Message::Text(text) = message else { continue };
                let frame = Frame::parse_strict(text.as_str()).expect("Wayrig writes strict ABP");
                noded_frame(frame, conn, &tx, &state, &registered, &answered);
            }
        }
    }
    let mut state = state.lock().unwrap();
    state.conns.remove(&conn);
    state.owners.retain(|_, c| *c != conn);
}

fn noded_frame(
    frame: Frame,
    conn: u64,
    tx: &mpsc::UnboundedSender<String>,
    state: &Mutex<NodedState>,
    registered: &Lines,
    answered: &Lines,
) {
    // A heartbeat is answered with one, as the Bus's brokers do.
    if frame.is_heartbeat() {
        let _ = tx.send(Frame::heartbeat().serialize());
        return;
    }
    let mut state = state.lock().unwrap();
    if frame.kind() == Some(wayrig_proto::abp::Kind::Response) {
        let id = frame.id().unwrap_or_default().to_string();
        let Some((caller, caller_id)) = state.pending.remove(&id) else {
            answered.push(format!("unmatched {id}"));
            return;
        };
        answered.push(format!("{id} {}", frame.command().unwrap_or_default()));
        let _ = caller.send(frame.with("id", caller_id).serialize());
        return;
    }
    let to = frame.to().unwrap_or_default().to_string();
    if to == "noded" {
        let name = frame.from().unwrap_or_default().to_string();
        let answer = match state.owners.get(&name) {
            Some(holder) if *holder != conn => Frame::response_to(
                &frame,
                Rc::Error,
                json!({
                    "schema": "noded.registration-rejection.v1",
                    "error_code": "NAME_TAKEN",
                    "message": format!("{name} is registered already"),
                })
                .to_string(),
            ),
            _ => {
                state.owners.insert(name.clone(), conn);
                registered.push(name);
                Frame::response_to(&frame, Rc::Ok, "{}")
            }
        };
        let _ = tx.send(answer.serialize());
        return;
    }
    let holder = state
        .owners
        .get(&to)
        .and_then(|c| state.conns.get(c))
        .cloned();
    let Some(holder) = holder else {
        let refusal = wayrig_proto::abp::Refusal::new("UNKNOWN_SERVICE", format!("no {to}"));
        let _ = tx.send(Frame::refusal_to(&frame, &refusal).serialize());
        return;
    };
    state.next_id += 1;
    let id = format!("noded-{}", 1000 + state.next_id);
    let caller_id = frame.id().unwrap_or_default().to_string();
    state.pending.insert(id.clone(), (tx.clone(), caller_id));
    let _ = holder.send(frame.with("id", id).serialize());
}

/// A forwarded `window.state` and `ui.tree` for `name` through the broker;
/// the answers carried the broker's ids back.
async fn drive_through(noded: &Noded, name: &str) {
    let mut c = Client::connect(&noded.url, "probe").await;
    // The name is held from the start: BUSY until the app shows (read again).
    let tree = c.tree(name, json!({"label": "Press", "exact": true})).await;
    assert!(nodes(&tree).iter().any(|n| n["role"] == "Button"), "{tree}");
    let state = c.ok(name, "window.state", json!({})).await;
    assert!(state["size"][0].as_i64() > Some(0), "{state}");
    let matched = noded.answered.wait_for(
        &format!("{name}.window.state"),
        "the answer under the broker's id",
    );
    assert!(matched.starts_with("noded-"), "{matched}");
    assert!(
        !noded.answered.contains("unmatched"),
        "answers carry the broker's ids"
    );
}

#[test]
fn bus_connect_registers_with_a_broker_and_again_after_it_restarts() {
    let rt = support::runtime();
    let noded = rt.block_on(Noded::start(0));
    let mut hosted = Hosted::connected(&noded.url, &["--bus-name", "fx"]);
    noded
        .registered
        .wait_for("fx", "fx's registration with the broker");
    hosted
        .stderr
        .wait_for("wayrig: bus name fx for pid", "fx's Bus name");
    rt.block_on(drive_through(&noded, "fx"));

    // The broker goes away and comes back on the same port: Wayrig registers
    // again, and nothing else stopped.
    let port = noded.port;
    rt.block_on(noded.stop());
    hosted.stderr.wait_for(
        "wayrig: bus broker ws://",
        "Wayrig telling the broker went away",
    );
    let noded = rt.block_on(Noded::start(port));
    noded
        .registered
        .wait_for("fx", "fx's registration after the restart");
    rt.block_on(drive_through(&noded, "fx"));
    assert!(hosted.child.try_wait().unwrap().is_none(), "wayrig runs on");
    assert_eq!(hosted.names(), ["fx", "fx"]);
}

#[test]
fn a_name_taken_at_the_broker_is_reported_and_wayrig_runs_on() {
    let rt = support::runtime();
    let noded = rt.block_on(Noded::start(0));
    let squatter = rt.block_on(async {
        let mut squatter = Client::connect(&noded.url, "fx").await;
        let reg = squatter.request("noded", "noded.register", json!({})).await;
        assert_eq!(reg.rc(), Some(Rc::Ok));
        squatter
    });
    let mut hosted = Hosted::connected(&noded.url, &["--bus-name", "fx"]);
    let refused = hosted
        .stderr
        .wait_for("refused the name fx", "the broker's refusal of fx");
    assert!(refused.contains("NAME_TAKEN"), "{refused}");
    assert!(hosted.child.try_wait().unwrap().is_none(), "wayrig runs on");
    assert!(hosted.names().is_empty(), "fx stays off");

    // Still serving: a fresh broker without the squatter takes fx from it.
    drop(squatter);
    let port = noded.port;
    rt.block_on(noded.stop());
    let noded = rt.block_on(Noded::start(port));
    noded
        .registered
        .wait_for("fx", "fx's registration with a fresh broker");
    rt.block_on(drive_through(&noded, "fx"));
}

#[test]
fn bus_connect_excludes_bus_listen_and_takes_only_ws_urls() {
    for (args, says) in [
        (
            &[
                "--bus-connect",
                "ws://127.0.0.1:1/ws",
                "--bus-listen",
                "127.0.0.1:0",
            ][..],
            "cannot be used with",
        ),
        (
            &["--bus-connect", "http://127.0.0.1:1/ws"][..],
            "give ws://HOST:PORT/ws",
        ),
        (&["--bus-name", "fx"][..], "--bus"),
    ] {
        let out = Command::new(support::shipped("wayrig"))
            .arg("run")
            .args(args)
            .args(["--", "/bin/true"])
            .stdin(Stdio::null())
            .output()
            .expect("wayrig runs");
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// The body of an answer, as JSON.
fn body(frame: &Frame) -> Value {
    serde_json::from_str(&frame.body).expect("a JSON body")
}

/// The answer to the request with this id.
fn answer_of<'a>(answers: &'a [Frame], id: &str) -> &'a Frame {
    answers
        .iter()
        .find(|a| a.id() == Some(id))
        .unwrap_or_else(|| panic!("no answer to {id}"))
}

#[test]
fn bus_input_runs_in_order_32_deep_and_is_settled_when_hidden_or_closing() {
    // Hidden windows throttled: the queued input must still drain.
    let hosted = Hosted::fixture(&["--bus-name", "fx", "--throttle-hidden"]);
    let app = hosted.first_name();
    let pid = app_pid(&hosted);
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        let tree = c.tree(&app, json!({})).await;
        let first = nodes(&tree)
            .iter()
            .find(|n| n["role"] == "TextInput" && n["label"] == "First")
            .unwrap_or_else(|| panic!("the First field in {tree}"))
            .clone();
        c.ok(&app, "ui.click", json!({"id": first["id"]})).await;

        // Type, then read, sent together: the read waits for the typing.
        let typed = c.send(&app, "fx.ui.type", json!({"text": "queued"})).await;
        let read = c
            .send(&app, "fx.ui.tree", json!({"role": "TextInput"}))
            .await;
        let got = c.answers(&[typed.clone(), read.clone()]).await;
        assert_eq!(got[0].id(), Some(typed.as_str()), "answers come in order");
        let field = nodes(&body(answer_of(&got, &read)))
            .iter()
            .find(|n| n["id"] == first["id"])
            .cloned()
            .unwrap();
        assert_eq!(field["value"], "queued", "the read saw the typed text");

        // 40 inputs at once: 32 are held (the running one among them), 8 refused.
        let mut ids = Vec::new();
        for _ in 0..40 {
            ids.push(c.feed(&app, "fx.ui.type", json!({"text": "x"})).await);
        }
        c.ws.flush().await.expect("sent");
        let got = c.answers(&ids).await;
        let busy: Vec<Value> = got
            .iter()
            .filter(|a| a.rc() == Some(Rc::Error))
            .map(body)
            .collect();
        assert_eq!(busy.len(), 8, "{busy:?}");
        assert!(busy.iter().all(|b| b["error_code"] == "BUSY"
            && b["message"].as_str().unwrap().contains("32 input requests")));
        let after = c.tree(&app, json!({"role": "TextInput"})).await;
        let field = nodes(&after)
            .iter()
            .find(|n| n["id"] == first["id"])
            .cloned()
            .unwrap();
        assert_eq!(
            field["value"],
            format!("queued{}", "x".repeat(32)),
            "every accepted input ran, once"
        );

        // A traced click: one pass per frame it ran, with what the seat sent.
        let traced = c
            .ok(&app, "ui.click", json!({"label": "Press", "trace": true}))
            .await;
        let passes = traced["passes"].as_array().expect("passes");
        assert_eq!(
            passes.len(),
            2,
            "the move, then the press and release: {traced}"
        );
        assert!(
            passes[0]["events"][0]["PointerMoved"].is_array(),
            "{traced}"
        );
        let presses = passes[1]["events"].as_array().unwrap();
        assert_eq!(presses[0]["PointerButton"]["pressed"], true);
        assert_eq!(presses[1]["PointerButton"]["pressed"], false);
        assert_eq!(presses[0]["PointerButton"]["button"], "primary");
        assert!(passes[1]["time"].as_f64() >= passes[0]["time"].as_f64());
        assert_eq!(passes[1]["down"], false);
        assert_eq!(passes[1]["pointer"], traced["at"]);
        assert!(passes[1]["hit"].is_string(), "{traced}");
        // The compositor's verdicts: the button was hovered, then clicked.
        let target = &traced["target"];
        assert_eq!(passes[0]["hovered"], json!([target]), "{traced}");
        assert!(passes[0]["contains_pointer"]
            .as_array()
            .unwrap()
            .contains(target));
        assert_eq!(passes[0]["clicked"], json!([]));
        assert_eq!(passes[1]["clicked"], json!([target]), "{traced}");
        assert_eq!(passes[1]["no_longer_a_click"], false);
        let plain = c.ok(&app, "ui.click", json!({"label": "Press"})).await;
        assert!(plain.get("passes").is_none(), "no trace unless asked");
        let clicks_before = clicked_count(&hosted);

        // Minimize with clicks queued: they are settled at once (cancelled, or
        // answered if only their redraw was left); none leaves a button down.
        let mut clicks = Vec::new();
        for _ in 0..6 {
            clicks.push(c.feed(&app, "fx.ui.click", json!({"label": "Press"})).await);
        }
        let minimize = c
            .feed(&app, "fx.window", json!({"action": "minimize"}))
            .await;
        c.ws.flush().await.expect("sent");
        let mut all = clicks.clone();
        all.push(minimize.clone());
        let got = c.answers(&all).await;
        let minimized = body(answer_of(&got, &minimize));
        assert_eq!(minimized["minimized"], true, "{minimized}");
        let answered = clicks
            .iter()
            .filter(|id| answer_of(&got, id).rc() == Some(Rc::Ok))
            .count();
        let cancelled = clicks
            .iter()
            .map(|id| answer_of(&got, id))
            .filter(|a| a.rc() == Some(Rc::Error))
            .inspect(|a| assert_eq!(body(a)["error_code"], "CANCELLED", "{}", a.body))
            .count();
        assert!(
            cancelled >= 4,
            "queued clicks were cancelled: {answered} answered"
        );
        let hidden = c.refused(&app, "ui.click", json!({"label": "Press"})).await;
        assert_eq!(hidden["error_code"], "BUSY", "new input to a hidden window");
        assert!(hidden["message"].as_str().unwrap().contains("minimized"));
        c.ok(&app, "window", json!({"action": "restore"})).await;
        // Minimize and type sent back to back: the type came after the
        // minimize, so it is refused BUSY, every time.
        for _ in 0..3 {
            let minimize = c
                .feed(&app, "fx.window", json!({"action": "minimize"}))
                .await;
            let typed = c.feed(&app, "fx.ui.type", json!({"text": "x"})).await;
            c.ws.flush().await.expect("sent");
            let got = c.answers(&[minimize.clone(), typed.clone()]).await;
            let done = answer_of(&got, &minimize);
            assert_eq!(body(done)["minimized"], true, "{}", done.body);
            let refused = answer_of(&got, &typed);
            assert_eq!(body(refused)["error_code"], "BUSY", "{}", refused.body);
            c.ok(&app, "window", json!({"action": "restore"})).await;
        }
        let moved = c
            .ok(
                &app,
                "ui.pointer",
                json!({"x": 5, "y": 5, "action": "move", "trace": true}),
            )
            .await;
        assert_eq!(moved["passes"][0]["down"], false, "no button left down");
        // A cancelled press never completed a click.
        c.ok(&app, "ui.click", json!({"id": first["id"]})).await;
        assert_eq!(
            clicked_count(&hosted),
            clicks_before + answered,
            "only the answered clicks clicked"
        );

        // The app dies mid-type: the typing answers `closing` and
        // `interrupted`, queued input is CANCELLED, a queued read BUSY.
        c.ok(&app, "ui.key", json!({"key": "A", "modifiers": ["ctrl"]}))
            .await;
        c.ok(&app, "ui.type", json!({"text": "z"})).await;
        let long = "a\n".repeat(60);
        let typing = c.send(&app, "fx.ui.type", json!({"text": long})).await;
        let queued = c.send(&app, "fx.ui.type", json!({"text": "never"})).await;
        let read = c.send(&app, "fx.window.state", json!({})).await;
        hosted
            .stdout
            .wait_for(r#""text": "za""#, "the typing under way");
        // SAFETY: kill(2) on the app wayrig started for this test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let got = c
            .answers(&[typing.clone(), queued.clone(), read.clone()])
            .await;
        let typing = answer_of(&got, &typing);
        assert_eq!(typing.rc(), Some(Rc::Ok), "{}", typing.body);
        assert_eq!(body(typing)["closing"], true, "{}", typing.body);
        assert_eq!(body(typing)["interrupted"], true, "{}", typing.body);
        let queued = answer_of(&got, &queued);
        assert_eq!(body(queued)["error_code"], "CANCELLED", "{}", queued.body);
        let read = answer_of(&got, &read);
        assert_eq!(body(read)["error_code"], "BUSY", "{}", read.body);
    });
}

#[test]
fn an_app_that_exited_is_let_go_and_its_name_says_so() {
    // Wayrig outlives its app here, as it does beside other apps.
    let hosted = Hosted::fixture(&["--bus-name", "fx", "--keep-running"]);
    let app = hosted.first_name();
    let pid = app_pid(&hosted);
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        c.ok(&app, "window.state", json!({})).await;
        // SAFETY: kill(2) on the app wayrig started for this test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        // The window goes first (BUSY: it shows none), then the process's
        // end is noticed and the name answers that the app exited.
        let noticed_by = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let answer = c
                .request(&app, &format!("{app}.window.state"), json!({}))
                .await;
            let said: Value = serde_json::from_str(&answer.body).expect("a JSON answer");
            match (answer.rc(), said["error_code"].as_str()) {
                (Some(Rc::Error), Some("UNAVAILABLE")) => {
                    let message = said["message"].as_str().unwrap_or_default();
                    assert!(message.contains("has exited"), "{said}");
                    break;
                }
                // Its window still shows, or shows no more.
                (Some(Rc::Ok), _) | (Some(Rc::Error), Some("BUSY")) => {}
                _ => panic!("an answer of a closing app: {}", answer.body),
            }
            assert!(
                std::time::Instant::now() < noticed_by,
                "the app's end went unnoticed: {said}"
            );
        }
    });
}

/// The pid of the app wayrig named on the Bus, as it prints it.
fn app_pid(hosted: &Hosted) -> i32 {
    hosted
        .stderr
        .wait_for(BUS_NAME_LINE, "the app's pid")
        .split(" for pid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .expect("wayrig prints the app's pid")
}

/// How many clicks the fixture has reported.
fn clicked_count(hosted: &Hosted) -> usize {
    hosted
        .stdout
        .lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(r#""ev": "clicked""#))
        .count()
}

/// A node of a tree by role and label.
fn node<'a>(tree: &'a Value, role: &str, label: &str) -> &'a Value {
    nodes(tree)
        .iter()
        .find(|n| n["role"] == role && n["label"] == label)
        .unwrap_or_else(|| panic!("no {role} {label:?} in {tree}"))
}

/// The egui fixture's status line, as its tree reports it.
fn egui_status(tree: &Value) -> Option<String> {
    nodes(tree)
        .iter()
        .filter_map(|n| n["label"].as_str())
        .find(|l| l.starts_with("presses "))
        .map(str::to_string)
}

#[test]
fn every_drive_verb_answers_for_an_egui_app() {
    let fixture = support::workspace_binary("egui-fixture");
    let xdg = std::env::temp_dir().join(format!("wayrig-bus-egui-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&xdg);
    std::fs::create_dir_all(&xdg).unwrap();
    let hosted = Hosted::start_with_env(
        &["--bus-name", "eg"],
        &[fixture.to_str().unwrap()],
        &[("XDG_RUNTIME_DIR", &xdg)],
    );
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "agent").await;
        // The name is held from the start: BUSY until the app's first frame.
        c.tree(&app, json!({})).await;
        let help = c.request(&app, "HELP", json!({})).await;
        assert_eq!(help.rc(), Some(Rc::Ok), "{}", help.body);

        // AccessKit's tree, under AccessKit's role names, once egui has laid
        // out its first frame (the field's hint comes with it).
        let tree = c
            .tree_until(&app, json!({}), |t| {
                egui_status(t).is_some() && nodes(t).iter().any(|n| n["placeholder"] == "Your name")
            })
            .await;
        assert_eq!(
            egui_status(&tree).unwrap(),
            r#"presses 0, enabled false, name "", amount 0, menu "", wrap false"#
        );
        node(&tree, "CheckBox", "Enabled");
        node(&tree, "Slider", "Amount");
        let field = nodes(&tree)
            .iter()
            .find(|n| n["role"] == "TextInput")
            .unwrap_or_else(|| panic!("the name field in {tree}"))
            .clone();
        assert_eq!(field["placeholder"], "Your name", "{field}");

        // Click by label, then read the effect.
        let press = node(&tree, "Button", "Press").clone();
        let clicked = c.ok(&app, "ui.click", json!({"label": "Press"})).await;
        assert_eq!(clicked["target"], press["id"]);
        c.tree_until(&app, json!({}), |t| {
            egui_status(t).is_some_and(|s| s.starts_with("presses 1,"))
        })
        .await;

        // Click by placeholder, type, select all with `command`, type over
        // it; the newline presses Enter, which ends the edit.
        let focused = c.ok(&app, "ui.click", json!({"label": "Your name"})).await;
        assert_eq!(focused["target"], field["id"], "the placeholder matched");
        // AccessKit may report the focus on a node inside the field.
        let editing = focused["focused"].clone();
        assert!(editing.is_string(), "the field took focus: {focused}");
        c.ok(&app, "ui.type", json!({"text": "Ada"})).await;
        c.ok(
            &app,
            "ui.key",
            json!({"key": "A", "modifiers": ["command"]}),
        )
        .await;
        let typed = c
            .ok(&app, "ui.type", json!({"text": "Grüße\n", "trace": true}))
            .await;
        let passes = typed["passes"].as_array().unwrap();
        assert_eq!(passes.len(), 2, "the text, then Enter: {typed}");
        assert_eq!(passes[0]["events"][0]["Text"], "Grüße");
        assert_eq!(passes[1]["events"][0]["Key"]["key"], "Enter");
        c.tree_until(&app, json!({}), |t| {
            egui_status(t).is_some_and(|s| s.contains(r#"name "Grüße""#))
        })
        .await;

        // The check box, by id as an integer.
        let enabled = node(&tree, "CheckBox", "Enabled")["id"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap();
        c.ok(&app, "ui.click", json!({"id": enabled})).await;
        let checked = c
            .tree_until(&app, json!({"role": "CheckBox"}), |t| {
                node(t, "CheckBox", "Enabled")["checked"] == "true"
            })
            .await;
        assert_eq!(node(&checked, "CheckBox", "Enabled")["enabled"], true);

        // Press and release as two requests click too.
        let r: Vec<f64> = press["rect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let (x, y) = ((r[0] + r[2]) / 2.0, (r[1] + r[3]) / 2.0);
        for action in ["press", "release"] {
            c.ok(
                &app,
                "ui.pointer",
                json!({"x": x, "y": y, "action": action}),
            )
            .await;
        }
        c.tree_until(&app, json!({}), |t| {
            egui_status(t).is_some_and(|s| s.starts_with("presses 2,"))
        })
        .await;
        let scrolled = c
            .ok(
                &app,
                "ui.scroll",
                json!({"x": x, "y": y, "dy": 40, "trace": true}),
            )
            .await;
        let wheel = &scrolled["passes"][0]["events"][1]["MouseWheel"];
        assert_eq!(wheel["delta"][1], 1.0 * 40.0, "egui's sign: {scrolled}");
        assert_eq!(wheel["unit"], "Point", "in points, as asked: {scrolled}");

        // Capture, window state and window commands.
        let shot = c.ok(&app, "ui.capture", json!({"name": "egui.png"})).await;
        assert_eq!(
            PathBuf::from(shot["path"].as_str().unwrap()),
            xdg.join("eg/captures/egui.png")
        );
        let state = c.ok(&app, "window.state", json!({})).await;
        assert_eq!(state["size"], json!([shot["width"], shot["height"]]));
        let maximized = c.ok(&app, "window", json!({"action": "maximize"})).await;
        assert_eq!(maximized["maximized"], true, "{maximized}");
        let restored = c.ok(&app, "window", json!({"action": "restore"})).await;
        assert_eq!(restored["maximized"], false, "{restored}");

        // egui draws its menus inside its window: none is open.
        let menu = c.ok(&app, "ui.menu", json!({})).await;
        assert_eq!(menu["menu"], Value::Null);
    });
    let _ = std::fs::remove_dir_all(&xdg);
}

#[test]
fn egui_menus_drawn_in_the_window_are_listed_opened_run_and_closed() {
    let fixture = support::workspace_binary("egui-fixture");
    let hosted = Hosted::start(&["--bus-name", "eg"], &[fixture.to_str().unwrap()]);
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "agent").await;
        c.tree_until(&app, json!({}), |t| egui_status(t).is_some())
            .await;

        // Every menu as the bar draws it, read by opening each in turn: the
        // submenu found by hovering its row, the shortcut apart from the
        // label, the disabled row and the check row as they are.
        let list = c.ok(&app, "ui.menu.list", json!({})).await;
        let menus = list["menus"].as_array().unwrap();
        let titles: Vec<&str> = menus.iter().map(|m| m["title"].as_str().unwrap()).collect();
        assert_eq!(titles, ["File", "Edit"], "{list}");
        let file: Vec<&str> = menus[0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap())
            .collect();
        assert_eq!(file, ["New", "Open…", "Recent", "Quit"], "{list}");
        let recent = &menus[0]["rows"][2];
        assert_eq!(
            recent["id"],
            Value::Null,
            "a submenu row has no id: {recent}"
        );
        let recent_rows: Vec<&str> = recent["submenu"]
            .as_array()
            .unwrap_or_else(|| panic!("Recent opens a submenu: {list}"))
            .iter()
            .map(|r| r["label"].as_str().unwrap())
            .collect();
        assert_eq!(recent_rows, ["notes.txt", "todo.txt"]);
        assert_eq!(menus[0]["rows"][3]["shortcut"], "Ctrl+Q", "{list}");
        assert_eq!(menus[1]["rows"][0]["label"], "Undo");
        assert_eq!(menus[1]["rows"][0]["enabled"], false);
        assert_eq!(menus[1]["rows"][1]["label"], "Wrap lines");
        assert_eq!(menus[1]["rows"][1]["checked"], "false");
        // Listing left every menu closed.
        assert_eq!(c.ok(&app, "ui.menu", json!({})).await["menu"], Value::Null);

        // A click on a title opens its menu, and the answer says so.
        let clicked = c.ok(&app, "ui.click", json!({"label": "File"})).await;
        assert_eq!(clicked["menu"]["menu"], "File", "{clicked}");
        assert_eq!(clicked["menu"]["depth"], 1, "{clicked}");
        let closed = c.ok(&app, "ui.menu.close", json!({})).await;
        assert_eq!(closed["closed"], true);
        assert_eq!(c.ok(&app, "ui.menu", json!({})).await["menu"], Value::Null);
        let again = c.ok(&app, "ui.menu.close", json!({})).await;
        assert_eq!(again["closed"], false);

        // Open down a path (case and a trailing "…" ignored): the last row is
        // highlighted without running, and Enter then runs it.
        let opened = c
            .ok(
                &app,
                "ui.menu.open",
                json!({"path": ["file", "recent", "TODO.TXT"]}),
            )
            .await;
        assert_eq!(
            opened["menu"],
            json!({"menu": "File", "path": ["Recent", "todo.txt"], "depth": 2})
        );
        let tree = c.ok(&app, "ui.tree", json!({})).await;
        assert_eq!(
            egui_status(&tree).unwrap(),
            r#"presses 0, enabled false, name "", amount 0, menu "", wrap false"#,
            "opening ran nothing"
        );
        c.ok(&app, "ui.key", json!({"key": "Enter"})).await;
        c.tree_until(&app, json!({}), |t| {
            egui_status(t).is_some_and(|s| s.contains(r#"menu "recent todo.txt""#))
        })
        .await;
        c.ok(&app, "ui.menu.close", json!({})).await;
        let opened = c.ok(&app, "ui.menu.open", json!({"menu": "Edit"})).await;
        assert_eq!(opened["menu"]["menu"], "Edit", "{opened}");

        // A row clicked in an open menu runs and closes it, as a person's click does.
        let wrap = c.ok(&app, "ui.click", json!({"label": "Wrap lines"})).await;
        assert_eq!(wrap["menu"], Value::Null, "{wrap}");
        c.tree_until(&app, json!({}), |t| {
            egui_status(t).is_some_and(|s| s.ends_with("wrap true"))
        })
        .await;

        // Refusals: a title or row the menus lack, a disabled row, a row
        // before the last that opens no submenu; none leaves a menu open.
        for (path, says) in [
            (json!(["Help"]), "no menu"),
            (json!(["File", "Close"]), "no row"),
            (json!(["Edit", "Undo"]), "disabled"),
            (json!(["File", "New", "Other"]), "opens no submenu"),
        ] {
            let refused = c.refused(&app, "ui.menu.open", json!({"path": path})).await;
            assert_eq!(refused["error_code"], "ARGUMENT", "{path}: {refused}");
            let message = refused["message"].as_str().unwrap();
            assert!(message.contains(says), "{path}: {message}");
            assert_eq!(c.ok(&app, "ui.menu", json!({})).await["menu"], Value::Null);
        }
    });
}

/// `ui.click` by label checks where it points as every face's press does:
/// never on a popup over the node, never on a node of a hidden stack page.
#[test]
fn ui_click_never_lands_on_a_popup_over_its_node_or_on_a_hidden_page() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let hosted = Hosted::start(
        &["--bus-name", "keys"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        c.tree(&app, json!({"label": "Mode"})).await;
        // It shows no menu bar: no menus to list, and that is no error.
        let listed = c.ok(&app, "ui.menu.list", json!({})).await;
        assert_eq!(listed["menus"], json!([]), "{listed}");
        // The click's answer has the menu it opened, as ui.menu reports it.
        let opened = c.ok(&app, "ui.click", json!({"label": "Mode"})).await;
        assert_eq!(opened["menu"]["menu"], "Mode", "{opened}");
        let menu = c.ok(&app, "ui.menu", json!({})).await;
        assert_eq!(menu["menu"], opened["menu"]);
        // The mode menu lies over "1" now.
        let covered = c.refused(&app, "ui.click", json!({"label": "1"})).await;
        assert_eq!(covered["error_code"], "ARGUMENT", "{covered}");
        c.ok(&app, "ui.click", json!({"label": "Advanced"})).await;
        hosted
            .stdout
            .wait_for(r#""mode": "advanced""#, "the switch");
        // Basic's "1" kept its place, where Advanced's "7" shows now.
        let hidden = c.refused(&app, "ui.click", json!({"label": "1"})).await;
        assert_eq!(hidden["error_code"], "ARGUMENT", "{hidden}");
        c.ok(&app, "ui.click", json!({"label": "7"})).await;
        hosted.stdout.wait_for(r#""key": "7""#, "the key shown");
    });
    assert!(
        !hosted.printed(r#""key": "1""#),
        "no press reached a covered or hidden key"
    );
}

#[test]
fn ui_click_by_a_fields_label_focuses_the_field_not_the_label() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let hosted = Hosted::start(
        &["--bus-name", "keys"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    let app = hosted.first_name();
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        // The label and the field it names both read "Town".
        let tree = c.tree(&app, json!({"label": "Town", "exact": true})).await;
        let roles: Vec<&str> = support::abp::nodes(&tree)
            .iter()
            .map(|n| n["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles.len(), 2, "{tree}");
        let clicked = c.ok(&app, "ui.click", json!({"label": "Town"})).await;
        let field = support::abp::nodes(&tree)
            .iter()
            .find(|n| n["labelFrom"] == "beside")
            .unwrap_or_else(|| panic!("the field is named from beside: {tree}"));
        assert_eq!(clicked["target"], field["id"], "{clicked}");
        c.ok(&app, "ui.type", json!({"text": "Bath"})).await;
    });
    hosted.stdout.wait_for(
        r#""field": "Town", "text": "Bath""#,
        "the text typed into Town",
    );
    assert!(
        !hosted.printed(r#""field": "Name""#),
        "nothing was typed into Name"
    );
}

#[test]
fn a_bus_name_given_at_start_is_held_and_busy_until_its_app_shows() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let hosted = Hosted::start(
        &["--bus-name", "keys"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    support::runtime().block_on(async {
        // Asked the moment the Bus listens, before the app can have drawn.
        let mut c = Client::connect(&hosted.url, "probe").await;
        let early = c.request("keys", "keys.ui.tree", json!({})).await;
        if early.rc() != Some(Rc::Ok) {
            let body: Value = serde_json::from_str(&early.body).unwrap();
            assert_eq!(body["error_code"], "BUSY", "{body}");
        }
        // No client takes the name meanwhile.
        let mut squatter = Client::connect(&hosted.url, "keys").await;
        let taken = squatter.request("noded", "noded.register", json!({})).await;
        assert_eq!(taken.rc(), Some(Rc::Error), "{taken:?}");
        assert!(taken.body.contains("NAME_TAKEN"), "{}", taken.body);
        // The app takes its name when it shows, not keys-2.
        c.tree("keys", json!({"label": "Mode"})).await;
    });
    assert_eq!(hosted.names(), ["keys"]);
}

#[test]
fn ui_tree_lists_what_the_last_frame_shows_in_a_persons_words() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let hosted = Hosted::start(
        &["--bus-name", "keys"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    support::runtime().block_on(async {
        let mut c = Client::connect(&hosted.url, "probe").await;
        let tree = c
            .tree("keys", json!({"label": "Mode", "exact": true}))
            .await;
        assert!(!nodes(&tree).is_empty(), "{tree}");
        let whole = c.ok("keys", "ui.tree", json!({})).await;
        let labels: Vec<&str> = nodes(&whole)
            .iter()
            .map(|n| n["label"].as_str().unwrap())
            .collect();
        for n in nodes(&whole) {
            assert!(n["rect"].is_array(), "every node listed shows: {n}");
        }
        // Basic's keys show; Advanced's page and the closed Mode menu do not.
        assert!(labels.contains(&"1"), "{labels:?}");
        for gone in ["7", "x²", "Basic", "Advanced"] {
            assert!(!labels.contains(&gone), "{gone} is not shown: {labels:?}");
        }
        assert!(
            !labels.iter().any(|l| l.starts_with("Gtk")),
            "no toolkit class name is a label: {labels:?}"
        );
        let ids: Vec<&Value> = nodes(&whole).iter().map(|n| &n["id"]).collect();
        for n in nodes(&whole) {
            for child in n["children"].as_array().unwrap() {
                assert!(ids.contains(&child), "child {child} of {n} is listed");
            }
        }
        let bogus = c.refused("keys", "ui.tree", json!({"role": "Knob"})).await;
        assert_eq!(bogus["error_code"], "ARGUMENT", "{bogus}");
        let figures = c.ok("keys", "ui.tree", json!({"role": "Figure"})).await;
        assert!(nodes(&figures).is_empty(), "{figures}");
    });
}

/// The HTTP status of a WebSocket handshake to `url` with these headers:
/// 101 when the Bus took the connection.
async fn handshake_status(url: &str, headers: &[(&str, &str)]) -> u16 {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::Error;
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        let name =
            tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        request.headers_mut().insert(name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((_, response)) => response.status().as_u16(),
        Err(Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("the Bus answers a handshake: {e}"),
    }
}

#[test]
fn pages_from_other_origins_and_rebound_hosts_cannot_open_the_bus() {
    let hosted = Hosted::fixture(&["--bus-allow-origin", "http://app.example:8080"]);
    let url = hosted.url.clone();
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    support::runtime().block_on(async {
        assert_eq!(handshake_status(&url, &[]).await, 101, "a local client");
        let evil = handshake_status(&url, &[("origin", "http://evil.example")]).await;
        assert_eq!(evil, 403, "a page from another origin");
        let allowed = handshake_status(&url, &[("origin", "http://app.example:8080")]).await;
        assert_eq!(allowed, 101, "the origin allowed");
        let rebound = format!("evil.example:{port}");
        let rebound = handshake_status(&url, &[("host", rebound.as_str())]).await;
        assert_eq!(rebound, 403, "a name rebound to loopback");
    });
}

#[test]
fn a_bus_with_a_token_takes_only_connections_that_carry_it() {
    let dir = std::env::temp_dir().join(format!("wayrig-bus-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let hosted = Hosted::fixture(&["--bus-token-file", token_file.to_str().unwrap()]);
    let url = hosted.url.clone();
    support::runtime().block_on(async {
        assert_eq!(handshake_status(&url, &[]).await, 401);
        let wrong = handshake_status(&url, &[("authorization", "Bearer nope")]).await;
        assert_eq!(wrong, 401);
        let bearer = handshake_status(&url, &[("authorization", "Bearer s3cret")]).await;
        assert_eq!(bearer, 101);
        let queried = handshake_status(&format!("{url}?token=s3cret"), &[]).await;
        assert_eq!(queried, 101, "a browser's token in the query");
    });
    drop(hosted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A listener standing in for the broker, and the fixture connecting to it
/// with `--bus-connect`.
fn connected_to_a_stand_in(rt: &tokio::runtime::Runtime) -> (tokio::net::TcpListener, Hosted) {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let hosted = Hosted::connected(&url, &["--bus-name", "fx"]);
    (listener, hosted)
}

#[test]
fn bus_connect_gives_up_a_handshake_its_broker_never_answers() {
    let rt = support::runtime();
    let (listener, hosted) = connected_to_a_stand_in(&rt);
    rt.block_on(async {
        // Taken, and never answered: no upgrade, the socket left open.
        let (stalled, _) = listener.accept().await.unwrap();
        let again = tokio::time::timeout(Duration::from_secs(60), listener.accept()).await;
        assert!(again.is_ok(), "Wayrig connects again");
        drop(stalled);
    });
    let lost = hosted
        .stderr
        .wait_for("did not finish the WebSocket handshake", "the stall told");
    assert!(lost.contains("connecting again"), "{lost}");
}

#[test]
fn bus_connect_notices_a_stalled_broker_and_connects_again() {
    let rt = support::runtime();
    let (listener, hosted) = connected_to_a_stand_in(&rt);
    rt.block_on(async {
        // The first connection: its name taken, then silence, the socket
        // left open: nothing read, nothing sent.
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
        let registration = loop {
            let Some(Ok(Message::Text(text))) = ws.next().await else {
                panic!("Wayrig registers its name")
            };
            let frame = Frame::parse_strict(text.as_str()).unwrap();
            if frame.command() == Some("noded.register") {
                break frame;
            }
        };
        ws.send(Message::text(
            Frame::response_to(&registration, Rc::Ok, "{}").serialize(),
        ))
        .await
        .unwrap();
        // Wayrig gives up on it and comes back on a new connection.
        let again = tokio::time::timeout(Duration::from_secs(60), listener.accept()).await;
        assert!(again.is_ok(), "Wayrig connects again");
        drop(ws);
    });
    let lost = hosted
        .stderr
        .wait_for("heartbeats unanswered", "the stall told");
    assert!(lost.contains("connecting again"), "{lost}");
}
