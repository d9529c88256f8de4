//! The session's shared layers end to end, as every face uses them: windows
//! kept from the host's stream, window operations that answer the state the app
//! drew, launch and open as a desktop does, elements named by snapshots, the
//! clipboard between the session and an app, and screenshots whose pixels map
//! back to global points.

mod support;

use std::sync::Arc;
use std::time::Duration;

use support::{live, start, Gtk4Fixture, Image, TestClient, APP_START};
use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{Host, InputEvent, InputOptions, WindowHandle, WindowInfo};
use wayrig_services::{
    ActOptions, ActReport, Action, AppSpec, Area, ClipboardText, CloseOutcome, ElementRef, Error,
    ImageFormat, Launch, LogicalRect, Menu, MenuRow, OpenTarget, Path, Query, ReadOptions, Role,
    Session, ShotRequest, ShotSource, WindowFilter, WindowOp, WindowPick,
};
use wayrig_sessions::{Live, Spec};

const SHORT: Duration = Duration::from_secs(15);

/// A session by Wayrig's recipe (its apps on a private bus), and its compositor.
async fn session() -> (Live, Arc<CompositorHost>) {
    let live = live(Config::default()).await;
    let compositor = live.host().clone();
    (live, compositor)
}

/// The element labelled `label`, as a query names it.
fn labelled(label: &str) -> ElementRef {
    ElementRef::Query(Box::new(Query {
        label: Some(label.into()),
        ..Query::default()
    }))
}

/// Press the element labelled `label` in `window`.
async fn press(session: &Session, window: WindowHandle, label: &str) -> Result<ActReport, Error> {
    session
        .act(
            window,
            labelled(label),
            Action::Press,
            ActOptions::default(),
        )
        .await
}

/// Wait, on the session's window stream, until its list shows a window the
/// predicate picks.
async fn kept_window(session: &Session, pick: impl Fn(&WindowInfo) -> bool) -> WindowInfo {
    let mut list = session.watch_windows();
    let found = tokio::time::timeout(APP_START, list.wait_for(|l| l.iter().any(&pick)))
        .await
        .unwrap_or_else(|_| panic!("no such window came: {:?}", session.windows()))
        .expect("the session's window stream");
    let window = found.iter().find(|w| pick(w)).cloned();
    window.expect("the window just seen")
}

