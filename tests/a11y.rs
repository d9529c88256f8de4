//! Accessibility end to end: a private session bus per session, trees of real
//! apps read in bulk and joined to the compositor's windows, exact bounds.

mod support;

use std::sync::Arc;
use std::time::Duration;

use support::{launch_and_wait, live, wait_window, ActById, Image, TestClient, APP_START};
use wayrig_compositor::Config;
use wayrig_host::{Host, Rect};
use wayrig_services::{Action, ElementClick, ElementRef, Node, Role, Session, Tree};
use wayrig_sessions::Live;

const SHORT: Duration = Duration::from_secs(15);

/// A session by Wayrig's recipe (its apps on a private bus), its host, and
/// its compositor.
async fn session() -> (Live, Arc<dyn Host>, Arc<wayrig_compositor::CompositorHost>) {
    let live = live(Config::default()).await;
    let compositor = live.host().clone();
    let host: Arc<dyn Host> = compositor.clone();
    (live, host, compositor)
}

/// The session's AT-SPI bus address, for a reader or a fault of a test's own.
fn a11y_address(live: &Live) -> String {
    live.buses().expect("the session's buses").a11y.clone()
}

/// Start the GTK4 fixture in the session; returns it, its layout, and its
/// window once settled.
async fn open_fixture(
    session: &Session,
    compositor: &wayrig_compositor::CompositorHost,
) -> (TestClient, serde_json::Value, wayrig_host::WindowInfo) {
    let fixture = support::Gtk4Fixture::open(compositor, &[]).await;
    session.settle(fixture.window, SHORT).await.unwrap();
    (fixture.app, fixture.layout, fixture.info)
}

