//! Sessions side by side: N `wayrig run` sessions at once, each hosting the
//! GTK 4 fixture and serving an agent's loop (tree, press, idle, capture)
//! to a MyGo client of its own, N raised until a session's p99 step passes
//! 1 s or a request fails; each session's memory split into Wayrig, its
//! buses and its app.
//!
//! Run with `cargo bench --bench parallel`; `WAYRIG_PARALLEL_MAX` caps N
//! (default 16), `WAYRIG_PARALLEL_STEPS` sets each client's steps (100).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use support::{ProtocolClient, Wayrig};
use wayrig_proto::mygo::{Action, Call};

/// The p99 step a session must keep under.
const STEP_LIMIT: Duration = Duration::from_secs(1);

/// What one session's client measured: each step's time, and the first
/// request that failed.
struct Run {
    steps: Vec<Duration>,
    failed: Option<String>,
}

/// `steps` agent steps against one session: read the tree, press, wait
/// for the window to settle, capture it.
fn agent(socket: PathBuf, steps: usize) -> Run {
    let mut c = ProtocolClient::connect(&socket);
    let window = c.first_window()["id"].as_u64();
    let tree = c.call(Call::Tree { window });
    let press = support::element_labelled(&tree, "button", "Press");
    let mut run = Run {
        steps: Vec::with_capacity(steps),
        failed: None,
    };
    for _ in 0..steps {
        let started = Instant::now();
        for call in [
            Call::Tree { window },
            Call::Act {
                window,
                element: press.clone(),
                action: Action::Press,
            },
            Call::Idle {
                window,
                timeout_ms: Some(10_000),
            },
            Call::Capture { window },
        ] {
            let method = call.method();
            if let Err(e) = c.answer(call) {
                run.failed = Some(format!("{method}: {}", e.message));
                return run;
            }
        }
        run.steps.push(started.elapsed());
    }
    run
}

fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// A session's memory in KiB: Wayrig's own, its buses' (the D-Bus
/// daemons and AT-SPI's), its app's (with what the app started).
fn memory_of(wayrig: u32) -> (u64, u64, u64) {
    let (mut buses, mut app) = (0, 0);
    for child in children(wayrig) {
        let name = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
        let name = name.trim();
        if name.starts_with("dbus") || name.starts_with("at-spi") {
            buses += table::tree_rss_kib(child);
        } else {
            app += table::tree_rss_kib(child);
        }
    }
    (table::rss_kib(wayrig), buses, app)
}

fn main() {
    if table::listing_only() {
        return;
    }
    let max = table::env_number("WAYRIG_PARALLEL_MAX", 16);
    let steps = table::env_number("WAYRIG_PARALLEL_STEPS", 100);
    let fixture = support::gtk4_fixture();
    let mut rows = Vec::new();
    let mut best = 0;
    let mut n = 1;
    while n <= max {
        let sessions: Vec<Wayrig> = (0..n)
            .map(|_| Wayrig::start_app(&["/usr/bin/python3", &fixture]))
            .collect();
        let clients: Vec<_> = sessions
            .iter()
            .map(|s| {
                let socket = s.socket.clone();
                std::thread::spawn(move || agent(socket, steps))
            })
            .collect();
        let runs: Vec<Run> = clients.into_iter().map(|c| c.join().unwrap()).collect();
        let memory: Vec<(u64, u64, u64)> = sessions.iter().map(|s| memory_of(s.pid())).collect();
        drop(sessions);
        let failed: Vec<&String> = runs.iter().filter_map(|r| r.failed.as_ref()).collect();
        let worst_p99 = runs
            .iter()
            .filter(|r| !r.steps.is_empty())
            .map(|r| {
                let mut s = r.steps.clone();
                s.sort();
                table::percentile(&s, 0.99)
            })
            .max()
            .unwrap_or(Duration::MAX);
        let mut all: Vec<Duration> = runs.iter().flat_map(|r| r.steps.clone()).collect();
        all.sort();
        let p50 = all.get(all.len() / 2).copied().unwrap_or_default();
        let mean = |f: fn(&(u64, u64, u64)) -> u64| {
            memory.iter().map(f).sum::<u64>() / memory.len() as u64 / 1024
        };
        let ok = failed.is_empty() && worst_p99 < STEP_LIMIT;
        rows.push((
            format!("{n} session(s)"),
            format!("{} / {}", table::ms(p50), table::ms(worst_p99)),
            format!(
                "per session: Wayrig {} MiB, buses {} MiB, app {} MiB{}",
                mean(|m| m.0),
                mean(|m| m.1),
                mean(|m| m.2),
                match failed.first() {
                    Some(why) => format!("; {} failed, first: {why}", failed.len()),
                    None => String::new(),
                }
            ),
        ));
        if !ok {
            break;
        }
        best = n;
        n = if n < 4 { n + 1 } else { n + 2 };
    }
    table::print_as("step p50 / worst p99", &rows);
    println!(
        "\nthe most sessions at once with every session's p99 step under {} s \
         and no request failed: {best}{}",
        STEP_LIMIT.as_secs(),
        if best == max { " (the cap)" } else { "" }
    );
}
