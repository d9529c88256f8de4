//! The W3C WebDriver face end to end: `wayrig serve` driven by the official
//! Python Selenium client, each WebDriver session a Wayrig session of its own.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::grid::serve;
use support::run_client;

/// How long the client's whole script may take on a loaded 2-core machine.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_selenium_test_drives_a_desktop_app_through_wayrig_serve() {
    let (_served, url) = serve(&support::shipped("wayrig"), 2);
    let mut client = Command::new("/usr/bin/python3");
    client.args([
        fixture("webdriver-client.py"),
        url,
        fixture("gtk4-fixture.py"),
    ]);
    run_client(client, SCRIPT_LIMIT);
}

/// WebdriverIO: its own finders, and the visibility scripts it runs where a
/// browser would, answered from the element.
#[test]
fn a_webdriverio_test_drives_a_desktop_app_unchanged() {
    const TEST: &str = "a_webdriverio_test_drives_a_desktop_app_unchanged";
    let wdio = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/wdio-9.33.1");
    if !wdio.join("node_modules/webdriverio").is_dir() || !support::have("node") {
        println!("SKIPPED {TEST}: no Node.js or WebdriverIO; run scripts/install-deps");
        return;
    }
    // ES modules find their packages beside them.
    let script = wdio.join("wdio-client.mjs");
    std::fs::copy(fixture("wdio-client.mjs"), &script).unwrap();
    let (_served, url) = serve(&support::shipped("wayrig"), 1);
    let mut client = Command::new("node");
    client.arg(&script).args([url, fixture("gtk4-fixture.py")]);
    run_client(client, SCRIPT_LIMIT);
}