/// Start the GTK 3 fixture in the session; returns it and its window once
/// settled.
async fn open_gtk3_fixture(
    session: &Session,
    host: &dyn Host,
    compositor: &wayrig_compositor::CompositorHost,
) -> (TestClient, wayrig_host::WindowInfo) {
    let mut watch = host.watch_windows().await.unwrap();
    let fixture =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk3-fixture.py");
    let mut app = TestClient::spawn_program(
        compositor,
        std::path::Path::new("/usr/bin/python3"),
        &[fixture.to_str().unwrap()],
        &[],
    );
    app.expect("ready", SHORT, |_| true);
    let win = wait_window(&mut watch, SHORT, |w| w.title == "wayrig-gtk3-fixture").await;
    session.settle(win.handle, SHORT).await.unwrap();
    (app, win)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_widget_factory_tree_is_read_whole_and_joined_to_its_window() {
    let (session, host, _c) = session().await;
    let win = launch_and_wait(&*host, &["gtk4-widget-factory"], APP_START).await;
    let tree = session.tree(win.handle).await.unwrap();

    assert!(
        tree.nodes.len() > 500,
        "GTK4's widget factory has ~950 elements, read {}",
        tree.nodes.len()
    );
    let root = &tree.nodes[0];
    assert_eq!(
        (root.role, root.name.as_str()),
        (Role::Window, "GTK Widget Factory")
    );
    assert_eq!(root.parent, None);
    // GTK 4 measures from the window's content: the frame covers it exactly.
    assert_eq!(
        root.bounds,
        Some(Rect::new(0, 0, win.content.width, win.content.height))
    );
    // Beyond role and name: placeholders, the actions toolkits name, and
    // relations that point at elements of the same tree.
    assert!(
        tree.nodes.iter().any(|n| n.role == Role::TextInput
            && n.annotations.placeholder.as_deref() == Some("Click icon to change mode")),
        "the entry's placeholder"
    );
    assert!(tree.nodes.iter().any(
        |n| n.role == Role::Button && n.actions.iter().any(|a| a.eq_ignore_ascii_case("click"))
    ));
    let controlled: Vec<u64> = tree
        .nodes
        .iter()
        .filter(|n| n.role == Role::Tab)
        .flat_map(|n| n.relations.controls.clone())
        .collect();
    assert!(!controlled.is_empty(), "tabs control their pages");
    assert!(
        controlled.iter().all(|id| tree.node(*id).is_some()),
        "a tab's page is in the tree"
    );
    // Parent and child links agree.
    for n in &tree.nodes {
        for c in &n.children {
            assert_eq!(
                tree.node(*c).map(|c| c.parent),
                Some(Some(n.id)),
                "child {c} of {}",
                n.id
            );
        }
    }
    let checks = tree
        .nodes
        .iter()
        .filter(|n| n.role == Role::CheckBox)
        .count();
    assert!(checks >= 6, "check boxes: {checks}");
    assert!(
        tree.nodes
            .iter()
            .any(|n| n.role == Role::TextInput && n.states.focused),
        "the focused entry"
    );
    assert!(tree.nodes.iter().any(|n| n.role == Role::Slider));
    // Ids are stable between reads. (A read may add objects GTK creates only
    // once asked for, such as the popovers the menu items control.)
    let again = session.tree(win.handle).await.unwrap();
    let now: std::collections::HashSet<u64> = again.nodes.iter().map(|n| n.id).collect();
    let lost: Vec<&Node> = tree.nodes.iter().filter(|n| !now.contains(&n.id)).collect();
    assert!(
        lost.is_empty(),
        "elements lost or renamed between reads: {lost:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn element_bounds_match_where_the_toolkit_drew_them() {
    let (session, host, compositor) = session().await;
    let (_app, layout, win) = open_fixture(&session, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();

    let button = tree
        .find(Role::Button, "Press")
        .next()
        .expect("the Press button");
    let b = &layout["button"];
    let expected = Rect::new(
        b["x"].as_f64().unwrap() as i32,
        b["y"].as_f64().unwrap() as i32,
        b["w"].as_f64().unwrap() as i32,
        b["h"].as_f64().unwrap() as i32,
    );
    // GTK reports the button's content box: inside its allocation, same centre.
    let got = button.bounds.expect("bounds");
    let inside = got.x >= expected.x
        && got.y >= expected.y
        && got.x + got.width <= expected.x + expected.width
        && got.y + got.height <= expected.y + expected.height;
    assert!(inside, "{got:?} is not inside the allocation {expected:?}");
    let centre = |r: Rect| (2 * r.x + r.width, 2 * r.y + r.height);
    let (gc, ec) = (centre(got), centre(expected));
    assert!(
        (gc.0 - ec.0).abs() <= 2 && (gc.1 - ec.1).abs() <= 2,
        "{got:?} and {expected:?} are not centred alike"
    );

    // The button's pixels are inside its bounds: its label darkens the middle row.
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    let r = button.bounds.unwrap();
    let row = (r.y + r.height / 2) as u32;
    let dark_inside = (r.x..r.x + r.width)
        .filter(|x| shot.pixel(*x as u32, row)[0] < 100)
        .count();
    assert!(
        dark_inside > 3,
        "no label pixels inside the button's bounds"
    );

    let entries: Vec<_> = tree
        .nodes
        .iter()
        .filter(|n| n.role == Role::TextInput)
        .collect();
    assert_eq!(entries.len(), 2, "two entries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_never_see_each_others_apps() {
    let (a, host_a, _ca) = session().await;
    let (b, host_b, _cb) = session().await;
    let win = launch_and_wait(&*host_a, &["gtk4-widget-factory"], APP_START).await;
    assert!(a.tree(win.handle).await.unwrap().nodes.len() > 500);
    assert!(host_b.windows().await.unwrap().is_empty());
    // Session B's accessibility bus has no app of session A.
    let err = b.tree(win.handle).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoWindow(_)),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_change_state_that_a_read_after_settle_shows() {
    use wayrig_services::{Action, Path};
    let (session, _host, compositor) = session().await;
    let (mut app, _layout, win) = open_fixture(&session, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();
    let id = |role: Role, name: &str| {
        tree.find(role, name)
            .next()
            .unwrap_or_else(|| panic!("{role:?} {name:?}"))
            .id
    };

    // Press: a pointer click at the button's centre, effective at once.
    let press = id(Role::Button, "Press");
    assert!(!tree.node(press).unwrap().states.focused);
    let path = session
        .act_by_id(win.handle, press, Action::Press)
        .await
        .unwrap();
    assert_eq!(path, Path::Pointer);
    app.expect("clicked", SHORT, |_| true);
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert!(
        after.node(press).unwrap().states.focused,
        "a read after settle shows the click's focus"
    );

    // Set a text field's value: replaced whole, and a read after settle shows it.
    let second = id(Role::TextInput, "Second");
    session
        .act_by_id(
            win.handle,
            second,
            Action::SetValue {
                text: "Grace Hopper".into(),
            },
        )
        .await
        .unwrap();
    app.expect("entry", SHORT, |v| v["text"] == "Grace Hopper");
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert_eq!(
        after
            .node(second)
            .expect("the field keeps its id")
            .value
            .as_deref(),
        Some("Grace Hopper")
    );

    // Focus moves to the other field.
    let path = session
        .act_by_id(win.handle, id(Role::TextInput, "First"), Action::Focus)
        .await
        .unwrap();
    assert_eq!(
        path,
        Path::Pointer,
        "GTK 4 refuses GrabFocus; a click on a text field focuses it"
    );
    app.expect("focus", SHORT, |v| v["name"] == "first");

    // Step and set a spin button through its Value interface.
    let spin = id(Role::SpinButton, "Amount");
    assert_eq!(
        session
            .act_by_id(win.handle, spin, Action::Increment)
            .await
            .unwrap(),
        Path::Accessibility
    );
    app.expect("spin", SHORT, |v| v["value"] == 1.0);
    session
        .act_by_id(win.handle, spin, Action::SetValue { text: "42".into() })
        .await
        .unwrap();
    app.expect("spin", SHORT, |v| v["value"] == 42.0);
    session
        .act_by_id(win.handle, spin, Action::Decrement)
        .await
        .unwrap();
    app.expect("spin", SHORT, |v| v["value"] == 41.0);
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert_eq!(
        after.node(spin).unwrap().range.map(|r| r.now),
        Some(41.0),
        "a read after settle shows the value"
    );

    // Type at the caret of a field (GTK 4 has no EditableText unfocused).
    session
        .act_by_id(
            win.handle,
            id(Role::TextInput, "First"),
            Action::InsertText { text: "Ada".into() },
        )
        .await
        .unwrap();
    app.expect("entry", SHORT, |v| {
        v["name"] == "first" && v["text"] == "Ada"
    });

    // Select characters of a field: "da" of "Ada".
    let first = id(Role::TextInput, "First");
    assert_eq!(
        session
            .act_by_id(win.handle, first, Action::SelectText { from: 1, to: 3 })
            .await
            .unwrap(),
        Path::Accessibility
    );
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert_eq!(
        after.node(first).unwrap().selection,
        Some((1, 3)),
        "a read after settle shows the selection"
    );
    // GTK 4.8's text view never answers a selection request: the keyboard
    // selects "beta" in "alpha beta gamma" instead. (Its selection cannot be
    // read back either, so the app tells.)
    let view = after
        .nodes
        .iter()
        .find(|n| n.role == Role::TextArea)
        .expect("the text view")
        .id;
    assert_eq!(
        session
            .act_by_id(win.handle, view, Action::SelectText { from: 6, to: 10 })
            .await
            .unwrap(),
        Path::Keyboard
    );
    app.expect("view_selection", SHORT, |v| v["text"] == "beta");
    assert!(matches!(
        session
            .act_by_id(win.handle, view, Action::SelectText { from: 4, to: 2 })
            .await,
        Err(wayrig_services::Error::InvalidRequest(_))
    ));
    // Past the end of the text: refused, not two billion key presses.
    assert!(matches!(
        session
            .act_by_id(
                win.handle,
                view,
                Action::SelectText {
                    from: 2_000_000_000,
                    to: 2_000_000_001
                }
            )
            .await,
        Err(wayrig_services::Error::InvalidRequest(_))
    ));

    // Errors are answers: an unknown element, a number that is not one.
    let err = session
        .act_by_id(win.handle, 12345, Action::Press)
        .await
        .unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoElement(_)),
        "{err:?}"
    );
    // A spin button is a text field too: a word goes in as text, not refused.
    let typed = session
        .act_by_id(
            win.handle,
            spin,
            Action::SetValue {
                text: "many".into(),
            },
        )
        .await
        .unwrap();
    assert!(matches!(typed, Path::Accessibility | Path::Keyboard));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk3_widget_factory_tree_is_read_and_placed() {
    let (session, host, _c) = session().await;
    let mapped = launch_and_wait(&*host, &["gtk3-widget-factory"], APP_START).await;
    // It may still be fitting its size after it maps (a starved factory
    // mapped at 1304 px wide and grew to 1413 after the tree was read):
    // once settled, the tree and the window's geometry are of one moment.
    session.settle(mapped.handle, SHORT).await.unwrap();
    let tree = session.tree(mapped.handle).await.unwrap();
    let win = host
        .windows()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.handle == mapped.handle)
        .unwrap();
    assert!(
        tree.nodes.len() > 150,
        "GTK3's widget factory has ~260 elements, read {}",
        tree.nodes.len()
    );
    // GTK 3 measures from its surface, shadow included: moved onto the content.
    assert_eq!(
        tree.nodes[0].bounds,
        Some(Rect::new(
            win.frame.x - win.content.x,
            win.frame.y - win.content.y,
            win.frame.width,
            win.frame.height
        ))
    );
    let page2 = tree
        .find(Role::RadioButton, "Page 2")
        .next()
        .expect("the Page 2 switcher");
    let b = page2.bounds.expect("on screen");
    assert!(
        b.x > 0 && b.y >= 0 && b.y < 60,
        "the switcher sits in the header bar: {b:?}"
    );
    // Pixels: the switcher's label is drawn inside its bounds.
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    let row = (b.y + b.height / 2) as u32;
    let dark = (b.x..b.x + b.width)
        .filter(|x| shot.pixel(*x as u32, row)[0] < 100)
        .count();
    assert!(dark > 3, "no label pixels inside {b:?}");
    // A table's size, and menu items' accelerators in the words menus use.
    assert!(tree.nodes.iter().any(|n| n.role == Role::Table
        && n.place.row_count.is_some_and(|r| r > 0)
        && n.place.col_count.is_some_and(|c| c > 0)));
    assert!(
        tree.nodes
            .iter()
            .filter_map(|n| n.annotations.key_shortcuts.as_deref())
            .any(|k| k.contains('+')),
        "key shortcuts such as Alt+I"
    );
    // Closed menus have no bounds rather than i32::MIN.
    assert!(tree
        .nodes
        .iter()
        .filter_map(|n| n.bounds)
        .all(|r| r.x > -10_000 && r.y > -10_000));
    // From page 2 to page 3, GTK 3 reports the places of page 3's widgets
    // as they slide in from near i32::MIN: the page still reads, those
    // places as none.
    for page in ["Page 2", "Page 3"] {
        let switcher = tree.find(Role::RadioButton, page).next().expect(page).id;
        session
            .act(
                mapped.handle,
                ElementRef::Id(switcher),
                wayrig_services::Action::Press,
                wayrig_services::ActOptions::default(),
            )
            .await
            .unwrap();
    }
    let shown = session.tree(mapped.handle).await.unwrap();
    assert!(shown.find(Role::Cell, "Charlemagne").next().is_some());
    let screen = 1 << 24;
    assert!(shown
        .nodes
        .iter()
        .filter_map(|n| n.bounds)
        .all(|r| r.x.abs() < screen && r.y.abs() < screen && r.width < screen));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elements_out_of_view_are_pressed_by_action_and_scrolled_into_view() {
    use wayrig_services::{Action, Path};
    let (session, _host, compositor) = session().await;
    let (mut app, _layout, win) = open_fixture(&session, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();
    // The list's last rows lie below the window's bottom edge.
    let rows: Vec<u64> = tree
        .nodes
        .iter()
        .filter(|n| n.role == Role::ListItem && n.bounds.is_some_and(|b| b.y > win.content.height))
        .map(|n| n.id)
        .collect();
    // Out of view, press uses the element's own action, else (a GTK 4 row
    // has none) scrolls it in and clicks it: never a click outside the window.
    let pressed = rows[rows.len() - 1];
    let result = session.act_by_id(win.handle, pressed, Action::Press).await;
    assert!(
        matches!(result, Ok(Path::Accessibility) | Ok(Path::Pointer)),
        "{result:?}"
    );
    app.expect("row", SHORT, |v| v["index"] == 299);
    let far_id = rows[0];
    // Scrolled into view (GTK 4.8 has no Component.ScrollTo: the viewport is
    // wheeled), a read after settle shows it inside the window.
    let path = session
        .act_by_id(win.handle, far_id, Action::ScrollIntoView)
        .await
        .unwrap();
    assert!(matches!(path, Path::Accessibility | Path::Pointer));
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    let b = after.node(far_id).and_then(|n| n.bounds).expect("bounds");
    assert!(
        b.y >= 0 && b.y + b.height / 2 < win.content.height,
        "still out of view: {b:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elements_of_two_windows_of_one_app_land_on_the_right_window() {
    use wayrig_services::Action;
    let (session, host, compositor) = session().await;
    let (mut app, _layout, first) = open_fixture(&session, &compositor).await;
    let mut watch = host.watch_windows().await.unwrap();
    let tree = session.tree(first.handle).await.unwrap();
    let opener = tree
        .find(Role::Button, "Open window")
        .next()
        .expect("the opener")
        .id;
    session
        .act_by_id(first.handle, opener, Action::Press)
        .await
        .unwrap();
    app.expect("opened", SHORT, |_| true);
    let second = wait_window(&mut watch, SHORT, |w| w.title == "wayrig-gtk4-second").await;
    assert_eq!(second.pid, first.pid, "one app, two windows");
    session.settle(second.handle, SHORT).await.unwrap();

    let a = session.tree(first.handle).await.unwrap();
    let b = session.tree(second.handle).await.unwrap();
    assert_eq!(b.nodes[0].name, "wayrig-gtk4-second");
    assert!(b.nodes.iter().any(|n| n.name == "Second window label"));
    assert!(!b.nodes.iter().any(|n| n.name == "Press"));
    assert!(a.nodes.iter().any(|n| n.name == "Press"));
    assert!(!a.nodes.iter().any(|n| n.name == "Second window label"));

    // A window that went away is an answer, not a crash.
    host.window_command(second.handle, wayrig_host::WindowCommand::Close)
        .await
        .unwrap();
    support::wait_closed(&mut watch, second.handle.id, SHORT).await;
    let err = session.tree(second.handle).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoWindow(_)),
        "{err:?}"
    );
    // Its elements are no element of the window that stayed.
    let label = b
        .nodes
        .iter()
        .find(|n| n.name == "Second window label")
        .unwrap()
        .id;
    let err = session
        .act_by_id(first.handle, label, Action::Press)
        .await
        .unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoElement(_)),
        "{err:?}"
    );
    // And a dead app too.
    host.window_command(first.handle, wayrig_host::WindowCommand::ForceClose)
        .await
        .unwrap();
    let err = session.tree(first.handle).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoWindow(_)),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_picks_a_list_row_and_show_menu_opens_a_context_menu() {
    use wayrig_services::Action;
    let (session, host, compositor) = session().await;
    let (_app, _layout, win) = open_fixture(&session, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();
    // The row that holds the label "row 3".
    let label = tree.find(Role::Label, "row 3").next().expect("row 3");
    let row = label.parent.expect("the label's row");
    assert!(!tree.node(row).unwrap().states.selected);
    session
        .act_by_id(win.handle, row, Action::Select)
        .await
        .unwrap();
    session.settle(win.handle, SHORT).await.unwrap();
    let after = session.tree(win.handle).await.unwrap();
    assert!(
        after.node(row).unwrap().states.selected,
        "a read after settle shows the row selected: {:?}",
        after.node(row)
    );

    // A text field's context menu opens as a popup of the window.
    let mut watch = host.watch_windows().await.unwrap();
    let first = after
        .find(Role::TextInput, "First")
        .next()
        .expect("First")
        .id;
    session
        .act_by_id(win.handle, first, Action::ShowMenu)
        .await
        .unwrap();
    let menu = wait_window(&mut watch, SHORT, |w| {
        w.kind == wayrig_host::WindowKind::Menu && w.pid == win.pid
    })
    .await;
    assert_eq!(
        menu.parent,
        Some(win.handle),
        "the menu belongs to the window"
    );
}

/// The process listening on a Unix socket path given in a D-Bus address, found
/// by its command line (at-spi-bus-launcher passes the address to its daemon).
fn daemon_of(address: &str) -> i32 {
    let path = address
        .strip_prefix("unix:path=")
        .and_then(|p| p.split(',').next())
        .expect("a unix:path address");
    let found = support::processes_naming(path, false);
    *found
        .first()
        .unwrap_or_else(|| panic!("no process serves {path}"))
}

/// An app without accessibility, an app that dies mid-read, and an
/// accessibility bus that went away are answers: the compositor's side keeps
/// working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_accessibility_a_dying_app_and_a_lost_bus_are_answers() {
    let (session, host, compositor) = session().await;
    let a11y_address = a11y_address(&session);

    // foot speaks no AT-SPI.
    let foot = launch_and_wait(&*host, &["foot"], APP_START).await;
    let err = session.tree(foot.handle).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::Unsupported(_)),
        "{err:?}"
    );

    // An app that dies while its tree is read: the read ends, with an
    // answer or an error, and the next one says the window is gone.
    let factory = launch_and_wait(&*host, &["gtk4-widget-factory"], APP_START).await;
    let mut watch = host.watch_windows().await.unwrap();
    let (read, _) = tokio::join!(
        tokio::time::timeout(SHORT, session.tree(factory.handle)),
        host.window_command(factory.handle, wayrig_host::WindowCommand::ForceClose)
    );
    assert!(read.is_ok(), "a read of a dying app ends");
    support::wait_closed(&mut watch, factory.handle.id, SHORT).await;
    let err = session.tree(factory.handle).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::NoWindow(_)),
        "{err:?}"
    );

    let (_app, _layout, win) = open_fixture(&session, &compositor).await;
    assert!(session.tree(win.handle).await.is_ok());
    let daemon = daemon_of(&a11y_address);
    // SAFETY: kill(2) on the accessibility bus daemon this test's session started.
    assert_eq!(unsafe { libc::kill(daemon, libc::SIGKILL) }, 0);
    let err = session.settle(win.handle, SHORT).await.unwrap_err();
    assert!(
        matches!(err, wayrig_services::Error::Failed(_)),
        "settling the accessibility side fails plainly: {err:?}"
    );
    // Windows, capture and input do not need the bus.
    assert_eq!(host.windows().await.unwrap().len(), 2);
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    assert!(shot.distinct_colours() > 3);
    host.settle(win.handle, SHORT).await.unwrap();
}

