//! A soak: one session serving an agent's loop (read the tree, press, wait
//! for the effect, capture) on the GTK 4 fixture from four clients at once,
//! two over MyGo, one over the Bus and one over cua.env.v1.
//!
//! Wayrig's resident memory and open descriptors are sampled every 10,000
//! requests; every request's time is kept per face and method. Run with
//! `scripts/soak` (100,000 requests) or `scripts/soak --night` (1,000,000);
//! `WAYRIG_SOAK_REQUESTS` sets another count.

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{ProtocolClient, Wayrig};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;
use wayrig_cua_proto::v1::computer_service_client::ComputerServiceClient;
use wayrig_proto::abp::Rc;
use wayrig_proto::mygo::{Action, Call};

/// Requests between two samples of Wayrig's memory and descriptors.
const SAMPLE_EVERY: u64 = 10_000;

/// Errors kept word for word; the rest are counted.
const ERRORS_KEPT: usize = 10;

/// One sample of Wayrig's process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    requests: u64,
    rss_kib: u64,
    fds: usize,
}

/// What the clients share: the requests handed out, each one's time by
/// face and method, the errors, and the samples.
struct Tally {
    total: u64,
    handed: AtomicU64,
    pid: u32,
    times: Mutex<HashMap<(&'static str, &'static str), Vec<Duration>>>,
    errors: Mutex<(u64, Vec<String>)>,
    /// cua presses refused because another client changed the element
    /// after the snapshot was read.
    stale: AtomicU64,
    samples: Mutex<Vec<Sample>>,
}

impl Tally {
    /// The next request's turn, or `false` once every request is handed
    /// out; every `SAMPLE_EVERY`th turn samples Wayrig first.
    fn turn(&self) -> bool {
        let n = self.handed.fetch_add(1, Ordering::SeqCst);
        if n.is_multiple_of(SAMPLE_EVERY) && n < self.total {
            self.sample(n);
        }
        n < self.total
    }

    fn sample(&self, requests: u64) {
        let rss_kib = table::rss_kib(self.pid);
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid)).map_or(0, |d| d.count());
        self.samples.lock().unwrap().push(Sample {
            requests,
            rss_kib,
            fds,
        });
    }

    /// Keep a request's time, and its error if it failed.
    fn keep(
        &self,
        face: &'static str,
        method: &'static str,
        took: Duration,
        error: Option<String>,
    ) {
        self.times
            .lock()
            .unwrap()
            .entry((face, method))
            .or_default()
            .push(took);
        if let Some(e) = error {
            let mut errors = self.errors.lock().unwrap();
            errors.0 += 1;
            if errors.1.len() < ERRORS_KEPT {
                errors.1.push(format!("{face} {method}: {e}"));
            }
        }
    }
}

/// A MyGo client's loop: tree, press, idle, capture.
fn mygo_client(socket: PathBuf, tally: Arc<Tally>) {
    let mut c = ProtocolClient::connect(&socket);
    let window = c.first_window()["id"].as_u64();
    let tree = c.call(Call::Tree { window });
    let press = support::element_labelled(&tree, "button", "Press");
    loop {
        for step in 0..4 {
            if !tally.turn() {
                return;
            }
            let call = match step {
                0 => Call::Tree { window },
                1 => Call::Act {
                    window,
                    element: press.clone(),
                    action: Action::Press,
                },
                2 => Call::Idle {
                    window,
                    timeout_ms: Some(10_000),
                },
                _ => Call::Capture { window },
            };
            let method = call.method();
            let started = Instant::now();
            let answer = c.answer(call);
            tally.keep(
                "MyGo",
                method,
                started.elapsed(),
                answer.err().map(|e| e.message),
            );
        }
    }
}

/// The Bus client's loop: `ui.tree`, `ui.click` (answered once its effect
/// shows), `ui.capture`.
fn bus_client(url: String, app: String, tally: Arc<Tally>) {
    let rt = table::runtime();
    rt.block_on(async {
        let mut c = support::abp::Client::connect(&url, "soak").await;
        loop {
            for (verb, body) in [
                ("ui.tree", json!({})),
                ("ui.click", json!({"label": "Press"})),
                ("ui.capture", json!({})),
            ] {
                if !tally.turn() {
                    return;
                }
                let started = Instant::now();
                let frame = c.request(&app, verb, body).await;
                let error = match frame.rc() {
                    Some(Rc::Ok) => None,
                    rc => Some(format!("{rc:?} {}", frame.body)),
                };
                // A capture is a new file each time: the soak keeps none.
                if verb == "ui.capture" && error.is_none() {
                    let written: serde_json::Value =
                        serde_json::from_str(&frame.body).unwrap_or_default();
                    if let Some(path) = written["path"].as_str() {
                        let _ = std::fs::remove_file(path);
                    }
                }
                tally.keep("Bus", verb, started.elapsed(), error);
            }
        }
    });
}

