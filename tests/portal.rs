//! `wayrig attach` on a desktop that is not Wayrig's: sway 1.7 headless with the
//! GTK 4 fixture, gtk4-widget-factory and foot, driven over MyGo, the Bus and
//! cua.env.v1 as a user would, and the portal host.
//!
//! Sway runs as the unprivileged desktop user; so do its apps and `attach`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use support::abp;
use support::desktop::Desktop;
use support::{wait_ended, wait_window, Image, ProtocolClient, APP_START};
use tonic::transport::Channel;
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;
use wayrig_cua_proto::v1::computer_service_client::ComputerServiceClient;
use wayrig_cua_proto::v1::system_service_client::SystemServiceClient;
use wayrig_cua_proto::v1::windows_service_client::WindowsServiceClient;
use wayrig_host::Host;
use wayrig_portal::{InputChoice, PortalHost};
use wayrig_proto::abp::Rc;
use wayrig_proto::mygo::{Call, Code, Event, Mods};
use wayrig_services::{CloseOutcome, Session, WindowOp};

/// Mixed scripts, typed whole and read back exactly: the first key included.
const TEXT: &str = "Grüße, 世界 — Привет ✓ مرحبا";
const ROUNDS: usize = 50;

fn key(name: &str) -> Event {
    Event::Key { key: name.into() }
}

fn click(x: f64, y: f64) -> Event {
    Event::Click {
        x,
        y,
        button: Default::default(),
        clicks: 1,
        mods: Mods::default(),
    }
}

/// The element of `role` labelled `label`, in a MyGo tree answer.
fn labelled<'a>(tree: &'a Value, role: &str, label: &str) -> &'a Value {
    let nodes = tree["nodes"].as_array().unwrap();
    nodes
        .iter()
        .find(|n| n["role"] == role && n["label"] == label)
        .unwrap_or_else(|| panic!("no {role} {label:?} among {} elements", nodes.len()))
}

fn centre(node: &Value) -> (f64, f64) {
    let b = &node["bounds"];
    (
        b["x"].as_f64().unwrap() + b["width"].as_f64().unwrap() / 2.0,
        b["y"].as_f64().unwrap() + b["height"].as_f64().unwrap() / 2.0,
    )
}

