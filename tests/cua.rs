//! The cua.env.v1 face end to end: tonic clients generated from the same
//! protos, against `wayrig run --cua-listen` hosting real apps.
//!
//! Every service over the real socket, the error details of each refusal,
//! tokens, gRPC-Web and the health check, and one session under every face,
//! each answering once its effect shows.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

mod support;

use support::Lines;
use tonic::transport::Channel;
use tonic::{Code, Status};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;
use wayrig_cua_proto::v1::computer_service_client::ComputerServiceClient;
use wayrig_cua_proto::v1::system_service_client::SystemServiceClient;
use wayrig_cua_proto::v1::windows_service_client::WindowsServiceClient;

/// How long one stream message may take to come.
const MESSAGE: Duration = Duration::from_secs(30);

/// `wayrig run --cua-listen` in its own process group, ended when dropped.
struct Hosted {
    child: Child,
    /// Where the face listens (`127.0.0.1:PORT` or `unix:PATH`).
    addr: String,
    /// What the hosted app printed on stdout.
    stdout: Arc<Lines>,
    /// What wayrig printed on stderr.
    stderr: Arc<Lines>,
}

impl Drop for Hosted {
    fn drop(&mut self) {
        support::end_group(&mut self.child, Duration::from_secs(20));
    }
}

fn fixture_argv() -> Vec<String> {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    vec!["/usr/bin/python3".into(), fixture.to_string_lossy().into()]
}

impl Hosted {
    /// `wayrig run FLAGS -- ARGV`, once the cua face says where it listens.
    fn start(flags: &[&str], argv: &[String]) -> Hosted {
        let mut child = Command::new(support::shipped("wayrig"))
            .arg("run")
            .args(flags)
            .args(["--env", "GSK_RENDERER=cairo", "--"])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("wayrig runs");
        let (stdout, stderr) = support::follow_output(&mut child);
        let said = stderr.wait_for("cua.env.v1 listens at ", "the cua face's address");
        let addr = said
            .split("listens at ")
            .nth(1)
            .expect("an address")
            .to_string();
        Hosted {
            child,
            addr,
            stdout,
            stderr,
        }
    }

    fn fixture(flags: &[&str]) -> Hosted {
        let mut all = vec!["--cua-listen", "127.0.0.1:0"];
        all.extend(flags);
        Hosted::start(&all, &fixture_argv())
    }

    async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .expect("the cua face takes a connection")
    }
}

/// The code and ErrorInfo reason of a refusal, checking it carries its details.
fn refusal(s: &Status) -> (Code, v1::ErrorReason) {
    let info = wayrig_cua_proto::error_info(s)
        .unwrap_or_else(|| panic!("{s:?} carries no ErrorInfo in grpc-status-details-bin"));
    assert!(!info.message.is_empty(), "{s:?}");
    (
        s.code(),
        v1::ErrorReason::try_from(info.reason).expect("a known reason"),
    )
}

/// Wait for the first window, listed over the face.
async fn first_window(w: &mut WindowsServiceClient<Channel>) -> v1::WindowInfo {
    let mut stream = w
        .watch_windows(v1::WatchWindowsRequest::default())
        .await
        .unwrap()
        .into_inner();
    use v1::watch_windows_response::Event;
    let shown = |e: &Event| match e {
        Event::Snapshot(s) => s.windows.first().cloned(),
        Event::Created(w) => Some(w.clone()),
        _ => None,
    };
    let event = wait_event(&mut stream, |e| shown(e).is_some()).await;
    shown(&event).expect("a window")
}

async fn next(
    stream: &mut tonic::Streaming<v1::WatchWindowsResponse>,
) -> v1::watch_windows_response::Event {
    tokio::time::timeout(MESSAGE, stream.message())
        .await
        .expect("a watch message in time")
        .expect("the stream stays open")
        .expect("a message")
        .event
        .expect("an event")
}

/// The first watch event `wanted` holds of, keepalives skipped; fails
/// after `MESSAGE` without one.
async fn wait_event(
    stream: &mut tonic::Streaming<v1::WatchWindowsResponse>,
    wanted: impl Fn(&v1::watch_windows_response::Event) -> bool,
) -> v1::watch_windows_response::Event {
    let waited = tokio::time::timeout(MESSAGE, async {
        loop {
            let event = next(stream).await;
            if wanted(&event) {
                return event;
            }
        }
    });
    waited.await.expect("the awaited watch event in time")
}

/// Wait on the watch until `done` holds of an update of the window.
async fn wait_update(
    stream: &mut tonic::Streaming<v1::WatchWindowsResponse>,
    window: &v1::WindowRef,
    done: impl Fn(&v1::WindowInfo) -> bool,
) {
    use v1::watch_windows_response::Event;
    wait_event(
        stream,
        |e| matches!(e, Event::Updated(w) if w.r#ref.as_ref() == Some(window) && done(w)),
    )
    .await;
}

fn find_node<'a>(
    nodes: &'a [v1::AccessibilityNode],
    role: &str,
    name: &str,
) -> &'a v1::AccessibilityNode {
    nodes
        .iter()
        .find(|n| n.role == role && n.name == name)
        .unwrap_or_else(|| panic!("no {role} {name:?} among {} nodes", nodes.len()))
}

fn centre(r: &v1::Rect) -> v1::Point {
    v1::Point {
        x: r.x + r.width / 2.0,
        y: r.y + r.height / 2.0,
    }
}

