//! Selenium Grid in front of Wayrig: the Grid hub and two relay nodes made
//! from the shipped configs (docs/grid), a `wayrig serve` behind each, and
//! the official Python client asking the hub for eight sessions at once.

mod support;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{end_group, follow_output};

/// How long the client's whole script may take on a loaded 2-core machine.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);
/// Relay nodes, each in front of a `wayrig serve` with four places.
const NODES: usize = 2;
/// The Grid version install-deps fetches.
const SELENIUM: &str = "selenium-server-4.48.0.jar";

/// A process group, ended with SIGTERM (then SIGKILL) however the test ends.
struct Owned(Child);

impl Drop for Owned {
    fn drop(&mut self) {
        end_group(&mut self.0, Duration::from_secs(20));
    }
}

fn spawn(program: &Path, args: &[&str]) -> Owned {
    Owned(
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{} runs: {e}", program.display())),
    )
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A port free on loopback now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A shipped config with its loopback ports replaced, written to `dir`.
fn config(dir: &Path, name: &str, ports: &[(&str, String)]) -> String {
    let mut text = std::fs::read_to_string(repo("docs/grid").join(name)).unwrap();
    for (from, to) in ports {
        assert!(text.contains(from), "{name} names {from}");
        text = text.replace(from, to);
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn eight_selenium_sessions_at_once_through_selenium_grid() {
    const TEST: &str = "eight_selenium_sessions_at_once_through_selenium_grid";
    let jar = repo("target/test-tools").join(SELENIUM);
    if !jar.is_file() || !support::have("java") {
        println!("SKIPPED {TEST}: no Java or {SELENIUM}; run scripts/install-deps");
        return;
    }
    // Two machines' worth: each a `wayrig serve` with four places.
    let mut served = Vec::new();
    let mut wayrigs = Vec::new();
    for _ in 0..NODES {
        let mut serve = spawn(
            &support::shipped("wayrig"),
            &["serve", "--webdriver", "127.0.0.1:0", "--max-sessions", "4"],
        );
        let (_, said) = follow_output(&mut serve.0);
        let line = said.wait_for("webdriver listens at ", "the WebDriver face listens");
        let url = line
            .split("webdriver listens at ")
            .nth(1)
            .expect("the address")
            .trim()
            .to_string();
        served.push(serve);
        wayrigs.push(url);
    }

    let dir = std::env::temp_dir().join(format!("wayrig-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hub_port = free_port();
    let (publish, subscribe) = (free_port(), free_port());
    let hub_url = format!("http://127.0.0.1:{hub_port}");
    let hub_toml = config(
        &dir,
        "hub.toml",
        &[
            ("port = 4444", format!("port = {hub_port}")),
            (":4442", format!(":{publish}")),
            (":4443", format!(":{subscribe}")),
        ],
    );
    let java = PathBuf::from("java");
    let jar = jar.display().to_string();
    let mut hub = spawn(&java, &["-jar", &jar, "hub", "--config", &hub_toml]);
    // Grid logs on stdout.
    let (hub_said, _) = follow_output(&mut hub.0);
    hub_said.wait_for("Started Selenium Hub", "the Grid hub's start");
    // Each node finds the hub's event bus at the default ports, which this
    // hub does not use.
    let (publish, subscribe) = (
        format!("tcp://127.0.0.1:{publish}"),
        format!("tcp://127.0.0.1:{subscribe}"),
    );
    let mut nodes = Vec::new();
    for (i, wayrig) in wayrigs.iter().enumerate() {
        let node_port = free_port();
        let relay_toml = config(
            &dir.join(i.to_string()),
            "relay.toml",
            &[
                ("port = 5555", format!("port = {node_port}")),
                ("http://127.0.0.1:4444", hub_url.clone()),
                ("http://127.0.0.1:4799", wayrig.clone()),
                ("max-sessions = 2", "max-sessions = 4".into()),
                ("\"2\", ", "\"4\", ".into()),
            ],
        );
        let mut node = spawn(
            &java,
            &[
                "-jar",
                &jar,
                "node",
                "--config",
                &relay_toml,
                "--publish-events",
                &publish,
                "--subscribe-events",
                &subscribe,
            ],
        );
        let (_node_said, _) = follow_output(&mut node.0);
        hub_said.wait_for(
            &format!("at http://127.0.0.1:{node_port}"),
            "a relay node's registration with the hub",
        );
        nodes.push(node);
    }

    let mut client = Command::new("/usr/bin/python3")
        .arg(repo("tests/fixtures/grid-client.py"))
        .arg(&hub_url)
        .arg(wayrigs.join(","))
        .arg(repo("tests/fixtures/gtk4-fixture.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("python3 runs the Selenium client");
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
    let lines = |l: &support::Lines| l.lines.lock().unwrap().join("\n");
    assert!(
        status.success() && lines(&out).contains("all done"),
        "the Selenium client failed ({status}):\n{}\n{}",
        lines(&out),
        lines(&err)
    );
    drop((nodes, hub, served));
    let _ = std::fs::remove_dir_all(&dir);
}
