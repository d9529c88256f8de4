//! The WebDriver face's costs as a CI team feels them: session start to the
//! first element found (directly, through Selenium Grid, and beside MyGo's
//! `wayrig run` doing the same), how many sessions one `wayrig serve` holds
//! with every find+click answered within a second at p99, and the memory
//! each session takes.
//!
//! Run with `cargo bench --bench webdriver` (Grid rows need what
//! scripts/install-deps fetches: Java and the Selenium server jar).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::grid::{serve, Grid};
use support::{ProtocolClient, Wayrig};
use table::{median, ms};

/// Sessions started, one after another, per start row.
const STARTS: usize = 12;
/// Find+click rounds each held session answers.
const CLICKS: usize = 5;
/// Held sessions tried, in this order, until one misses the second.
const HELD: [usize; 4] = [4, 8, 12, 16];

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// One HTTP/1.1 exchange with a JSON body; the status and the JSON answer.
fn http(base: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let host = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json; \
         charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let (head, rest) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(rest)
    } else {
        rest.to_string()
    };
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// A chunked body's content.
fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// The capabilities of a session of the GTK 4 fixture, finding with an
/// implicit wait (on the window's frames and tree, never a poll).
fn fixture_caps(grid: bool) -> Value {
    let mut caps = json!({
        "platformName": "linux",
        "wayrig:app": ["/usr/bin/python3", repo("tests/fixtures/gtk4-fixture.py")],
        "wayrig:env": {"GSK_RENDERER": "cairo"},
        "timeouts": {"implicit": 20000},
    });
    if grid {
        caps["browserName"] = "wayrig".into();
    }
    json!({"capabilities": {"alwaysMatch": caps}})
}

/// Start a session and find its "Press" button: the time it took, and the
/// session's id and the element's.
fn start_and_find(base: &str, grid: bool) -> (Duration, String, String) {
    let t0 = Instant::now();
    let (status, made) = http(base, "POST", "/session", Some(&fixture_caps(grid)));
    assert_eq!(status, 200, "new session: {made}");
    let id = made["value"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_string();
    let by = json!({"using": "accessibility id", "value": "Press"});
    let (status, found) = http(base, "POST", &format!("/session/{id}/element"), Some(&by));
    assert_eq!(status, 200, "find: {found}");
    let element = found["value"]
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(Value::as_str)
        .expect("an element")
        .to_string();
    (t0.elapsed(), id, element)
}

fn end(base: &str, id: &str) {
    let (status, _) = http(base, "DELETE", &format!("/session/{id}"), None);
    assert_eq!(status, 200);
}

/// Median and 95th percentile of the starts.
fn median_p95(mut xs: Vec<Duration>) -> String {
    xs.sort();
    let p95 = xs[(xs.len() * 95).div_ceil(100) - 1];
    format!("{} / {}", ms(median(xs)), ms(p95))
}

/// Open `count` sessions, then have each find and click its "Press" button
/// `CLICKS` times, all sessions at once: the 99th percentile of one
/// find+click, and the tree's memory per session over the idle server's.
fn held(base: &str, server: u32, count: usize) -> (Duration, u64) {
    let idle = table::tree_rss_kib(server);
    let sessions: Vec<(String, String)> = (0..count)
        .map(|_| {
            let (_, id, element) = start_and_find(base, false);
            (id, element)
        })
        .collect();
    let per_session = (table::tree_rss_kib(server).saturating_sub(idle)) / count as u64;
    let mut times: Vec<Duration> = std::thread::scope(|s| {
        let runs: Vec<_> = sessions
            .iter()
            .map(|(id, element)| {
                s.spawn(move || {
                    (0..CLICKS)
                        .map(|_| {
                            let t0 = Instant::now();
                            let by = json!({"using": "accessibility id", "value": "Press"});
                            let (status, _) =
                                http(base, "POST", &format!("/session/{id}/element"), Some(&by));
                            assert_eq!(status, 200);
                            let path = format!("/session/{id}/element/{element}/click");
                            let (status, a) = http(base, "POST", &path, Some(&json!({})));
                            assert_eq!(status, 200, "click: {a}");
                            t0.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runs.into_iter().flat_map(|r| r.join().unwrap()).collect()
    });
    for (id, _) in &sessions {
        end(base, id);
    }
    times.sort();
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    (p99, per_session)
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();

    let wayrig = PathBuf::from(env!("CARGO_BIN_EXE_wayrig"));
    let (served, base) = serve(&wayrig, *HELD.last().unwrap());
    let starts: Vec<Duration> = (0..STARTS)
        .map(|_| {
            let (took, id, _) = start_and_find(&base, false);
            end(&base, &id);
            took
        })
        .collect();
    rows.push((
        "session start to first element, direct (median / p95)".to_string(),
        median_p95(starts),
        format!("{STARTS} sessions of the GTK 4 fixture, one after another"),
    ));

    if let Some(grid) = Grid::start(std::slice::from_ref(&base), 4) {
        let hub_url = &grid.url;
        let starts: Vec<Duration> = (0..STARTS)
            .map(|_| {
                let (took, id, _) = start_and_find(hub_url, true);
                end(hub_url, &id);
                took
            })
            .collect();
        rows.push((
            "the same through a Grid hub and relay node".to_string(),
            median_p95(starts),
            "Selenium Grid 4.48.0 from docs/grid".to_string(),
        ));
    } else {
        println!("(no Grid rows: run scripts/install-deps for Java and the Selenium jar)");
    }

    // MyGo's face: `wayrig run` to the same button found in the tree.
    let mygo: Vec<Duration> = (0..STARTS)
        .map(|_| {
            let t0 = Instant::now();
            let wayrig = Wayrig::start_app(&[
                "/usr/bin/python3",
                repo("tests/fixtures/gtk4-fixture.py").to_str().unwrap(),
            ]);
            let mut c = ProtocolClient::connect(&wayrig.socket);
            let window = c.first_window()["id"].as_u64().unwrap();
            // Waited on the window's frames and tree, as the implicit wait.
            c.call(wayrig_proto::mygo::Call::WaitFor {
                window: Some(window),
                awaited: wayrig_proto::mygo::Awaited::Text("Press".into()),
                gone: false,
                timeout_ms: Some(20_000),
            });
            t0.elapsed()
        })
        .collect();
    rows.push((
        "the same over MyGo: wayrig run to the button in the tree".to_string(),
        median_p95(mygo),
        "one wayrig run per start, as a CI job starts one".to_string(),
    ));

    let server = served.0.id();
    let mut largest = None;
    for count in HELD {
        let (p99, kib) = held(&base, server, count);
        rows.push((
            format!("{count} sessions held: find+click p99"),
            ms(p99),
            format!("{} MiB per session (wayrig's and the app's)", kib / 1024),
        ));
        if p99 > Duration::from_secs(1) {
            break;
        }
        largest = Some(count);
    }
    rows.push((
        "sessions held with every find+click under 1 s at p99".to_string(),
        largest.map_or("none".into(), |n| n.to_string()),
        format!("tried {HELD:?}, {CLICKS} find+clicks each, all sessions at once"),
    ));
    table::print_as("measure", &rows);
}