/// The cua client's loop: GetTree, Act PRESS on the tree's Press button,
/// Screenshot of the window.
fn cua_client(address: String, tally: Arc<Tally>) {
    let rt = table::runtime();
    rt.block_on(async {
        let (channel, window) = support::cua_first_window(&address).await;
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let mut c = ComputerServiceClient::new(channel);
        loop {
            if !tally.turn() {
                return;
            }
            let started = Instant::now();
            let tree = a
                .get_tree(v1::GetTreeRequest {
                    window: Some(window.clone()),
                    ..Default::default()
                })
                .await;
            let error = tree.as_ref().err().map(|s| s.to_string());
            tally.keep("cua", "GetTree", started.elapsed(), error);
            let Ok(tree) = tree.map(tonic::Response::into_inner) else {
                continue;
            };
            let press = tree
                .nodes
                .iter()
                .find(|n| n.role == "button" && n.name == "Press")
                .map(|n| n.element_id.clone())
                .expect("the fixture's Press button is in the tree");
            if !tally.turn() {
                return;
            }
            let started = Instant::now();
            let acted = a
                .act(v1::ActRequest {
                    element: Some(v1::ElementRef {
                        snapshot_id: tree.snapshot_id.clone(),
                        element_id: press,
                    }),
                    action: v1::AccessibilityAction::Press as i32,
                    ..Default::default()
                })
                .await;
            // Another client's press may change the button (its focus)
            // after this client read the tree: refused as the protocol
            // says, to be read again, which the next round does.
            let stale = acted.as_ref().is_err_and(|s| {
                s.code() == tonic::Code::FailedPrecondition && s.message().contains("changed since")
            });
            if stale {
                tally.stale.fetch_add(1, Ordering::Relaxed);
            }
            let error = acted
                .as_ref()
                .err()
                .filter(|_| !stale)
                .map(|s| s.to_string());
            tally.keep("cua", "Act", started.elapsed(), error);
            if !tally.turn() {
                return;
            }
            let started = Instant::now();
            let shot = c
                .screenshot(v1::ScreenshotRequest {
                    source: Some(v1::screenshot_request::Source::Window(window.clone())),
                    ..Default::default()
                })
                .await;
            let error = shot.as_ref().err().map(|s| s.to_string());
            tally.keep("cua", "Screenshot", started.elapsed(), error);
        }
    });
}

fn main() {
    if table::listing_only() {
        return;
    }
    let total: u64 = std::env::var("WAYRIG_SOAK_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let fixture = support::gtk4_fixture();
    // The Bus writes captures under XDG_RUNTIME_DIR, Wayrig's own.
    let runtime_dir = std::env::temp_dir().join(format!("wayrig-soak-{}", std::process::id()));
    std::fs::create_dir_all(&runtime_dir).unwrap();
    // SAFETY: no other thread runs yet to read the environment meanwhile.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", &runtime_dir) };
    let wayrig = Wayrig::start_with(
        &["--bus-listen", "127.0.0.1:0", "--cua-listen", "127.0.0.1:0"],
        &["/usr/bin/python3", &fixture],
    );
    let (bus, app) = wayrig.bus_and_app();
    let cua = wayrig.cua_address.clone().expect("the cua face listens");
    let tally = Arc::new(Tally {
        total,
        handed: AtomicU64::new(0),
        pid: wayrig.pid(),
        times: Mutex::default(),
        errors: Mutex::default(),
        stale: AtomicU64::new(0),
        samples: Mutex::default(),
    });
    let started = Instant::now();
    let clients = vec![
        std::thread::spawn({
            let (socket, tally) = (wayrig.socket.clone(), tally.clone());
            move || mygo_client(socket, tally)
        }),
        std::thread::spawn({
            let (socket, tally) = (wayrig.socket.clone(), tally.clone());
            move || mygo_client(socket, tally)
        }),
        std::thread::spawn({
            let tally = tally.clone();
            move || bus_client(bus, app, tally)
        }),
        std::thread::spawn({
            let tally = tally.clone();
            move || cua_client(cua, tally)
        }),
    ];
    for client in clients {
        client.join().expect("a client ran to its end");
    }
    tally.sample(total);
    let took = started.elapsed();

    let mut rows = Vec::new();
    let mut times: Vec<_> = tally.times.lock().unwrap().drain().collect();
    times.sort_by_key(|((face, method), _)| (*face, *method));
    for ((face, method), mut ts) in times {
        ts.sort();
        rows.push((
            format!("{face} {method}"),
            format!(
                "{} / {} / {}",
                table::ms(table::percentile(&ts, 0.5)),
                table::ms(table::percentile(&ts, 0.99)),
                table::ms(*ts.last().unwrap())
            ),
            format!("{} requests", ts.len()),
        ));
    }
    table::print_as("p50 / p99 / max", &rows);

    let samples = tally.samples.lock().unwrap().clone();
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    let peak_rss = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
    let peak_fds = samples.iter().map(|s| s.fds).max().unwrap_or(0);
    println!(
        "\n{total} requests in {:.0} s from 4 clients; Wayrig's resident memory \
         start / peak / end: {} / {} / {} MiB; open descriptors: {} / {} / {}",
        took.as_secs_f64(),
        first.rss_kib / 1024,
        peak_rss / 1024,
        last.rss_kib / 1024,
        first.fds,
        peak_fds,
        last.fds
    );
    println!("samples (requests: MiB, descriptors):");
    for s in &samples {
        println!(
            "  {:>9}: {:>4} MiB, {:>3}",
            s.requests,
            s.rss_kib / 1024,
            s.fds
        );
    }
    let errors = tally.errors.lock().unwrap();
    println!(
        "errors: {}; cua presses refused as their snapshot was stale: {}",
        errors.0,
        tally.stale.load(Ordering::Relaxed)
    );
    for e in &errors.1 {
        println!("  {e}");
    }
    drop(wayrig);
    let _ = std::fs::remove_dir_all(&runtime_dir);
}