/// Wait, on the session's window stream, until the window is gone.
async fn kept_gone(session: &Session, handle: WindowHandle) {
    let mut list = session.watch_windows();
    tokio::time::timeout(
        SHORT,
        list.wait_for(|l| !l.iter().any(|w| w.handle == handle)),
    )
    .await
    .unwrap_or_else(|_| panic!("{handle} stayed"))
    .expect("the session's window stream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maximize_and_restore_answer_the_window_as_the_app_drew_it() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let before = kept_window(&session, |w| w.handle == fixture.window).await;

    // The frames the change takes are counted as they come.
    let (frames, maximized) = tokio::join!(
        session.after_frames(fixture.window, 1, SHORT),
        session.window_op(fixture.window, WindowOp::Maximize)
    );
    assert!(frames.unwrap() >= 1, "maximizing drew a frame");
    let maximized = maximized.unwrap();
    assert!(maximized.maximized, "{maximized:?}");
    let output = &session.displays().await.unwrap()[0];
    assert_eq!(
        (maximized.content.width, maximized.content.height),
        (output.bounds.width, output.bounds.height),
        "the answer carries the size the app drew, not the one asked for"
    );
    // What the answer says is what a capture shows.
    let shot = session.capture(fixture.window).await.unwrap();
    assert_eq!(
        (shot.width as i32, shot.height as i32),
        (output.bounds.width, output.bounds.height)
    );

    let restored = session
        .window_op(fixture.window, WindowOp::Restore)
        .await
        .unwrap();
    assert!(!restored.maximized);
    assert_eq!(
        (restored.content.width, restored.content.height),
        (before.content.width, before.content.height)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_bounds_moves_and_sizes_the_frame_and_answers_it() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let moved = session
        .window_op(
            fixture.window,
            WindowOp::SetBounds {
                area: Area::Frame,
                position: Some((40, 30)),
                size: Some((640, 600)),
            },
        )
        .await
        .unwrap();
    assert_eq!((moved.frame.x, moved.frame.y), (40, 30));
    assert_eq!((moved.frame.width, moved.frame.height), (640, 600));
    // Only a position keeps the size.
    let again = session
        .window_op(
            fixture.window,
            WindowOp::SetBounds {
                area: Area::Frame,
                position: Some((0, 0)),
                size: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (again.frame.x, again.frame.y, again.frame.width),
        (0, 0, 640)
    );
    // Content bounds place and size what the app draws, as cua gives them.
    let content = session
        .window_op(
            fixture.window,
            WindowOp::SetBounds {
                area: Area::Content,
                position: Some((100, 80)),
                size: Some((600, 560)),
            },
        )
        .await
        .unwrap();
    assert_eq!(content.content, wayrig_host::Rect::new(100, 80, 600, 560));
    let err = session
        .window_op(
            fixture.window,
            WindowOp::SetBounds {
                area: Area::Frame,
                position: None,
                size: Some((0, 10)),
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidRequest(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_that_asks_before_closing_is_kept_and_force_close_ends_it() {
    let (session, compositor) = session().await;
    let mut fixture =
        Gtk4Fixture::open(&compositor, &[("WAYRIG_FIXTURE_ASK_BEFORE_CLOSE", "1")]).await;
    let outcome = session.close(fixture.window, false).await.unwrap();
    let CloseOutcome::Kept(kept) = outcome else {
        panic!("the window closed though its app asked first: {outcome:?}");
    };
    assert_eq!(kept.handle, fixture.window);
    fixture.app.expect("asked", SHORT, |_| true);
    let prompt = kept_window(&session, |w| w.title == "Unsaved changes").await;
    assert_eq!(prompt.parent, Some(fixture.window));

    let pid = fixture.app.pid() as i32;
    let outcome = session.close(fixture.window, true).await.unwrap();
    assert_eq!(outcome, CloseOutcome::Closed);
    assert_eq!(
        support::wait_ended(&[pid], SHORT),
        Vec::<i32>::new(),
        "force-close ends the app"
    );
    kept_gone(&session, prompt.handle).await;
    // The old handle names nothing now.
    let err = session
        .window(&WindowPick::Handle(fixture.window))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NoWindow(_)), "{err:?}");
}

/// A modal window of the app blocks its other windows, and GTK drops the
/// input they get: an action or input there is refused, naming the modal
/// window, instead of answered as done; once it closes, the press lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_a_modal_window_blocks_refuses_actions_until_it_closes() {
    let (session, compositor) = session().await;
    let mut fixture =
        Gtk4Fixture::open(&compositor, &[("WAYRIG_FIXTURE_ASK_BEFORE_CLOSE", "1")]).await;
    session.close(fixture.window, false).await.unwrap();
    fixture.app.expect("asked", SHORT, |_| true);
    let prompt = kept_window(&session, |w| w.title == "Unsaved changes").await;
    let says_why = |err: Error| match err {
        Error::InvalidRequest(why) => {
            assert!(
                why.contains("modal") && why.contains("Unsaved changes"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    };
    says_why(press(&session, fixture.window, "Press").await.unwrap_err());
    let tab = vec![InputEvent::Key { key: "Tab".into() }];
    says_why(
        session
            .input(fixture.window, tab, InputOptions::default())
            .await
            .unwrap_err(),
    );

    assert_eq!(
        session.close(prompt.handle, false).await.unwrap(),
        CloseOutcome::Closed
    );
    press(&session, fixture.window, "Press").await.unwrap();
    fixture.app.expect("clicked", SHORT, |_| true);
}

/// A modal window closed while its popover is open: its popups are
/// dismissed first, as a person's click away from the menu would, and the
/// app's main window takes input again (GTK left that way ignored it all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_modal_window_with_a_popover_open_frees_the_main_window() {
    use wayrig_host::WindowKind;
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[("WAYRIG_FIXTURE_MODAL_SECOND", "1")]).await;
    press(&session, fixture.window, "Open window")
        .await
        .unwrap();
    fixture.app.expect("opened", SHORT, |_| true);
    let second = kept_window(&session, |w| w.title == "wayrig-gtk4-second").await;
    press(&session, second.handle, "Options").await.unwrap();
    kept_window(&session, |w| {
        w.kind == WindowKind::Menu && w.parent == Some(second.handle)
    })
    .await;

    assert_eq!(
        session.close(second.handle, false).await.unwrap(),
        CloseOutcome::Closed
    );
    press(&session, fixture.window, "Press").await.unwrap();
    fixture.app.expect("clicked", SHORT, |_| true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_launch_by_desktop_id_and_by_name_and_show_their_names() {
    let (session, _compositor) = session().await;
    let demo = session
        .launch(Launch {
            app: Some(AppSpec::DesktopId("org.gtk.Demo4".into())),
            wait_for_window: Some(APP_START),
            ..Launch::default()
        })
        .await
        .unwrap();
    let window = demo.windows.first().expect("gtk4-demo mapped a window");
    assert_eq!(window.pid, Some(demo.pid));
    let app = session.app_of(window);
    assert_eq!(app.name, "GTK Demo");
    assert_eq!(app.desktop_id.as_deref(), Some("org.gtk.Demo4.desktop"));

    let factory = session
        .launch(Launch {
            app: Some(AppSpec::Name("widget factory".into())),
            wait_for_window: Some(APP_START),
            ..Launch::default()
        })
        .await
        .unwrap();
    let window = factory
        .windows
        .first()
        .expect("the factory mapped a window");
    assert_eq!(window.app_id, "org.gtk.WidgetFactory4");

    // Windows are found by the names people know their apps by.
    let demos = session.list_windows(&WindowFilter {
        app_name_contains: Some("gtk demo".into()),
        ..WindowFilter::default()
    });
    assert_eq!(
        demos.iter().map(|w| w.pid).collect::<Vec<_>>(),
        [Some(demo.pid)]
    );
    let by_id = session
        .window(&WindowPick::Filter(WindowFilter {
            app_id: Some("org.gtk.WidgetFactory4.desktop".into()),
            ..WindowFilter::default()
        }))
        .await
        .unwrap();
    assert_eq!(by_id.pid, Some(factory.pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_or_app_is_refused_before_anything_starts() {
    let (session, _compositor) = session().await;
    for app in [
        AppSpec::Executable("wayrig-no-such-program".into()),
        AppSpec::DesktopId("org.example.Nothing".into()),
        AppSpec::Name("No Such Application".into()),
    ] {
        let err = session
            .launch(Launch {
                app: Some(app.clone()),
                ..Launch::default()
            })
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{app:?}: {err:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_open_in_their_handler_and_terminal_apps_in_a_terminal() {
    let root = std::env::temp_dir().join(format!("wayrig-open-{}", std::process::id()));
    let apps = root.join("data/applications");
    std::fs::create_dir_all(&apps).unwrap();
    std::fs::create_dir_all(root.join("data/mime")).unwrap();
    let client = support::workspace_binary("wayrig-testclient");
    std::fs::write(
        apps.join("org.wayrig.Notes.desktop"),
        format!(
            "[Desktop Entry]\nType=Application\nName=Wayrig Notes\n\
             Exec={} --title %f\nMimeType=text/x-wayrig-notes;\n",
            client.display()
        ),
    )
    .unwrap();
    std::fs::write(
        apps.join("org.wayrig.Pager.desktop"),
        "[Desktop Entry]\nType=Application\nName=Wayrig Pager\nExec=tail -f %f\nTerminal=true\n",
    )
    .unwrap();
    std::fs::write(
        root.join("data/mime/globs2"),
        "50:text/x-wayrig-notes:*.wrnotes\n",
    )
    .unwrap();
    let dirs = wayrig_desktop::XdgDirs {
        data_home: root.join("data"),
        data_dirs: vec!["/usr/share".into()],
        config_home: root.join("config"),
        config_dirs: vec![],
    };
    let session = support::live_with(Spec {
        desktop: Some(dirs),
        accessibility: true,
        ..Spec::default()
    })
    .await;
    let file = root.join("today.wrnotes");
    std::fs::write(&file, "opened by its handler\n").unwrap();

    let opened = session
        .open(OpenTarget::Path(file.clone()), None, false)
        .await
        .unwrap();
    let window = kept_window(&session, |w| w.pid == Some(opened.pid)).await;
    assert_eq!(
        window.title,
        file.display().to_string(),
        "the handler got the path"
    );

    // An app that needs a terminal runs in one (foot, here).
    let paged = session
        .open(
            OpenTarget::Path(file.clone()),
            Some(AppSpec::DesktopId("org.wayrig.Pager".into())),
            false,
        )
        .await
        .unwrap();
    let terminal = kept_window(&session, |w| w.pid == Some(paged.pid)).await;
    assert_eq!(terminal.app_id, "foot");

    let missing = session
        .open(OpenTarget::Path(root.join("absent.wrnotes")), None, false)
        .await
        .unwrap_err();
    assert!(matches!(missing, Error::NotFound(_)), "{missing:?}");
    std::fs::remove_dir_all(root).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_element_of_an_older_snapshot_acts_only_while_it_shows_unchanged() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let old = session
        .snapshot(fixture.window, &ReadOptions::default())
        .await
        .unwrap();
    let id_of = |role: Role, name: &str| {
        old.elements
            .iter()
            .find(|e| e.node.role == role && e.node.name == name)
            .unwrap_or_else(|| panic!("no {role:?} {name:?}"))
            .node
            .id
    };
    let (first, press) = (
        id_of(Role::TextInput, "First"),
        id_of(Role::Button, "Press"),
    );

    // Changed since the snapshot: its value is not what the reader saw.
    session
        .act(
            fixture.window,
            ElementRef::Id(first),
            Action::SetValue {
                text: "changed".into(),
            },
            ActOptions::default(),
        )
        .await
        .unwrap();
    session.settle(fixture.window, SHORT).await.unwrap();
    let stale = session
        .act(
            fixture.window,
            ElementRef::InSnapshot {
                snapshot: old.id.clone(),
                id: first,
            },
            Action::Focus,
            ActOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(stale, Error::StaleElement(_)), "{stale:?}");

    // Unchanged: it acts, and the report says how.
    let report = session
        .act(
            fixture.window,
            ElementRef::InSnapshot {
                snapshot: old.id.clone(),
                id: press,
            },
            Action::Press,
            ActOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!((report.element, report.path), (press, Path::Pointer));
    assert!(report.pointer_moved);
    let unknown = session
        .act(
            fixture.window,
            ElementRef::InSnapshot {
                snapshot: "s999999".into(),
                id: press,
            },
            Action::Press,
            ActOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(unknown, Error::StaleElement(_)), "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_find_one_element_or_say_which_ones_match() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let press = session
        .find_one(
            fixture.window,
            &Query {
                label: Some("Press".into()),
                ..Query::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(press.role, Role::Button);
    let fields = session
        .find(
            fixture.window,
            &Query {
                role: Some(Role::TextInput),
                ..Query::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(fields.len(), 2);
    let err = session
        .find_one(
            fixture.window,
            &Query {
                role: Some(Role::TextInput),
                ..Query::default()
            },
        )
        .await
        .unwrap_err();
    match err {
        Error::Ambiguous { ids, .. } => {
            assert_eq!(ids, fields.iter().map(|n| n.id).collect::<Vec<_>>())
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kept_window_list_follows_windows_opening_and_closing() {
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    press(&session, fixture.window, "Open window")
        .await
        .unwrap();
    fixture.app.expect("opened", SHORT, |_| true);
    let second = kept_window(&session, |w| w.title == "wayrig-gtk4-second").await;
    let picked = session
        .window(&WindowPick::Filter(WindowFilter {
            title_contains: Some("GTK4-SECOND".into()),
            ..WindowFilter::default()
        }))
        .await
        .unwrap();
    assert_eq!(picked.handle, second.handle);
    assert_eq!(
        session.close(second.handle, false).await.unwrap(),
        CloseOutcome::Closed
    );
    assert!(!session.windows().iter().any(|w| w.handle == second.handle));
}

/// The labels of a menu's rows, separators as "--".
fn labels(rows: &[MenuRow]) -> Vec<String> {
    rows.iter()
        .map(|r| match r {
            MenuRow::Item { label, .. } => label.clone(),
            MenuRow::Separator => "--".into(),
        })
        .collect()
}

fn row<'a>(rows: &'a [MenuRow], label: &str) -> &'a MenuRow {
    rows.iter()
        .find(|r| matches!(r, MenuRow::Item { label: l, .. } if l == label))
        .unwrap_or_else(|| panic!("no row {label:?} in {:?}", labels(rows)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_menus_are_listed_opened_to_a_row_and_closed_without_running_it() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let win = fixture.window;

    let menus = session.menus(win).await.unwrap();
    let titles: Vec<&str> = menus.iter().map(|m| m.title.as_str()).collect();
    assert_eq!(titles, ["File", "Edit"]);
    let file = &menus[0].rows;
    assert_eq!(labels(file), ["New", "Save", "Disabled Item", "Recent"]);
    assert!(matches!(
        row(file, "New"),
        MenuRow::Item { enabled: true, .. }
    ));
    assert!(matches!(
        row(file, "Disabled Item"),
        MenuRow::Item { enabled: false, .. }
    ));
    match row(file, "Recent") {
        MenuRow::Item {
            submenu: Some(sub), ..
        } => assert_eq!(labels(sub), ["one.txt"]),
        other => panic!("Recent opens no submenu: {other:?}"),
    }
    assert_eq!(labels(&menus[1].rows), ["Copy"]);

    assert_eq!(session.shown_menu(win).await.unwrap(), None);
    assert!(!session.close_menus(win).await.unwrap(), "none was open");

    // Refused before anything opens.
    for (path, says) in [
        (vec!["File", "Disabled Item"], "disabled"),
        (vec!["File", "Nope"], "Nope"),
        (vec!["Nope"], "Nope"),
        (vec!["File", "New", "More"], "no submenu"),
    ] {
        let path: Vec<String> = path.into_iter().map(String::from).collect();
        match session.open_menu(win, &path).await {
            Err(Error::InvalidRequest(why)) => assert!(why.contains(says), "{path:?}: {why}"),
            other => panic!("{path:?}: {other:?}"),
        }
    }
    assert_eq!(session.shown_menu(win).await.unwrap(), None);

    // Labels match ignoring case and a trailing ellipsis.
    let path: Vec<String> = ["file", "recent…", "ONE.TXT"].map(String::from).to_vec();
    let open = session.open_menu(win, &path).await.unwrap();
    assert_eq!(open.title, "File");
    assert_eq!(open.depth, 2, "File and its Recent submenu: {open:?}");
    assert_eq!(
        open.path,
        [Some("Recent".to_string()), Some("one.txt".to_string())],
        "each level's row, the last highlighted"
    );
    assert!(session.shown_menu(win).await.unwrap().is_some());

    assert!(session.close_menus(win).await.unwrap());
    assert_eq!(session.shown_menu(win).await.unwrap(), None);
    // Highlighting ran nothing: the status line still says so.
    let status = session
        .find_one(
            win,
            &Query {
                role: Some(Role::Label),
                name_contains: Some("ran".into()),
                ..Query::default()
            },
        )
        .await;
    assert!(matches!(status, Err(Error::NoElement(_))), "{status:?}");
}

/// gtk3-widget-factory on its second page, which has a menu bar: its
/// window and its menus, once the tree lists them.
async fn gtk3_factory_menus(session: &Session) -> (WindowHandle, Vec<Menu>) {
    let factory = session
        .launch(Launch {
            app: Some(AppSpec::Executable("gtk3-widget-factory".into())),
            wait_for_window: Some(APP_START),
            ..Launch::default()
        })
        .await
        .unwrap();
    let win = factory.windows.first().expect("the factory mapped").handle;
    // The factory's menu bar is on its second page.
    session
        .act(
            win,
            ElementRef::Query(Box::new(Query {
                role: Some(Role::RadioButton),
                name: Some("Page 2".into()),
                ..Query::default()
            })),
            Action::Press,
            ActOptions::default(),
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + SHORT;
    let menus = loop {
        match session.menus(win).await {
            Ok(menus) if !menus.is_empty() => break menus,
            other => assert!(std::time::Instant::now() < deadline, "no menus: {other:?}"),
        }
        let _ = session.settle(win, Duration::from_millis(200)).await;
    };
    (win, menus)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk3_menu_bar_rows_are_listed_opened_to_a_row_and_closed() {
    let (session, _compositor) = session().await;
    let (win, menus) = gtk3_factory_menus(&session).await;
    let view = menus
        .iter()
        .find(|m| m.title == "View")
        .unwrap_or_else(|| panic!("no View menu: {menus:?}"));
    match row(&view.rows, "Statusbar") {
        MenuRow::Item {
            checked: Some(_),
            id: Some(_),
            ..
        } => {}
        other => panic!("Statusbar is no check item from the tree: {other:?}"),
    }

    // Opened to a row, it shows highlighted; closing leaves it unchanged.
    let path: Vec<String> = ["View", "Statusbar"].map(String::from).to_vec();
    let open = session.open_menu(win, &path).await.unwrap();
    assert_eq!(open.title, "View");
    assert_eq!(open.path, [Some("Statusbar".to_string())]);
    assert!(session.close_menus(win).await.unwrap());
    assert_eq!(session.shown_menu(win).await.unwrap(), None);

    // Again, once closed by Wayrig and once by the app's own Escape, with
    // the pointer left on the row: GTK 3 kept it marked as entered, and the
    // row of the next menu under the pointer never lit.
    let open = session.open_menu(win, &path).await.unwrap();
    assert_eq!(open.path, [Some("Statusbar".to_string())], "after close");
    let escape = InputEvent::Key {
        key: "Escape".into(),
    };
    session
        .input(win, vec![escape], InputOptions::default())
        .await
        .unwrap();
    session.settle(win, SHORT).await.unwrap();
    assert_eq!(session.shown_menu(win).await.unwrap(), None);
    let open = session.open_menu(win, &path).await.unwrap();
    assert_eq!(open.path, [Some("Statusbar".to_string())], "after Escape");
    assert!(session.close_menus(win).await.unwrap());
}

/// A row that opens a submenu, opened to, shows highlighted with its
/// submenu open one level further (it was taken for not highlighted); a row
/// of that submenu hovered reads highlighted there (it was read as none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gtk3_submenu_and_the_row_hovered_in_it_read_as_open() {
    let (session, _compositor) = session().await;
    let (win, _) = gtk3_factory_menus(&session).await;
    let path: Vec<String> = ["Edit", "Checks & Radios"].map(String::from).to_vec();
    let open = session.open_menu(win, &path).await.unwrap();
    assert_eq!(open.title, "Edit");
    assert_eq!(open.path, [Some("Checks & Radios".to_string()), None]);

    // A row of the submenu hovered: GTK 3 holds the submenu's rows under
    // the row that opens it and marks neither as open.
    let radios = session
        .find(
            win,
            &Query {
                role: Some(Role::RadioMenuItem),
                name: Some("Radio".into()),
                ..Query::default()
            },
        )
        .await
        .unwrap();
    let first = radios
        .iter()
        .find_map(|n| n.bounds)
        .expect("the submenu's radio rows are placed");
    let hover = InputEvent::PointerMove {
        x: f64::from(first.x) + f64::from(first.width) / 2.0,
        y: f64::from(first.y) + f64::from(first.height) / 2.0,
        mods: wayrig_host::Mods::default(),
    };
    session
        .input(win, vec![hover], InputOptions::default())
        .await
        .unwrap();
    // The row lights at the pointer's enter; its accessibility event
    // follows the frame.
    let deadline = std::time::Instant::now() + SHORT;
    let open = loop {
        let open = session.shown_menu(win).await.unwrap().expect("still open");
        if open.path.get(1).is_some_and(Option::is_some) || std::time::Instant::now() > deadline {
            break open;
        }
        let _ = session.settle(win, Duration::from_millis(200)).await;
    };
    assert_eq!(open.depth, 2);
    assert_eq!(
        open.path,
        [
            Some("Checks & Radios".to_string()),
            Some("Radio".to_string())
        ]
    );
    assert!(session.close_menus(win).await.unwrap());
}

/// A path whose last label several rows of its menu read (the factory's
/// submenu has six "Check" rows) is refused naming them all, by the menu
/// verb and by opening to it, and leaves no menu open: taking the first
/// would be a guess.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_menu_path_several_rows_read_is_refused_naming_them() {
    let (session, _compositor) = session().await;
    let (win, _) = gtk3_factory_menus(&session).await;
    let path: Vec<String> = ["Edit", "Checks & Radios", "Check"]
        .map(String::from)
        .to_vec();
    let chosen = session.menu(win, &path).await;
    let Err(Error::Ambiguous { what, ids }) = chosen else {
        panic!("choosing {path:?} answered {chosen:?}");
    };
    assert_eq!(ids.len(), 6, "{what}");
    assert!(what.contains("\"Check\""), "{what}");
    let opened = session.open_menu(win, &path).await;
    assert!(
        matches!(&opened, Err(Error::Ambiguous { ids, .. }) if ids.len() == 6),
        "{opened:?}"
    );
    assert_eq!(session.shown_menu(win).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_launch_leaves_focus_where_it_was() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let focused = kept_window(&session, |w| w.handle == fixture.window && w.focused).await;
    let demo = session
        .launch(Launch {
            app: Some(AppSpec::DesktopId("org.gtk.Demo4".into())),
            background: true,
            wait_for_window: Some(APP_START),
            ..Launch::default()
        })
        .await
        .unwrap();
    let shown = demo.windows.first().expect("gtk4-demo mapped a window");
    assert!(!shown.focused, "{shown:?}");
    let now = session.window(&WindowPick::Focused).await.unwrap();
    assert_eq!(now.handle, focused.handle, "the fixture kept the focus");
    assert!(shown.z > now.z, "the new window maps behind");

    // A foreground launch takes the focus, as a person's would.
    let factory = session
        .launch(Launch {
            app: Some(AppSpec::DesktopId("org.gtk.WidgetFactory4".into())),
            wait_for_window: Some(APP_START),
            ..Launch::default()
        })
        .await
        .unwrap();
    let pid = Some(factory.pid);
    kept_window(&session, |w| w.pid == pid && w.focused).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_cancelled_before_its_release_leaves_no_button_down_and_clicks_nothing() {
    use wayrig_host::{Button, FrameWait, Mods};
    use wayrig_services::Step;
    let (session, compositor) = session().await;
    let session = Arc::new(session);
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let win = fixture.window;
    let press = session
        .find_one(
            win,
            &Query {
                label: Some("Press".into()),
                ..Query::default()
            },
        )
        .await
        .unwrap();
    let b = press.bounds.unwrap();
    let (x, y) = (f64::from(b.x + b.width / 2), f64::from(b.y + b.height / 2));
    let pointer = |kind: &str| match kind {
        "down" => InputEvent::PointerDown {
            x,
            y,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        },
        _ => InputEvent::PointerUp {
            x,
            y,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        },
    };
    // A long press: held for far more frames than the fixture will draw.
    let steps = vec![
        Step {
            events: vec![pointer("down")],
            then: FrameWait::Frames(1_000_000),
            at: None,
        },
        Step::drawn(vec![pointer("up")]),
    ];
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .input_steps(win, steps, InputOptions::default())
                .await
        })
    };
    let deadline = std::time::Instant::now() + SHORT;
    while !session
        .pointer()
        .await
        .unwrap()
        .buttons
        .contains(&Button::Left)
    {
        assert!(std::time::Instant::now() < deadline, "the press never came");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(session.cancel_input(win), "the press was running");
    let answer = running.await.unwrap();
    assert!(matches!(answer, Err(Error::Cancelled(_))), "{answer:?}");
    assert!(session.pointer().await.unwrap().buttons.is_empty());
    session.settle(win, SHORT).await.unwrap();
    assert_eq!(
        fixture
            .app
            .drain()
            .iter()
            .filter(|e| e["ev"] == "clicked")
            .count(),
        0,
        "the release moved off the button first"
    );
    assert!(!session.cancel_input(win), "nothing waits now");

    // The queue runs again after a cancel, and each step says what it did.
    let reports = session
        .input_steps(
            win,
            vec![
                Step::drawn(vec![pointer("down")]),
                Step::drawn(vec![pointer("up")]),
            ],
            InputOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0].pointer.buttons, [Button::Left]);
    assert!(reports[1].pointer.buttons.is_empty());
    assert_eq!(reports[1].pointer.window, Some(win));
    fixture.app.expect("clicked", SHORT, |_| true);
}

/// The text field labelled `label` in the fixture, as its tree shows it now.
async fn field(session: &Session, window: WindowHandle, label: &str) -> wayrig_services::Node {
    session
        .find_one(
            window,
            &Query {
                role: Some(Role::TextInput),
                label: Some(label.into()),
                ..Query::default()
            },
        )
        .await
        .unwrap()
}

/// Focus the fixture's text field labelled `label`, then send it keys and text.
async fn type_into(session: &Session, window: WindowHandle, label: &str, events: Vec<InputEvent>) {
    let id = field(session, window, label).await.id;
    session
        .act(
            window,
            ElementRef::Id(id),
            Action::Focus,
            ActOptions::default(),
        )
        .await
        .unwrap();
    session.settle(window, SHORT).await.unwrap();
    session
        .input(window, events, InputOptions::default())
        .await
        .unwrap();
    // The app has read the keys and drawn its answer: what it asked of the
    // compositor in between (a paste, a new selection) has arrived.
    session.settle(window, SHORT).await.unwrap();
}

fn key(key: &str) -> InputEvent {
    InputEvent::Key { key: key.into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_put_on_the_clipboard_pastes_into_a_gtk_entry() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let text = "héllo 世界";
    let before = session.clipboard().await.unwrap();
    assert_eq!(before.text, None, "a new session's clipboard is empty");

    let generation = session.set_clipboard(text.into()).await.unwrap();
    assert_ne!(generation, before.generation);
    assert_eq!(
        session.clipboard().await.unwrap(),
        ClipboardText {
            text: Some(text.into()),
            generation
        },
        "the compositor's own text reads back as it was set"
    );

    type_into(&session, fixture.window, "First", vec![key("CmdOrCtrl+V")]).await;
    let first = field(&session, fixture.window, "First").await;
    assert_eq!(first.value.as_deref(), Some(text), "{first:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_copied_in_a_gtk_entry_is_read_from_the_clipboard() {
    let (session, compositor) = session().await;
    let fixture = Gtk4Fixture::open(&compositor, &[]).await;
    // The compositor's own text first: the copy must take the clipboard over.
    let before = session
        .set_clipboard("set by the host".into())
        .await
        .unwrap();

    let text = "Grüße, 世界 ✓";
    type_into(
        &session,
        fixture.window,
        "Second",
        vec![
            InputEvent::Text { text: text.into() },
            key("CmdOrCtrl+A"),
            key("CmdOrCtrl+C"),
        ],
    )
    .await;
    assert_eq!(
        field(&session, fixture.window, "Second")
            .await
            .value
            .as_deref(),
        Some(text)
    );
    let copied = session.clipboard().await.unwrap();
    assert_eq!(copied.text.as_deref(), Some(text), "{copied:?}");
    assert_ne!(copied.generation, before, "a copy is a new content");
    assert_eq!(
        session.clipboard().await.unwrap(),
        copied,
        "reading changes nothing"
    );

    // The app that owned the clipboard took its content with it.
    let outcome = session.close(fixture.window, true).await.unwrap();
    assert_eq!(outcome, CloseOutcome::Closed);
    let after = session.clipboard().await.unwrap();
    assert_eq!(after.text, None, "{after:?}");
    assert_ne!(after.generation, copied.generation);
}

/// A compositor and a session over it without accessibility: what screenshots need.
async fn bare_session(config: Config) -> (Session, Arc<CompositorHost>) {
    let compositor = Arc::new(start(config));
    let host: Arc<dyn Host> = compositor.clone();
    let session = Session::without_accessibility(host).await.expect("session");
    (session, compositor)
}

/// The test client filled with `rgb` (its white marker square at 10..30),
/// once it has drawn, as the session keeps it.
async fn painted_window(
    session: &Session,
    compositor: &CompositorHost,
    title: &str,
    rgb: &str,
) -> (TestClient, WindowInfo) {
    let mut client = TestClient::spawn(compositor, &["--title", title, "--color", rgb]);
    client.expect("idle", SHORT, |_| true);
    let window = kept_window(session, |w| w.title == title).await;
    (client, window)
}

fn window_shot(handle: WindowHandle) -> ShotRequest {
    ShotRequest {
        source: ShotSource::Window(handle),
        ..ShotRequest::default()
    }
}

fn near(pixel: [u8; 3], rgb: [u8; 3], tolerance: u8) -> bool {
    (0..3).all(|i| pixel[i].abs_diff(rgb[i]) <= tolerance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_screenshot_is_its_pixels_cropped_scaled_encoded_and_mapped_back() {
    let (session, compositor) = bare_session(Config::default()).await;
    let (_client, window) = painted_window(&session, &compositor, "red", "cc0000").await;
    let red = [0xcc, 0, 0];

    // All of it, as PNG: exactly what a capture of the window shows.
    let whole = session
        .screenshot(&window_shot(window.handle))
        .await
        .unwrap();
    let capture = Image::decode(&session.capture(window.handle).await.unwrap());
    let image = Image::from_png(&whole.image);
    assert_eq!((whole.width, whole.height), (400, 300));
    assert_eq!((whole.native_width, whole.native_height), (400, 300));
    assert_eq!(image.rgba, capture.rgba);
    let c = window.content;
    assert_eq!(
        (whole.logical_bounds.x, whole.logical_bounds.y),
        (f64::from(c.x), f64::from(c.y))
    );
    assert_eq!(whole.scale, 1.0);

    // The image's centre is the window content's centre, globally.
    let centre = session
        .screenshot_point(&whole.id, 200.0, 150.0)
        .await
        .unwrap();
    assert_eq!(
        centre,
        (f64::from(c.x + c.width / 2), f64::from(c.y + c.height / 2))
    );

    // The front window's place on the display shows the same pixels.
    let display = session
        .screenshot(&ShotRequest {
            region: Some(LogicalRect {
                x: f64::from(c.x),
                y: f64::from(c.y),
                width: f64::from(c.width),
                height: f64::from(c.height),
            }),
            ..ShotRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(Image::from_png(&display.image).rgba, image.rgba);
    assert_eq!(display.logical_bounds, whole.logical_bounds);
    assert_eq!(display.display_id, whole.display_id);

    // A region across the marker square's corner: red, then white.
    let corner = session
        .screenshot(&ShotRequest {
            region: Some(LogicalRect {
                x: 5.0,
                y: 5.0,
                width: 10.0,
                height: 10.0,
            }),
            ..window_shot(window.handle)
        })
        .await
        .unwrap();
    let corner_image = Image::from_png(&corner.image);
    assert_eq!((corner_image.width, corner_image.height), (10, 10));
    assert!(near(corner_image.pixel(0, 0), red, 16));
    assert_eq!(corner_image.pixel(5, 5), [0xff, 0xff, 0xff]);
    let outside = session
        .screenshot(&ShotRequest {
            region: Some(LogicalRect {
                x: 400.0,
                y: 0.0,
                width: 10.0,
                height: 10.0,
            }),
            ..window_shot(window.handle)
        })
        .await;
    assert!(
        matches!(outside, Err(Error::InvalidRequest(_))),
        "{outside:?}"
    );

    // Scaled down to fit, and as JPEG: it decodes to the window's colour.
    let small = session
        .screenshot(&ShotRequest {
            format: ImageFormat::Jpeg { quality: 80 },
            max_dimension: Some(200),
            ..window_shot(window.handle)
        })
        .await
        .unwrap();
    assert_eq!((small.width, small.height, small.scale), (200, 150, 0.5));
    assert_eq!((small.native_width, small.native_height), (400, 300));
    let jpeg = image::load_from_memory_with_format(&small.image, image::ImageFormat::Jpeg)
        .expect("a JPEG")
        .to_rgb8();
    assert_eq!(jpeg.dimensions(), (200, 150));
    assert!(
        near(jpeg.get_pixel(100, 100).0, red, 24),
        "{:?}",
        jpeg.get_pixel(100, 100)
    );
    assert_eq!(
        session
            .screenshot_point(&small.id, 100.0, 75.0)
            .await
            .unwrap(),
        centre
    );

    // Moved, the window's older shots no longer map; a new one does.
    let moved = session
        .window_op(
            window.handle,
            WindowOp::SetBounds {
                area: Area::Frame,
                position: Some((c.x + 40, c.y + 30)),
                size: None,
            },
        )
        .await
        .unwrap();
    for id in [&whole.id, &small.id] {
        let stale = session.screenshot_point(id, 200.0, 150.0).await;
        assert!(matches!(stale, Err(Error::StaleGeometry(_))), "{stale:?}");
    }
    assert!(
        session
            .screenshot_point(&display.id, 0.0, 0.0)
            .await
            .is_ok(),
        "the display did not move"
    );
    let again = session
        .screenshot(&window_shot(window.handle))
        .await
        .unwrap();
    assert_eq!(
        session
            .screenshot_point(&again.id, 200.0, 150.0)
            .await
            .unwrap(),
        (
            f64::from(moved.content.x + 200),
            f64::from(moved.content.y + 150)
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pointer_is_drawn_into_a_screenshot_only_when_asked() {
    use wayrig_host::{InputEvent, InputOptions, Mods};
    let (session, compositor) = bare_session(Config::default()).await;
    let (_client, window) = painted_window(&session, &compositor, "green", "00aa00").await;
    let green = [0, 0xaa, 0];
    session
        .input(
            window.handle,
            vec![InputEvent::PointerMove {
                x: 200.0,
                y: 150.0,
                mods: Mods::default(),
            }],
            InputOptions::default(),
        )
        .await
        .unwrap();
    let plain = Image::from_png(
        &session
            .screenshot(&window_shot(window.handle))
            .await
            .unwrap()
            .image,
    );
    let with = Image::from_png(
        &session
            .screenshot(&ShotRequest {
                include_cursor: true,
                ..window_shot(window.handle)
            })
            .await
            .unwrap()
            .image,
    );
    // Just below the tip: the arrow's body or rim, where the plain shot is green.
    assert!(near(plain.pixel(202, 160), green, 16));
    let drawn = with.pixel(202, 160);
    assert!(
        drawn == [0, 0, 0] || drawn == [0xff, 0xff, 0xff],
        "{drawn:?}"
    );
    assert_eq!(
        with.pixel(198, 150),
        plain.pixel(198, 150),
        "left of the tip"
    );
    assert_eq!(with.pixel(300, 250), plain.pixel(300, 250), "far from it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_scale_two_a_screenshot_counts_device_pixels() {
    let (session, compositor) = bare_session(Config {
        scale: 2.0,
        ..Config::default()
    })
    .await;
    let (_client, window) = painted_window(&session, &compositor, "blue", "0000cc").await;
    let whole = session
        .screenshot(&window_shot(window.handle))
        .await
        .unwrap();
    assert_eq!((whole.width, whole.height, whole.scale), (800, 600, 2.0));
    // The marker square, 10..30 points: 40x40 white pixels.
    let marker = session
        .screenshot(&ShotRequest {
            region: Some(LogicalRect {
                x: 10.0,
                y: 10.0,
                width: 20.0,
                height: 20.0,
            }),
            ..window_shot(window.handle)
        })
        .await
        .unwrap();
    let image = Image::from_png(&marker.image);
    assert_eq!((image.width, image.height), (40, 40));
    // The client's buffer is scaled up with a filter: only the outermost
    // ring blends with the blue around it, the same on every side.
    let inner = image.crop(wayrig_host::Rect::new(1, 1, 38, 38));
    assert_eq!(inner.share_of([0xff, 0xff, 0xff]), 1.0);
    assert_ne!(image.pixel(0, 20), [0xff, 0xff, 0xff]);
    assert_eq!(image.pixel(0, 20), image.pixel(39, 20));
    assert_eq!(image.pixel(20, 0), image.pixel(20, 39));

    // The display in device pixels; its pixels map back to points.
    let display = &session.displays().await.unwrap()[0];
    let screen = session.screenshot(&ShotRequest::default()).await.unwrap();
    assert_eq!(screen.display_id, display.id);
    assert_eq!(
        (screen.width, screen.height),
        (display.pixel_width, display.pixel_height)
    );
    assert_eq!(screen.scale, 2.0);
    let c = window.content;
    let (x, y) = (
        f64::from(c.x + c.width / 2) * 2.0,
        f64::from(c.y + c.height / 2) * 2.0,
    );
    assert!(near(
        Image::from_png(&screen.image).pixel(x as u32, y as u32),
        [0, 0, 0xcc],
        16
    ));
    assert_eq!(
        session.screenshot_point(&screen.id, x, y).await.unwrap(),
        (f64::from(c.x + c.width / 2), f64::from(c.y + c.height / 2))
    );
}

/// A click on an element scrolled out of its list's view scrolls it into
/// view first and lands on it; one on an element the app conceals (a closed
/// popover's) is refused and clicks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_an_element_scrolls_it_into_view_and_lands_on_it() {
    use wayrig_host::Button;
    use wayrig_services::{ElementClick, Role};
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let window = fixture.window;
    let tree = session.tree(window).await.unwrap();
    let row = tree
        .find(Role::Label, "row 40")
        .next()
        .expect("row 40")
        .clone();
    assert!(
        row.states.offscreen || row.bounds.is_none_or(|b| b.y > 800),
        "row 40 starts out of view: {row:?}"
    );
    let click = ElementClick {
        button: Button::Left,
        count: 1,
    };
    let clicked = session
        .click_element(window, ElementRef::Id(row.id), click)
        .await
        .unwrap();
    assert_eq!(clicked.element, row.id);
    assert_eq!(clicked.steps.len(), 2, "a move, then the press and release");
    fixture.app.expect("row", SHORT, |e| e["index"] == 40);

    let hidden = tree
        .nodes
        .iter()
        .find(|n| n.states.concealed)
        .expect("the closed popover's items are concealed");
    let refused = session
        .click_element(window, ElementRef::Id(hidden.id), click)
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NotShown(_)), "{refused:?}");
}

/// A popover open over one window of an app opens none of the app's other
/// windows' popovers: the main window's closed menu stays concealed and a
/// click on its item is refused, while the second window's open menu shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_popover_open_over_another_window_of_the_app_leaves_this_ones_closed() {
    use wayrig_host::{Button, WindowKind};
    use wayrig_services::{ElementClick, Role};
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    // Opened and closed once, GTK keeps the menu's last layout.
    let path: Vec<String> = ["Menu", "Alpha"].map(String::from).to_vec();
    session.menu(fixture.window, &path).await.unwrap();
    fixture.app.expect("menu", SHORT, |v| v["item"] == "alpha");
    press(&session, fixture.window, "Open window")
        .await
        .unwrap();
    fixture.app.expect("opened", SHORT, |_| true);
    let second = kept_window(&session, |w| w.title == "wayrig-gtk4-second").await;
    press(&session, second.handle, "More").await.unwrap();
    kept_window(&session, |w| {
        w.kind == WindowKind::Menu && w.parent == Some(second.handle)
    })
    .await;

    let open = session.tree(second.handle).await.unwrap();
    let gamma = open.find(Role::MenuItem, "Gamma").next().expect("Gamma");
    assert!(!gamma.states.offscreen, "the open menu shows: {gamma:?}");
    let main = session.tree(fixture.window).await.unwrap();
    let alpha = main
        .find(Role::MenuItem, "Alpha")
        .next()
        .expect("the main window's closed menu's Alpha")
        .clone();
    assert!(
        alpha.states.offscreen && alpha.states.concealed,
        "the main window's menu is closed: {alpha:?}"
    );
    let click = ElementClick {
        button: Button::Left,
        count: 1,
    };
    let refused = session
        .click_element(fixture.window, ElementRef::Id(alpha.id), click)
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NotShown(_)), "{refused:?}");
}

/// A popover of widgets that is no menu is placed on its popup, and a click
/// on its button lands there; once it closes (GTK keeps its last layout),
/// its button is concealed and a click on it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_popover_of_widgets_is_clicked_on_its_popup_and_refused_once_closed() {
    use wayrig_host::{Button, Rect, WindowKind};
    use wayrig_services::{ElementClick, Tree};
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    press(&session, fixture.window, "Open window")
        .await
        .unwrap();
    fixture.app.expect("opened", SHORT, |_| true);
    let second = kept_window(&session, |w| w.title == "wayrig-gtk4-second").await;
    press(&session, second.handle, "Options").await.unwrap();
    let popup = kept_window(&session, |w| {
        w.kind == WindowKind::Menu && w.parent == Some(second.handle)
    })
    .await;
    let second = kept_window(&session, |w| w.handle == second.handle).await;

    let keep = |tree: &Tree| {
        let found = tree.find(Role::Button, "Keep").next().expect("Keep");
        found.clone()
    };
    let open = keep(&session.tree(second.handle).await.unwrap());
    let on_popup = Rect::new(
        popup.content.x - second.content.x,
        popup.content.y - second.content.y,
        popup.content.width,
        popup.content.height,
    );
    let b = open.bounds.expect("Keep has bounds");
    assert!(
        !open.states.offscreen && on_popup.contains_rect(&b),
        "Keep lies on its popup {on_popup:?}: {open:?}"
    );
    let click = ElementClick {
        button: Button::Left,
        count: 1,
    };
    session
        .click_element(second.handle, ElementRef::Id(open.id), click)
        .await
        .unwrap();
    fixture.app.expect("kept", SHORT, |_| true);

    let escape = vec![InputEvent::Key {
        key: "Escape".into(),
    }];
    session
        .input(second.handle, escape, InputOptions::default())
        .await
        .unwrap();
    kept_gone(&session, popup.handle).await;
    let closed = keep(&session.tree(second.handle).await.unwrap());
    assert!(
        closed.states.offscreen && closed.states.concealed,
        "the closed popover's Keep is concealed: {closed:?}"
    );
    let refused = session
        .click_element(second.handle, ElementRef::Id(closed.id), click)
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NotShown(_)), "{refused:?}");
}

/// A menu button's menu is listed under the button's label, and an item is
/// chosen by the button's label then the item's: the button is pressed, the
/// item run once it shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_menu_buttons_menu_is_listed_and_chosen_from_by_its_label() {
    let (session, compositor) = session().await;
    let mut fixture = Gtk4Fixture::open(&compositor, &[]).await;
    let win = fixture.window;

    let buttons = session.button_menus(win).await.unwrap();
    let menu = buttons
        .iter()
        .find(|m| m.title == "Menu")
        .unwrap_or_else(|| panic!("no menu button \"Menu\" in {buttons:?}"));
    assert_eq!(labels(&menu.rows), ["Alpha", "Beta"]);
    // The menu bar's items are the menu bar's, not menu buttons.
    assert!(buttons.iter().all(|m| m.title != "File"), "{buttons:?}");

    let path: Vec<String> = ["Menu", "Beta"].map(String::from).to_vec();
    session.menu(win, &path).await.unwrap();
    fixture.app.expect("menu", SHORT, |v| v["item"] == "beta");
    assert_eq!(session.shown_menu(win).await.unwrap(), None, "it closed");

    for (path, says) in [
        (vec!["Menu", "Gamma"], "Gamma"),
        (vec!["Menu"], "add the labels"),
    ] {
        let path: Vec<String> = path.into_iter().map(String::from).collect();
        match session.menu(win, &path).await {
            Err(Error::NoElement(why) | Error::InvalidRequest(why)) => {
                assert!(why.contains(says), "{path:?}: {why}")
            }
            other => panic!("{path:?}: {other:?}"),
        }
    }
    assert_eq!(session.shown_menu(win).await.unwrap(), None, "closed again");
}
