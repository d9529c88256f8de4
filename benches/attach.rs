//! `wayrig attach` on sway beside `wayrig run`, the same work through MyGo on
//! each in one run: a click to its effect, 100 characters typed, capture, tree.
//!
//! Run with `cargo bench --bench attach` as root (sway runs as the desktop user
//! scripts/install-deps makes); without sway the attach rows say why not.

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::desktop::Desktop;
use support::{follow_output, Lines, OwnedGroup, ProtocolClient};
use table::{median, ms};
use wayrig_proto::mygo::{Call, Event, Mods};

const CLICKS: usize = 20;
const TYPED: usize = 10;
const READS: usize = 10;
/// Characters typed per round, mixed scripts as the tests type them.
const TYPED_CHARS: usize = 100;

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-fixture.py")
        .to_str()
        .unwrap()
        .to_string()
}

/// `wayrig run` hosting the GTK 4 fixture, whose lines come on its stdout.
fn run_fixture(dir: &std::path::Path) -> (OwnedGroup, PathBuf, Arc<Lines>) {
    use std::os::unix::process::CommandExt;
    let socket = dir.join("run.sock");
    let mut child = Command::new(support::shipped("wayrig"))
        .args(["run", "--mygo-socket"])
        .arg(&socket)
        .args(["--env", "GSK_RENDERER=cairo", "--", "/usr/bin/python3"])
        .arg(fixture())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("wayrig runs");
    let (out, err) = follow_output(&mut child);
    err.wait_for("automation socket", "wayrig run's socket");
    (OwnedGroup(child), socket, out)
}

fn centre(tree: &Value, role: &str, label: &str) -> (f64, f64) {
    let node = tree["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["role"] == role && n["label"] == label))
        .unwrap_or_else(|| panic!("no {role} {label:?}"));
    let b = &node["bounds"];
    (
        b["x"].as_f64().unwrap() + b["width"].as_f64().unwrap() / 2.0,
        b["y"].as_f64().unwrap() + b["height"].as_f64().unwrap() / 2.0,
    )
}

fn click(at: (f64, f64)) -> Event {
    Event::Click {
        x: at.0,
        y: at.1,
        button: Default::default(),
        clicks: 1,
        mods: Mods::default(),
    }
}

/// The four measures, medians: click to effect, typing, capture, tree read.
fn measure(socket: &std::path::Path, said: &Lines) -> [Duration; 4] {
    let mut c = ProtocolClient::connect(socket);
    let window = c.first_window()["id"].as_u64().unwrap();
    let idle = Call::Idle {
        window: Some(window),
        timeout_ms: Some(10_000),
    };
    c.call(idle.clone());
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let press = centre(&tree, "button", "Press");
    let first = centre(&tree, "textField", "First");

    let mut clicks = Vec::new();
    for n in 1..=CLICKS {
        let t0 = Instant::now();
        c.call(Call::Input {
            window: Some(window),
            events: vec![click(press)],
        });
        said.wait_count("\"ev\": \"clicked\"", n, "a click's effect");
        clicks.push(t0.elapsed());
        c.call(idle.clone());
    }

    c.call(Call::Input {
        window: Some(window),
        events: vec![click(first)],
    });
    // Focused, and its text input enabled, before the first key.
    c.call(idle.clone());
    let alphabet: Vec<char> = "Grüße, 世界 — Привет ✓ abc".chars().collect();
    let mut typing = Vec::new();
    for round in 0..TYPED {
        let prefix = format!("{round:02} ");
        let text: String = prefix
            .chars()
            .chain((0..).map(|i| alphabet[(i + round) % alphabet.len()]))
            .take(TYPED_CHARS)
            .collect();
        let t0 = Instant::now();
        c.call(Call::Input {
            window: Some(window),
            events: vec![
                Event::Key {
                    key: "CmdOrCtrl+A".into(),
                },
                Event::Text { text: text.clone() },
            ],
        });
        said.wait_for(
            &format!(r#""name": "first", "text": "{text}"}}"#),
            "the typed text",
        );
        typing.push(t0.elapsed());
    }
    c.call(idle);

    let mut read = |call: &dyn Fn() -> Call| {
        median(
            (0..READS)
                .map(|_| {
                    let t0 = Instant::now();
                    c.call(call());
                    t0.elapsed()
                })
                .collect(),
        )
    };
    let capture = read(&|| Call::Capture {
        window: Some(window),
    });
    let tree = read(&|| Call::Tree {
        window: Some(window),
    });
    [median(clicks), median(typing), capture, tree]
}

fn main() {
    if table::listing_only() {
        return;
    }
    let names = [
        format!("click to GtkButton::clicked, median of {CLICKS}"),
        format!("type {TYPED_CHARS} characters to the entry's change, median of {TYPED}"),
        format!("capture of the window (MyGo, base64 PNG), median of {READS}"),
        format!("tree read (MyGo), median of {READS}"),
    ];
    let dir = std::env::temp_dir().join(format!("wayrig-bench-attach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (run, socket, said) = run_fixture(&dir);
    let own = measure(&socket, &said);
    drop(run);
    let _ = std::fs::remove_dir_all(&dir);

    let attached = Desktop::start("bench attach").map(|mut desktop| {
        let (_, said, _) = desktop.start_app(&["/usr/bin/python3", &fixture()]);
        let (socket, _) = desktop.attach(&[]);
        measure(&socket, &said)
    });

    let mut rows = Vec::new();
    for (i, name) in names.iter().enumerate() {
        rows.push((
            format!("{name}: wayrig run"),
            ms(own[i]),
            "Wayrig's own compositor, GTK 4 fixture".to_string(),
        ));
        rows.push(match &attached {
            Some(a) => (
                format!("{name}: wayrig attach"),
                ms(a[i]),
                "sway 1.7 headless, the same fixture".to_string(),
            ),
            None => (
                format!("{name}: wayrig attach"),
                "-".to_string(),
                "not measured: sway or its user is missing (scripts/install-deps)".to_string(),
            ),
        });
    }
    table::print(&rows);
}
