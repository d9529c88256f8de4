//! `wayrig run` as a service manager's unit: readiness over NOTIFY_SOCKET once
//! it is drivable, more apps than one, and its arguments checked without a run.

mod support;

use std::os::unix::net::UnixDatagram;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use support::{follow_output, OwnedGroup, ProtocolClient};

fn gtk4_fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-fixture.py")
        .to_string_lossy()
        .into_owned()
}

/// The next notification, as its `KEY=VALUE` lines.
fn notification(socket: &UnixDatagram) -> Vec<String> {
    let mut buf = [0u8; 4096];
    let n = socket
        .recv(&mut buf)
        .expect("a notification within the read timeout");
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .map(str::to_string)
        .collect()
}

fn windows(client: &mut ProtocolClient) -> Vec<Value> {
    let answer: Value =
        serde_json::from_str(&client.exchange("{\"id\":1,\"method\":\"windows\"}\n")).unwrap();
    answer["result"]["windows"]
        .as_array()
        .unwrap_or_else(|| panic!("windows answers a list: {answer}"))
        .clone()
}

#[test]
fn ready_is_told_once_the_socket_listens_and_a_window_shows() {
    let dir = std::env::temp_dir().join(format!("wayrig-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let notify_path = dir.join("notify");
    let manager = UnixDatagram::bind(&notify_path).unwrap();
    manager
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let socket = dir.join("app.sock");
    let second = json!(["/usr/bin/python3", gtk4_fixture()]).to_string();
    let mut child = Command::new(support::shipped("wayrig"))
        .args(["run", "--mygo-socket"])
        .arg(&socket)
        .args(["--launch", &second, "--env", "GSK_RENDERER=cairo", "--"])
        .args(["/usr/bin/python3", &gtk4_fixture()])
        .env("NOTIFY_SOCKET", &notify_path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("wayrig runs");
    let (_, stderr) = follow_output(&mut child);
    let wayrig = OwnedGroup(child);

    let ready = notification(&manager);
    assert!(ready.contains(&"READY=1".to_string()), "{ready:?}");
    assert!(
        ready.contains(&format!("MAINPID={}", wayrig.0.id())),
        "{ready:?}"
    );
    // Ready means drivable: the socket answers and names a window at once.
    let mut client = ProtocolClient::connect(&socket);
    assert!(!windows(&mut client).is_empty(), "a window when ready");
    // Both apps were started, each without a shell.
    stderr.wait_count("started /usr/bin/python3 as pid", 2, "both apps start");
    // SIGTERM: Wayrig says it is stopping.
    // SAFETY: kill(2) on the process we started; no memory is touched.
    unsafe { libc::kill(wayrig.0.id() as i32, libc::SIGTERM) };
    let stopping = notification(&manager);
    assert_eq!(stopping, vec!["STOPPING=1".to_string()]);
    drop(wayrig);
    let _ = std::fs::remove_dir_all(&dir);
}

fn check_args(args: &[&str]) -> (i32, String) {
    let out = Command::new(support::shipped("wayrig"))
        .args(["run", "--check-args"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_args_takes_what_run_takes_and_names_what_it_refuses() {
    let (code, err) = check_args(&[
        "--size",
        "800x600",
        "--scale",
        "2",
        "--pacing",
        "fast",
        "--launch",
        r#"["foot","-e","top"]"#,
        "--bus-listen",
        "127.0.0.1:0",
        "--bus-name",
        "calc",
        "--cua-listen",
        "unix:/run/wayrig/cua.sock",
        "--",
        "gnome-calculator",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    for (bad, named) in [
        (&["--scale", "0", "--", "foot"][..], "--scale"),
        (&["--size", "big", "--", "foot"][..], "--size"),
        (&["--launch", "[]", "--", "foot"][..], "--launch"),
        (&["--launch", "foot -e top", "--", "foot"][..], "--launch"),
        (&["--pacing", "slow", "--", "foot"][..], "--pacing"),
        (&["--size", "800x600"][..], "APP"),
    ] {
        let (code, err) = check_args(bad);
        assert_eq!(code, 2, "{bad:?} is refused: {err}");
        assert!(
            err.contains(named),
            "{bad:?}: the error names {named}: {err}"
        );
    }
}
