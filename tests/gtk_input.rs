//! Input into a real GTK4 app (a Python GI fixture reporting what its widgets
//! receive): Unicode text through both text paths, replacing a selection,
//! text mixed with newlines and tabs in order (GTK 3 too), focus order, word
//! and line selection by clicks, and wheel scrolling.
//! (Touchpad-style scrolling is checked at the protocol level in input.rs:
//! GTK 4.8's scrolled windows ignore a single-frame finger scroll burst.)

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{start, wait_window, Gtk4Fixture, TestClient};
use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{Button, Host, InputEvent, InputOptions, Mods, TextPath};

const SHORT: Duration = Duration::from_secs(15);

const CORPUS: &[&str] = &[
    "Grüße, café à la crème",
    "Ελληνικά γράμματα",
    "中文字符と日本語",
    "emoji 👩‍👩‍👧‍👦 and 🏳️‍🌈",
    "مرحبا بالعالم",
    "e\u{301} a\u{308} combining",
];

fn click(at: (f64, f64), clicks: u32) -> InputEvent {
    InputEvent::Click {
        x: at.0,
        y: at.1,
        button: Button::Left,
        clicks,
        mods: Mods::default(),
    }
}

async fn send(
    host: &CompositorHost,
    f: &Gtk4Fixture,
    events: Vec<InputEvent>,
) -> wayrig_host::InputReport {
    let report = host
        .input(f.window, events, InputOptions::default())
        .await
        .unwrap();
    host.settle(f.window, SHORT).await.unwrap();
    report
}

/// The last value an event of this kind reported, among those seen so far.
fn last(app: &mut TestClient, ev: &str) -> Option<Value> {
    app.drain();
    app.seen.iter().rev().find(|v| v["ev"] == ev).cloned()
}