#[test]
fn windows_are_listed_watched_arranged_launched_and_closed() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let mut w = WindowsServiceClient::new(hosted.channel().await);
        let first = first_window(&mut w).await;
        let wref = first.r#ref.clone().unwrap();
        assert_eq!(first.title, "wayrig-gtk4-fixture");
        assert_eq!(first.kind, v1::WindowKind::Standard as i32);
        assert_eq!(first.state, v1::WindowState::Normal as i32);
        assert!(first.on_screen && first.app.as_ref().unwrap().pid > 0);
        assert_eq!(first.app.as_ref().unwrap().app_id, "org.wayrig.Gtk4Fixture");

        // Listed, filtered, and got by ref.
        let listed = w
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .unwrap();
        assert_eq!(listed.get_ref().windows[0].r#ref, first.r#ref);
        assert_eq!(listed.get_ref().windows[0].z_order, 0);
        let none = w
            .list_windows(v1::ListWindowsRequest {
                filter: Some(v1::WindowFilter {
                    title_contains: "NO SUCH TITLE".into(),
                    ..Default::default()
                }),
            })
            .await
            .unwrap();
        assert!(none.get_ref().windows.is_empty());
        let by_title = w
            .list_windows(v1::ListWindowsRequest {
                filter: Some(v1::WindowFilter {
                    title_contains: "GTK4-FIXTURE".into(),
                    app_id: "org.wayrig.Gtk4Fixture".into(),
                    ..Default::default()
                }),
            })
            .await
            .unwrap();
        assert_eq!(by_title.get_ref().windows.len(), 1);
        let got = w
            .get_window(v1::GetWindowRequest {
                window: Some(wref.clone()),
            })
            .await
            .unwrap();
        assert_eq!(got.get_ref().window.as_ref().unwrap().title, first.title);

        // A watch starts with the snapshot and keeps alive at the interval asked.
        let mut watch = w
            .watch_windows(v1::WatchWindowsRequest {
                filter: None,
                keepalive_interval: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 200_000_000,
                }),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(matches!(
            next(&mut watch).await,
            v1::watch_windows_response::Event::Snapshot(s) if s.windows.len() == 1
        ));
        assert!(matches!(
            next(&mut watch).await,
            v1::watch_windows_response::Event::Keepalive(_)
        ));

        // Moved: the answer and the watch show the new place.
        let moved = w
            .set_window_bounds(v1::SetWindowBoundsRequest {
                window: Some(wref.clone()),
                position: Some(v1::Point { x: 40.0, y: 30.0 }),
                width: None,
                height: None,
            })
            .await
            .unwrap();
        let bounds = moved.get_ref().window.as_ref().unwrap().bounds.unwrap();
        assert_eq!((bounds.x, bounds.y), (40.0, 30.0));
        wait_update(&mut watch, &wref, |w| w.bounds.is_some_and(|b| b.x == 40.0)).await;
        // The "primary" display names where it is, in the filter as in targets.
        let on_primary = w
            .list_windows(v1::ListWindowsRequest {
                filter: Some(v1::WindowFilter {
                    display_id: "primary".into(),
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner()
            .windows;
        assert!(on_primary.iter().any(|w| w.r#ref.as_ref() == Some(&wref)));
        // Moved off every display: not on screen, by its flag and the filter.
        let bounds_to = |x: f64, width: Option<f64>| v1::SetWindowBoundsRequest {
            window: Some(wref.clone()),
            position: Some(v1::Point { x, y: 30.0 }),
            width,
            height: None,
        };
        let away = w.set_window_bounds(bounds_to(3000.0, None)).await.unwrap();
        assert!(!away.get_ref().window.as_ref().unwrap().on_screen);
        let shown = w
            .list_windows(v1::ListWindowsRequest {
                filter: Some(v1::WindowFilter {
                    on_screen_only: true,
                    ..Default::default()
                }),
            })
            .await
            .unwrap()
            .into_inner()
            .windows;
        assert!(!shown.iter().any(|w| w.r#ref.as_ref() == Some(&wref)));
        let huge = w
            .set_window_bounds(bounds_to(40.0, Some(1e12)))
            .await
            .unwrap_err();
        assert_eq!(huge.code(), Code::InvalidArgument);
        assert!(huge.message().contains("16384"), "{huge:?}");
        w.set_window_bounds(bounds_to(40.0, None)).await.unwrap();

        // Minimized: off screen, in the answer and the watch; restored back.
        let minimized = w
            .minimize_window(v1::MinimizeWindowRequest {
                window: Some(wref.clone()),
            })
            .await
            .unwrap();
        let m = minimized.get_ref().window.as_ref().unwrap();
        assert_eq!(m.state, v1::WindowState::Minimized as i32);
        assert!(!m.on_screen);
        wait_update(&mut watch, &wref, |w| {
            w.state == v1::WindowState::Minimized as i32
        })
        .await;
        let restored = w
            .restore_window(v1::RestoreWindowRequest {
                window: Some(wref.clone()),
            })
            .await
            .unwrap();
        assert_eq!(
            restored.get_ref().window.as_ref().unwrap().state,
            v1::WindowState::Normal as i32
        );
        let maximized = w
            .maximize_window(v1::MaximizeWindowRequest {
                window: Some(wref.clone()),
            })
            .await
            .unwrap();
        assert_eq!(
            maximized.get_ref().window.as_ref().unwrap().state,
            v1::WindowState::Maximized as i32
        );

        // Launched by "application name or path", as trycua's `cua do
        // launch` sends it: the answer holds the new window and the watch
        // sees it come.
        let launched = w
            .launch_app(v1::LaunchAppRequest {
                app: Some(v1::AppSpec {
                    app: Some(v1::app_spec::App::Name(
                        support::workspace_binary("wayrig-testclient")
                            .to_string_lossy()
                            .into(),
                    )),
                }),
                args: vec!["--title".into(), "launched over cua".into()],
                wait_for_window: Some(prost_types::Duration {
                    seconds: 30,
                    nanos: 0,
                }),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(launched.pid > 0);
        assert_eq!(launched.windows.len(), 1, "{launched:?}");
        let second = launched.windows[0].r#ref.clone().unwrap();
        assert_eq!(launched.windows[0].title, "launched over cua");
        wait_event(&mut watch, |e| {
            matches!(e, v1::watch_windows_response::Event::Created(c) if c.r#ref.as_ref() == Some(&second))
        })
        .await;
        let activated = w
            .activate_window(v1::ActivateWindowRequest {
                window: Some(second.clone()),
            })
            .await
            .unwrap();
        assert!(activated.get_ref().window.as_ref().unwrap().focused);

        // Closed: the answer says so and the watch sees it go.
        let closed = w
            .close_window(v1::CloseWindowRequest {
                window: Some(second.clone()),
                force: false,
            })
            .await
            .unwrap();
        assert!(closed.get_ref().closed);
        wait_event(&mut watch, |e| {
            matches!(e, v1::watch_windows_response::Event::Closed(c) if c.r#ref.as_ref() == Some(&second))
        })
        .await;
        let gone = w
            .get_window(v1::GetWindowRequest {
                window: Some(second),
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&gone),
            (Code::NotFound, v1::ErrorReason::TargetUnavailable)
        );

        // A program that exits at once ends the wait for its window.
        let quick = w
            .launch_app(v1::LaunchAppRequest {
                app: Some(v1::AppSpec {
                    app: Some(v1::app_spec::App::Executable("true".into())),
                }),
                wait_for_window: Some(prost_types::Duration {
                    seconds: 1 << 40,
                    nanos: 0,
                }),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(quick.windows.is_empty());
        // What no launch can carry is refused in the caller's terms.
        let launch_of = |args: Vec<String>, cwd: &str| v1::LaunchAppRequest {
            app: Some(v1::AppSpec {
                app: Some(v1::app_spec::App::Executable("true".into())),
            }),
            args,
            cwd: cwd.into(),
            ..Default::default()
        };
        let nul = w
            .launch_app(launch_of(vec!["a\0b".into()], ""))
            .await
            .unwrap_err();
        assert_eq!(nul.code(), Code::InvalidArgument);
        let nowhere = w
            .launch_app(launch_of(vec![], "/nonexistent"))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&nowhere),
            (Code::NotFound, v1::ErrorReason::PathNotFound)
        );

        // A program that does not exist is refused before anything starts.
        let missing = w
            .launch_app(v1::LaunchAppRequest {
                app: Some(v1::AppSpec {
                    app: Some(v1::app_spec::App::Executable(
                        "wayrig-no-such-program".into(),
                    )),
                }),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&missing),
            (Code::NotFound, v1::ErrorReason::PathNotFound)
        );
        let nothing_there = w
            .open(v1::OpenRequest {
                target: Some(v1::open_request::Target::Path("/no/such/file.txt".into())),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&nothing_there),
            (Code::NotFound, v1::ErrorReason::PathNotFound)
        );
        let bad_ref = w
            .get_window(v1::GetWindowRequest {
                window: Some(v1::WindowRef {
                    id: "not-a-window".into(),
                    epoch: 1,
                }),
            })
            .await
            .unwrap_err();
        assert_eq!(bad_ref.code(), Code::InvalidArgument);
    });
}

#[test]
fn a_window_that_keeps_itself_open_answers_closed_false_and_force_ends_it() {
    let hosted = Hosted::start(
        &[
            "--cua-listen",
            "127.0.0.1:0",
            "--env",
            "WAYRIG_FIXTURE_ASK_BEFORE_CLOSE=1",
        ],
        &fixture_argv(),
    );
    support::runtime().block_on(async {
        let mut w = WindowsServiceClient::new(hosted.channel().await);
        let first = first_window(&mut w).await;
        let kept = w
            .close_window(v1::CloseWindowRequest {
                window: first.r#ref.clone(),
                force: false,
            })
            .await
            .unwrap();
        assert!(!kept.get_ref().closed);
        hosted
            .stdout
            .wait_for("\"asked\"", "the fixture's save prompt");
        let forced = w
            .close_window(v1::CloseWindowRequest {
                window: first.r#ref.clone(),
                force: true,
            })
            .await
            .unwrap();
        assert!(forced.get_ref().closed);
    });
}

#[test]
fn a_tree_is_read_found_and_acted_on_by_snapshot() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        let tree = read_tree(&mut a, &window).await;
        assert_eq!(tree.window, window.r#ref);
        assert!(!tree.truncated);
        let root = &tree.nodes[0];
        assert_eq!(
            (root.parent_id.as_str(), root.depth, root.role.as_str()),
            ("", 0, "window")
        );
        // Pre-order: every parent comes before its children.
        for (i, n) in tree.nodes.iter().enumerate().skip(1) {
            let parent = tree.nodes[..i]
                .iter()
                .find(|p| p.element_id == n.parent_id)
                .unwrap_or_else(|| panic!("{n:?} before its parent"));
            assert_eq!(n.depth, parent.depth + 1);
        }
        let press = find_node(&tree.nodes, "button", "Press");
        assert!(press
            .actions
            .contains(&(v1::AccessibilityAction::Press as i32)));
        assert!(press.states.iter().any(|s| s == "enabled"));
        let b = press.bounds.unwrap();
        let content = window.bounds.unwrap();
        assert!(
            b.x >= content.x && b.y >= content.y,
            "global bounds: {b:?} in {content:?}"
        );
        let first = find_node(&tree.nodes, "text_field", "First");
        assert!(first.states.iter().any(|s| s == "editable"));

        // Cut short by depth and count.
        let shallow = a
            .get_tree(v1::GetTreeRequest {
                window: window.r#ref.clone(),
                max_nodes: 3,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(shallow.nodes.len(), 3);
        assert!(shallow.truncated);

        // Pressed by element ref; the app saw the click.
        let act = |snapshot: &str, id: &str, action: v1::AccessibilityAction| v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: snapshot.into(),
                element_id: id.into(),
            }),
            action: action as i32,
            ..Default::default()
        };
        let pressed = a
            .act(act(
                &tree.snapshot_id,
                &press.element_id,
                v1::AccessibilityAction::Press,
            ))
            .await
            .unwrap()
            .into_inner();
        let report = pressed.report.unwrap();
        assert_ne!(report.delivery, v1::Delivery::Unspecified as i32);
        assert_ne!(report.delivery, v1::Delivery::Auto as i32);
        hosted.stdout.wait_for("\"clicked\"", "the fixture's click");
        // No snapshot named is the latest that read the element, as trycua's
        // `cua do a11y act ID` sends it: the press took the focus, so the
        // first read is stale for it, and a newer one is taken.
        read_tree(&mut a, &window).await;
        a.act(act("", &press.element_id, v1::AccessibilityAction::Press))
            .await
            .expect("an empty snapshot id is the latest");
        hosted
            .stdout
            .wait_count("\"clicked\"", 2, "the second click");
        let never_read = a
            .act(act("", "12345", v1::AccessibilityAction::Press))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&never_read),
            (Code::FailedPrecondition, v1::ErrorReason::StaleSnapshot)
        );
        assert!(
            !never_read
                .message()
                .contains("stale: read the tree again is stale"),
            "{never_read:?}"
        );

        // Found by role and name part; SET_VALUE through the found snapshot.
        let found = a
            .find(v1::FindRequest {
                window: window.r#ref.clone(),
                query: Some(v1::AccessibilityQuery {
                    role: "text_field".into(),
                    name_contains: "secon".into(),
                    ..Default::default()
                }),
                max_results: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(found.nodes.len(), 1, "{:?}", found.nodes);
        let second = found.nodes[0].clone();
        let mut set = act(
            &found.snapshot_id,
            &second.element_id,
            v1::AccessibilityAction::SetValue,
        );
        set.value = "set over cua".into();
        a.act(set).await.unwrap();
        hosted
            .stdout
            .wait_for("set over cua", "the entry's new text");

        // The field changed since that Find, and a newer read exists: stale.
        a.get_tree(v1::GetTreeRequest {
            window: window.r#ref.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
        let stale = a
            .act(act(
                &found.snapshot_id,
                &second.element_id,
                v1::AccessibilityAction::Focus,
            ))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&stale),
            (Code::FailedPrecondition, v1::ErrorReason::StaleSnapshot)
        );
        // An element that shows unchanged still acts from the older read.
        let opener = find_node(&tree.nodes, "button", "Open window");
        a.act(act(
            &tree.snapshot_id,
            &opener.element_id,
            v1::AccessibilityAction::Press,
        ))
        .await
        .expect("an unchanged element acts from an older snapshot");
        hosted.stdout.wait_for("\"opened\"", "the second window");
        let unknown = a
            .act(act(
                "no-such-snapshot",
                &press.element_id,
                v1::AccessibilityAction::Press,
            ))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&unknown),
            (Code::FailedPrecondition, v1::ErrorReason::StaleSnapshot)
        );
        for bad in [0, 999] {
            let mut r = act(
                &tree.snapshot_id,
                &press.element_id,
                v1::AccessibilityAction::Press,
            );
            r.action = bad;
            let e = a.act(r).await.unwrap_err();
            assert_eq!(e.code(), Code::InvalidArgument, "action {bad}: {e:?}");
        }
        // SELECT is for items and tabs: a button refuses it, unpressed.
        let clicks_before = hosted.stdout.lines.lock().unwrap().len();
        let fresh = read_tree(&mut a, &window).await;
        let button = find_node(&fresh.nodes, "button", "Press");
        let select = a
            .act(act(
                &fresh.snapshot_id,
                &button.element_id,
                v1::AccessibilityAction::Select,
            ))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&select),
            (
                Code::FailedPrecondition,
                v1::ErrorReason::FeatureUnsupported
            )
        );
        assert!(!hosted.stdout.lines.lock().unwrap()[clicks_before..]
            .iter()
            .any(|l| l.contains("\"clicked\"")));
        let mut custom = act(
            &tree.snapshot_id,
            &press.element_id,
            v1::AccessibilityAction::Custom,
        );
        custom.custom_action = String::new();
        assert_eq!(
            a.act(custom).await.unwrap_err().code(),
            Code::InvalidArgument
        );
    });
}

/// A drag whose call is dropped midway (its gRPC deadline passed) leaves no
/// button down: the press is let go of before the window's next input.
#[test]
fn a_drag_dropped_midway_leaves_no_button_down() {
    let hosted = Hosted::fixture(&["--env", "WAYRIG_FIXTURE_INPUT=1"]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        // Along the status label, which no gesture of the app claims.
        let tree = read_tree(&mut a, &window).await;
        let label = tree.nodes.iter().find(|n| n.name == "ready").unwrap();
        let from = centre(label.bounds.as_ref().unwrap());
        let mut drag = tonic::Request::new(v1::PointerRequest {
            target: None,
            action: Some(v1::pointer_request::Action::Drag(v1::PointerDrag {
                to: Some(v1::Point {
                    x: from.x + 100.0,
                    y: from.y,
                }),
                from: Some(from),
                duration: Some(prost_types::Duration {
                    seconds: 5,
                    nanos: 0,
                }),
                ..Default::default()
            })),
        });
        drag.set_timeout(Duration::from_millis(600));
        let dropped = c.pointer(drag).await.unwrap_err();
        // The client gives up first (tonic says Cancelled), or the server
        // does (DeadlineExceeded): either way the call is dropped.
        assert!(
            matches!(dropped.code(), Code::Cancelled | Code::DeadlineExceeded),
            "{dropped:?}"
        );
        hosted
            .stdout
            .wait_for(r#""kind": "press""#, "the drag's press");
        hosted
            .stdout
            .wait_for(r#""kind": "release""#, "the dropped drag's release");
    });
}

#[test]
fn pointer_and_keyboard_reach_the_app_in_every_coordinate_space() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        let tree = read_tree(&mut a, &window).await;
        let press = find_node(&tree.nodes, "button", "Press").bounds.unwrap();
        let content = window.bounds.unwrap();
        let click = |target: v1::InputTarget, at: v1::Point| v1::PointerRequest {
            target: Some(target),
            action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                position: Some(at),
                ..Default::default()
            })),
        };
        let clicks = || {
            hosted
                .stdout
                .lines
                .lock()
                .unwrap()
                .iter()
                .filter(|l| l.contains("\"clicked\""))
                .count()
        };

        // Screen points, with no window named: the window under the point.
        let at = centre(&press);
        let answer = c
            .pointer(click(v1::InputTarget::default(), at))
            .await
            .unwrap()
            .into_inner();
        assert!(answer.report.unwrap().pointer_moved);
        let cursor = answer.cursor_position.unwrap();
        assert_eq!((cursor.x, cursor.y), (at.x, at.y));
        assert_eq!(clicks(), 1);

        // Window points and normalized ones land on the same button.
        let in_window = v1::Point {
            x: at.x - content.x,
            y: at.y - content.y,
        };
        let window_target = |space: v1::CoordinateSpace| v1::InputTarget {
            window: window.r#ref.clone(),
            space: space as i32,
            ..Default::default()
        };
        c.pointer(click(window_target(v1::CoordinateSpace::Window), in_window))
            .await
            .unwrap();
        assert_eq!(clicks(), 2);
        let normalized = v1::Point {
            x: in_window.x / content.width,
            y: in_window.y / content.height,
        };
        c.pointer(click(
            window_target(v1::CoordinateSpace::Normalized),
            normalized,
        ))
        .await
        .unwrap();
        assert_eq!(clicks(), 3);
        let out_of_range = c
            .pointer(click(
                window_target(v1::CoordinateSpace::Normalized),
                v1::Point { x: 1.5, y: 0.0 },
            ))
            .await
            .unwrap_err();
        assert_eq!(out_of_range.code(), Code::InvalidArgument);
        let position = c
            .get_cursor_position(v1::GetCursorPositionRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(position.position.unwrap().x.round(), at.x.round());
        assert!(!position.display_id.is_empty());

        // Typed text of mixed scripts reads back exactly, from the app and the tree.
        let first = find_node(&tree.nodes, "text_field", "First")
            .bounds
            .unwrap();
        c.pointer(click(v1::InputTarget::default(), centre(&first)))
            .await
            .unwrap();
        let text = "Grüße, 世界 — ok ٣";
        let keyboard = |action: v1::keyboard_request::Action| v1::KeyboardRequest {
            target: Some(v1::InputTarget {
                window: window.r#ref.clone(),
                ..Default::default()
            }),
            action: Some(action),
        };
        let typed = c
            .keyboard(keyboard(v1::keyboard_request::Action::Type(
                v1::KeyboardType {
                    text: text.into(),
                    ..Default::default()
                },
            )))
            .await
            .unwrap();
        // The report counts the frames drawn until the text showed.
        let detail = typed.into_inner().report.unwrap().detail;
        assert!(
            !detail.contains(" 0 frame(s) drawn") && detail.contains("frame(s) drawn"),
            "{detail}"
        );
        hosted
            .stdout
            .wait_for(&format!("\"text\": \"{text}\""), "the typed text");
        // Select all and type over it with a hotkey and a named key.
        let named = |k: v1::Key| v1::KeyInput {
            key: Some(v1::key_input::Key::Named(k as i32)),
        };
        c.keyboard(keyboard(v1::keyboard_request::Action::Hotkey(
            v1::KeyboardHotkey {
                keys: vec![named(v1::Key::Control), named(v1::Key::A)],
            },
        )))
        .await
        .unwrap();
        c.keyboard(keyboard(v1::keyboard_request::Action::Press(
            v1::KeyboardPress {
                key: Some(v1::KeyInput {
                    key: Some(v1::key_input::Key::Character("Q".into())),
                }),
                modifiers: vec![],
                repeat: 2,
            },
        )))
        .await
        .unwrap();
        hosted
            .stdout
            .wait_for("\"text\": \"QQ\"", "the field replaced by QQ");
        // The keypad's digits type digits.
        c.keyboard(keyboard(v1::keyboard_request::Action::Press(
            v1::KeyboardPress {
                key: Some(named(v1::Key::Numpad5)),
                ..Default::default()
            },
        )))
        .await
        .unwrap();
        hosted
            .stdout
            .wait_for("\"text\": \"QQ5\"", "the keypad's 5 typed");
        let no_key = c
            .keyboard(keyboard(v1::keyboard_request::Action::Press(
                v1::KeyboardPress {
                    key: Some(v1::KeyInput {
                        key: Some(v1::key_input::Key::Character("é".into())),
                    }),
                    ..Default::default()
                },
            )))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&no_key),
            (Code::FailedPrecondition, v1::ErrorReason::DeliveryFailed)
        );
        let unspecified = c
            .keyboard(keyboard(v1::keyboard_request::Action::Down(
                v1::KeyboardDown {
                    key: Some(named(v1::Key::Unspecified)),
                },
            )))
            .await
            .unwrap_err();
        assert_eq!(unspecified.code(), Code::InvalidArgument);

        // Three wheel lines down over the list scroll its content down.
        // The fixture says where its scrolled list is, in window points.
        let layout = hosted.stdout.wait_for("\"layout\"", "the fixture's layout");
        let layout: serde_json::Value = serde_json::from_str(&layout).unwrap();
        let list = &layout["list"];
        let (lx, ly) = (
            list["x"].as_f64().unwrap() + list["w"].as_f64().unwrap() / 2.0,
            list["y"].as_f64().unwrap() + list["h"].as_f64().unwrap() / 2.0,
        );
        c.pointer(v1::PointerRequest {
            target: Some(window_target(v1::CoordinateSpace::Window)),
            action: Some(v1::pointer_request::Action::Scroll(v1::PointerScroll {
                position: Some(v1::Point { x: lx, y: ly }),
                delta_x: 0.0,
                delta_y: 3.0,
                unit: v1::ScrollUnit::Line as i32,
            })),
        })
        .await
        .unwrap();
        let scrolled = hosted.stdout.wait_for("\"scroll\"", "the list's scroll");
        let scrolled: serde_json::Value = serde_json::from_str(&scrolled).unwrap();
        assert!(
            scrolled["value"].as_f64().unwrap() > 0.0,
            "down: {scrolled}"
        );

        let displays = c
            .list_displays(v1::ListDisplaysRequest {})
            .await
            .unwrap()
            .into_inner()
            .displays;
        assert!(displays[0].primary && displays[0].native_size.unwrap().width > 0);
    });
}

