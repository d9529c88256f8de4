//! Two `wayrig run` sessions side by side never see each other: each has its
//! own display, buses and private directory, and an app started in one
//! shows in that one only.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use support::{ProtocolClient, Wayrig};
use wayrig_proto::mygo::Call;

/// What a session told on stderr: its display and its runtime directory.
fn display_of(wayrig: &Wayrig) -> (String, PathBuf) {
    let said = wayrig
        .stderr
        .wait_for("wayrig: WAYLAND_DISPLAY=", "the session's display");
    let mut display = String::new();
    let mut dir = PathBuf::new();
    for field in said.trim_start_matches("wayrig: ").split_whitespace() {
        if let Some(d) = field.strip_prefix("WAYLAND_DISPLAY=") {
            display = d.to_string();
        }
        if let Some(d) = field.strip_prefix("XDG_RUNTIME_DIR=") {
            dir = PathBuf::from(d);
        }
    }
    (display, dir)
}

/// The environment variable `name` of process `pid`.
fn env_of(pid: u64, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ
        .split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_string))
}

fn titles(c: &mut ProtocolClient) -> Vec<String> {
    c.call(Call::Windows)["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn two_sessions_side_by_side_share_no_app_bus_socket_or_directory() {
    let (a, b) = (Wayrig::start(), Wayrig::start());
    let (mut ca, mut cb) = (
        ProtocolClient::connect(&a.socket),
        ProtocolClient::connect(&b.socket),
    );
    ca.first_window();
    cb.first_window();
    let keypads = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let launched = ca.raw_call(
        "wayrig.launch",
        json!({"command": ["/usr/bin/python3", keypads], "timeout": 30000}),
    );
    let pid = launched["pid"].as_u64().expect("the launched app's pid");
    let title = launched["windows"][0]["title"]
        .as_str()
        .expect("its window")
        .to_string();
    assert!(titles(&mut ca).contains(&title));
    assert!(
        !titles(&mut cb).contains(&title),
        "the other session lists an app it never started"
    );

    let ((display_a, dir_a), (display_b, dir_b)) = (display_of(&a), display_of(&b));
    assert_ne!(dir_a, dir_b);
    assert_ne!(a.bus_address, b.bus_address);
    // The app started in A lives on A's display and buses only.
    assert_eq!(
        env_of(pid, "XDG_RUNTIME_DIR"),
        Some(dir_a.display().to_string())
    );
    assert_eq!(env_of(pid, "WAYLAND_DISPLAY"), Some(display_a.clone()));
    assert_eq!(
        env_of(pid, "DBUS_SESSION_BUS_ADDRESS"),
        Some(a.bus_address.clone())
    );
    assert!(dir_a.join(&display_a).exists() && dir_b.join(&display_b).exists());
    // Each session's files are its user's alone.
    for dir in [&dir_a, &dir_b] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    for socket in [&a.socket, &b.socket] {
        assert_eq!(mode(socket), 0o600, "{}", socket.display());
    }
}
