//! The MixOS Bus face's drive verbs beside MyGo's act, from one session serving
//! both: a click to its answer (in frames and ms, realtime and fast pacing), a
//! 100-character type, and the widget factory's tree.
//!
//! Run with `cargo bench --bench bus`.

mod bus_client;
#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::time::Duration;

use bus_client::{free_port, Bus};
use serde_json::{json, Value};
use support::{element_id, ProtocolClient, Wayrig};
use table::{median, ms, time};
use wayrig_proto::mygo::{Action, Call};

/// `wayrig run` serving MyGo and the Bus for `argv`, the first app named `app`.
fn both(pacing: &str, argv: &[&str]) -> (Wayrig, Bus) {
    let port = free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let wayrig = Wayrig::start_with(
        &[
            "--pacing",
            pacing,
            "--bus-listen",
            &listen,
            "--bus-name",
            "app",
        ],
        argv,
    );
    let bus = Bus::connect(&format!("ws://{listen}/ws"));
    (wayrig, bus)
}

fn row(rows: &mut Vec<(String, String, String)>, name: &str, d: Duration, note: &str) {
    rows.push((name.to_string(), ms(d), note.to_string()));
}

/// Frames a traced input answer ran over: the commits of all its passes.
fn frames(answer: &Value) -> u64 {
    answer["passes"]
        .as_array()
        .map_or(0, |p| p.iter().filter_map(|p| p["frames"].as_u64()).sum())
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gtk4-fixture.py"
    );
    let text: String = "0123456789".repeat(10);
    for pacing in ["realtime", "fast"] {
        let (wayrig, mut bus) = both(pacing, &["/usr/bin/python3", fixture]);
        let mut c = ProtocolClient::connect(&wayrig.socket);
        c.first_window();
        // The tree is there once the window has drawn.
        let tree = loop {
            let t = c.call(Call::Tree { window: None });
            if t["nodes"].as_array().is_some_and(|n| !n.is_empty()) {
                break t;
            }
        };
        let find = |label: &str| {
            element_id(
                tree["nodes"]
                    .as_array()
                    .and_then(|n| n.iter().find(|n| n["label"] == label))
                    .unwrap_or_else(|| panic!("{label} in the fixture")),
            )
        };
        let (press, first) = (find("Press"), find("First"));
        let mut counts = Vec::new();
        let click = time(20, || {
            let answer = bus.ok("app", "ui.click", json!({"label": "Press", "trace": true}));
            counts.push(Duration::from_millis(frames(&answer)));
        });
        row(
            &mut rows,
            &format!("click to its answer ({pacing}): Bus ui.click"),
            click,
            &format!(
                "median of 20; {} frames committed",
                median(counts).as_millis()
            ),
        );
        row(
            &mut rows,
            &format!("click to its answer ({pacing}): MyGo act press"),
            time(20, || {
                c.call(Call::Act {
                    window: None,
                    element: press.clone(),
                    action: Action::Press,
                })
            }),
            "median of 20",
        );
        bus.ok("app", "ui.click", json!({"label": "First"}));
        row(
            &mut rows,
            &format!("type 100 characters ({pacing}): Bus ui.type"),
            time(10, || bus.ok("app", "ui.type", json!({"text": text}))),
            "median of 10",
        );
        row(
            &mut rows,
            &format!("type 100 characters ({pacing}): MyGo act insertText"),
            time(10, || {
                c.call(Call::Act {
                    window: None,
                    element: first.clone(),
                    action: Action::InsertText { text: text.clone() },
                })
            }),
            "median of 10",
        );
    }

    let (factory, mut bus) = both("realtime", &["gtk4-widget-factory"]);
    let mut c = ProtocolClient::connect(&factory.socket);
    c.first_window();
    while c.call(Call::Tree { window: None })["nodes"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {}
    let nodes = bus.ok("app", "ui.tree", json!({}))["nodes"]
        .as_array()
        .map_or(0, Vec::len);
    row(
        &mut rows,
        &format!("tree of gtk4-widget-factory: Bus ui.tree ({nodes} nodes)"),
        time(5, || bus.ok("app", "ui.tree", json!({}))),
        "median of 5; it animates, so every read is fresh",
    );
    row(
        &mut rows,
        "tree of gtk4-widget-factory: MyGo tree",
        time(5, || c.call(Call::Tree { window: None })),
        "median of 5",
    );
    table::print(&rows);
}
