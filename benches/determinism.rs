//! Determinism: one end-to-end scenario on the GTK 4 fixture (launch, press,
//! type mixed scripts, a menu item, read back, capture) run again and again
//! with `stress-ng --cpu 2` beside it; every failure is counted and kept.
//!
//! Then the same scenario in step pacing, with the caret's blink off, where
//! the end's captures must be byte-identical. `scripts/determinism` runs it;
//! `WAYRIG_DETERMINISM_RUNS` (500) and `WAYRIG_DETERMINISM_STEP_RUNS` (20).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;
use support::{ProtocolClient, Wayrig};
use wayrig_proto::mygo::{Action, Call, ElementPick};

/// Typed into the fixture's first field: Latin with diacritics, CJK,
/// Cyrillic, a symbol, right-to-left Arabic, and an emoji.
const TYPED: &str = "Grüße, 世界 — Привет ✓ مرحبا 🙂";

/// The scenario once, in a session of its own; the end's capture (PNG).
fn scenario(flags: &[&str]) -> Result<Vec<u8>, String> {
    let fixture = support::gtk4_fixture();
    let wayrig = Wayrig::start_with(flags, &["/usr/bin/python3", &fixture]);
    let mut c = ProtocolClient::connect(&wayrig.socket);
    let window = Some(c.first_window()["id"].as_u64().ok_or("no window id")?);
    let mut ask = |call: Call| {
        let method = call.method();
        c.answer(call)
            .map_err(|e| format!("{method}: {:?}: {}", e.code, e.message))
    };
    let tree = ask(Call::Tree { window })?;
    let find = |role: &str, label: &str| -> Result<ElementPick, String> {
        tree["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|n| n["role"] == role && n["label"] == label)
            .map(support::element_id)
            .ok_or_else(|| format!("no {role} {label:?} in the first tree"))
    };
    let (press, first) = (find("button", "Press")?, find("textField", "First")?);
    ask(Call::Act {
        window,
        element: press,
        action: Action::Press,
    })?;
    ask(Call::Act {
        window,
        element: first,
        action: Action::InsertText { text: TYPED.into() },
    })?;
    ask(Call::Menu {
        window,
        path: vec!["File".into(), "New".into()],
    })?;
    ask(Call::Idle {
        window,
        timeout_ms: Some(10_000),
    })?;
    let tree = ask(Call::Tree { window })?;
    let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
    let shows = |want: &dyn Fn(&Value) -> bool| nodes.iter().any(want);
    if !shows(&|n| n["label"] == "First" && n["value"] == TYPED) {
        return Err("the first field does not read back what was typed".into());
    }
    if !shows(&|n| n["label"] == "ran app.new") {
        return Err("the status does not say the menu item ran".into());
    }
    let shot = ask(Call::Capture { window })?;
    base64::engine::general_purpose::STANDARD
        .decode(shot["png"].as_str().unwrap_or_default())
        .map_err(|e| format!("capture: {e}"))
}

/// `stress-ng --cpu 2`, its process group ended when dropped.
struct Stress {
    _group: support::OwnedGroup,
}

impl Stress {
    fn start() -> Stress {
        let child = Command::new("stress-ng")
            .args(["--cpu", "2", "--timeout", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("stress-ng runs (scripts/install-deps installs it)");
        Stress {
            _group: support::OwnedGroup(child),
        }
    }
}

/// Runs of the scenario: the failures by their message, the captures by
/// their bytes, and the runs' times.
#[derive(Default)]
struct Runs {
    failures: BTreeMap<String, usize>,
    captures: BTreeMap<Vec<u8>, usize>,
    times: Vec<Duration>,
}

impl Runs {
    fn run(count: usize, flags: &[&str], what: &str) -> Runs {
        let mut runs = Runs::default();
        for n in 0..count {
            let started = Instant::now();
            match scenario(flags) {
                Ok(png) => *runs.captures.entry(png).or_default() += 1,
                Err(e) => {
                    eprintln!("determinism: {what} run {n} failed: {e}");
                    *runs.failures.entry(e).or_default() += 1;
                }
            }
            runs.times.push(started.elapsed());
            if (n + 1) % 50 == 0 {
                eprintln!("determinism: {what}: {} of {count} runs", n + 1);
            }
        }
        runs
    }

    fn failed(&self) -> usize {
        self.failures.values().sum()
    }
}

fn main() {
    if table::listing_only() {
        return;
    }
    let count: usize = table::env_number("WAYRIG_DETERMINISM_RUNS", 500);
    let step_count: usize = table::env_number("WAYRIG_DETERMINISM_STEP_RUNS", 20);
    // GTK reads its settings from this keyfile: the caret does not blink,
    // so the end's captures cannot differ by the moment they were taken.
    let settings = std::env::temp_dir().join(format!("wayrig-determinism-{}", std::process::id()));
    let keyfile = settings.join("glib-2.0/settings");
    std::fs::create_dir_all(&keyfile).unwrap();
    std::fs::write(
        keyfile.join("keyfile"),
        "[org/gnome/desktop/interface]\ncursor-blink=false\n",
    )
    .unwrap();
    let config_home = format!("XDG_CONFIG_HOME={}", settings.display());
    let stress = Stress::start();
    let started = Instant::now();
    let realtime = Runs::run(count, &[], "realtime");
    let stepped = Runs::run(
        step_count,
        &[
            "--pacing",
            "step",
            "--env",
            "GSETTINGS_BACKEND=keyfile",
            "--env",
            &config_home,
        ],
        "step",
    );
    drop(stress);
    let _ = std::fs::remove_dir_all(&settings);
    let row = |name: &str, runs: &Runs| {
        let mut times = runs.times.clone();
        times.sort();
        (
            name.to_string(),
            format!(
                "{} / {} / {}",
                runs.times.len(),
                runs.failed(),
                runs.captures.len()
            ),
            format!(
                "median {}, slowest {}",
                table::ms(table::percentile(&times, 0.5)),
                table::ms(times.last().copied().unwrap_or_default())
            ),
        )
    };
    table::print_as(
        "runs / failed / distinct end captures",
        &[
            row("realtime pacing", &realtime),
            row("step pacing, caret blink off", &stepped),
        ],
    );
    println!(
        "\nbeside stress-ng --cpu 2, in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (pacing, runs) in [("realtime", &realtime), ("step", &stepped)] {
        for (failure, times) in &runs.failures {
            println!("{pacing}: {times} x {failure}");
        }
    }
}