/// An app that stops answering (SIGSTOP) gives a timeout, not a hang, and is
/// read again once it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_app_times_out_and_is_read_again_once_it_answers() {
    use wayrig_services::Action;
    let (session, _host, compositor) = session().await;
    let stopped = support::Gtk4Fixture::open(&compositor, &[]).await;
    let other = support::Gtk4Fixture::open(&compositor, &[]).await;
    let before = session.tree(stopped.window).await.unwrap();
    let pid = stopped.app.pid() as i32;
    // SAFETY: kill(2) on the fixture this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    // The other app acts, so the stopped one's tree is no longer current.
    let tree = session.tree(other.window).await.unwrap();
    let entry = tree.find(Role::TextInput, "First").next().unwrap().id;
    session
        .act_by_id(other.window, entry, Action::SetValue { text: "x".into() })
        .await
        .unwrap();
    session.settle(other.window, SHORT).await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(60), session.tree(stopped.window))
        .await
        .expect("a read of a stopped app answers");
    let err = read.unwrap_err();
    assert!(matches!(err, wayrig_services::Error::Timeout(_)), "{err:?}");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let after = session.tree(stopped.window).await.unwrap();
    // GTK 4 may have made more objects since; none of the earlier ones is lost.
    for node in &before.nodes {
        assert!(after.node(node.id).is_some(), "{node:?} is read again");
    }
}