fn idle(c: &mut ProtocolClient, window: u64) {
    c.call(Call::Idle {
        window: Some(window),
        timeout_ms: Some(10_000),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_drives_a_gtk_app_and_foot_on_sway() {
    let Some(mut desktop) = Desktop::start("attach_drives_a_gtk_app_and_foot_on_sway") else {
        return;
    };
    let fixture = support::gtk4_fixture();
    let (fixture_pid, fixture_out, _) = desktop.start_app(&["/usr/bin/python3", &fixture]);
    let (foot_pid, _, _) = desktop.start_app(&["foot", "cat"]);
    let (socket, attach_log) = desktop.attach(&[]);
    // What sway 1.7 lacks is said when attach starts, in words a user can act on.
    assert!(attach_log.contains("no ext-image-copy-capture-v1 for single windows"));

    // The test's own portal host, beside attach's, for what MyGo does not carry.
    desktop.client_env();
    let host = Arc::new(
        PortalHost::attach(Some(desktop.swaysock.clone()), InputChoice::Virtual)
            .await
            .expect("the test attaches too"),
    );
    let mut watch = host.watch_windows().await.unwrap();
    let fixture_window = wait_window(&mut watch, APP_START, |w| {
        w.pid == Some(fixture_pid) && !w.content.is_empty()
    })
    .await;
    let foot_window = wait_window(&mut watch, APP_START, |w| {
        w.pid == Some(foot_pid) && !w.content.is_empty()
    })
    .await;
    assert_eq!(fixture_window.title, "wayrig-gtk4-fixture");
    assert_eq!(foot_window.app_id, "foot");

    // MyGo lists both windows where sway placed them: side by side, on the output.
    let mut c = ProtocolClient::connect(&socket);
    let fixture_id = fixture_window.handle.id;
    // attach's host hears of the windows on its own connection, maybe later
    // than the test's: wait until MyGo lists both.
    let deadline = std::time::Instant::now() + APP_START;
    loop {
        let listed = c.call(Call::Windows);
        let ids: Vec<u64> = listed["windows"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w["id"].as_u64())
            .collect();
        if ids.contains(&fixture_id) && ids.contains(&foot_window.handle.id) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "MyGo lists {ids:?}");
        let _ = c.answer(Call::Idle {
            window: None,
            timeout_ms: Some(50),
        });
    }
    idle(&mut c, fixture_id);
    let now = host.windows().await.unwrap();
    let listed = c.call(Call::Windows);
    let listed = listed["windows"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let output = wayrig_host::Rect::new(0, 0, 1280, 800);
    for w in &now {
        let wire = listed
            .iter()
            .find(|l| l["id"] == w.handle.id)
            .expect("listed");
        assert_eq!(wire["contentBounds"]["x"], w.content.x);
        assert_eq!(wire["contentBounds"]["width"], w.content.width);
        assert!(output.contains_rect(&w.content), "{w:?}");
    }
    assert!(
        !now[0].content.intersects(&now[1].content),
        "tiled: {now:?}"
    );

    // A click at the centre of the button as the tree has it lands on it.
    let tree = c.call(Call::Tree {
        window: Some(fixture_id),
    });
    let (x, y) = centre(labelled(&tree, "button", "Press"));
    c.call(Call::Input {
        window: Some(fixture_id),
        events: vec![click(x, y)],
    });
    fixture_out.wait_for("\"ev\": \"clicked\"", "the fixture's click");

    // Mixed scripts typed into the first entry read back exactly, every time.
    let (x, y) = centre(labelled(&tree, "textField", "First"));
    c.call(Call::Input {
        window: Some(fixture_id),
        events: vec![click(x, y)],
    });
    for round in 0..ROUNDS {
        let text = format!("{round} {TEXT}");
        c.call(Call::Input {
            window: Some(fixture_id),
            events: vec![
                key("CmdOrCtrl+A"),
                key("BackSpace"),
                Event::Text { text: text.clone() },
            ],
        });
        // The fixture says each change as JSON (no escapes for these characters).
        let said = format!(r#""name": "first", "text": "{text}"}}"#);
        fixture_out.wait_for(&said, &format!("round {round}'s text"));
    }
    idle(&mut c, fixture_id);
    let tree = c.call(Call::Tree {
        window: Some(fixture_id),
    });
    assert_eq!(
        labelled(&tree, "textField", "First")["value"],
        format!("{} {TEXT}", ROUNDS - 1)
    );

    // The window captured alone matches the output captured whole, there.
    let shot = c.call(Call::Capture {
        window: Some(fixture_id),
    });
    let content = host
        .windows()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.handle.id == fixture_id)
        .unwrap()
        .content;
    assert_eq!(shot["width"], content.width);
    assert_eq!(shot["height"], content.height);
    let png = base64_decode(shot["png"].as_str().unwrap());
    let window_image = Image::from_png(&png);
    let whole = host.capture_output().await.unwrap();
    assert_eq!((whole.width, whole.height), (1280, 800));
    let whole = Image::decode(&whole);
    assert!(whole.distinct_colours() > 50, "the output shows the apps");
    let crop = whole.crop(content);
    let same = (0..window_image.height)
        .flat_map(|y| (0..window_image.width).map(move |x| (x, y)))
        .filter(|&(x, y)| window_image.pixel(x, y) == crop.pixel(x, y))
        .count();
    let total = (window_image.width * window_image.height) as usize;
    assert!(same * 100 > total * 95, "{same} of {total} pixels alike");

    // Window operations, through the session every face stands on.
    let session = Session::without_accessibility(host.clone()).await.unwrap();
    let foot_now = session
        .window_op(foot_window.handle, WindowOp::Activate)
        .await
        .unwrap();
    assert!(foot_now.focused);
    let hidden = session
        .window_op(fixture_window.handle, WindowOp::Minimize)
        .await
        .unwrap();
    assert!(hidden.minimized && !hidden.on_screen, "{hidden:?}");
    // A covered window cannot be captured on sway 1.7, and MyGo says why.
    let refused = c
        .answer(Call::Capture {
            window: Some(fixture_id),
        })
        .unwrap_err();
    assert_eq!(refused.code, Code::Unsupported);
    assert!(
        refused.message.contains("bring it to the front"),
        "{}",
        refused.message
    );
    let shown = session
        .window_op(fixture_window.handle, WindowOp::Restore)
        .await
        .unwrap();
    assert!(!shown.minimized && shown.on_screen, "{shown:?}");
    assert_eq!(
        session.close(foot_window.handle, false).await.unwrap(),
        CloseOutcome::Closed
    );
    assert!(
        wait_ended(&[foot_pid as i32], Duration::from_secs(10)).is_empty(),
        "foot ended when its window closed"
    );
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64")
}

/// The Bus name attach printed for the app of `pid`.
fn bus_name_of(said: &support::Lines, pid: u32) -> String {
    let line = said.wait_for(&format!(" for pid {pid} "), "the app's Bus name");
    line.split_whitespace()
        .nth(3)
        .expect("wayrig: bus name NAME for pid …")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_serves_the_bus_for_a_gtk_app_and_foot_on_sway() {
    let Some(mut desktop) = Desktop::start("attach_serves_the_bus_for_a_gtk_app_and_foot_on_sway")
    else {
        return;
    };
    let fixture = support::gtk4_fixture();
    let (fixture_pid, fixture_out, _) = desktop.start_app(&["/usr/bin/python3", &fixture]);
    let (foot_pid, _, _) = desktop.start_app(&["foot", "cat"]);
    let said = desktop.attach_serving(&["--bus-listen", "127.0.0.1:0"]);
    let url = said.wait_for("wayrig: bus listens at ", "the Bus address");
    let url = url.split("listens at ").nth(1).unwrap().to_string();
    // Apps attach did not start are named from their app ids, as any app is.
    let app = bus_name_of(&said, fixture_pid);
    assert_eq!(app, "gtk4fixture");
    let foot = bus_name_of(&said, foot_pid);
    assert_eq!(foot, "foot");

    let mut c = abp::Client::connect(&url, "probe").await;
    let reg = c.request("noded", "noded.register", json!({})).await;
    assert_eq!(reg.rc(), Some(Rc::Ok), "{}", reg.body);

    // ui.click by label lands on the button sway placed on the output.
    let tree = c.tree(&app, json!({})).await;
    let press = abp::nodes(&tree)
        .iter()
        .find(|n| n["role"] == "Button" && n["label"] == "Press")
        .unwrap_or_else(|| panic!("the Press button in {tree}"))
        .clone();
    let clicked = c.ok(&app, "ui.click", json!({"label": "Press"})).await;
    assert_eq!(clicked["target"], press["id"]);
    fixture_out.wait_for("\"ev\": \"clicked\"", "the fixture's click");

    // ui.type of mixed scripts into the focused field reads back exactly.
    let first = abp::nodes(&tree)
        .iter()
        .find(|n| n["role"] == "TextInput" && n["label"] == "First")
        .unwrap_or_else(|| panic!("the First field in {tree}"))
        .clone();
    let focused = c.ok(&app, "ui.click", json!({"id": first["id"]})).await;
    assert!(focused["focused"].is_string(), "{focused}");
    c.ok(&app, "ui.type", json!({"text": TEXT})).await;
    let value = |tree: &Value| {
        abp::nodes(tree)
            .iter()
            .find(|n| n["id"] == first["id"])
            .map(|n| n["value"].clone())
    };
    let after = c.tree(&app, json!({"role": "TextInput"})).await;
    assert_eq!(value(&after), Some(json!(TEXT)), "{after}");
    // ui.key with a modifier: select all, and type over it.
    c.ok(
        &app,
        "ui.key",
        json!({"key": "A", "modifiers": ["command"]}),
    )
    .await;
    c.ok(&app, "ui.type", json!({"text": "x"})).await;
    let after = c.tree(&app, json!({"role": "TextInput"})).await;
    assert_eq!(value(&after), Some(json!("x")), "{after}");

    // Window verbs on foot, which has no accessibility tree: what sway lacks
    // is refused saying what to ask for instead.
    let focused = c.ok(&foot, "window", json!({"action": "focus"})).await;
    assert_eq!(focused["focused"], true, "{focused}");
    let state = c.ok(&foot, "window.state", json!({})).await;
    assert_eq!(state["focused"], true, "{state}");
    let maximize = c
        .refused(&foot, "window", json!({"action": "maximize"}))
        .await;
    assert_eq!(maximize["error_code"], "UNAVAILABLE");
    assert!(
        maximize["message"].as_str().unwrap().contains("fullscreen"),
        "{maximize}"
    );
    let hidden = c.ok(&foot, "window", json!({"action": "minimize"})).await;
    assert_eq!(hidden["minimized"], true, "{hidden}");
    let shown = c.ok(&foot, "window", json!({"action": "restore"})).await;
    assert_eq!(shown["minimized"], false, "{shown}");
    c.ok(&foot, "window", json!({"action": "close"})).await;
    assert!(
        wait_ended(&[foot_pid as i32], Duration::from_secs(10)).is_empty(),
        "foot ended when the Bus closed its window"
    );
}

fn pid_of(w: &v1::WindowInfo) -> u32 {
    w.app.as_ref().map_or(0, |a| a.pid)
}

/// `wayrig attach` serving cua.env.v1 on a loopback port, and a channel to it.
async fn attach_cua(desktop: &mut Desktop) -> Channel {
    let said = desktop.attach_serving(&["--cua-listen", "127.0.0.1:0"]);
    let addr = said.wait_for("cua.env.v1 listens at ", "the cua face's address");
    let addr = addr.split("listens at ").nth(1).unwrap().to_string();
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("the cua face takes a connection")
}
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_serves_cua_for_gtk4_widget_factory_and_foot_on_sway() {
    let Some(mut desktop) =
        Desktop::start("attach_serves_cua_for_gtk4_widget_factory_and_foot_on_sway")
    else {
        return;
    };
    let (factory_pid, _, _) = desktop.start_app(&["gtk4-widget-factory"]);
    let (foot_pid, _, _) = desktop.start_app(&["foot", "/bin/sh"]);
    let channel = attach_cua(&mut desktop).await;
    let mut s = SystemServiceClient::new(channel.clone());
    let mut w = WindowsServiceClient::new(channel.clone());
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let mut c = ComputerServiceClient::new(channel.clone());

    // Capabilities say what sway 1.7 lacks, each in a sentence to act on.
    let caps = s
        .get_capabilities(v1::GetCapabilitiesRequest {})
        .await
        .unwrap()
        .into_inner();
    let feature = |name: &str| {
        caps.features
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("feature {name} is not listed"))
            .clone()
    };
    for name in ["windows", "a11y", "launch_app"] {
        assert!(feature(name).supported, "{name}: {:?}", feature(name));
    }
    // The desktop's one pointer and keyboard reach only the focused window.
    let background = feature("background_input");
    assert!(!background.supported);
    assert!(
        background.limitation.contains("focused window"),
        "{background:?}"
    );
    let covered = feature("screenshot.covered_window");
    assert!(!covered.supported);
    assert!(
        covered
            .limitation
            .contains("no ext-image-copy-capture-v1 for single windows"),
        "{covered:?}"
    );

    // Both windows are listed, with the apps' pids, and come to lie side by
    // side in one row as sway tiles them: the watch follows sway's layout,
    // which it changes after it announces a window, and its borders with it.
    let mut watch = w
        .watch_windows(v1::WatchWindowsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut windows: Vec<v1::WindowInfo> = Vec::new();
    let of =
        |windows: &[v1::WindowInfo], pid: u32| windows.iter().find(|w| pid_of(w) == pid).cloned();
    let tiled = |windows: &[v1::WindowInfo]| {
        let (Some(f), Some(o)) = (of(windows, factory_pid), of(windows, foot_pid)) else {
            return false;
        };
        let (fb, ob) = (f.bounds.unwrap(), o.bounds.unwrap());
        // One row, the same height, neither overlapping the other.
        fb.width > 0.0
            && ob.width > 0.0
            && (fb.y, fb.height) == (ob.y, ob.height)
            && (fb.x + fb.width <= ob.x || ob.x + ob.width <= fb.x)
    };
    let deadline = std::time::Instant::now() + APP_START;
    while !tiled(&windows) {
        assert!(std::time::Instant::now() < deadline, "listed: {windows:?}");
        use v1::watch_windows_response::Event;
        let message = tokio::time::timeout(APP_START, watch.message())
            .await
            .expect("a watch message in time")
            .expect("the stream stays open")
            .expect("a message");
        match message.event {
            Some(Event::Snapshot(all)) => windows = all.windows,
            Some(Event::Created(one)) => windows.push(one),
            Some(Event::Updated(one)) => {
                windows.retain(|w| w.r#ref != one.r#ref);
                windows.push(one);
            }
            Some(Event::Closed(gone)) => windows.retain(|w| w.r#ref != gone.r#ref),
            _ => {}
        }
    }
    let factory = of(&windows, factory_pid).unwrap();
    let foot = of(&windows, foot_pid).unwrap();
    let output = v1::Rect {
        x: 0.0,
        y: 0.0,
        width: 1280.0,
        height: 800.0,
    };
    for b in [factory.bounds.unwrap(), foot.bounds.unwrap()] {
        assert!(
            b.x >= output.x
                && b.y >= output.y
                && b.x + b.width <= output.width
                && b.y + b.height <= output.height,
            "{b:?} lies on the output"
        );
    }

    // The factory's tree in cua's vocabulary, in global points on sway's output.
    let read = v1::GetTreeRequest {
        window: factory.r#ref.clone(),
        ..Default::default()
    };
    let has = |n: &v1::AccessibilityNode, state: &str| n.states.iter().any(|s| s == state);
    let mut tree = a.get_tree(read.clone()).await.unwrap().into_inner();
    let deadline = std::time::Instant::now() + APP_START;
    while !tree.nodes.iter().any(|n| n.role == "check_box") {
        assert!(std::time::Instant::now() < deadline, "no check box came");
        tree = a.get_tree(read.clone()).await.unwrap().into_inner();
    }
    // Where the window is now: sway laid it out again as foot came.
    let fb = w
        .get_window(v1::GetWindowRequest {
            window: factory.r#ref.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .window
        .unwrap()
        .bounds
        .unwrap();
    let check = tree
        .nodes
        .iter()
        .find(|n| n.role == "check_box" && has(n, "enabled") && !has(n, "checked"))
        .expect("an enabled, unchecked check box")
        .clone();
    let bounds = check.bounds.unwrap();
    assert!(
        bounds.x >= fb.x && bounds.x + bounds.width <= fb.x + fb.width,
        "the box {bounds:?} lies in its window {fb:?}"
    );

    // A click at its centre, in screen points, checks it. Asked in the
    // background, it is refused as needing activation, and nothing moves.
    let at = v1::Point {
        x: bounds.x + bounds.width / 2.0,
        y: bounds.y + bounds.height / 2.0,
    };
    let refused = c
        .pointer(v1::PointerRequest {
            target: Some(v1::InputTarget {
                delivery: v1::Delivery::Background as i32,
                ..Default::default()
            }),
            action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                position: Some(at),
                ..Default::default()
            })),
        })
        .await
        .unwrap_err();
    let info = wayrig_cua_proto::error_info(&refused).expect("an ErrorInfo");
    assert_eq!(
        (refused.code(), info.reason),
        (
            tonic::Code::FailedPrecondition,
            v1::ErrorReason::WouldRequireActivation as i32
        ),
        "{refused:?}"
    );
    let still = a.get_tree(read.clone()).await.unwrap().into_inner();
    let unchecked = still
        .nodes
        .iter()
        .find(|n| n.element_id == check.element_id)
        .expect("the box again");
    assert!(!has(unchecked, "checked"), "{unchecked:?}");
    c.pointer(v1::PointerRequest {
        target: Some(v1::InputTarget::default()),
        action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
            position: Some(at),
            ..Default::default()
        })),
    })
    .await
    .unwrap();
    let now = a.get_tree(read.clone()).await.unwrap().into_inner();
    let after = now
        .nodes
        .iter()
        .find(|n| n.element_id == check.element_id)
        .expect("the box again");
    assert!(has(after, "checked"), "{after:?}");

    // Text typed into foot changes its title, which the watch reports.
    let wref = foot.r#ref.clone().unwrap();
    c.keyboard(v1::KeyboardRequest {
        target: Some(v1::InputTarget {
            window: Some(wref.clone()),
            ..Default::default()
        }),
        action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
            text: "printf '\\033]2;%s\\007' titled-on-sway\n".into(),
            ..Default::default()
        })),
    })
    .await
    .unwrap();
    let waited = tokio::time::timeout(APP_START, async {
        use v1::watch_windows_response::Event;
        loop {
            let message = watch.message().await.unwrap().expect("a message");
            if let Some(Event::Updated(w)) = message.event {
                if w.r#ref.as_ref() == Some(&wref) && w.title == "titled-on-sway" {
                    return;
                }
            }
        }
    });
    waited.await.expect("foot's new title in time");

    // A screenshot of the factory shows it, at its size on the output.
    let shot = c
        .screenshot(v1::ScreenshotRequest {
            source: Some(v1::screenshot_request::Source::Window(
                factory.r#ref.clone().unwrap(),
            )),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let image = Image::from_png(&shot.image);
    assert_eq!(
        (image.width as f64, image.height as f64),
        (fb.width, fb.height)
    );
    assert!(image.distinct_colours() > 50, "the factory shows");
}

/// Why this machine cannot make uinput devices, if it cannot.
fn uinput_missing() -> Option<String> {
    match std::fs::OpenOptions::new().write(true).open("/dev/uinput") {
        Ok(_) => None,
        Err(e) => Some(format!("/dev/uinput cannot be opened for writing: {e}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_input_uinput_without_dev_uinput_says_what_to_do() {
    const TEST: &str = "attach_input_uinput_without_dev_uinput_says_what_to_do";
    if uinput_missing().is_none() {
        support::skip(TEST, "this machine has a writable /dev/uinput");
        return;
    }
    let Some(mut desktop) = Desktop::start(TEST) else {
        return;
    };
    // Asked for by name, uinput's absence ends attach, saying what to do.
    let (pid, said) = desktop.spawn_attach(&[
        "--mygo-socket",
        desktop.dir.join("refused.sock").to_str().unwrap(),
        "--input",
        "uinput",
    ]);
    let line = said.wait_for("--input uinput: ", "attach's refusal");
    assert!(
        line.contains("/dev/uinput") && line.contains("--input virtual"),
        "{line}"
    );
    assert!(
        support::wait_ended(&[pid as i32], Duration::from_secs(10)).is_empty(),
        "attach ended"
    );
    assert!(!said.contains("wayrig: attached"));
    // By default (auto) attach takes the virtual devices and says why.
    let (_, said) = desktop.attach(&[]);
    let line = said.wait_for("wayrig: input through ", "which devices carry input");
    assert!(
        line.contains("virtual pointer and keyboard (no uinput: /dev/uinput"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_input_uinput_clicks_and_types_needs_dev_uinput() {
    const TEST: &str = "attach_input_uinput_clicks_and_types_needs_dev_uinput";
    if let Some(why) = uinput_missing() {
        support::skip(
            TEST,
            &format!("{why}; run it where /dev/uinput is writable"),
        );
        return;
    }
    // Sway reads uinput's devices only through its libinput backend.
    let Some(mut desktop) = Desktop::start_with_backends(TEST, "headless,libinput") else {
        return;
    };
    let fixture = support::gtk4_fixture();
    let (_, fixture_out, _) = desktop.start_app(&["/usr/bin/python3", &fixture]);
    let (socket, said) = desktop.attach(&["--input", "uinput"]);
    said.wait_for(
        "wayrig: input through a uinput pointer and keyboard",
        "uinput in use",
    );
    let mut c = ProtocolClient::connect(&socket);
    let window = c.first_window();
    assert_eq!(window["title"], "wayrig-gtk4-fixture");
    let id = window["id"].as_u64().unwrap();
    idle(&mut c, id);
    let tree = c.call(Call::Tree { window: Some(id) });
    let (x, y) = centre(labelled(&tree, "button", "Press"));
    c.call(Call::Input {
        window: Some(id),
        events: vec![click(x, y)],
    });
    fixture_out.wait_for("\"ev\": \"clicked\"", "the fixture's click");
    let (x, y) = centre(labelled(&tree, "textField", "First"));
    c.call(Call::Input {
        window: Some(id),
        events: vec![
            click(x, y),
            Event::Text {
                text: "Typed on uinput, 42!".into(),
            },
        ],
    });
    fixture_out.wait_for(
        r#""name": "first", "text": "Typed on uinput, 42!"}"#,
        "the typed text",
    );
    // Characters the US keymap lacks are refused, saying where they can be typed.
    let refused = c
        .answer(Call::Input {
            window: Some(id),
            events: vec![Event::Text {
                text: "世界".into(),
            }],
        })
        .unwrap_err();
    assert_eq!(refused.code, Code::Unsupported);
    assert!(
        refused.message.contains("--input virtual"),
        "{}",
        refused.message
    );
}

/// The window of `pid` as cua's window watch first shows it.
async fn cua_window_of(w: &mut WindowsServiceClient<Channel>, pid: u32) -> v1::WindowInfo {
    use v1::watch_windows_response::Event;
    let mut watch = w
        .watch_windows(v1::WatchWindowsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let found = tokio::time::timeout(APP_START, async {
        loop {
            let message = watch.message().await.unwrap().expect("a message");
            match message.event {
                Some(Event::Snapshot(all)) => {
                    if let Some(one) = all.windows.into_iter().find(|w| pid_of(w) == pid) {
                        return one;
                    }
                }
                Some(Event::Created(one) | Event::Updated(one)) if pid_of(&one) == pid => {
                    return one
                }
                _ => {}
            }
        }
    });
    found.await.expect("the app's window is listed in time")
}

/// A key with Ctrl held, for the cua face.
fn ctrl(character: &str, window: &v1::WindowRef) -> v1::KeyboardRequest {
    v1::KeyboardRequest {
        target: Some(v1::InputTarget {
            window: Some(window.clone()),
            ..Default::default()
        }),
        action: Some(v1::keyboard_request::Action::Press(v1::KeyboardPress {
            key: Some(v1::KeyInput {
                key: Some(v1::key_input::Key::Character(character.into())),
            }),
            modifiers: vec![v1::Key::Control as i32],
            repeat: 1,
        })),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_carries_the_clipboard_both_ways_on_sway() {
    let Some(mut desktop) = Desktop::start("attach_carries_the_clipboard_both_ways_on_sway") else {
        return;
    };
    let fixture = support::gtk4_fixture();
    let (fixture_pid, fixture_out, _) = desktop.start_app(&["/usr/bin/python3", &fixture]);
    let channel = attach_cua(&mut desktop).await;
    let mut s = SystemServiceClient::new(channel.clone());
    let mut w = WindowsServiceClient::new(channel.clone());
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let mut c = ComputerServiceClient::new(channel);

    // Sway 1.7 offers zwlr_data_control_manager_v1: the clipboard is there.
    let caps = s
        .get_capabilities(v1::GetCapabilitiesRequest {})
        .await
        .unwrap()
        .into_inner();
    let clipboard = caps
        .features
        .iter()
        .find(|f| f.name == "clipboard.text")
        .expect("clipboard.text is listed");
    assert!(clipboard.supported, "{clipboard:?}");

    let window = cua_window_of(&mut w, fixture_pid).await;
    let wref = window.r#ref.clone().unwrap();

    // Text set through the face reads back with the generation set answered.
    let text = "héllo 世界 — sway";
    let set = c
        .set_clipboard(v1::SetClipboardRequest {
            content: Some(v1::ClipboardContent {
                text: Some(text.into()),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    let got = c
        .get_clipboard(v1::GetClipboardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.content.unwrap().text.as_deref(), Some(text));
    assert_eq!(got.generation, set.generation);

    // Ctrl+V in the GTK entry pastes it: the app reads it from Wayrig's source.
    let read = v1::GetTreeRequest {
        window: Some(wref.clone()),
        ..Default::default()
    };
    let mut tree = a.get_tree(read.clone()).await.unwrap().into_inner();
    let deadline = std::time::Instant::now() + APP_START;
    let first = loop {
        if let Some(n) = tree.nodes.iter().find(|n| n.name == "First") {
            break n.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no First field came");
        tree = a.get_tree(read.clone()).await.unwrap().into_inner();
    };
    let b = first.bounds.unwrap();
    c.pointer(v1::PointerRequest {
        target: Some(v1::InputTarget::default()),
        action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
            position: Some(v1::Point {
                x: b.x + b.width / 2.0,
                y: b.y + b.height / 2.0,
            }),
            ..Default::default()
        })),
    })
    .await
    .unwrap();
    c.keyboard(ctrl("v", &wref)).await.unwrap();
    fixture_out.wait_for(
        &format!(r#""name": "first", "text": "{text}""#),
        "the pasted text",
    );

    // Typed, selected and copied in the app: read back, a new generation.
    c.keyboard(v1::KeyboardRequest {
        action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
            text: " + more".into(),
            ..Default::default()
        })),
        ..ctrl("a", &wref)
    })
    .await
    .unwrap();
    c.keyboard(ctrl("a", &wref)).await.unwrap();
    c.keyboard(ctrl("c", &wref)).await.unwrap();
    let copied = c
        .get_clipboard(v1::GetClipboardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        copied.content.unwrap().text.as_deref(),
        Some(format!("{text} + more").as_str())
    );
    assert_ne!(copied.generation, set.generation);
    let again = c
        .get_clipboard(v1::GetClipboardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        again.generation, copied.generation,
        "reading changes nothing"
    );

    // Set again over the app's copy: Wayrig owns it once more.
    let reset = c
        .set_clipboard(v1::SetClipboardRequest {
            content: Some(v1::ClipboardContent {
                text: Some("second".into()),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reset.generation > copied.generation);
    let got = c
        .get_clipboard(v1::GetClipboardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.content.unwrap().text.as_deref(), Some("second"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_settles_beside_a_spinner_and_says_when_a_window_animates() {
    let Some(mut desktop) =
        Desktop::start("attach_settles_beside_a_spinner_and_says_when_a_window_animates")
    else {
        return;
    };
    let fixture = support::gtk4_fixture();
    let fixture = fixture.as_str();
    let (still_pid, _, _) = desktop.start_app(&["/usr/bin/python3", fixture]);
    // env execs the fixture: its pid is the fixture's.
    let (spinner_pid, spinner_out, _) = desktop.start_app(&[
        "/usr/bin/env",
        "WAYRIG_FIXTURE_ANIMATE=1",
        "/usr/bin/python3",
        fixture,
    ]);
    let (socket, _) = desktop.attach(&[]);
    desktop.client_env();
    let host = PortalHost::attach(Some(desktop.swaysock.clone()), InputChoice::Virtual)
        .await
        .expect("the test attaches too");
    let mut watch = host.watch_windows().await.unwrap();
    let placed =
        |pid: u32| move |w: &wayrig_host::WindowInfo| w.pid == Some(pid) && !w.content.is_empty();
    let still = wait_window(&mut watch, APP_START, placed(still_pid)).await;
    let spinner = wait_window(&mut watch, APP_START, placed(spinner_pid)).await;
    // Side by side once sway has laid both out.
    let tiled = |all: &[wayrig_host::WindowInfo]| {
        let of =
            |h: wayrig_host::WindowHandle| all.iter().find(|w| w.handle == h).map(|w| w.content);
        matches!((of(still.handle), of(spinner.handle)), (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() && !a.intersects(&b))
    };
    let deadline = tokio::time::Instant::now() + APP_START;
    while !tiled(&host.windows().await.unwrap()) {
        let _ = tokio::time::timeout_at(deadline, watch.events.recv())
            .await
            .expect("the two are tiled in time");
    }

    // The spinner draws every frame; the still window settles all the same,
    // within a few refresh intervals: only changes over it break its quiet.
    let limit = Duration::from_secs(10);
    for _ in 0..5 {
        let settled = host.settle(still.handle, limit).await.expect("settles");
        assert!(settled.waited < Duration::from_secs(1), "{settled:?}");
    }
    // The spinner itself never settles: the wait ends at its limit, saying why.
    let bounded = Duration::from_millis(500);
    match host.settle(spinner.handle, bounded).await {
        Err(wayrig_host::HostError::Timeout(waited, why)) => {
            assert_eq!(waited, bounded);
            assert!(why.contains("keeps drawing frames"), "{why}");
            assert!(why.contains("approximate"), "{why}");
        }
        other => panic!("the spinner settled: {other:?}"),
    }

    // The same through MyGo: idle answers for the still window, and ends in
    // `timeout` for the spinner, with the reason.
    let mut c = ProtocolClient::connect(&socket);
    let deadline = std::time::Instant::now() + APP_START;
    while c.call(Call::Windows)["windows"].as_array().unwrap().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "MyGo lists both");
        let _ = c.answer(Call::Idle {
            window: None,
            timeout_ms: Some(50),
        });
    }
    idle(&mut c, still.handle.id);
    let refused = c
        .answer(Call::Idle {
            window: Some(spinner.handle.id),
            timeout_ms: Some(500),
        })
        .unwrap_err();
    assert_eq!(refused.code, Code::Timeout);
    assert!(
        refused.message.contains("keeps drawing frames"),
        "{}",
        refused.message
    );
    // Input to the spinner is answered all the same: its answer is among its frames.
    let tree = c.call(Call::Tree {
        window: Some(spinner.handle.id),
    });
    let (x, y) = centre(labelled(&tree, "button", "Press"));
    c.call(Call::Input {
        window: Some(spinner.handle.id),
        events: vec![click(x, y)],
    });
    spinner_out.wait_for("\"ev\": \"clicked\"", "the spinner's click");
}

/// A thread of the app that never rests (the worker fixture's Spin) is
/// work not yet shown on an attached desktop too: an idle on its window
/// ends in a timeout naming the thread, not in an answer that the app
/// rests; `--settle-threads off` leaves threads out. (Attached settle once
/// answered a spinner starved of the CPU as settled: its app's main
/// thread, waiting to run, now breaks the quiet.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_names_a_thread_that_never_rests_and_can_leave_it_out() {
    use wayrig_proto::mygo::Action;
    let Some(mut desktop) =
        Desktop::start("attach_names_a_thread_that_never_rests_and_can_leave_it_out")
    else {
        return;
    };
    desktop.start_app(&["/usr/bin/python3", &support::fixture_path("gtk4-worker.py")]);
    let (socket, _) = desktop.attach(&[]);
    let mut c = ProtocolClient::connect(&socket);
    let window = c.first_window()["id"].as_u64();
    let tree = c.call(Call::Tree { window });
    c.call(Call::Act {
        window,
        element: support::element_labelled(&tree, "button", "Spin"),
        action: Action::Press,
    });
    let idle = || Call::Idle {
        window,
        timeout_ms: Some(1_500),
    };
    let refused = c.answer(idle()).unwrap_err();
    assert_eq!(refused.code, Code::Timeout, "{refused:?}");
    assert!(
        refused.message.contains("thread") && refused.message.contains("tid"),
        "{}",
        refused.message
    );

    let without = desktop.dir.join("without-threads.sock");
    desktop.attach_serving(&[
        "--mygo-socket",
        without.to_str().unwrap(),
        "--settle-threads",
        "off",
    ]);
    let mut c = ProtocolClient::connect(&without);
    let window = c.first_window()["id"].as_u64();
    c.call(Call::Idle {
        window,
        timeout_ms: Some(10_000),
    });
}