/// A plain HTTP/1.1 exchange with the face; the status line and the body.
fn http(addr: &str, request: &[u8]) -> (String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(MESSAGE)).unwrap();
    stream.write_all(request).unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    let split = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&reply[..split]).into_owned();
    let status = head.lines().next().unwrap_or_default().to_string();
    let mut body = reply[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = unchunk(&body);
    }
    (status, body)
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 4 + size..];
    }
}

#[test]
fn capabilities_health_grpc_web_and_unserved_rpcs() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut s = SystemServiceClient::new(channel.clone());
        let caps = s
            .get_capabilities(v1::GetCapabilitiesRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(caps.protocol_version, 1);
        assert_eq!(caps.display_server, v1::DisplayServer::Wayland as i32);
        assert_eq!(caps.os.unwrap().family, v1::OsFamily::Linux as i32);
        assert!(!caps.displays.is_empty() && !caps.hostname.is_empty());
        let feature = |name: &str| {
            caps.features
                .iter()
                .find(|f| f.name == name)
                .unwrap_or_else(|| panic!("feature {name} is not listed"))
        };
        for name in [
            "windows",
            "window_stream",
            "a11y",
            "launch_app",
            "background_input",
        ] {
            assert!(feature(name).supported, "{name}");
        }
        let recording = feature("experimental.recording");
        assert!(!recording.supported && recording.limitation.contains("--record"));
        for f in caps.features.iter().filter(|f| !f.supported) {
            assert!(
                f.limitation.ends_with('.') || f.limitation.len() > 20,
                "{f:?}"
            );
        }
        let health = s.health(v1::HealthRequest {}).await.unwrap().into_inner();
        assert_eq!(health.status, v1::HealthStatus::Serving as i32);
        let init = s.init(v1::InitRequest::default()).await.unwrap_err();
        assert_eq!(
            refusal(&init),
            (Code::Unimplemented, v1::ErrorReason::FeatureUnsupported)
        );
        assert_eq!(wayrig_cua_proto::error_info(&init).unwrap().feature, "init");
    });

    let (status, _) = http(
        &hosted.addr,
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(status.contains(" 204"), "{status}");

    // gRPC-Web over plain HTTP/1.1: one empty GetCapabilitiesRequest frame.
    let request = "POST /cua.env.v1.SystemService/GetCapabilities HTTP/1.1\r\nHost: x\r\n\
         Content-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1\r\n\
         Content-Length: 5\r\nConnection: close\r\n\r\n"
        .to_string();
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0]);
    let (status, body) = http(&hosted.addr, &bytes);
    assert!(status.contains(" 200"), "{status}");
    assert_eq!(body[0], 0, "the first frame is a data frame");
    let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    let caps = <v1::GetCapabilitiesResponse as prost::Message>::decode(&body[5..5 + len]).unwrap();
    assert_eq!(caps.display_server, v1::DisplayServer::Wayland as i32);
    let trailers = String::from_utf8_lossy(&body[5 + len + 5..]);
    assert!(trailers.contains("grpc-status:0"), "{trailers}");
}