/// GTK 3: a tree view's row (read as its cell) is pressed as a person
/// selects it, with a click that selects it; not with its own "activate",
/// which runs the row as a double click does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_tree_row_pressed_is_selected_with_a_click() {
    use wayrig_services::{Action, Path};
    let (session, host, compositor) = session().await;
    let (mut app, win) = open_gtk3_fixture(&session, &*host, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();
    let parent = tree
        .find(Role::Cell, "Parent")
        .next()
        .expect("the Parent row")
        .id;
    session
        .act_by_id(win.handle, parent, Action::Expand)
        .await
        .unwrap();
    app.expect("tree", SHORT, |v| v["expanded"] == true);
    session.settle(win.handle, SHORT).await.unwrap();
    let open = session.tree(win.handle).await.unwrap();
    let child = open
        .find(Role::Cell, "Child")
        .next()
        .expect("the child row")
        .id;

    let path = session
        .act_by_id(win.handle, child, Action::Press)
        .await
        .unwrap();
    assert_eq!(path, Path::Pointer, "clicked where the row shows");
    app.expect("selected", SHORT, |v| {
        v["rows"] == serde_json::json!(["Child"])
    });
    session.settle(win.handle, SHORT).await.unwrap();
    app.drain();
    assert!(
        !app.seen.iter().any(|v| v["ev"] == "activated"),
        "the row was selected, not run"
    );
    let read = session.tree(win.handle).await.unwrap();
    assert!(read.node(child).unwrap().states.selected);
}