async fn types_the_corpus(env: &[(&str, &str)], path: TextPath) {
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, env).await;
    send(&host, &f, vec![click(f.centre("second"), 1)]).await;
    assert_eq!(last(&mut f.app, "focus").unwrap()["name"], "second");
    for text in CORPUS {
        // Select all, then type: the text replaces what was there.
        let report = send(
            &host,
            &f,
            vec![
                InputEvent::Key {
                    key: "CmdOrCtrl+A".into(),
                },
                InputEvent::Text {
                    text: text.to_string(),
                },
            ],
        )
        .await;
        assert_eq!(report.text_paths, [path]);
        let entry = last(&mut f.app, "entry").expect("the entry changed");
        assert_eq!(entry["name"], "second");
        assert_eq!(
            entry["text"].as_str().unwrap(),
            *text,
            "typed through {path:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unicode_text_arrives_exactly_through_the_input_method() {
    types_the_corpus(&[], TextPath::InputMethod).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unicode_text_arrives_exactly_through_a_temporary_keymap() {
    // GTK's built-in input context does not use text-input: key presses it is.
    types_the_corpus(
        &[("GTK_IM_MODULE", "gtk-im-context-simple")],
        TextPath::Keymap,
    )
    .await;
}

/// Texts with newlines and tabs among their characters, typed one after
/// the other into an empty multi-line view, and what the view then holds.
const MIXED: &[&str] = &["ab\ncd", "\tx", "1\t2\n3\n\n\t4 ü"];

fn key(key: &str) -> InputEvent {
    InputEvent::Key { key: key.into() }
}

fn type_text(text: &str) -> InputEvent {
    InputEvent::Text { text: text.into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newlines_and_tabs_arrive_in_order_with_the_text_around_them() {
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    send(&host, &f, vec![click(f.centre("view"), 1)]).await;
    send(&host, &f, vec![key("CmdOrCtrl+A"), key("Delete")]).await;
    assert_eq!(last(&mut f.app, "view").unwrap()["text"], "");
    let mut expected = String::new();
    for text in MIXED {
        // Each text in one request, its keys sent between its chunks.
        let report = send(&host, &f, vec![type_text(text)]).await;
        assert_eq!(report.text_paths, [TextPath::InputMethod]);
        expected.push_str(text);
        assert_eq!(last(&mut f.app, "view").unwrap()["text"], *expected);
    }
    // Keys and text in one request: the text waits for the keys.
    send(
        &host,
        &f,
        vec![key("Return"), type_text("after"), key("Tab")],
    )
    .await;
    expected.push_str("\nafter\t");
    assert_eq!(last(&mut f.app, "view").unwrap()["text"], *expected);

    // A tab in a one-line entry moves the focus: what follows goes to the next.
    send(&host, &f, vec![click(f.centre("first"), 1)]).await;
    send(&host, &f, vec![key("CmdOrCtrl+A"), type_text("one\ttwo")]).await;
    f.app.drain();
    let typed = |name: &str| {
        f.app
            .seen
            .iter()
            .rev()
            .find(|v| v["ev"] == "entry" && v["name"] == name)
            .map(|v| v["text"].clone())
    };
    assert_eq!(typed("first").unwrap(), "one");
    assert_eq!(typed("second").unwrap(), "two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newlines_and_tabs_arrive_in_order_in_gtk3() {
    let host = start(Config::default());
    let mut watch = host.watch_windows().await.unwrap();
    let fixture =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk3-fixture.py");
    let mut app = TestClient::spawn_program(
        &host,
        std::path::Path::new("/usr/bin/python3"),
        &[fixture.to_str().unwrap()],
        &[],
    );
    app.expect("ready", SHORT, |_| true);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "wayrig-gtk3-fixture").await;
    host.settle(win.handle, SHORT).await.unwrap();
    let mut expected = String::new();
    for text in MIXED {
        host.input(win.handle, vec![type_text(text)], InputOptions::default())
            .await
            .unwrap();
        host.settle(win.handle, SHORT).await.unwrap();
        expected.push_str(text);
        assert_eq!(last(&mut app, "view").unwrap()["text"], *expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_moves_focus_backwards_and_clicks_press() {
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    send(&host, &f, vec![click(f.centre("second"), 1)]).await;
    assert_eq!(last(&mut f.app, "focus").unwrap()["name"], "second");
    send(
        &host,
        &f,
        vec![InputEvent::Key {
            key: "Shift+Tab".into(),
        }],
    )
    .await;
    assert_eq!(last(&mut f.app, "focus").unwrap()["name"], "first");
    send(&host, &f, vec![InputEvent::Key { key: "Tab".into() }]).await;
    assert_eq!(last(&mut f.app, "focus").unwrap()["name"], "second");

    send(&host, &f, vec![click(f.centre("button"), 1)]).await;
    f.app.drain();
    assert_eq!(f.app.count("clicked"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_click_selects_a_word_and_triple_click_the_line() {
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    let point = |name: &str| {
        (
            f.layout[name]["x"].as_f64().unwrap(),
            f.layout[name]["y"].as_f64().unwrap(),
        )
    };
    let (beta, line2) = (point("beta"), point("line2"));
    send(&host, &f, vec![click(line2, 3)]).await;
    let line = last(&mut f.app, "view_selection").unwrap();
    assert_eq!(
        line["text"].as_str().unwrap().trim_end(),
        "second line here"
    );
    // GTK counts presses against its own clock: clicks sent within its
    // double-click time continue the series, and it counts in threes.
    send(&host, &f, vec![click(beta, 2)]).await;
    assert_eq!(last(&mut f.app, "view_selection").unwrap()["text"], "beta");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wheel_scrolls_the_list_by_the_expected_amount() {
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    let at = f.centre("list");
    let page = f.layout["page"].as_f64().unwrap();

    // Wheel clicks move GTK's wheel step each: page_size^(2/3).
    send(
        &host,
        &f,
        vec![InputEvent::Wheel {
            x: at.0,
            y: at.1,
            dx: 0.0,
            dy: 30.0,
            precise: false,
            mods: Mods::default(),
        }],
    )
    .await;
    let after_wheel = last(&mut f.app, "scroll").expect("the list scrolled")["value"]
        .as_f64()
        .unwrap();
    let expected = 2.0 * page.powf(2.0 / 3.0);
    assert!(
        (after_wheel - expected).abs() < 2.0,
        "two wheel clicks moved {after_wheel} (expected {expected})"
    );

    // And back up by one click.
    send(
        &host,
        &f,
        vec![InputEvent::Wheel {
            x: at.0,
            y: at.1,
            dx: 0.0,
            dy: -15.0,
            precise: false,
            mods: Mods::default(),
        }],
    )
    .await;
    let back = last(&mut f.app, "scroll").unwrap()["value"]
        .as_f64()
        .unwrap();
    assert!(
        (back - expected / 2.0).abs() < 2.0,
        "one click up left {back}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_menu_opens_as_a_popup_window_takes_keys_and_closes() {
    use wayrig_host::{WindowEvent, WindowKind};
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    let mut watch = host.watch_windows().await.unwrap();
    send(&host, &f, vec![click(f.centre("menu"), 1)]).await;
    let menu = wait_window(&mut watch, SHORT, |w| w.kind == WindowKind::Menu).await;
    assert_eq!(
        menu.parent,
        Some(f.window),
        "the popover belongs to the fixture window"
    );
    assert!(
        menu.on_screen && menu.z == 0,
        "a menu is in front: {menu:?}"
    );
    let shot = support::Image::decode(&host.capture_window(menu.handle).await.unwrap());
    assert_eq!(
        (shot.width as i32, shot.height as i32),
        (menu.content.width, menu.content.height)
    );
    assert!(shot.distinct_colours() > 2, "the menu shows its items");
    // The count of changes to what the window shows includes its menu's.
    let shown_with_menu = host.commits(f.window).await.unwrap();

    // The popup grab gives the menu the keyboard; GTK highlights the first
    // item on opening, so Down then Enter chooses the second.
    host.input(
        menu.handle,
        vec![
            InputEvent::Key { key: "Down".into() },
            InputEvent::Key {
                key: "Enter".into(),
            },
        ],
        InputOptions::default(),
    )
    .await
    .unwrap();
    f.app.expect("menu", SHORT, |v| v["item"] == "beta");
    let deadline = tokio::time::Instant::now() + SHORT;
    loop {
        match tokio::time::timeout_at(deadline, watch.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            WindowEvent::Closed(h) if h == menu.handle => break,
            _ => {}
        }
    }
    // The menu going away is a change too: the count never goes back to a
    // value it had while the window showed something else.
    assert!(host.commits(f.window).await.unwrap() > shown_with_menu);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_after_a_menu_closed_by_escape_goes_where_it_is_sent() {
    use wayrig_host::{WindowEvent, WindowKind};
    let host = start(Config::default());
    let mut f = Gtk4Fixture::open(&host, &[]).await;
    let mut watch = host.watch_windows().await.unwrap();
    // Twice: the press that opens the menu and the press after it closed
    // meet the same popup grab each time.
    for round in 0..2 {
        send(&host, &f, vec![click(f.centre("menu"), 1)]).await;
        let menu = wait_window(&mut watch, SHORT, |w| w.kind == WindowKind::Menu).await;
        host.input(
            menu.handle,
            vec![InputEvent::Key {
                key: "Escape".into(),
            }],
            InputOptions::default(),
        )
        .await
        .unwrap();
        let deadline = tokio::time::Instant::now() + SHORT;
        loop {
            match tokio::time::timeout_at(deadline, watch.events.recv())
                .await
                .unwrap()
                .unwrap()
            {
                WindowEvent::Closed(h) if h == menu.handle => break,
                _ => {}
            }
        }
        f.app.drain();
        let clicks_before = f.app.count("clicked");
        send(&host, &f, vec![click(f.centre("button"), 1)]).await;
        let menus: Vec<_> = host
            .windows()
            .await
            .unwrap()
            .into_iter()
            .filter(|w| w.kind == WindowKind::Menu)
            .collect();
        assert!(
            menus.is_empty(),
            "round {round}: the press on Press opened the menu again: {menus:?}"
        );
        f.app.drain();
        assert_eq!(
            f.app.count("clicked"),
            clicks_before + 1,
            "round {round}: Press got the press"
        );
    }
}