#[test]
fn a_token_is_checked_on_every_call_and_required_off_loopback() {
    let dir = std::env::temp_dir().join(format!("wayrig-cua-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();

    // Off loopback without a token: refused before anything starts.
    let refused = Command::new(support::shipped("wayrig"))
        .args(["run", "--cua-listen", "0.0.0.0:0", "--", "/bin/true"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--cua-token-file"), "{said}");

    let hosted = Hosted::fixture(&["--cua-token-file", token_file.to_str().unwrap()]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut anonymous = SystemServiceClient::new(channel.clone());
        let e = anonymous
            .get_capabilities(v1::GetCapabilitiesRequest {})
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&e),
            (Code::Unauthenticated, v1::ErrorReason::Unauthenticated)
        );
        let with = |token: &'static str| {
            move |mut r: tonic::Request<()>| {
                r.metadata_mut()
                    .insert("authorization", format!("Bearer {token}").parse().unwrap());
                Ok(r)
            }
        };
        let mut wrong = WindowsServiceClient::with_interceptor(channel.clone(), with("guess"));
        let e = wrong
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&e),
            (Code::Unauthenticated, v1::ErrorReason::Unauthenticated)
        );
        let mut right = WindowsServiceClient::with_interceptor(channel, with("s3cret-token"));
        right
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .expect("the right token is let through");
    });
    // The token is asked before anything else: an unknown method too.
    let (head, body) = grpc_web(&hosted.addr, "/cua.env.v1.Nope/Nothing", "", &[0; 5]);
    assert_eq!(
        web_refusal(&head, &body),
        (
            Code::Unauthenticated as i32,
            v1::ErrorReason::Unauthenticated
        )
    );
    drop(hosted);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_unix_socket_is_private_and_serves() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("wayrig-cua-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cua.sock");
    let listen = format!("unix:{}", path.display());
    let hosted = Hosted::start(&["--cua-listen", &listen], &fixture_argv());
    assert_eq!(hosted.addr, listen);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    support::runtime().block_on(async {
        let socket = path.clone();
        let channel = tonic::transport::Endpoint::from_static("http://localhost")
            .connect_with_connector(tower::service_fn(move |_| {
                let socket = socket.clone();
                async move {
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                        tokio::net::UnixStream::connect(socket).await?,
                    ))
                }
            }))
            .await
            .unwrap();
        let mut w = WindowsServiceClient::new(channel);
        assert_eq!(first_window(&mut w).await.title, "wayrig-gtk4-fixture");
    });
    // grpcio names the socket's path, percent-encoded, as the authority
    // (1.5x and later; Debian's 1.51 is told to, as later ones do unasked).
    let authority = path
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "%2F");
    let script = format!(
        "import grpc\n\
         channel = grpc.insecure_channel('unix:{}', options=[('grpc.default_authority', '{authority}')])\n\
         call = channel.unary_unary('/cua.env.v1.SystemService/GetCapabilities',\n\
             request_serializer=lambda b: b, response_deserializer=lambda b: b)\n\
         print(len(call(b'', timeout=30)))\n",
        path.display()
    );
    let out = Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "grpcio calls over the Unix socket: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(hosted);
    assert!(!path.exists(), "the socket file goes with the server");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_session_serves_mygo_the_bus_and_cua_at_once() {
    let dir = std::env::temp_dir().join(format!("wayrig-cua-faces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("mygo.sock");
    let hosted = Hosted::start(
        &[
            "--mygo-socket",
            socket.to_str().unwrap(),
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
        ],
        &fixture_argv(),
    );
    hosted
        .stderr
        .wait_for("automation socket", "the MyGo socket");
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let found = a
            .find(v1::FindRequest {
                window: window.r#ref.clone(),
                query: Some(v1::AccessibilityQuery {
                    role: "text_field".into(),
                    name: "First".into(),
                    ..Default::default()
                }),
                max_results: 1,
            })
            .await
            .unwrap()
            .into_inner();
        let mut set = v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: found.snapshot_id.clone(),
                element_id: found.nodes[0].element_id.clone(),
            }),
            action: v1::AccessibilityAction::SetValue as i32,
            ..Default::default()
        };
        set.value = "typed over cua".into();
        a.act(set).await.unwrap();
    });
    // The next read over MyGo sees what cua did.
    let mut mygo = support::ProtocolClient::connect(&socket);
    let win = mygo.first_window();
    let tree = mygo.call(wayrig_proto::mygo::Call::Tree {
        window: win["id"].as_u64(),
    });
    assert!(
        tree.to_string().contains("typed over cua"),
        "MyGo's tree after cua's act: {tree}"
    );
    // And so does the next read over the Bus.
    let url = hosted.stderr.wait_for("bus listens at ", "the Bus address");
    let url = url.split("listens at ").nth(1).unwrap().to_string();
    let name = hosted.stderr.wait_for("bus name ", "the app's Bus name");
    let name = name.split_whitespace().nth(3).unwrap().to_string();
    let body = support::runtime().block_on(bus_request(&url, &name, "ui.tree"));
    assert!(body.contains("typed over cua"), "the Bus's ui.tree: {body}");
    drop(hosted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs of each face on the worker fixture, idle and again under load.
const EFFECT_RUNS: u32 = 8;

/// Input and actions on every face answer once their effect shows: the
/// worker fixture computes its result on a thread and shows it later, and
/// a read right after the answer (nothing waited for between) must show it,
/// idle and under load.
#[test]
fn every_face_answers_once_a_workers_result_shows() {
    let dir = std::env::temp_dir().join(format!("wayrig-effect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("mygo.sock");
    let worker = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-worker.py");
    // The worker's 150 ms of computing can take longer than the default
    // effect wait (1 s) on a machine loaded past this test's own load; the
    // claim here is that answers wait for the effect, not how long.
    let hosted = Hosted::start(
        &[
            "--mygo-socket",
            socket.to_str().unwrap(),
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
            "--effect-wait",
            "5000",
        ],
        &["/usr/bin/python3".into(), worker.to_string_lossy().into()],
    );
    hosted
        .stderr
        .wait_for("automation socket", "the MyGo socket");
    let url = hosted.stderr.wait_for("bus listens at ", "the Bus address");
    let url = url.split("listens at ").nth(1).unwrap().to_string();
    let name = hosted.stderr.wait_for("bus name ", "the app's Bus name");
    let name = name.split_whitespace().nth(3).unwrap().to_string();
    let mut mygo = support::ProtocolClient::connect(&socket);
    let id = mygo.first_window()["id"].as_u64();
    let shows = |text: &str, n: u32| text.contains(&format!("result {n}"));
    let mut runs = 0;
    support::runtime().block_on(async {
        let mut bus = support::abp::Client::connect(&url, "effect-test").await;
        bus.tree(&name, serde_json::json!({})).await;
        let channel = hosted.channel().await;
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let window = first_window(&mut WindowsServiceClient::new(channel)).await;
        let find = |name: &str| v1::FindRequest {
            window: window.r#ref.clone(),
            query: Some(v1::AccessibilityQuery {
                name: name.into(),
                ..Default::default()
            }),
            max_results: 1,
        };
        for loaded in [false, true] {
            let _load = loaded.then(support::Load::start);
            for _ in 0..EFFECT_RUNS {
                // The Bus: a click by label, then the tree.
                runs += 1;
                bus.ok(&name, "ui.click", serde_json::json!({"label": "Compute"}))
                    .await;
                let tree = bus.ok(&name, "ui.tree", serde_json::json!({})).await;
                assert!(
                    shows(&tree.to_string(), runs),
                    "Bus run {runs} (load: {loaded})"
                );
                // cua: Act on the button, then Find the result.
                runs += 1;
                let button = a.find(find("Compute")).await.unwrap().into_inner();
                a.act(v1::ActRequest {
                    element: Some(v1::ElementRef {
                        snapshot_id: button.snapshot_id.clone(),
                        element_id: button.nodes[0].element_id.clone(),
                    }),
                    action: v1::AccessibilityAction::Press as i32,
                    ..Default::default()
                })
                .await
                .unwrap();
                let result = a.find(find(&format!("result {runs}"))).await.unwrap();
                assert_eq!(
                    result.into_inner().nodes.len(),
                    1,
                    "cua run {runs} (load: {loaded})"
                );
                // MyGo: an act, then the tree, no idle between.
                runs += 1;
                let tree = mygo.call(wayrig_proto::mygo::Call::Tree { window: id });
                let compute = support::element_id(
                    tree["nodes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|n| n["label"] == "Compute")
                        .unwrap(),
                );
                mygo.call(wayrig_proto::mygo::Call::Act {
                    window: id,
                    element: compute,
                    action: wayrig_proto::mygo::Action::Press,
                });
                let tree = mygo.call(wayrig_proto::mygo::Call::Tree { window: id });
                assert!(
                    shows(&tree.to_string(), runs),
                    "MyGo run {runs} (load: {loaded})"
                );
            }
        }
    });
    drop(hosted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A window that never settles (it redraws all of itself every frame)
/// still answers input after the effect wait, and says why on the wire:
/// the Bus in its answer's body, cua in response metadata and the report.
#[test]
fn an_answer_past_the_effect_wait_says_the_window_did_not_settle() {
    let hosted = Hosted::start(
        &[
            "--effect-wait",
            "300",
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
            "--env",
            "WAYRIG_FIXTURE_ANIMATE=1",
        ],
        &fixture_argv(),
    );
    let url = hosted.stderr.wait_for("bus listens at ", "the Bus address");
    let url = url.split("listens at ").nth(1).unwrap().to_string();
    let name = hosted.stderr.wait_for("bus name ", "the app's Bus name");
    let name = name.split_whitespace().nth(3).unwrap().to_string();
    support::runtime().block_on(async {
        let mut bus = support::abp::Client::connect(&url, "unsettled-test").await;
        bus.tree(&name, serde_json::json!({})).await;
        let answer = bus
            .ok(&name, "ui.click", serde_json::json!({"label": "Press"}))
            .await;
        assert_eq!(answer["settled"], false, "{answer}");
        assert!(
            answer["unsettled"]
                .as_str()
                .unwrap()
                .contains("keeps drawing"),
            "{answer}"
        );
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let tree = read_tree(&mut a, &window).await;
        let press = find_node(&tree.nodes, "button", "Press").bounds.unwrap();
        let answer = c
            .pointer(v1::PointerRequest {
                target: Some(v1::InputTarget::default()),
                action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                    position: Some(centre(&press)),
                    ..Default::default()
                })),
            })
            .await
            .unwrap();
        let why = answer
            .metadata()
            .get("wayrig-unsettled")
            .expect("the header");
        assert!(why.to_str().unwrap().contains("settle"), "{why:?}");
        let detail = answer.into_inner().report.unwrap().detail;
        assert!(detail.contains("did not settle"), "{detail}");
    });
}

/// Background delivery reaches a window behind another and leaves the
/// pointer where it was and the focus on the window in front: a click on
/// the fixture's Press button and typing into its field, while its second
/// window is in front.
#[test]
fn background_input_leaves_the_pointer_and_the_focus_where_they_were() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel.clone());
        let first = first_window(&mut w).await;
        let tree = read_tree(&mut a, &first).await;
        let node_at =
            |role: &str, name: &str| centre(&find_node(&tree.nodes, role, name).bounds.unwrap());
        let click_at = |target: v1::InputTarget, at: v1::Point| v1::PointerRequest {
            target: Some(target),
            action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                position: Some(at),
                ..Default::default()
            })),
        };
        // The second window opens in front, focused.
        c.pointer(click_at(
            v1::InputTarget::default(),
            node_at("button", "Open window"),
        ))
        .await
        .unwrap();
        hosted.stdout.wait_for("\"opened\"", "the second window");
        let front = |windows: &[v1::WindowInfo]| {
            windows.iter().find(|w| w.focused).map(|w| w.title.clone())
        };
        let listed = w
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .unwrap();
        assert_eq!(
            front(&listed.get_ref().windows).as_deref(),
            Some("wayrig-gtk4-second")
        );
        let cursor = || async {
            ComputerServiceClient::new(hosted.channel().await)
                .get_cursor_position(v1::GetCursorPositionRequest {})
                .await
                .unwrap()
                .into_inner()
                .position
                .unwrap()
        };
        let before = cursor().await;
        let background = v1::InputTarget {
            window: first.r#ref.clone(),
            delivery: v1::Delivery::Background as i32,
            ..Default::default()
        };
        let clicked = c
            .pointer(click_at(background.clone(), node_at("button", "Press")))
            .await
            .unwrap()
            .into_inner();
        hosted
            .stdout
            .wait_for("\"clicked\"", "the background click");
        assert!(!clicked.report.unwrap().pointer_moved);
        let after = cursor().await;
        assert_eq!(
            (after.x, after.y),
            (before.x, before.y),
            "the pointer stayed"
        );
        // Keys typed in the background reach the field clicked in the background.
        c.pointer(click_at(background.clone(), node_at("text_field", "First")))
            .await
            .unwrap();
        let typed = c
            .keyboard(v1::KeyboardRequest {
                target: Some(background),
                action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                    text: "bg".into(),
                    ..Default::default()
                })),
            })
            .await
            .unwrap()
            .into_inner();
        hosted.stdout.wait_for("\"bg\"", "the typed text");
        assert!(!typed.report.unwrap().focus_changed);
        let listed = w
            .list_windows(v1::ListWindowsRequest::default())
            .await
            .unwrap();
        assert_eq!(
            front(&listed.get_ref().windows).as_deref(),
            Some("wayrig-gtk4-second"),
            "the window in front kept the focus"
        );
    });
}

