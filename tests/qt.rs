//! A Qt 6 app (a PyQt6 fixture) under Wayrig: hosted on the Qt Wayland shell
//! plugin, captured, and driven with pointer and Unicode text input; and a
//! Qt 5 keypad whose elements are placed where it draws them.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use support::{layout_centre, live, start, wait_window, ActById, Image, TestClient};
use wayrig_compositor::{Config, Decorations};
use wayrig_host::{Button, Host, InputEvent, InputOptions, Mods};
use wayrig_services::{Action, Role};

const SHORT: Duration = Duration::from_secs(20);

fn have_pyqt6() -> bool {
    std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import PyQt6.QtWidgets"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Start the Qt fixture; returns it, its layout, and its window.
async fn open_fixture(
    compositor: &wayrig_compositor::CompositorHost,
) -> (TestClient, serde_json::Value, wayrig_host::WindowInfo) {
    assert!(
        have_pyqt6(),
        "PyQt6 is not installed (apt-get install python3-pyqt6 qt6-wayland)"
    );
    let mut watch = compositor.watch_windows().await.unwrap();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qt6-fixture.py");
    let mut app = TestClient::spawn_program(
        compositor,
        Path::new("/usr/bin/python3"),
        &[fixture.to_str().unwrap()],
        &[],
    );
    let layout = app.expect("layout", SHORT, |_| true);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "wayrig-qt6-fixture").await;
    (app, layout, win)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qt6_app_is_hosted_and_driven() {
    // Server-side decorations: Qt then draws none, and its widgets start at the content.
    let compositor = Arc::new(start(Config {
        decorations: Decorations::Server,
        ..Config::default()
    }));
    let host: Arc<dyn Host> = compositor.clone();
    let (mut app, layout, win) = open_fixture(&compositor).await;
    assert_eq!(win.pid, Some(app.pid()));
    host.settle(win.handle, SHORT).await.unwrap();
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    assert!(shot.distinct_colours() > 10, "Qt drew its widgets");

    let click = |at: (f64, f64)| InputEvent::Click {
        x: at.0,
        y: at.1,
        button: Button::Left,
        clicks: 1,
        mods: Mods::default(),
    };
    host.input(
        win.handle,
        vec![click(layout_centre(&layout, "button"))],
        InputOptions::default(),
    )
    .await
    .unwrap();
    app.expect("clicked", SHORT, |_| true);

    host.input(
        win.handle,
        vec![click(layout_centre(&layout, "entry"))],
        InputOptions::default(),
    )
    .await
    .unwrap();
    host.settle(win.handle, SHORT).await.unwrap();
    let text = "Grüße, 中文 😀";
    let report = host
        .input(
            win.handle,
            vec![InputEvent::Text { text: text.into() }],
            InputOptions::default(),
        )
        .await
        .unwrap();
    app.expect("entry", SHORT, |v| v["text"] == text);
    // Qt 6.4 does not enable text-input-v3 here: the keymap path types it.
    assert_eq!(report.text_paths, [wayrig_host::TextPath::Keymap]);
}

/// Qt's accessibility on the session's private bus: its widgets are read with
/// roles, names, keys and bounds, and acted on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qt6_apps_elements_are_read_and_acted_on() {
    let session = live(Config {
        decorations: Decorations::Server,
        ..Config::default()
    })
    .await;
    let compositor = session.host().clone();
    let host: Arc<dyn Host> = compositor.clone();
    let (mut app, layout, win) = open_fixture(&compositor).await;
    session.settle(win.handle, SHORT).await.unwrap();
    let tree = session.tree(win.handle).await.unwrap();
    let button = tree
        .find(Role::Button, "Press")
        .next()
        .unwrap_or_else(|| panic!("a Press button in {:#?}", tree.nodes))
        .clone();
    let entry = tree
        .find(Role::TextInput, "Name")
        .next()
        .expect("the Name field")
        .clone();
    assert!(button.actions.iter().any(|a| a == "Press"), "{button:?}");
    // The button's pixels lie inside its bounds: its label is drawn there.
    let bounds = button.bounds.expect("button bounds");
    let (cx, cy) = layout_centre(&layout, "button");
    assert!(
        bounds.contains_point(cx, cy),
        "Qt's own layout puts the button's centre ({cx}, {cy}) inside its bounds {bounds:?}"
    );
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    let inside = shot.crop(bounds);
    assert!(
        inside.distinct_colours() > 3,
        "the button is drawn at {bounds:?}"
    );

    session
        .act_by_id(win.handle, button.id, Action::Press)
        .await
        .unwrap();
    app.expect("clicked", SHORT, |_| true);
    session
        .act_by_id(
            win.handle,
            entry.id,
            Action::SetValue { text: "Ada".into() },
        )
        .await
        .unwrap();
    app.expect("entry", SHORT, |v| v["text"] == "Ada");
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert_eq!(
        after
            .node(entry.id)
            .and_then(|n| n.value.clone())
            .as_deref(),
        Some("Ada"),
        "a read after settle shows the new text"
    );

    // A check box and a spin box: each action shows in the next read.
    let check = after
        .find(Role::CheckBox, "Enabled")
        .next()
        .unwrap_or_else(|| panic!("an Enabled check box in {:#?}", after.nodes))
        .clone();
    assert!(!check.states.checked);
    let spin = after
        .find(Role::SpinButton, "Amount")
        .next()
        .unwrap_or_else(|| panic!("an Amount spin box in {:#?}", after.nodes))
        .clone();
    assert_eq!(
        spin.range.map(|r| (r.min, r.max, r.now)),
        Some((0.0, 100.0, 0.0))
    );
    session
        .act_by_id(win.handle, check.id, Action::Press)
        .await
        .unwrap();
    app.expect("check", SHORT, |v| v["on"] == true);
    session
        .act_by_id(win.handle, spin.id, Action::SetValue { text: "42".into() })
        .await
        .unwrap();
    app.expect("spin", SHORT, |v| v["value"] == 42);
    session
        .act_by_id(win.handle, spin.id, Action::Increment)
        .await
        .unwrap();
    app.expect("spin", SHORT, |v| v["value"] == 43);
    session.settle(win.handle, SHORT).await.unwrap();
    let last = session.tree(win.handle).await.unwrap();
    assert!(
        last.node(check.id).unwrap().states.checked,
        "checked after settle"
    );
    assert_eq!(
        last.node(spin.id).and_then(|n| n.range).map(|r| r.now),
        Some(43.0)
    );

    // A tree item: expanded and collapsed with the keys a person uses, as
    // Qt's only action on it ("Toggle") selects it.
    let parent = last
        .find(Role::Cell, "Parent")
        .next()
        .unwrap_or_else(|| panic!("a Parent item in {:#?}", last.nodes))
        .clone();
    assert!(parent.states.expandable && !parent.states.expanded);
    assert!(last.find(Role::Cell, "Child").next().is_none(), "collapsed");
    let path = session
        .act_by_id(win.handle, parent.id, Action::Expand)
        .await
        .unwrap();
    assert_eq!(path, wayrig_services::Path::Keyboard);
    app.expect("tree", SHORT, |v| v["expanded"] == true);
    session.settle(win.handle, SHORT).await.unwrap();
    let open = session.tree(win.handle).await.unwrap();
    // Qt makes new accessible objects for its items as the view changes.
    let parent = open.find(Role::Cell, "Parent").next().unwrap().clone();
    assert!(parent.states.expanded, "expanded after settle");
    assert!(
        open.find(Role::Cell, "Child").next().is_some(),
        "the child shows"
    );
    session
        .act_by_id(win.handle, parent.id, Action::Collapse)
        .await
        .unwrap();
    app.expect("tree", SHORT, |v| v["expanded"] == false);
}

