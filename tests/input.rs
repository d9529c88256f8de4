//! End-to-end input tests: exact events at the purpose-built client, commands
//! typed into foot, and bad requests answered with clear errors.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{have, start, wait_window, TestClient, APP_START};
use wayrig_compositor::Config;
use wayrig_host::{
    Button, Host, HostError, InputEvent, InputOptions, LaunchSpec, Mods, TextPath, WindowCommand,
    WindowHandle, WindowInfo,
};

const SHORT: Duration = Duration::from_secs(10);

async fn client_window(
    host: &wayrig_compositor::CompositorHost,
    args: &[&str],
) -> (TestClient, WindowInfo) {
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(host, args);
    let title = args
        .windows(2)
        .find(|w| w[0] == "--title")
        .map(|w| w[1].to_string())
        .unwrap_or_else(|| "wayrig-testclient".into());
    let win = wait_window(&mut watch, SHORT, |w| w.title == title).await;
    client.expect("idle", SHORT, |_| true);
    // The new window gets the keyboard (and its keymap) on mapping; let that land.
    if client.count("kbd_enter") == 0 {
        client.expect("kbd_enter", SHORT, |_| true);
    }
    (client, win)
}

/// Input, then settle: everything the client will read of it has been read.
async fn send(
    host: &wayrig_compositor::CompositorHost,
    win: WindowHandle,
    events: Vec<InputEvent>,
) -> wayrig_host::InputReport {
    let report = host
        .input(win, events, InputOptions::default())
        .await
        .unwrap();
    host.settle(win, SHORT).await.unwrap();
    report
}

/// Input events the client saw since the last call, frames and configures left out.
fn input_seen(client: &mut TestClient) -> Vec<Value> {
    let fresh = client.drain();
    fresh
        .into_iter()
        .filter(|v| {
            !matches!(
                v["ev"].as_str(),
                Some("frame" | "drawn" | "configure" | "idle")
            )
        })
        .collect()
}

/// A wheel event at (20, 20), without modifiers.
fn wheel_at_20(dx: f64, dy: f64, precise: bool) -> InputEvent {
    InputEvent::Wheel {
        x: 20.0,
        y: 20.0,
        dx,
        dy,
        precise,
        mods: Mods::default(),
    }
}