/// One ABP request over the Bus to `app`, and the body of its answer.
async fn bus_request(url: &str, app: &str, verb: &str) -> String {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use wayrig_proto::abp::{Frame, Rc};
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let request =
        Frame::request(&format!("{app}.{verb}"), "cua-test", app, "1").with_body("{}".to_string());
    ws.send(Message::text(request.serialize())).await.unwrap();
    loop {
        let message = tokio::time::timeout(MESSAGE, ws.next())
            .await
            .expect("an answer in time")
            .expect("the connection stays open")
            .unwrap();
        if let Message::Text(text) = message {
            let frame = Frame::parse_strict(text.as_str()).unwrap();
            if frame.id() == Some("1") {
                assert_eq!(frame.rc(), Some(Rc::Ok), "{}", frame.body);
                return frame.body;
            }
        }
    }
}

#[test]
fn gtk4_widget_factory_reads_in_one_vocabulary_and_a_check_box_toggles() {
    let hosted = Hosted::start(
        &["--cua-listen", "127.0.0.1:0"],
        &["gtk4-widget-factory".to_string()],
    );
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        // The factory fills its page after its first frames.
        let checks =
            |t: &v1::GetTreeResponse| t.nodes.iter().filter(|n| n.role == "check_box").count();
        let tree = read_until(&channel, &window, |t| checks(t) > 2).await;
        let roles: std::collections::BTreeSet<&str> =
            tree.nodes.iter().map(|n| n.role.as_str()).collect();
        for role in ["window", "button", "check_box", "slider", "text_field"] {
            assert!(roles.contains(role), "no {role} in {roles:?}");
        }
        // Hidden pages are left out unless asked for.
        assert!(tree
            .nodes
            .iter()
            .all(|n| !n.states.contains(&"offscreen".into())));
        let all = a
            .get_tree(v1::GetTreeRequest {
                window: window.r#ref.clone(),
                include_hidden: true,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(all.nodes.len() > tree.nodes.len());

        let has = |n: &v1::AccessibilityNode, state: &str| n.states.iter().any(|s| s == state);
        let check = tree
            .nodes
            .iter()
            .find(|n| n.role == "check_box" && has(n, "enabled") && !has(n, "checked"))
            .expect("an enabled, unchecked check box")
            .clone();
        a.act(v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: tree.snapshot_id.clone(),
                element_id: check.element_id.clone(),
            }),
            action: v1::AccessibilityAction::Press as i32,
            ..Default::default()
        })
        .await
        .unwrap();
        read_until(&channel, &window, |t| {
            t.nodes
                .iter()
                .any(|n| n.element_id == check.element_id && has(n, "checked"))
        })
        .await;
    });
}

