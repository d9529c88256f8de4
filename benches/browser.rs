//! A large page in Chromium and in Firefox read over MyGo, medians: the
//! first whole tree once the page shows, a read again, and a read after one
//! cell changed, beside the peers' way (a pyatspi walk of the same app).
//!
//! Run with `cargo bench --bench browser` (needs chromium and firefox-esr;
//! python3-pyatspi for the peer).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{ProtocolClient, Wayrig};
use table::{ms, time};
use wayrig_proto::mygo::{Awaited, Call};

/// Rows of the table: each a row element, three cells and a link in one,
/// 5,000 elements in all (10,000 accessible objects with the links' text).
const ROWS: usize = 1250;

fn page() -> String {
    let rows: String = (0..ROWS)
        .map(|i| {
            format!(
                "<tr><td>row {i}</td><td><a href=\"#r{i}\">link {i}</a></td><td>{}</td></tr>",
                i * 7
            )
        })
        .collect();
    format!(
        "<!doctype html><title>Big table</title>\
         <button onclick=\"document.getElementById('c0').textContent='CHANGED'\">Press</button>\
         <table><tr><td id=c0>first</td><td></td><td></td></tr>{rows}</table>"
    )
}

fn read(c: &mut ProtocolClient) -> usize {
    c.call(Call::Tree { window: None })["nodes"]
        .as_array()
        .map_or(0, Vec::len)
}

fn wait_text(c: &mut ProtocolClient, text: &str) {
    c.call(Call::WaitFor {
        window: None,
        awaited: Awaited::Text(text.into()),
        gone: false,
        timeout_ms: Some(120_000),
    });
}

/// A browser the bench drives: its name in the rows, and its command line
/// for a page's address and a profile directory of its own.
struct Browser {
    name: &'static str,
    argv: fn(&Path, &str) -> Vec<String>,
}

fn chromium(profile: &Path, url: &str) -> Vec<String> {
    let profile = format!("--user-data-dir={}", profile.display());
    ["chromium", "--no-sandbox", "--test-type", &profile, url]
        .map(String::from)
        .to_vec()
}

/// Firefox with a profile that keeps its first-start bar and preloaded
/// tab away (as the tests do), so that the page is all it shows.
fn firefox(profile: &Path, url: &str) -> Vec<String> {
    std::fs::write(
        profile.join("user.js"),
        "user_pref(\"datareporting.policy.dataSubmissionPolicyBypassNotification\", true);\n\
         user_pref(\"browser.newtab.preload\", false);\n",
    )
    .unwrap();
    let profile = profile.to_str().unwrap();
    ["firefox-esr", "--no-remote", "--profile", profile, url]
        .map(String::from)
        .to_vec()
}

fn start(browser: &Browser, dir: &Path, url: &str) -> (Wayrig, ProtocolClient, String) {
    let profile = dir.join(format!("profile-{}", browser.name));
    std::fs::create_dir_all(&profile).unwrap();
    let argv = (browser.argv)(&profile, url);
    let wayrig = Wayrig::start_app(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    let mut c = ProtocolClient::connect(&wayrig.socket);
    c.first_window();
    wait_text(&mut c, "Press");
    let title = c.call(Call::Windows)["windows"][0]["title"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (wayrig, c, title)
}

fn measure(browser: &Browser, dir: &Path, url: &str, rows: &mut Vec<(String, String, String)>) {
    let name = browser.name;
    // The first read: a fresh browser each time, the page shown first.
    let mut firsts = Vec::new();
    let mut nodes = 0;
    for _ in 0..3 {
        let (_wayrig, mut c, _) = start(browser, dir, url);
        let t0 = std::time::Instant::now();
        nodes = read(&mut c);
        firsts.push(t0.elapsed());
    }
    rows.push((
        format!("{name}, {ROWS}-row table: first whole tree ({nodes} elements)"),
        ms(table::median(firsts)),
        "median of 3 fresh browsers, once the page shows".to_string(),
    ));

    let (wayrig, mut c, title) = start(browser, dir, url);
    read(&mut c);
    rows.push((
        format!("{name}, the same table: read again"),
        ms(time(3, || read(&mut c))),
        "median of 3".to_string(),
    ));
    // Each change's own text is waited for: one an earlier round left
    // would be found at once.
    let mut round = 0;
    rows.push((
        format!("{name}, the same table: one cell changed, then waited for"),
        ms(time(3, || {
            round += 1;
            let text = format!("CHANGED {round}");
            c.call(Call::Eval {
                window: None,
                script: format!("document.getElementById('c0').textContent = '{text}'"),
            });
            wait_text(&mut c, &text)
        })),
        "median of 3: eval, then wayrig.waitFor the new text".to_string(),
    ));
    let peer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peer_pyatspi.py");
    let out = std::process::Command::new("/usr/bin/python3")
        .arg(&peer)
        .args([title.as_str(), "1"])
        .env("DBUS_SESSION_BUS_ADDRESS", &wayrig.bus_address)
        .output();
    match out
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
    {
        Some(v) if v.get("walk_ms").is_some() => rows.push((
            format!(
                "{name}, the same table: pyatspi walk ({} objects)",
                v["nodes"]
            ),
            format!("{:.1} ms", v["walk_ms"].as_f64().unwrap_or(0.0)),
            "one walk: role, name, states, extents of every object".to_string(),
        )),
        other => rows.push((
            format!("{name}, the same table: pyatspi walk"),
            "-".to_string(),
            format!("not measured: {other:?} (apt-get install python3-pyatspi)"),
        )),
    }
}

fn main() {
    if table::listing_only() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("wayrig-bench-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("page.html"), page()).unwrap();
    let url = format!("file://{}", dir.join("page.html").display());
    let mut rows = Vec::new();
    let browsers = [
        Browser {
            name: "Chromium",
            argv: chromium,
        },
        Browser {
            name: "Firefox",
            argv: firefox,
        },
    ];
    for browser in &browsers {
        measure(browser, &dir, &url, &mut rows);
    }
    let _ = std::fs::remove_dir_all(&dir);
    table::print(&rows);
}