fn ev(name: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v: &Value| v["ev"] == name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_arrive_exactly_with_coordinates_buttons_and_counts() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "clicks"]).await;
    input_seen(&mut client);

    send(
        &host,
        win.handle,
        vec![InputEvent::Click {
            x: 50.0,
            y: 60.5,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        }],
    )
    .await;
    let seen: Vec<Value> = input_seen(&mut client)
        .into_iter()
        .filter(|v| {
            matches!(
                v["ev"].as_str(),
                Some("enter" | "motion" | "button" | "pointer_frame")
            )
        })
        .collect();
    let kinds: Vec<&str> = seen.iter().filter_map(|v| v["ev"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "enter",
            "pointer_frame",
            "button",
            "pointer_frame",
            "button",
            "pointer_frame"
        ],
        "{seen:?}"
    );
    assert_eq!(
        (seen[0]["x"].as_f64(), seen[0]["y"].as_f64()),
        (Some(50.0), Some(60.5))
    );
    assert_eq!(
        (seen[2]["button"].as_u64(), seen[2]["state"].as_str()),
        (Some(0x110), Some("pressed"))
    );
    assert_eq!(seen[4]["state"], "released");

    send(
        &host,
        win.handle,
        vec![InputEvent::Click {
            x: 10.0,
            y: 20.0,
            button: Button::Right,
            clicks: 3,
            mods: Mods::default(),
        }],
    )
    .await;
    let seen = input_seen(&mut client);
    assert_eq!(seen.iter().filter(|v| ev("motion")(v)).count(), 1);
    let buttons: Vec<(u64, &str)> = seen
        .iter()
        .filter(|v| ev("button")(v))
        .map(|v| (v["button"].as_u64().unwrap(), v["state"].as_str().unwrap()))
        .collect();
    assert_eq!(buttons, [(0x111, "pressed"), (0x111, "released")].repeat(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modifiers_are_held_around_a_click_and_released_after() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "mods"]).await;
    input_seen(&mut client);
    send(
        &host,
        win.handle,
        vec![InputEvent::Click {
            x: 5.0,
            y: 5.0,
            button: Button::Middle,
            clicks: 1,
            mods: Mods {
                ctrl: true,
                shift: true,
                ..Mods::default()
            },
        }],
    )
    .await;
    let seen = input_seen(&mut client);
    let order: Vec<String> = seen
        .iter()
        .filter_map(|v| match v["ev"].as_str()? {
            "key" => Some(format!("key {} {}", v["key"], v["state"].as_str()?)),
            "button" => Some(format!("button {}", v["state"].as_str()?)),
            _ => None,
        })
        .collect();
    // evdev: 42 left shift, 29 left control.
    assert_eq!(
        order,
        [
            "key 42 pressed",
            "key 29 pressed",
            "button pressed",
            "button released",
            "key 29 released",
            "key 42 released"
        ],
        "{seen:?}"
    );
    let last_mods = seen.iter().rev().find(|v| ev("modifiers")(v)).unwrap();
    assert_eq!(last_mods["depressed"], 0, "modifiers released afterwards");
    assert!(
        seen.iter()
            .any(|v| ev("modifiers")(v) && v["depressed"] == 5),
        "shift|ctrl held: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wheel_sends_clicks_or_touchpad_scrolling() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "wheel"]).await;
    input_seen(&mut client);
    send(&host, win.handle, vec![wheel_at_20(0.0, 30.0, false)]).await;
    let seen = input_seen(&mut client);
    assert!(
        seen.iter()
            .any(|v| ev("axis_source")(v) && v["source"] == "wheel"),
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .any(|v| ev("axis_value120")(v) && v["axis"] == "vertical" && v["value120"] == 240));
    assert!(seen
        .iter()
        .any(|v| ev("axis")(v) && v["axis"] == "vertical" && v["value"] == 30.0));
    assert!(!seen
        .iter()
        .any(|v| ev("axis")(v) && v["axis"] == "horizontal"));

    send(&host, win.handle, vec![wheel_at_20(-12.5, 0.0, true)]).await;
    let seen = input_seen(&mut client);
    assert!(
        seen.iter()
            .any(|v| ev("axis_source")(v) && v["source"] == "finger"),
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .any(|v| ev("axis")(v) && v["axis"] == "horizontal" && v["value"] == -12.5));
    assert!(
        !seen.iter().any(|v| ev("axis_value120")(v)),
        "no wheel clicks for a touchpad"
    );
    assert!(seen
        .iter()
        .any(|v| ev("axis_stop")(v) && v["axis"] == "horizontal"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_press_with_their_modifiers_in_order() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "keys"]).await;
    input_seen(&mut client);
    send(
        &host,
        win.handle,
        vec![
            InputEvent::Key {
                key: "Shift+Tab".into(),
            },
            InputEvent::KeyDown {
                key: "CmdOrCtrl+Z".into(),
            },
            InputEvent::KeyUp {
                key: "CmdOrCtrl+Z".into(),
            },
            InputEvent::Key { key: "F5".into() },
            InputEvent::Key {
                key: "ArrowDown".into(),
            },
            InputEvent::Key {
                key: "Enter".into(),
            },
        ],
    )
    .await;
    let keys: Vec<(u64, String)> = input_seen(&mut client)
        .iter()
        .filter(|v| ev("key")(v))
        .map(|v| {
            (
                v["key"].as_u64().unwrap(),
                v["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let p = |k: u64| (k, "pressed".to_string());
    let r = |k: u64| (k, "released".to_string());
    // evdev codes: shift 42, tab 15, ctrl 29, z 44, F5 63, down 108, enter 28.
    assert_eq!(
        keys,
        [
            p(42),
            p(15),
            r(15),
            r(42),
            p(29),
            p(44),
            r(44),
            r(29),
            p(63),
            r(63),
            p(108),
            r(108),
            p(28),
            r(28)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_without_text_input_is_typed_on_a_temporary_keymap() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "text"]).await;
    input_seen(&mut client);
    let report = send(
        &host,
        win.handle,
        vec![InputEvent::Text {
            text: "héllo 😀\n".into(),
        }],
    )
    .await;
    assert_eq!(report.text_paths, [TextPath::Keymap]);
    let seen = input_seen(&mut client);
    let keymaps = seen.iter().filter(|v| ev("keymap")(v)).count();
    assert_eq!(
        keymaps, 2,
        "a temporary keymap, then the session's again: {seen:?}"
    );
    let presses = seen
        .iter()
        .filter(|v| ev("key")(v) && v["state"] == "pressed")
        .count();
    assert_eq!(presses, "héllo 😀\n".chars().count());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_to_a_covered_window_activates_it_or_not_as_asked() {
    let host = start(Config::default());
    let (mut back, back_win) = client_window(&host, &["--title", "back"]).await;
    let (_front, _) = client_window(&host, &["--title", "front"]).await;
    input_seen(&mut back);
    let click = || {
        vec![InputEvent::Click {
            x: 30.0,
            y: 30.0,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        }]
    };

    let report = host
        .input(
            back_win.handle,
            click(),
            InputOptions {
                activate: false,
                ..InputOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(!report.activated);
    host.settle(back_win.handle, SHORT).await.unwrap();
    let seen = input_seen(&mut back);
    assert_eq!(
        seen.iter().filter(|v| ev("button")(v)).count(),
        2,
        "delivered while covered: {seen:?}"
    );
    let now = host.windows().await.unwrap();
    let back_now = now.iter().find(|w| w.handle == back_win.handle).unwrap();
    assert!(!back_now.focused && !back_now.on_screen && back_now.z == 1);

    let report = host
        .input(back_win.handle, click(), InputOptions::default())
        .await
        .unwrap();
    assert!(report.activated);
    let now = host.windows().await.unwrap();
    let back_now = now.iter().find(|w| w.handle == back_win.handle).unwrap();
    assert!(back_now.focused && back_now.on_screen && back_now.z == 0);

    // Already in front and focused: nothing to activate.
    let report = host
        .input(back_win.handle, click(), InputOptions::default())
        .await
        .unwrap();
    assert!(!report.activated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_whole_and_the_session_keeps_working() {
    let host = start(Config::default());
    let (mut client, win) = client_window(&host, &["--title", "bad"]).await;
    input_seen(&mut client);
    let click = InputEvent::Click {
        x: 5.0,
        y: 5.0,
        button: Button::Left,
        clicks: 1,
        mods: Mods::default(),
    };

    let cases: Vec<(Vec<InputEvent>, &str)> = vec![
        (vec![], "at least one event"),
        (
            vec![
                click.clone(),
                InputEvent::Key {
                    key: "Ctrl+Frobnicate".into(),
                },
            ],
            "Frobnicate",
        ),
        (
            vec![InputEvent::Key {
                key: "Hyper+A".into(),
            }],
            "Hyper",
        ),
        (
            vec![InputEvent::Click {
                x: 900.0,
                y: 5.0,
                button: Button::Left,
                clicks: 1,
                mods: Mods::default(),
            }],
            "outside the window",
        ),
        (
            vec![InputEvent::Click {
                x: 5.0,
                y: -1.0,
                button: Button::Left,
                clicks: 1,
                mods: Mods::default(),
            }],
            "outside the window",
        ),
        (
            vec![InputEvent::Click {
                x: 5.0,
                y: 5.0,
                button: Button::Left,
                clicks: 4,
                mods: Mods::default(),
            }],
            "clicks",
        ),
        (
            vec![InputEvent::Text {
                text: "bell\u{7}".into(),
            }],
            "U+0007",
        ),
        (vec![InputEvent::Key { key: "😀".into() }], "text event"),
    ];
    for (events, expect) in cases {
        let err = host
            .input(win.handle, events.clone(), InputOptions::default())
            .await
            .unwrap_err();
        match &err {
            HostError::InvalidRequest(m) => assert!(m.contains(expect), "{events:?}: {m}"),
            other => panic!("{events:?}: expected an invalid request, got {other:?}"),
        }
    }
    host.settle(win.handle, SHORT).await.unwrap();
    assert!(
        !input_seen(&mut client).iter().any(|v| ev("button")(v)),
        "a refused request sent nothing, not even its valid first event"
    );

    let gone = WindowHandle { id: 4242, epoch: 1 };
    assert_eq!(
        host.input(gone, vec![click.clone()], InputOptions::default())
            .await
            .unwrap_err(),
        HostError::NoWindow(gone)
    );

    host.window_command(win.handle, WindowCommand::ForceClose)
        .await
        .unwrap();
    let err = host
        .input(win.handle, vec![click.clone()], InputOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err, HostError::NoWindow(win.handle));

    // The session still works for a new window.
    let (mut other, other_win) = client_window(&host, &["--title", "after"]).await;
    input_seen(&mut other);
    send(&host, other_win.handle, vec![click]).await;
    assert_eq!(
        input_seen(&mut other)
            .iter()
            .filter(|v| ev("button")(v))
            .count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foot_runs_a_typed_command() {
    assert!(have("foot"), "foot is not installed (apt-get install foot)");
    let dir = std::env::temp_dir().join(format!("wayrig-foot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("done");
    let path = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    // The shell's write to the fifo is the effect we wait on: no polling.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };

    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    host.launch(LaunchSpec {
        argv: vec!["foot".into(), "--".into(), "sh".into()],
        env: vec![("PS1".into(), "$ ".into())],
        ..Default::default()
    })
    .await
    .unwrap();
    let win = wait_window(&mut watch, APP_START, |w| w.app_id == "foot").await;
    host.settle(win.handle, SHORT).await.unwrap();
    // The tab and the Unicode go as keys, in order.
    let command = format!("echo 'typed:\tünïcödé ✓' > {}\n", fifo.display());
    let report = host
        .input(
            win.handle,
            vec![InputEvent::Text { text: command }],
            InputOptions::default(),
        )
        .await
        .unwrap();
    // foot enables text-input-v3, as a terminal's: its text goes as keys,
    // since foot drops a commit its own cursor update crossed.
    assert_eq!(
        report.text_paths,
        [TextPath::Keymap],
        "foot's terminal field takes keys"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(reader.join().unwrap()));
    let written = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the typed command ran");
    assert_eq!(written, "typed:\tünïcödé ✓\n");
    let _ = std::fs::remove_dir_all(&dir);
}