#[test]
fn foot_changes_its_title_and_the_watch_sees_it() {
    // sh, not the user's shell: its start-up files are not the test's.
    let argv = ["foot", "--", "sh"].map(String::from);
    let hosted = Hosted::start(&["--cua-listen", "127.0.0.1:0"], &argv);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let wref = window.r#ref.clone().unwrap();
        let mut watch = w
            .watch_windows(v1::WatchWindowsRequest::default())
            .await
            .unwrap()
            .into_inner();
        next(&mut watch).await;
        c.keyboard(v1::KeyboardRequest {
            target: Some(v1::InputTarget {
                window: Some(wref.clone()),
                ..Default::default()
            }),
            action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                text: "printf '\\033]2;%s\\007' titled-over-cua\n".into(),
                ..Default::default()
            })),
        })
        .await
        .unwrap();
        wait_update(&mut watch, &wref, |w| w.title == "titled-over-cua").await;
    });
}

#[test]
fn a_handle_goes_stale_when_its_window_is_mapped_again() {
    let client = support::workspace_binary("wayrig-testclient");
    let hosted = Hosted::start(
        &["--cua-listen", "127.0.0.1:0"],
        &[client.to_string_lossy().into_owned()],
    );
    support::runtime().block_on(async {
        use v1::watch_windows_response::Event;
        let mut w = WindowsServiceClient::new(hosted.channel().await);
        let window = first_window(&mut w).await;
        let old = window.r#ref.clone().unwrap();
        let mut watch = w
            .watch_windows(v1::WatchWindowsRequest::default())
            .await
            .unwrap()
            .into_inner();
        next(&mut watch).await;
        // The test client unmaps and maps its toplevel again on SIGUSR1.
        let pid = window.app.unwrap().pid as i32;
        // SAFETY: kill(2) on the test client this test started; no memory is touched.
        unsafe { libc::kill(pid, libc::SIGUSR1) };
        wait_event(
            &mut watch,
            |e| matches!(e, Event::Closed(c) if c.r#ref.as_ref() == Some(&old)),
        )
        .await;
        let again = wait_event(
            &mut watch,
            |e| matches!(e, Event::Created(c) if c.r#ref.as_ref().is_some_and(|r| r.id == old.id)),
        )
        .await;
        let Event::Created(again) = again else {
            unreachable!()
        };
        assert_eq!(again.r#ref.unwrap().epoch, old.epoch + 1);
        let stale = w
            .get_window(v1::GetWindowRequest {
                window: Some(old.clone()),
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&stale),
            (Code::FailedPrecondition, v1::ErrorReason::StaleHandle)
        );
        let stale_op = w
            .minimize_window(v1::MinimizeWindowRequest { window: Some(old) })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&stale_op),
            (Code::FailedPrecondition, v1::ErrorReason::StaleHandle)
        );
    });
}

#[test]
fn screenshots_show_the_window_and_map_input_back() {
    let client = support::workspace_binary("wayrig-testclient");
    let hosted = Hosted::start(
        &["--cua-listen", "127.0.0.1:0"],
        &[
            client.to_string_lossy().into_owned(),
            "--color".into(),
            "33cc66".into(),
        ],
    );
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let wref = window.r#ref.clone().unwrap();
        let content = window.bounds.unwrap();
        let shooter = c.clone();
        let shoot = |r: v1::ScreenshotRequest| {
            let mut c = shooter.clone();
            async move { c.screenshot(r).await.map(|a| a.into_inner()) }
        };
        let of_window = v1::ScreenshotRequest {
            source: Some(v1::screenshot_request::Source::Window(wref.clone())),
            ..Default::default()
        };

        // A display no one has is NOT_FOUND, as in an input target.
        for id in ["9", "not-a-display"] {
            let unknown = shoot(v1::ScreenshotRequest {
                source: Some(v1::screenshot_request::Source::DisplayId(id.into())),
                ..Default::default()
            })
            .await
            .unwrap_err();
            assert_eq!(
                refusal(&unknown),
                (Code::NotFound, v1::ErrorReason::TargetUnavailable),
                "{id}"
            );
        }

        // The window's own pixels: its fill, and the white marker at 10..30.
        let shot = shoot(of_window.clone()).await.unwrap();
        assert_eq!(shot.format, v1::ImageFormat::Png as i32);
        let image = support::Image::from_png(&shot.image);
        assert_eq!(
            (image.width, image.height),
            (content.width as u32, content.height as u32)
        );
        assert_eq!(shot.image_size.unwrap().width, image.width);
        assert_eq!(image.pixel(5, 5), [0x33, 0xcc, 0x66]);
        assert_eq!(image.pixel(20, 20), [0xff, 0xff, 0xff]);
        assert_eq!(shot.logical_bounds, Some(content));

        // A region in the window's points, and a smaller JPEG.
        let marker = shoot(v1::ScreenshotRequest {
            region: Some(v1::Rect {
                x: 10.0,
                y: 10.0,
                width: 20.0,
                height: 20.0,
            }),
            ..of_window.clone()
        })
        .await
        .unwrap();
        let marker_image = support::Image::from_png(&marker.image);
        assert_eq!((marker_image.width, marker_image.height), (20, 20));
        assert_eq!(marker_image.share_of([0xff, 0xff, 0xff]), 1.0);
        let small = shoot(v1::ScreenshotRequest {
            format: v1::ImageFormat::Jpeg as i32,
            max_dimension: 100,
            ..of_window.clone()
        })
        .await
        .unwrap();
        assert_eq!(&small.image[..2], &[0xff, 0xd8], "a JPEG");
        let s = small.image_size.unwrap();
        assert_eq!(s.width.max(s.height), 100);

        // A click at the image's centre lands at the window's centre.
        let size = shot.image_size.unwrap();
        c.pointer(v1::PointerRequest {
            target: Some(v1::InputTarget {
                space: v1::CoordinateSpace::Screenshot as i32,
                screenshot_id: shot.screenshot_id.clone(),
                ..Default::default()
            }),
            action: Some(v1::pointer_request::Action::Move(v1::PointerMove {
                position: Some(v1::Point {
                    x: size.width as f64 / 2.0,
                    y: size.height as f64 / 2.0,
                }),
                duration: None,
            })),
        })
        .await
        .unwrap();
        let cursor = c
            .get_cursor_position(v1::GetCursorPositionRequest {})
            .await
            .unwrap()
            .into_inner()
            .position
            .unwrap();
        assert_eq!(
            (cursor.x, cursor.y),
            (centre(&content).x, centre(&content).y)
        );

        // Once the window moves, points of the old screenshot are stale.
        w.set_window_bounds(v1::SetWindowBoundsRequest {
            window: Some(wref),
            position: Some(v1::Point {
                x: content.x + 50.0,
                y: content.y + 20.0,
            }),
            width: None,
            height: None,
        })
        .await
        .unwrap();
        let stale = c
            .pointer(v1::PointerRequest {
                target: Some(v1::InputTarget {
                    space: v1::CoordinateSpace::Screenshot as i32,
                    screenshot_id: shot.screenshot_id.clone(),
                    ..Default::default()
                }),
                action: Some(v1::pointer_request::Action::Move(v1::PointerMove {
                    position: Some(v1::Point { x: 1.0, y: 1.0 }),
                    duration: None,
                })),
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&stale),
            (Code::FailedPrecondition, v1::ErrorReason::StaleGeometry)
        );
        // The whole display, by default.
        let display = shoot(v1::ScreenshotRequest::default()).await.unwrap();
        assert!(display.native_size.unwrap().width >= image.width);
    });
}

#[test]
fn the_clipboard_carries_text_both_ways() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let text = "héllo 世界";
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

        // Pasted into the focused field by Ctrl+V.
        let found = a
            .find(v1::FindRequest {
                window: window.r#ref.clone(),
                query: Some(v1::AccessibilityQuery {
                    name: "First".into(),
                    ..Default::default()
                }),
                max_results: 1,
            })
            .await
            .unwrap()
            .into_inner();
        a.act(v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: found.snapshot_id,
                element_id: found.nodes[0].element_id.clone(),
            }),
            action: v1::AccessibilityAction::Focus as i32,
            ..Default::default()
        })
        .await
        .unwrap();
        let press = |chord: &str| v1::KeyboardRequest {
            target: Some(v1::InputTarget {
                window: window.r#ref.clone(),
                ..Default::default()
            }),
            action: Some(v1::keyboard_request::Action::Press(v1::KeyboardPress {
                key: Some(v1::KeyInput {
                    key: Some(v1::key_input::Key::Character(chord.into())),
                }),
                modifiers: vec![v1::Key::Control as i32],
                repeat: 1,
            })),
        };
        c.keyboard(press("v")).await.unwrap();
        hosted
            .stdout
            .wait_for(&format!("\"text\": \"{text}\""), "the pasted text");

        // Typed, selected and copied in the app: read back with a new generation.
        c.keyboard(v1::KeyboardRequest {
            action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                text: " + more".into(),
                ..Default::default()
            })),
            ..press("a")
        })
        .await
        .unwrap();
        c.keyboard(press("a")).await.unwrap();
        c.keyboard(press("c")).await.unwrap();
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

        let files = c
            .set_clipboard(v1::SetClipboardRequest {
                content: Some(v1::ClipboardContent {
                    file_paths: vec!["/etc/hostname".into()],
                    ..Default::default()
                }),
            })
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&files),
            (
                Code::FailedPrecondition,
                v1::ErrorReason::FeatureUnsupported
            )
        );
        assert_eq!(
            wayrig_cua_proto::error_info(&files).unwrap().feature,
            "clipboard.files"
        );

        // Over the limit is LIMIT_EXCEEDED; no flavor at all clears it.
        let text_of = |text: Option<String>| v1::SetClipboardRequest {
            content: Some(v1::ClipboardContent {
                text,
                ..Default::default()
            }),
        };
        let over = c
            .set_clipboard(text_of(Some("x".repeat((1 << 20) + 1))))
            .await
            .unwrap_err();
        assert_eq!(
            refusal(&over),
            (Code::InvalidArgument, v1::ErrorReason::LimitExceeded)
        );
        c.set_clipboard(text_of(None)).await.unwrap();
        let cleared = c
            .get_clipboard(v1::GetClipboardRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(cleared.content.unwrap().text.unwrap_or_default(), "");
    });
}