/// Qt 5 answers window coordinates wrong (its x for y) and, drawing its own
/// title bar, places elements from below it: each key of a Qt 5 keypad,
/// under the client-side decorations Wayrig asks for by default, is read
/// where Qt laid it out, and a click at its centre presses that key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qt5_keypads_keys_are_placed_where_they_show_and_clicked_there() {
    let session = live(Config::default()).await;
    let compositor = session.host().clone();
    let host: Arc<dyn Host> = compositor.clone();
    let mut watch = compositor.watch_windows().await.unwrap();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qt5-keypad.py");
    let mut app = TestClient::spawn_program(
        &compositor,
        Path::new("/usr/bin/python3"),
        &[fixture.to_str().unwrap()],
        &[],
    );
    let layout = app.expect("layout", SHORT, |_| true);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "wayrig-qt5-keypad").await;
    session.settle(win.handle, SHORT).await.unwrap();
    let tree = session.tree(win.handle).await.unwrap();
    for digit in "789456123".chars().map(String::from) {
        let key = tree
            .find(Role::Button, &digit)
            .next()
            .unwrap_or_else(|| panic!("key {digit} in {:#?}", tree.nodes));
        let bounds = key
            .bounds
            .unwrap_or_else(|| panic!("key {digit} has bounds"));
        let laid = &layout["keys"][&digit];
        let (x, y) = (laid["x"].as_i64().unwrap(), laid["y"].as_i64().unwrap());
        assert_eq!(
            (bounds.x as i64, bounds.y as i64),
            (x, y),
            "key {digit}: read at {bounds:?}, laid out at ({x}, {y})"
        );
    }
    for digit in ["2", "5", "9"] {
        let key = tree.find(Role::Button, digit).next().unwrap().id;
        let (x, y) = session.aim(win.handle, key).await.unwrap();
        host.input(
            win.handle,
            vec![InputEvent::Click {
                x,
                y,
                button: Button::Left,
                clicks: 1,
                mods: Mods::default(),
            }],
            InputOptions::default(),
        )
        .await
        .unwrap();
        app.expect("pressed", SHORT, |v| v["key"] == digit);
    }
}
