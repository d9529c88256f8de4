//! The MyGo face's round trips over its socket, medians: windows, tree,
//! capture, press to settled, and one agent step (press, then read what
//! changed) beside the peer way of doing it (pyatspi doAction, then a walk);
//! on the GTK 4 worker fixture, press to settled with settle's thread
//! watching on and off, and wayrig.waitFor on a result a timer picks up.
//!
//! Run with `cargo bench --bench mygo` (needs python3-pyatspi for the peer).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{element_id, ProtocolClient, Wayrig};
use table::{median, ms, time};
use wayrig_proto::mygo::{Action, Awaited, Call};

fn read_tree() -> Call {
    Call::Tree { window: None }
}

fn idle() -> Call {
    Call::Idle {
        window: None,
        timeout_ms: Some(10000),
    }
}

/// From `wayrig run` to the app's first whole tree over MyGo, asked as soon
/// as a window is listed (or once it is idle): median of 5, with the
/// tree's size.
fn launch_to_tree(flags: &[&str], app: &str, after_idle: bool) -> (Duration, usize) {
    let mut nodes = 0;
    let mut once = || {
        let began = Instant::now();
        let wayrig = Wayrig::start_with(flags, &[app]);
        let mut c = ProtocolClient::connect(&wayrig.socket);
        if after_idle {
            c.first_window();
        } else {
            while c.call(Call::Windows)["windows"]
                .as_array()
                .is_none_or(Vec::is_empty)
            {}
        }
        nodes = c.call(read_tree())["nodes"].as_array().map_or(0, Vec::len);
        began.elapsed()
    };
    let took = median((0..5).map(|_| once()).collect());
    (took, nodes)
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();

    for app in ["gtk4-widget-factory", "gtk4-demo"] {
        for (flags, how) in [
            (&["--read-ahead", "on"][..], "read ahead (default)"),
            (&["--read-ahead", "off"][..], "--read-ahead off"),
        ] {
            for after_idle in [false, true] {
                let (took, nodes) = launch_to_tree(flags, app, after_idle);
                let asked = match after_idle {
                    false => "asked once a window lists",
                    true => "asked after idle",
                };
                rows.push((
                    format!("launch to first whole tree, {app}, {how}, {asked}"),
                    ms(took),
                    format!("median of 5; {nodes} elements; from `wayrig run` to the answer"),
                ));
            }
        }
    }

    let factory = Wayrig::start_app(&["gtk4-widget-factory"]);
    let mut c = ProtocolClient::connect(&factory.socket);
    c.first_window();
    let tree = c.call(read_tree());
    let nodes = tree["nodes"].as_array().map_or(0, Vec::len);
    rows.push((
        "windows".to_string(),
        ms(time(20, || c.call(Call::Windows))),
        "median of 20".to_string(),
    ));
    rows.push((
        format!("tree of gtk4-widget-factory ({nodes} elements)"),
        ms(time(5, || c.call(read_tree()))),
        "median of 5; it animates, so every read is fresh".to_string(),
    ));
    rows.push((
        "capture of gtk4-widget-factory (base64 PNG)".to_string(),
        ms(time(10, || c.call(Call::Capture { window: None }))),
        "median of 10".to_string(),
    ));
    drop(c);
    drop(factory);

    let fixture = Wayrig::start();
    let mut c = ProtocolClient::connect(&fixture.socket);
    c.first_window();
    c.call(idle());
    let tree = c.call(read_tree());
    let press = element_id(
        tree["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["label"] == "Press"))
            .expect("the Press button"),
    );
    let press = || Call::Act {
        window: None,
        element: press.clone(),
        action: Action::Press,
    };
    rows.push((
        "act press, then idle (GTK4 fixture)".to_string(),
        ms(time(10, || {
            c.call(press());
            c.call(idle())
        })),
        "median of 10".to_string(),
    ));
    rows.push((
        "agent step: press, idle, tree (wayrig)".to_string(),
        ms(time(10, || {
            c.call(press());
            c.call(idle());
            c.call(read_tree())
        })),
        "median of 10".to_string(),
    ));
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peer_pyatspi.py");
    let out = std::process::Command::new("/usr/bin/python3")
        .arg(&peer)
        .args(["wayrig-gtk4-fixture", "10"])
        .env("DBUS_SESSION_BUS_ADDRESS", &fixture.bus_address)
        .output();
    match out
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
    {
        Some(v) if v.get("step_ms").is_some() => {
            rows.push((
                format!(
                    "agent step: doAction, full walk (pyatspi, {} nodes)",
                    v["nodes"]
                ),
                format!("{:.1} ms", v["step_ms"].as_f64().unwrap_or(0.0)),
                "median of 10; the peers' way, no settle".to_string(),
            ));
        }
        other => rows.push((
            "agent step: pyatspi".to_string(),
            "-".to_string(),
            format!("not measured: {other:?} (apt-get install python3-pyatspi)"),
        )),
    }
    worker_rows(&mut rows);
    table::print(&rows);
}

/// The worker fixture's button (by label) as `act` names it.
fn button(c: &mut ProtocolClient, label: &str) -> wayrig_proto::mygo::ElementPick {
    let tree = c.call(read_tree());
    element_id(
        tree["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["label"] == label))
            .expect("the fixture's button"),
    )
}

/// Settle on a worker thread's result with thread watching on and off (off,
/// idle may answer before the result shows: how often is in the notes), and
/// waitFor on a result polled by a 50 ms timer.
fn worker_rows(rows: &mut Vec<(String, String, String)>) {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-worker.py");
    let argv = ["/usr/bin/python3", fixture.to_str().unwrap()];
    const ROUNDS: u64 = 20;
    for (flags, watching) in [(&[][..], "on"), (&["--settle-threads", "off"][..], "off")] {
        let wayrig = Wayrig::start_with(flags, &argv);
        let mut c = ProtocolClient::connect(&wayrig.socket);
        c.first_window();
        c.call(idle());
        let compute = button(&mut c, "Compute");
        let mut early = 0;
        let mut run = 0;
        let median = time(ROUNDS as usize, || {
            run += 1;
            c.call(Call::Act {
                window: None,
                element: compute.clone(),
                action: Action::Press,
            });
            c.call(idle());
            let shown = c.call(read_tree()).to_string();
            if !shown.contains(&format!("result {run}")) {
                early += 1;
            }
        });
        rows.push((
            format!("worker fixture: press, idle (thread watching {watching})"),
            ms(median),
            format!("median of {ROUNDS}; the result not yet shown in {early} of {ROUNDS}"),
        ));
        if watching == "on" {
            let poll = button(&mut c, "Poll");
            let mut n = 0;
            let median = time(ROUNDS as usize, || {
                n += 1;
                c.call(Call::Act {
                    window: None,
                    element: poll.clone(),
                    action: Action::Press,
                });
                c.call(Call::WaitFor {
                    window: None,
                    awaited: Awaited::Text(format!("polled {n}")),
                    gone: false,
                    timeout_ms: Some(10_000),
                })
            });
            rows.push((
                "worker fixture: press, waitFor the polled result".to_string(),
                ms(median),
                format!("median of {ROUNDS}; 150 ms of work, then a 50 ms poll"),
            ));
        }
    }
}