#[test]
fn gtk4_demo_runs_a_demo_picked_with_the_pointer_and_a_disabled_button_refuses() {
    let hosted = Hosted::start(&["--cua-listen", "127.0.0.1:0"], &["gtk4-demo".to_string()]);
    support::runtime().block_on(async {
        use v1::watch_windows_response::Event;
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        let window = first_window(&mut w).await;
        let find = |name: &str, role: &str| v1::FindRequest {
            window: window.r#ref.clone(),
            query: Some(v1::AccessibilityQuery {
                role: role.into(),
                name: name.into(),
                ..Default::default()
            }),
            max_results: 1,
        };
        let press = |found: &v1::FindResponse| v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: found.snapshot_id.clone(),
                element_id: found.nodes[0].element_id.clone(),
            }),
            action: v1::AccessibilityAction::Press as i32,
            ..Default::default()
        };
        // No demo is picked yet: Run is disabled, and pressing it is refused.
        let run = a.find(find("Run", "button")).await.unwrap().into_inner();
        assert!(run.nodes[0].states.contains(&"disabled".into()), "{run:?}");
        let refused = a.act(press(&run)).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");

        // A click on the "Clipboard" row picks that demo; Run runs it.
        let row = a
            .find(find("Clipboard", "panel"))
            .await
            .unwrap()
            .into_inner();
        c.pointer(v1::PointerRequest {
            target: None,
            action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                position: Some(centre(&row.nodes[0].bounds.unwrap())),
                ..Default::default()
            })),
        })
        .await
        .unwrap();
        let run = a.find(find("Run", "button")).await.unwrap().into_inner();
        assert!(run.nodes[0].states.contains(&"enabled".into()), "{run:?}");
        let mut watch = w
            .watch_windows(v1::WatchWindowsRequest::default())
            .await
            .unwrap()
            .into_inner();
        next(&mut watch).await;
        a.act(press(&run)).await.unwrap();
        wait_event(
            &mut watch,
            |e| matches!(e, Event::Created(w) if w.title == "Clipboard"),
        )
        .await;
    });
}

/// The window's tree, read once with the defaults.
async fn read_tree(
    a: &mut AccessibilityServiceClient<Channel>,
    window: &v1::WindowInfo,
) -> v1::GetTreeResponse {
    a.get_tree(v1::GetTreeRequest {
        window: window.r#ref.clone(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
}

/// Read the window's tree until `done` holds of it. A toolkit may fill its
/// tree after its first frames, and AccessKit hands a change to AT-SPI after
/// the frame that shows it: between looks, wait for a frame the app draws
/// at a pointer move near its bottom-right corner.
async fn read_until(
    channel: &Channel,
    window: &v1::WindowInfo,
    done: impl Fn(&v1::GetTreeResponse) -> bool,
) -> v1::GetTreeResponse {
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let mut c = ComputerServiceClient::new(channel.clone());
    let read = v1::GetTreeRequest {
        window: window.r#ref.clone(),
        ..Default::default()
    };
    for _ in 0..100 {
        if let Ok(t) = a.get_tree(read.clone()).await.map(|t| t.into_inner()) {
            if done(&t) {
                return t;
            }
        }
        c.pointer(v1::PointerRequest {
            target: Some(v1::InputTarget {
                window: window.r#ref.clone(),
                space: v1::CoordinateSpace::Normalized as i32,
                ..Default::default()
            }),
            action: Some(v1::pointer_request::Action::Move(v1::PointerMove {
                position: Some(v1::Point { x: 0.98, y: 0.98 }),
                duration: None,
            })),
        })
        .await
        .unwrap();
    }
    panic!("the tree never showed what was waited for");
}

/// An element's app-given key, as cua carries it in `attributes`.
fn keyed<'a>(nodes: &'a [v1::AccessibilityNode], key: &str) -> &'a v1::AccessibilityNode {
    nodes
        .iter()
        .find(|n| n.attributes.get("key").map(String::as_str) == Some(key))
        .unwrap_or_else(|| panic!("no element with key {key:?}"))
}

#[test]
fn an_egui_app_is_read_and_pressed_through_accesskit() {
    let fixture = support::workspace_binary("egui-fixture");
    let hosted = Hosted::start(
        &["--cua-listen", "127.0.0.1:0"],
        &[fixture.to_string_lossy().into_owned()],
    );
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        assert_eq!(window.title, "Wayrig egui fixture");
        // AccessKit starts once the app has drawn and been asked.
        let has_status = |t: &v1::GetTreeResponse| {
            t.nodes
                .iter()
                .any(|n| n.attributes.get("key").is_some_and(|k| k == "status"))
        };
        let tree = read_until(&channel, &window, has_status).await;
        let press = keyed(&tree.nodes, "press");
        assert_eq!(
            (press.role.as_str(), press.name.as_str()),
            ("button", "Press")
        );
        assert_eq!(keyed(&tree.nodes, "enabled").role, "check_box");
        assert_eq!(keyed(&tree.nodes, "name").role, "text_field");
        assert_eq!(keyed(&tree.nodes, "amount").role, "slider");
        a.act(v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: tree.snapshot_id.clone(),
                element_id: press.element_id.clone(),
            }),
            action: v1::AccessibilityAction::Press as i32,
            ..Default::default()
        })
        .await
        .unwrap();
        let pressed = |t: &v1::GetTreeResponse| {
            has_status(t) && keyed(&t.nodes, "status").name.starts_with("presses 1,")
        };
        read_until(&channel, &window, pressed).await;
    });
}

#[test]
fn unset_positions_act_where_the_pointer_is_and_gestures_take_their_time() {
    let hosted = Hosted::fixture(&[]);
    support::runtime().block_on(async {
        let channel = hosted.channel().await;
        let mut w = WindowsServiceClient::new(channel.clone());
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel.clone());
        let window = first_window(&mut w).await;
        let tree = read_tree(&mut a, &window).await;
        let press = centre(&find_node(&tree.nodes, "button", "Press").bounds.unwrap());
        let pointer = |action| v1::PointerRequest {
            target: None,
            action: Some(action),
        };
        let moved = |at: v1::Point, duration: Option<prost_types::Duration>| {
            pointer(v1::pointer_request::Action::Move(v1::PointerMove {
                position: Some(at),
                duration,
            }))
        };

        // A click with no position clicks where the pointer is.
        c.pointer(moved(press, None)).await.unwrap();
        c.pointer(pointer(v1::pointer_request::Action::Click(
            v1::PointerClick::default(),
        )))
        .await
        .unwrap();
        hosted
            .stdout
            .wait_for("\"clicked\"", "the click where the pointer was");

        // A scroll with no position scrolls what is under the pointer.
        let layout = hosted.stdout.wait_for("\"layout\"", "the fixture's layout");
        let layout: serde_json::Value = serde_json::from_str(&layout).unwrap();
        let content = window.bounds.unwrap();
        let list = &layout["list"];
        let over_list = v1::Point {
            x: content.x + list["x"].as_f64().unwrap() + list["w"].as_f64().unwrap() / 2.0,
            y: content.y + list["y"].as_f64().unwrap() + list["h"].as_f64().unwrap() / 2.0,
        };
        // A glide of 300 ms: a move a frame, over at least its duration.
        let started = std::time::Instant::now();
        let glide = c
            .pointer(moved(
                over_list,
                Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 300_000_000,
                }),
            ))
            .await
            .unwrap()
            .into_inner();
        assert!(started.elapsed() >= Duration::from_millis(300));
        let detail = glide.report.unwrap().detail;
        assert!(detail.contains("in 18 step(s)"), "{detail}");
        c.pointer(pointer(v1::pointer_request::Action::Scroll(
            v1::PointerScroll {
                delta_y: 3.0,
                ..Default::default()
            },
        )))
        .await
        .unwrap();
        hosted.stdout.wait_for("\"scroll\"", "the list's scroll");

        // Over the empty desktop the pointer moves, and leaves the window.
        let empty = v1::Point {
            x: content.x + content.width + 20.0,
            y: content.y + 10.0,
        };
        let answer = c.pointer(moved(empty, None)).await.unwrap().into_inner();
        let cursor = answer.cursor_position.unwrap();
        assert_eq!((cursor.x, cursor.y), (empty.x, empty.y));
        let negative = c
            .pointer(moved(
                press,
                Some(prost_types::Duration {
                    seconds: -1,
                    nanos: 0,
                }),
            ))
            .await
            .unwrap_err();
        assert_eq!(negative.code(), Code::InvalidArgument);

        // Typing with a delay pauses between keystrokes.
        let first = centre(
            &find_node(&tree.nodes, "text_field", "First")
                .bounds
                .unwrap(),
        );
        c.pointer(pointer(v1::pointer_request::Action::Click(
            v1::PointerClick {
                position: Some(first),
                ..Default::default()
            },
        )))
        .await
        .unwrap();
        let started = std::time::Instant::now();
        c.keyboard(v1::KeyboardRequest {
            target: Some(v1::InputTarget {
                window: window.r#ref.clone(),
                ..Default::default()
            }),
            action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                text: "abc".into(),
                delay: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 100_000_000,
                }),
                ..Default::default()
            })),
        })
        .await
        .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(200));
        hosted
            .stdout
            .wait_for("\"text\": \"abc\"", "the typed text");
    });
}