/// gtk3-demo's list of demos: a row scrolled out of the list (GTK 3 gives
/// its cell no place, and the row's cell holding it none either) is
/// scrolled to and selected with a click; the demo it names shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_demo_row_scrolled_away_is_scrolled_to_and_selected() {
    let (session, host, _c) = session().await;
    let win = launch_and_wait(&*host, &["gtk3-demo"], APP_START).await;
    session.settle(win.handle, SHORT).await.unwrap();
    let away = named(
        &session.tree(win.handle).await.unwrap(),
        Role::Cell,
        "Spin Button",
    );
    assert!(away.bounds.is_none(), "scrolled out of the list: {away:?}");

    let path = session
        .act_by_id(win.handle, away.id, Action::Press)
        .await
        .unwrap();
    assert_eq!(path, wayrig_services::Path::Pointer);
    session.settle(win.handle, SHORT).await.unwrap();
    let read = session.tree(win.handle).await.unwrap();
    let shown = named(&read, Role::Cell, "Spin Button");
    assert!(
        shown.states.selected && shown.bounds.is_some(),
        "scrolled to and selected: {shown:?}"
    );
    assert_eq!(
        read.nodes[0].name, "Spin Button",
        "the demo's window says it"
    );
}

/// GTK 3: an expander and a tree view row expand and collapse, and a read
/// after settle shows it. The tree view's rows are read by index, as GTK 3's
/// bridge lists no children of an object that manages its descendants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk3_expanders_and_tree_rows_expand_and_collapse() {
    use wayrig_services::{Action, Path};
    let (session, host, compositor) = session().await;
    let (mut app, win) = open_gtk3_fixture(&session, &*host, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();

    let row = tree
        .find(Role::Cell, "Parent")
        .next()
        .expect("the Parent row")
        .id;
    assert!(tree.node(row).unwrap().states.expandable);
    assert!(tree.find(Role::Cell, "Child").next().is_none(), "collapsed");
    let path = session
        .act_by_id(win.handle, row, Action::Expand)
        .await
        .unwrap();
    assert_eq!(path, Path::Accessibility, "GTK 3's \"expand or contract\"");
    app.expect("tree", SHORT, |v| v["expanded"] == true);
    session.settle(win.handle, SHORT).await.unwrap();
    let open = session.tree(win.handle).await.unwrap();
    assert!(open.node(row).unwrap().states.expanded);
    let child = open
        .find(Role::Cell, "Child")
        .next()
        .expect("the child row");
    assert!(child.bounds.is_some(), "the child row shows");
    session
        .act_by_id(win.handle, row, Action::Collapse)
        .await
        .unwrap();
    app.expect("tree", SHORT, |v| v["expanded"] == false);

    // GTK 3's expander is an expandable toggle button: a disclosure.
    let more = tree
        .find(Role::Disclosure, "More")
        .next()
        .expect("the expander")
        .id;
    session
        .act_by_id(win.handle, more, Action::Expand)
        .await
        .unwrap();
    app.expect("expander", SHORT, |v| v["expanded"] == true);
    session.settle(win.handle, SHORT).await.unwrap();
    let open = session.tree(win.handle).await.unwrap();
    assert!(open.node(more).unwrap().states.expanded);
    session
        .act_by_id(win.handle, more, Action::Collapse)
        .await
        .unwrap();
    app.expect("expander", SHORT, |v| v["expanded"] == false);
    session.settle(win.handle, SHORT).await.unwrap();
    let closed = session.tree(win.handle).await.unwrap();
    assert!(!closed.node(more).unwrap().states.expanded);
}

