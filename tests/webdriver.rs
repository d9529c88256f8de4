//! The W3C WebDriver face end to end: `wayrig serve` driven by the official
//! Python Selenium client, each WebDriver session a Wayrig session of its own.

mod support;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{end_group, follow_output};

/// How long the client's whole script may take on a loaded 2-core machine.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);

/// `wayrig serve`, ended with SIGTERM (its sessions end their apps) however
/// the test ends.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        end_group(&mut self.0, Duration::from_secs(20));
    }
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// `wayrig serve` with `places` sessions, and the URL it listens at.
fn serve(places: &str) -> (Served, String) {
    let mut served = Served(
        Command::new(support::shipped("wayrig"))
            .args([
                "serve",
                "--webdriver",
                "127.0.0.1:0",
                "--max-sessions",
                places,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("wayrig serve starts"),
    );
    let (_, stderr) = follow_output(&mut served.0);
    let line = stderr.wait_for("webdriver listens at ", "the WebDriver face listens");
    let url = line
        .split("webdriver listens at ")
        .nth(1)
        .expect("the address")
        .trim()
        .to_string();
    (served, url)
}

/// Run a client's script to its end (killed past `SCRIPT_LIMIT`), checking
/// it said it was all done.
fn run_client(mut command: Command) {
    let mut client = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the client runs");
    let (out, err) = follow_output(&mut client);
    let (done, finished) = std::sync::mpsc::channel();
    let pid = client.id() as i32;
    let waiter = std::thread::spawn(move || {
        let status = client.wait();
        let _ = done.send(());
        status
    });
    if finished.recv_timeout(SCRIPT_LIMIT).is_err() {
        // SAFETY: kill(2) on the client's own process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let status = waiter
        .join()
        .expect("the waiter")
        .expect("the client's status");
    let said = |l: &support::Lines| l.lines.lock().unwrap().join("\n");
    assert!(
        status.success() && said(&out).contains("all done"),
        "the client failed ({status}):\n{}\n{}",
        said(&out),
        said(&err)
    );
}

#[test]
fn a_selenium_test_drives_a_desktop_app_through_wayrig_serve() {
    let (_served, url) = serve("2");
    let mut client = Command::new("/usr/bin/python3");
    client.args([
        fixture("webdriver-client.py"),
        url,
        fixture("gtk4-fixture.py"),
    ]);
    run_client(client);
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
    let (_served, url) = serve("1");
    let mut client = Command::new("node");
    client.arg(&script).args([url, fixture("gtk4-fixture.py")]);
    run_client(client);
}