/// trycua's own `cua` command line (PyPI cua-cli), as its users run it,
/// with its state in `home`; scripts/install-deps fetches it.
struct CuaCli {
    home: PathBuf,
}

impl CuaCli {
    const BINARY: &'static str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-tools/cua-0.9.0");

    /// Pointed at the face at `addr`.
    fn switch_to(addr: &str) -> CuaCli {
        assert!(
            std::path::Path::new(Self::BINARY).exists(),
            "trycua's cua is not at {}: run scripts/install-deps",
            Self::BINARY
        );
        let home = std::env::temp_dir().join(format!("wayrig-cua-cli-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let cli = CuaCli { home };
        cli.ok(&["switch", "url", &format!("http://{addr}")]);
        cli
    }

    /// `cua --embedded do ARGS`: its exit status, stdout and stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(Self::BINARY)
            .args(["--embedded", "do", "--no-record"])
            .args(args)
            .env("CUA_HOME", self.home.join("cua"))
            .env("HOME", &self.home)
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .output()
            .expect("cua runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = self.run(args);
        assert_eq!(code, 0, "cua do {args:?}: {stdout}{stderr}");
        stdout
    }

    /// `a11y find NAME --role ROLE`: the node named exactly NAME.
    fn find(&self, name: &str, role: &str) -> serde_json::Value {
        let found: serde_json::Value =
            serde_json::from_str(&self.ok(&["a11y", "find", name, "--role", role])).unwrap();
        found["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("{role} {name:?} in {found}"))
            .clone()
    }
}

impl Drop for CuaCli {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// The middle of a node's `bounds: [x, y, width, height]`, as cua's words.
fn middle(node: &serde_json::Value) -> (String, String) {
    let b: Vec<f64> = node["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    (
        ((b[0] + b[2] / 2.0).round() as i64).to_string(),
        ((b[1] + b[3] / 2.0).round() as i64).to_string(),
    )
}

#[test]
fn trycuas_own_cua_command_line_drives_a_session() {
    // At 1024x768 its screenshots come back unscaled, so its points are ours.
    let hosted = Hosted::fixture(&["--size", "1024x768"]);
    // The fixture says where its list is once its window is laid out.
    let layout = hosted.stdout.wait_for("\"layout\"", "the fixture's layout");
    let layout: serde_json::Value = serde_json::from_str(&layout).unwrap();
    let cua = CuaCli::switch_to(&hosted.addr);
    let listed = cua.ok(&["window", "ls"]);
    assert!(listed.contains("wayrig-gtk4-fixture"), "{listed}");

    // Found, then pressed with no snapshot named: its default, "the latest".
    let press = cua.find("Press", "button");
    cua.ok(&["a11y", "act", press["id"].as_str().unwrap(), "press"]);
    hosted.stdout.wait_for("\"clicked\"", "the press");

    // Clicked and typed into by screen point.
    let first = cua.find("First", "text_field");
    let (x, y) = middle(&first);
    cua.ok(&["click", &x, &y]);
    cua.ok(&["type", "typed by cua"]);
    hosted
        .stdout
        .wait_for("\"text\": \"typed by cua\"", "the typed text");

    // Moved over the empty desktop, and scrolled where the pointer is.
    cua.ok(&["move", "5", "5"]);
    let cursor = cua.ok(&["cursor"]);
    assert!(cursor.contains("(5, 5)"), "{cursor}");
    let window = cua.ok(&["window", "info", "1"]);
    let window: serde_json::Value = serde_json::from_str(&window).unwrap();
    let list = &layout["list"];
    let at = |axis: &str, size: &str, i: usize| {
        (window["position"][i].as_f64().unwrap()
            + list[axis].as_f64().unwrap()
            + list[size].as_f64().unwrap() / 2.0)
            .round()
            .to_string()
    };
    cua.ok(&["move", &at("x", "w", 0), &at("y", "h", 1)]);
    cua.ok(&["scroll", "down"]);
    hosted.stdout.wait_for("\"scroll\"", "the list's scroll");

    // A program given by its path is launched.
    let client = support::workspace_binary("wayrig-testclient");
    cua.ok(&[
        "launch",
        client.to_str().unwrap(),
        "--title",
        "launched by cua",
    ]);
    let listed = cua.ok(&["window", "ls"]);
    assert!(listed.contains("launched by cua"), "{listed}");

    let shot = cua.home.join("shot.png");
    cua.ok(&["screenshot", "--save", shot.to_str().unwrap()]);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    cua.ok(&["clipboard", "set", "from trycua"]);
    assert!(cua.ok(&["clipboard", "get"]).contains("from trycua"));
}

/// A gRPC-Web call over plain HTTP/1.1 with `frame` as its body: the answer's
/// header block and body.
fn grpc_web(addr: &str, path: &str, extra: &str, frame: &[u8]) -> (String, Vec<u8>) {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        frame.len()
    );
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(frame);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(MESSAGE)).unwrap();
    // Written beside the read: a server refusing a large body answers, and
    // may close, before it has read it all.
    let mut writer = stream.try_clone().unwrap();
    let written = std::thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    let mut reply = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
        }
    }
    let _ = written.join();
    let split = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    (
        String::from_utf8_lossy(&reply[..split]).into_owned(),
        reply[split + 4..].to_vec(),
    )
}

/// The ErrorInfo reason a gRPC-Web answer's headers or trailers carry.
fn web_refusal(head: &str, body: &[u8]) -> (i32, v1::ErrorReason) {
    use base64::Engine;
    let all = format!("{head}\r\n{}", String::from_utf8_lossy(body));
    // Header names in any case; values as sent (base64 is case-sensitive).
    let field = |name: &str| {
        all.split(['\r', '\n'])
            .find_map(|l| {
                let (key, value) = l.split_once(':')?;
                key.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_string())
            })
            .unwrap_or_else(|| panic!("{name} in {all}"))
    };
    let code: i32 = field("grpc-status").parse().unwrap();
    let details = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(field("grpc-status-details-bin").trim_end_matches('='))
        .unwrap();
    let status = tonic::Status::with_details(Code::from_i32(code), "", details.into());
    let info = wayrig_cua_proto::error_info(&status).expect("an ErrorInfo");
    (code, v1::ErrorReason::try_from(info.reason).unwrap())
}

#[test]
fn tonics_own_refusals_carry_error_info_and_browsers_need_an_allowed_origin() {
    let hosted = Hosted::fixture(&["--cua-allow-origin", "http://app.example:8080"]);
    let addr = hosted.addr.clone();
    let caps = "/cua.env.v1.SystemService/GetCapabilities";
    // An unknown method, a body that does not decode, one over the limit.
    let (head, body) = grpc_web(&addr, "/cua.env.v1.Nope/Nothing", "", &[0, 0, 0, 0, 0]);
    assert_eq!(
        web_refusal(&head, &body),
        (
            Code::Unimplemented as i32,
            v1::ErrorReason::FeatureUnsupported
        )
    );
    let (head, body) = grpc_web(&addr, caps, "", &[0, 0, 0, 0, 3, 0xff, 0xff, 0xff]);
    assert_eq!(
        web_refusal(&head, &body).0,
        Code::InvalidArgument as i32,
        "{head}"
    );
    let big = 9 << 20;
    let mut frame = vec![0];
    frame.extend_from_slice(&(big as u32).to_be_bytes());
    frame.resize(5 + big, 0);
    let (head, body) = grpc_web(&addr, caps, "", &frame);
    assert_eq!(
        web_refusal(&head, &body),
        (
            Code::ResourceExhausted as i32,
            v1::ErrorReason::LimitExceeded
        )
    );

    // A browser on an origin allowed is answered its preflight and its call.
    let preflight = "OPTIONS /cua.env.v1.SystemService/GetCapabilities HTTP/1.1\r\nHost: x\r\n\
        Origin: http://app.example:8080\r\nAccess-Control-Request-Method: POST\r\n\
        Access-Control-Request-Headers: content-type,x-grpc-web\r\nConnection: close\r\n\r\n";
    let (status, _) = http(&addr, preflight.as_bytes());
    assert!(status.contains(" 204"), "{status}");
    let (head, _) = grpc_web(
        &addr,
        caps,
        "Origin: http://app.example:8080\r\n",
        &[0, 0, 0, 0, 0],
    );
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("access-control-allow-origin: http://app.example:8080"),
        "{head}"
    );
    assert!(head.contains("grpc-status-details-bin"), "exposed: {head}");
    // Any other origin is refused, preflight or call.
    let evil = preflight.replace("app.example:8080", "evil.example");
    let (status, _) = http(&addr, evil.as_bytes());
    assert!(status.contains(" 403"), "{status}");
    let (head, _) = grpc_web(
        &addr,
        caps,
        "Origin: http://evil.example\r\n",
        &[0, 0, 0, 0, 0],
    );
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
}