/// GTK 4 list rows do what they advertise wherever the list is scrolled:
/// `press` activates a row scrolled away (GTK 4 gives rows no action), and
/// `focus` reaches one, by the wheel or, once the list has the focus, by
/// the arrow keys (the list keeps its focused row in view).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_list_rows_out_of_view_are_pressed_and_focused() {
    use wayrig_services::Action;
    let (session, _host, compositor) = session().await;
    let (mut app, _layout, win) = open_fixture(&session, &compositor).await;
    let rows = |tree: &Tree| -> Vec<u64> {
        tree.nodes
            .iter()
            .filter(|n| n.role == Role::ListItem)
            .map(|n| n.id)
            .collect()
    };
    let tree = session.tree(win.handle).await.unwrap();
    let items = rows(&tree);
    assert_eq!(items.len(), 300);
    assert!(tree.node(items[250]).unwrap().states.offscreen);
    session
        .act_by_id(win.handle, items[250], Action::Press)
        .await
        .unwrap();
    app.expect("row", SHORT, |v| v["index"] == 250);

    for index in [150, 120, 30] {
        session
            .act_by_id(win.handle, items[index], Action::Focus)
            .await
            .unwrap_or_else(|e| panic!("focus row {index}: {e}"));
        session.settle(win.handle, SHORT).await.unwrap();
        let tree = session.tree(win.handle).await.unwrap();
        let focused = tree.nodes.iter().find(|n| n.states.focused).map(|n| n.id);
        assert_eq!(focused, Some(items[index]), "row {index} has the focus");
    }
    // With the focus in the list, a press far off still reaches its row.
    session
        .act_by_id(win.handle, items[200], Action::Press)
        .await
        .unwrap();
    app.expect("row", SHORT, |v| v["index"] == 200);
}

/// A GTK 3 calendar, which shows no children, is a node of its own where
/// it shows, not left out as a container.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_calendar_is_in_the_tree() {
    let (session, host, compositor) = session().await;
    let (_app, win) = open_gtk3_fixture(&session, &*host, &compositor).await;
    let read = session
        .snapshot(win.handle, &wayrig_services::ReadOptions::default())
        .await
        .unwrap();
    let calendar = &read
        .elements
        .iter()
        .find(|e| e.node.native_role == "calendar")
        .expect("the calendar has a node")
        .node;
    assert_eq!(calendar.role, Role::Grid);
    let b = calendar.bounds.expect("the calendar shows");
    assert!(b.width > 150 && b.height > 100, "{b:?}");
}

/// A GTK 3 combo box's menu shows on a popup and GTK measures its rows
/// from that popup: its rows are placed there, so pressing one (the pointer
/// at its centre, checked to hit it) chooses it, not a point of the window
/// under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_combo_box_row_is_chosen_by_a_press() {
    let (session, host, compositor) = session().await;
    let (mut app, win) = open_gtk3_fixture(&session, &*host, &compositor).await;
    let tree = session.tree(win.handle).await.unwrap();
    let combo = tree
        .nodes
        .iter()
        .find(|n| n.role == Role::PopUpButton)
        .expect("the combo box")
        .id;
    session
        .act_by_id(win.handle, combo, Action::Press)
        .await
        .unwrap();
    let tree = session.tree(win.handle).await.unwrap();
    let pro = tree
        .find(Role::MenuItem, "Pro")
        .next()
        .unwrap_or_else(|| panic!("the open menu's Pro row in {:#?}", tree.nodes))
        .clone();
    let popup = host
        .windows()
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.kind == wayrig_host::WindowKind::Menu)
        .expect("the menu's popup");
    let b = pro.bounds.expect("the row shows");
    let (cx, cy) = (
        win.content.x + b.x + b.width / 2,
        win.content.y + b.y + b.height / 2,
    );
    assert!(
        popup.content.contains_point(cx as f64, cy as f64),
        "the row {b:?} is on its popup {:?}",
        popup.content
    );
    session
        .act_by_id(win.handle, pro.id, Action::Press)
        .await
        .unwrap();
    app.expect("plan", SHORT, |v| v["choice"] == "Pro");
}

/// A left click, once.
const LEFT_CLICK: ElementClick = ElementClick {
    button: wayrig_host::Button::Left,
    count: 1,
};

/// The first element of the tree with this role and name.
fn named(tree: &Tree, role: Role, name: &str) -> Node {
    tree.find(role, name)
        .next()
        .unwrap_or_else(|| panic!("no {role:?} {name:?} in the tree"))
        .clone()
}

/// A GTK 3 menu bar's open menu shows on a popup GTK measures its items
/// from (the popup's surface, in window coordinates): they are placed on
/// it, and a click lands on the item (it was sent to the window under the
/// item's popup-relative place: View > Statusbar clicked at (92, 50), drawn
/// at (490, 158)).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_menu_bar_item_is_clicked_on_the_popup_it_shows_on() {
    let (session, host, _c) = session().await;
    let win = launch_and_wait(&*host, &["gtk3-widget-factory"], APP_START).await;
    let page2 = named(
        &session.tree(win.handle).await.unwrap(),
        Role::RadioButton,
        "Page 2",
    );
    session
        .act_by_id(win.handle, page2.id, Action::Press)
        .await
        .unwrap();
    let view = named(&session.tree(win.handle).await.unwrap(), Role::Menu, "View");
    let open_view = || async {
        session
            .act_by_id(win.handle, view.id, Action::Press)
            .await
            .unwrap();
        named(
            &session.tree(win.handle).await.unwrap(),
            Role::CheckMenuItem,
            "Statusbar",
        )
    };
    let statusbar = open_view().await;
    let b = statusbar.bounds.expect("Statusbar shows");
    assert!(
        statusbar.states.checked && b.y > view.bounds.unwrap().y,
        "open, Statusbar shows checked below View: {statusbar:?}"
    );
    let clicked = session
        .click_element(win.handle, ElementRef::Id(statusbar.id), LEFT_CLICK)
        .await
        .unwrap();
    let (x, y) = clicked.at;
    assert!(
        b.contains_rect(&Rect::new(x as i32, y as i32, 1, 1)),
        "clicked at ({x}, {y}), inside {b:?}"
    );
    let reopened = open_view().await;
    assert!(
        !reopened.states.checked,
        "the click unchecked Statusbar: {reopened:?}"
    );
}

