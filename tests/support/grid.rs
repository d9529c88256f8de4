//! `wayrig serve` and Selenium Grid for the tests and benches: a served
//! WebDriver face, and a hub with relay nodes made from the shipped configs
//! (docs/grid); every process group is ended when dropped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{end_group, follow_output};

/// The Grid version scripts/install-deps fetches.
const SELENIUM: &str = "selenium-server-4.48.0.jar";

/// A process group ended with SIGTERM (then SIGKILL) however its owner
/// ends: `wayrig serve` ends its sessions' apps on SIGTERM.
pub struct Ended(pub Child);

impl Drop for Ended {
    fn drop(&mut self) {
        end_group(&mut self.0, Duration::from_secs(20));
    }
}

/// Start `command` in a process group of its own, its output piped.
pub fn spawn(mut command: Command) -> Ended {
    Ended(
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?} runs: {e}")),
    )
}

/// `wayrig` (the path given) serving WebDriver on a loopback port with
/// `places` sessions, and the URL it listens at.
pub fn serve(wayrig: &Path, places: usize) -> (Ended, String) {
    serve_with(wayrig, places, &[])
}

/// `serve` with more flags.
pub fn serve_with(wayrig: &Path, places: usize, flags: &[&str]) -> (Ended, String) {
    let mut command = Command::new(wayrig);
    command.args(["serve", "--webdriver", "127.0.0.1:0", "--max-sessions"]);
    command.arg(places.to_string());
    command.args(flags);
    let mut served = spawn(command);
    let (_, said) = follow_output(&mut served.0);
    let line = said.wait_for("webdriver listens at ", "the WebDriver face listens");
    let url = line
        .split("webdriver listens at ")
        .nth(1)
        .expect("the address");
    (served, url.trim().to_string())
}

/// A Grid hub, and a relay node in front of each Wayrig.
pub struct Grid {
    /// Where clients ask for sessions.
    pub url: String,
    _hub: Ended,
    _nodes: Vec<Ended>,
    dir: PathBuf,
}

impl Drop for Grid {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free on loopback now, below the kernel's ephemeral range: Java
/// binds it seconds later, and a port from that range (as binding port 0
/// gives) may meanwhile be handed to some socket's outgoing connection.
/// Each call tries the ports from a random start down, so the hub's and
/// the nodes' differ.
fn free_port() -> u16 {
    static NEXT: std::sync::OnceLock<std::sync::Mutex<u16>> = std::sync::OnceLock::new();
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let floor = ephemeral_from.saturating_sub(16_000).max(1024);
    let next = NEXT.get_or_init(|| {
        let span = u64::from(ephemeral_from - floor);
        std::sync::Mutex::new(floor + (super::rand_suffix() % span) as u16)
    });
    let mut next = next.lock().unwrap();
    loop {
        let port = *next;
        *next = if port > floor {
            port - 1
        } else {
            ephemeral_from - 1
        };
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A shipped config with its loopback ports and places replaced, in `dir`.
fn config(dir: &Path, name: &str, swaps: &[(&str, String)]) -> PathBuf {
    let mut text = std::fs::read_to_string(repo("docs/grid").join(name)).unwrap();
    for (from, to) in swaps {
        assert!(text.contains(from), "{name} names {from}");
        text = text.replace(from, to);
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

impl Grid {
    /// A hub and one relay node per Wayrig URL, each node with `places`
    /// slots, once every node has registered; `None` without Java or the
    /// Selenium jar.
    pub fn start(wayrigs: &[String], places: usize) -> Option<Grid> {
        let jar = repo("target/test-tools").join(SELENIUM);
        if !jar.is_file() || !super::have("java") {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "wayrig-grid-{}-{}",
            std::process::id(),
            super::rand_suffix()
        ));
        let (hub_port, publish, subscribe) = (free_port(), free_port(), free_port());
        let url = format!("http://127.0.0.1:{hub_port}");
        let hub_toml = config(
            &dir,
            "hub.toml",
            &[
                ("port = 4444", format!("port = {hub_port}")),
                (":4442", format!(":{publish}")),
                (":4443", format!(":{subscribe}")),
            ],
        );
        let java = |role: &str, toml: &Path| {
            let mut command = Command::new("java");
            command
                .arg("-jar")
                .arg(&jar)
                .arg(role)
                .arg("--config")
                .arg(toml);
            command
        };
        let mut hub = spawn(java("hub", &hub_toml));
        // Grid logs on stdout.
        let (hub_said, _) = follow_output(&mut hub.0);
        hub_said.wait_for("Started Selenium Hub", "the Grid hub's start");
        let mut nodes = Vec::new();
        for (i, wayrig) in wayrigs.iter().enumerate() {
            let node_port = free_port();
            let relay_toml = config(
                &dir.join(i.to_string()),
                "relay.toml",
                &[
                    ("port = 5555", format!("port = {node_port}")),
                    ("http://127.0.0.1:4444", url.clone()),
                    ("http://127.0.0.1:4799", wayrig.clone()),
                    ("max-sessions = 2", format!("max-sessions = {places}")),
                    ("\"2\", ", format!("\"{places}\", ")),
                ],
            );
            let mut node = java("node", &relay_toml);
            // The node looks for the hub's event bus at the default ports,
            // which this hub does not use.
            node.arg("--publish-events")
                .arg(format!("tcp://127.0.0.1:{publish}"));
            node.arg("--subscribe-events")
                .arg(format!("tcp://127.0.0.1:{subscribe}"));
            let mut node = spawn(node);
            let _ = follow_output(&mut node.0);
            hub_said.wait_for(
                &format!("at http://127.0.0.1:{node_port}"),
                "a relay node's registration with the hub",
            );
            nodes.push(node);
        }
        Some(Grid {
            url,
            _hub: hub,
            _nodes: nodes,
            dir,
        })
    }
}
