//! `wayrig attach` on a desktop that is not Wayrig's: sway 1.7 headless with the
//! GTK 4 fixture and foot, driven over MyGo as a user would, and the portal host.
//!
//! Sway runs as the unprivileged desktop user; so do its apps and `attach`.

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use support::desktop::Desktop;
use support::{wait_ended, wait_window, Image, ProtocolClient, APP_START};
use wayrig_host::Host;
use wayrig_portal::PortalHost;
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
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    let (fixture_pid, fixture_out, _) =
        desktop.start_app(&["/usr/bin/python3", fixture.to_str().unwrap()]);
    let (foot_pid, _, _) = desktop.start_app(&["foot", "cat"]);
    let (socket, attach_log) = desktop.attach(&[]);
    // What sway 1.7 lacks is said when attach starts, in words a user can act on.
    assert!(attach_log.contains("no ext-image-copy-capture-v1 for single windows"));

    // The test's own portal host, beside attach's, for what MyGo does not carry.
    desktop.client_env();
    let host = Arc::new(
        PortalHost::attach(Some(desktop.swaysock.clone()))
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