/// A GTK 3 popover shows on a subsurface of its window, its menu button its
/// parent to the app, and GTK measures its buttons from that subsurface in
/// window coordinates: closed, they do not show and a click on one is
/// refused; open, they show where it draws them, a click lands (checked
/// with the popover, which the window's answer leaves out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_popover_button_is_clicked_where_it_shows_and_refused_once_closed() {
    let (session, host, compositor) = session().await;
    let (mut app, win) = open_gtk3_fixture(&session, &*host, &compositor).await;
    let tidy = |tree: &Tree| named(tree, Role::Button, "Tidy");
    let closed = tidy(&session.tree(win.handle).await.unwrap());
    assert!(
        closed.states.offscreen,
        "closed, Tidy does not show: {closed:?}"
    );

    let tree = session.tree(win.handle).await.unwrap();
    let tools = tree
        .nodes
        .iter()
        .find(|n| n.name == "Tools")
        .expect("the Tools menu button");
    let tools_bounds = tools.bounds.expect("Tools shows");
    session
        .act_by_id(win.handle, tools.id, Action::Press)
        .await
        .unwrap();
    let open = tidy(&session.tree(win.handle).await.unwrap());
    let b = open.bounds.expect("Tidy has bounds");
    let content = Rect::new(0, 0, win.content.width, win.content.height);
    assert!(
        !open.states.offscreen && content.contains_rect(&b) && !b.intersects(&tools_bounds),
        "open, Tidy shows in the window, off its button {tools_bounds:?}: {open:?}"
    );
    session
        .click_element(win.handle, ElementRef::Id(open.id), LEFT_CLICK)
        .await
        .unwrap();
    app.expect("tool", SHORT, |v| v["name"] == "Tidy");

    // The click closed the popover, and its answer came once it showed so.
    let closed = tidy(&session.tree(win.handle).await.unwrap());
    assert!(closed.states.offscreen, "closed again: {closed:?}");
    let refused = session
        .click_element(win.handle, ElementRef::Id(closed.id), LEFT_CLICK)
        .await
        .unwrap_err();
    // GTK 3 no longer lays out what a closed popover holds.
    assert!(
        matches!(&refused, wayrig_services::Error::Unsupported(why) if why.contains("not laid out")),
        "{refused:?}"
    );
}

/// The bounds the app gives now for each element of the window's frame,
/// every one asked for (a reader of its own, nothing kept), placed as the
/// session places them.
async fn bounds_asked_now(
    a11y: &wayrig_services::a11y::A11y,
    pid: Option<u32>,
    tree: &Tree,
) -> std::collections::HashMap<u64, Option<Rect>> {
    use wayrig_services::access::{Accessibility, Read};
    let root = &tree.nodes[0];
    for app in a11y.apps().await.unwrap() {
        if app.pid != pid {
            continue;
        }
        for frame in a11y.read_app(&app, Read::BulkAnew).await.unwrap() {
            if frame.nodes[0].id != root.id {
                continue;
            }
            // GTK 4 measures from the content, as the session does.
            return frame.nodes.iter().map(|n| (n.id, n.bounds)).collect();
        }
    }
    panic!("no frame of pid {pid:?} is the window's");
}

/// The elements whose bounds in `tree` are not the ones the app gave both
/// before and after it was read (what moved meanwhile, an animation, is
/// left out).
fn stale(
    tree: &Tree,
    before: &std::collections::HashMap<u64, Option<Rect>>,
    after: &std::collections::HashMap<u64, Option<Rect>>,
) -> Vec<String> {
    tree.nodes
        .iter()
        .filter_map(|n| {
            let now = after.get(&n.id)?;
            // A page the session found another page over is hidden on
            // purpose, not kept stale.
            let hidden = n.states.concealed;
            (before.get(&n.id) == Some(now) && *now != n.bounds && !hidden).then(|| {
                format!(
                    "{} {:?} {:?}: read {:?}, is {now:?}",
                    n.id, n.role, n.name, n.bounds
                )
            })
        })
        .collect()
}

/// Read the window, between two asks of every bound, until the read shows
/// each bound that held still across it as the app gives it. A bound kept
/// where it moved stays wrong however often it is read.
async fn read_matches_the_app(
    session: &Session,
    host: &dyn Host,
    a11y: &wayrig_services::a11y::A11y,
    win: &wayrig_host::WindowInfo,
    what: &str,
) -> Tree {
    let mut last = Vec::new();
    for _ in 0..5 {
        let tree = session.tree(win.handle).await.unwrap();
        let before = bounds_asked_now(a11y, win.pid, &tree).await;
        let read = session.tree(win.handle).await.unwrap();
        let after = bounds_asked_now(a11y, win.pid, &read).await;
        last = stale(&read, &before, &after);
        if last.is_empty() {
            return read;
        }
        // A frame committed while the read began may be counted only by the
        // next; a window that draws no more frames keeps what it showed.
        if host
            .wait_frames(win.handle, wayrig_host::FrameWait::Frames(2), SHORT)
            .await
            .is_err()
        {
            break;
        }
    }
    panic!("after {what}, reads kept bounds that moved: {last:#?}");
}

/// The element lies outside a scrolled view around it.
fn scrolled_away(tree: &Tree, n: &Node) -> bool {
    let Some(b) = n.bounds else { return false };
    let mut parent = n.parent.and_then(|p| tree.node(p));
    while let Some(p) = parent {
        if p.role == Role::ScrollView && p.bounds.is_some_and(|v| !v.intersects(&b)) {
            return true;
        }
        parent = p.parent.and_then(|p| tree.node(p));
    }
    false
}

/// How many bounds differ between two reads of the same elements.
fn moved(a: &Tree, b: &Tree) -> usize {
    a.nodes
        .iter()
        .filter(|n| b.node(n.id).is_some_and(|m| m.bounds != n.bounds))
        .count()
}

