//! The cua.env.v1 face's round trips beside MyGo's, from one session serving
//! both: windows, the widget factory's tree, a window's image, a press to its
//! report, and how soon a watch hears of a window that maps.
//!
//! Run with `cargo bench --bench cua`.

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::time::{Duration, Instant};

use support::{element_id, ProtocolClient, Wayrig};
use table::{median, ms, time};
use tonic::transport::Channel;
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;
use wayrig_cua_proto::v1::computer_service_client::ComputerServiceClient;
use wayrig_cua_proto::v1::windows_service_client::WindowsServiceClient;
use wayrig_proto::mygo::{Action, Call};

/// `wayrig run` serving MyGo and cua.env.v1 for `argv`.
fn both(argv: &[&str]) -> (Wayrig, Channel, tokio::runtime::Runtime) {
    let wayrig = Wayrig::start_with(&["--cua-listen", "127.0.0.1:0"], argv);
    let addr = wayrig.cua_address.clone().expect("the cua face listens");
    let rt = table::runtime();
    let channel = rt.block_on(async {
        Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .expect("the cua face takes a connection")
    });
    (wayrig, channel, rt)
}

fn row(rows: &mut Vec<(String, String, String)>, name: &str, d: Duration, note: &str) {
    rows.push((name.to_string(), ms(d), note.to_string()));
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();

    let (factory, channel, rt) = both(&["gtk4-widget-factory"]);
    let mut c = ProtocolClient::connect(&factory.socket);
    let window = c.first_window();
    let mut w = WindowsServiceClient::new(channel.clone());
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let mut computer = ComputerServiceClient::new(channel.clone());
    let listed = rt.block_on(w.list_windows(v1::ListWindowsRequest::default()));
    let wref = listed.unwrap().into_inner().windows[0].r#ref.clone();
    row(
        &mut rows,
        "windows: cua ListWindows",
        time(20, || {
            rt.block_on(w.list_windows(v1::ListWindowsRequest::default()))
                .unwrap()
        }),
        "median of 20",
    );
    row(
        &mut rows,
        "windows: MyGo windows",
        time(20, || c.call(Call::Windows)),
        "median of 20",
    );
    let get_tree = v1::GetTreeRequest {
        window: wref.clone(),
        include_hidden: true,
        ..Default::default()
    };
    let nodes = rt
        .block_on(a.get_tree(get_tree.clone()))
        .unwrap()
        .into_inner()
        .nodes
        .len();
    row(
        &mut rows,
        &format!("tree of gtk4-widget-factory: cua GetTree ({nodes} nodes)"),
        time(5, || rt.block_on(a.get_tree(get_tree.clone())).unwrap()),
        "median of 5; it animates, so every read is fresh",
    );
    row(
        &mut rows,
        "tree of gtk4-widget-factory: MyGo tree",
        time(5, || {
            c.call(Call::Tree {
                window: window["id"].as_u64(),
            })
        }),
        "median of 5",
    );
    let shot = v1::ScreenshotRequest {
        source: wref.clone().map(v1::screenshot_request::Source::Window),
        ..Default::default()
    };
    match rt.block_on(computer.screenshot(shot.clone())) {
        Ok(_) => row(
            &mut rows,
            "one window's image: cua Screenshot (PNG)",
            time(10, || {
                rt.block_on(computer.screenshot(shot.clone())).unwrap()
            }),
            "median of 10",
        ),
        Err(e) => rows.push((
            "one window's image: cua Screenshot".into(),
            "-".into(),
            format!("not served: {}", e.message()),
        )),
    }
    row(
        &mut rows,
        "one window's image: MyGo capture (base64 PNG)",
        time(10, || c.call(Call::Capture { window: None })),
        "median of 10",
    );
    drop(c);
    drop(factory);

    let (fixture, channel, rt) = both(&[
        "/usr/bin/python3",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gtk4-fixture.py"
        ),
    ]);
    let mut c = ProtocolClient::connect(&fixture.socket);
    c.first_window();
    let mut a = AccessibilityServiceClient::new(channel.clone());
    let tree = rt
        .block_on(a.get_tree(v1::GetTreeRequest::default()))
        .unwrap()
        .into_inner();
    let press = tree
        .nodes
        .iter()
        .find(|n| n.name == "Press" && n.role == "button")
        .expect("the Press button");
    let act = v1::ActRequest {
        element: Some(v1::ElementRef {
            snapshot_id: tree.snapshot_id.clone(),
            element_id: press.element_id.clone(),
        }),
        action: v1::AccessibilityAction::Press as i32,
        ..Default::default()
    };
    // Pressing focuses the button once; from then on it shows unchanged.
    rt.block_on(a.act(act.clone())).unwrap();
    let fresh = rt
        .block_on(a.get_tree(v1::GetTreeRequest::default()))
        .unwrap()
        .into_inner();
    let act = v1::ActRequest {
        element: Some(v1::ElementRef {
            snapshot_id: fresh.snapshot_id,
            element_id: press.element_id.clone(),
        }),
        ..act
    };
    row(
        &mut rows,
        "press to its report: cua Act PRESS",
        time(10, || rt.block_on(a.act(act.clone())).unwrap()),
        "median of 10; the app has drawn the press",
    );
    let mygo_tree = c.call(Call::Tree { window: None });
    let pick = element_id(
        mygo_tree["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["label"] == "Press"))
            .expect("the Press button"),
    );
    row(
        &mut rows,
        "press to its report: MyGo act press",
        time(10, || {
            c.call(Call::Act {
                window: None,
                element: pick.clone(),
                action: Action::Press,
            })
        }),
        "median of 10",
    );
    drop(c);
    drop(fixture);

    // A window that maps again: from the signal to the watch's message.
    let client = support::workspace_binary("wayrig-testclient");
    let (remapping, channel, rt) = both(&[client.to_str().unwrap()]);
    let mut w = WindowsServiceClient::new(channel);
    let latency = rt.block_on(async {
        use v1::watch_windows_response::Event;
        let mut watch = w
            .watch_windows(v1::WatchWindowsRequest::default())
            .await
            .unwrap()
            .into_inner();
        // The snapshot holds the window if it has mapped; else it comes next.
        let first = loop {
            match watch.message().await.unwrap().unwrap().event.unwrap() {
                Event::Snapshot(s) if !s.windows.is_empty() => break s.windows[0].clone(),
                Event::Created(w) => break w,
                _ => {}
            }
        };
        let pid = first.app.unwrap().pid as i32;
        let mut took = Vec::new();
        for _ in 0..10 {
            let t0 = Instant::now();
            // SAFETY: kill(2) on the test client this bench started.
            unsafe { libc::kill(pid, libc::SIGUSR1) };
            loop {
                let event = watch.message().await.unwrap().unwrap().event.unwrap();
                if matches!(event, Event::Created(_)) {
                    took.push(t0.elapsed());
                    break;
                }
            }
        }
        median(took)
    });
    row(
        &mut rows,
        "watch: a window maps again, to its created message",
        latency,
        "median of 10; includes the test client's unmap and remap",
    );
    drop(remapping);
    table::print(&rows);
}