/// GTK 4 creates an object only once a client asks for it, and makes a
/// menu button's popover menu when the button's facts are asked: the first
/// read must hold what those calls made, not leave it to later reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_read_of_gtk4_holds_every_element_later_reads_find() {
    let (session, host, _c) = session().await;
    let win = launch_and_wait(&*host, &["gtk4-widget-factory"], APP_START).await;
    let first = session.tree(win.handle).await.unwrap();
    session.settle(win.handle, SHORT).await.ok();
    for read in 0..2 {
        let again = session.tree(win.handle).await.unwrap();
        let new: Vec<String> = again
            .nodes
            .iter()
            .filter(|n| first.node(n.id).is_none())
            .map(|n| format!("{:?} {:?}", n.role, n.name))
            .collect();
        assert!(
            new.is_empty(),
            "read {} found {} elements the first read ({} elements) lacked: {:?}",
            read + 2,
            new.len(),
            first.nodes.len(),
            &new[..new.len().min(10)]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_a_read_keeps_are_never_stale_after_pages_scrolls_and_resizes() {
    use wayrig_services::{Action, Area, WindowOp};
    let (session, host, _c) = session().await;
    let a11y = wayrig_services::a11y::A11y::connect(&a11y_address(&session))
        .await
        .unwrap();
    // It animates (spinners, progress): every read is fresh.
    let win = launch_and_wait(&*host, &["gtk4-widget-factory"], APP_START).await;
    let first = read_matches_the_app(&session, &*host, &a11y, &win, "opening").await;
    // Reads while it animates ask no bounds of what is not laid out and
    // does not show (the hidden pages: most of its elements), nor of what
    // lies where no pixel changed (GTK 4.8's cairo renderer damages its
    // whole surface each frame; its spinner and progress bar draw), and no
    // cache items again while no event said they changed.
    session.take_read_spans();
    let again = session.tree(win.handle).await.unwrap();
    let spans = session.take_read_spans();
    let calls = |phase: &str| -> usize {
        spans
            .iter()
            .filter(|s| s.phase == phase)
            .map(|s| s.calls)
            .sum()
    };
    assert!(
        calls("bounds") * 10 < again.nodes.len(),
        "asked bounds of {} of {} elements",
        calls("bounds"),
        again.nodes.len()
    );
    assert_eq!(calls("GetItems"), 0, "read the cache again: {spans:?}");

    // A stack page switched.
    let tab = first
        .find(Role::Tab, "Page 2")
        .next()
        .expect("the Page 2 tab")
        .id;
    session
        .act_by_id(win.handle, tab, Action::Press)
        .await
        .unwrap();
    let paged = read_matches_the_app(&session, &*host, &a11y, &win, "switching pages").await;
    assert!(moved(&first, &paged) > 0, "the page switch moved nothing");

    // A list scrolled: an element a scrolled view hides brought into view.
    let far = paged
        .nodes
        .iter()
        .find(|n| scrolled_away(&paged, n))
        .expect("an element scrolled out of view on page 2")
        .id;
    session
        .act_by_id(win.handle, far, Action::ScrollIntoView)
        .await
        .unwrap();
    let scrolled = read_matches_the_app(&session, &*host, &a11y, &win, "scrolling").await;
    assert!(moved(&paged, &scrolled) > 0, "the scroll moved nothing");

    // The window resized.
    let resized = session
        .window_op(
            win.handle,
            WindowOp::SetBounds {
                area: Area::Frame,
                position: None,
                size: Some((win.frame.width - 200, win.frame.height - 100)),
            },
        )
        .await
        .unwrap();
    let smaller = read_matches_the_app(&session, &*host, &a11y, &resized, "resizing").await;
    assert!(moved(&scrolled, &smaller) > 0, "the resize moved nothing");
}

/// GTK 4.8's list views keep the rows they scrolled away with the bounds
/// those last had, so after a scroll several rows claim each place. Only
/// the rows that show are laid out in the tree, and a press on a row left
/// behind reaches that row, not the one now in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_list_view_rows_scrolled_away_are_not_where_they_were() {
    use wayrig_host::{InputEvent, InputOptions, Mods};
    use wayrig_services::Action;
    let (session, host, _c) = session().await;
    let win = launch_and_wait(&*host, &["gtk4-demo"], APP_START).await;
    session.settle(win.handle, SHORT).await.unwrap();
    let demos = |tree: &Tree| -> u64 {
        tree.find(Role::List, "Demo list")
            .next()
            .expect("the demo list")
            .id
    };
    let tree = session.tree(win.handle).await.unwrap();
    let list = tree.node(demos(&tree)).unwrap().bounds.unwrap();
    for _ in 0..3 {
        let wheel = InputEvent::Wheel {
            x: f64::from(list.x + list.width / 2),
            y: f64::from(list.y + list.height / 2),
            dx: 0.0,
            dy: 600.0,
            precise: false,
            mods: Mods::default(),
        };
        session
            .input(win.handle, vec![wheel], InputOptions::default())
            .await
            .unwrap();
        session.settle(win.handle, SHORT).await.unwrap();
    }
    let tree = session.tree(win.handle).await.unwrap();
    let rows: Vec<&Node> = tree
        .nodes
        .iter()
        .filter(|n| n.parent == Some(demos(&tree)) && n.role == Role::ListItem)
        .collect();
    let shown: Vec<Rect> = rows
        .iter()
        .filter(|n| !n.states.offscreen)
        .filter_map(|n| n.bounds)
        .collect();
    assert!(!shown.is_empty(), "no row of the list shows");
    for (i, a) in shown.iter().enumerate() {
        assert!(a.intersects(&list), "a row outside the list shows: {a:?}");
        for b in &shown[i + 1..] {
            assert!(!a.intersects(b), "two rows show at one place: {a:?} {b:?}");
        }
    }
    // The first page's rows are all behind: none of them shows.
    let frames = rows
        .iter()
        .find(|r| {
            r.children
                .iter()
                .any(|c| tree.node(*c).is_some_and(|c| c.name == "Frames"))
        })
        .expect("the Frames row");
    assert!(frames.states.offscreen, "{frames:?}");

    session
        .act_by_id(win.handle, frames.id, Action::Press)
        .await
        .unwrap();
    session.settle(win.handle, SHORT).await.unwrap();
    let now = host.windows().await.unwrap();
    let title = &now.iter().find(|w| w.handle == win.handle).unwrap().title;
    assert_eq!(title, "Frames", "the demo chosen");
}
