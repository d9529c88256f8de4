//! A session leaves nothing behind: every file it makes (its Wayland socket,
//! its bus's socket, the AT-SPI bus's files) goes with it, however it ends.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{follow_output, wait_ended, Lines, OwnedGroup};

/// A fresh directory the session is told is its temporary and runtime
/// directory, and one for what the test itself keeps (the automation socket,
/// a screenshot); both removed when dropped.
struct Dirs {
    session: PathBuf,
    own: PathBuf,
}

impl Dirs {
    fn new(name: &str) -> Dirs {
        let base =
            std::env::temp_dir().join(format!("wayrig-leftovers-{name}-{}", std::process::id()));
        let (session, own) = (base.join("tmp"), base.join("own"));
        std::fs::create_dir_all(&session).unwrap();
        std::fs::create_dir_all(&own).unwrap();
        Dirs { session, own }
    }

    /// What is in the session's directory, by name.
    fn left(&self) -> Vec<String> {
        std::fs::read_dir(&self.session)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.session.parent().unwrap());
    }
}

fn gtk4_fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-fixture.py")
        .to_string_lossy()
        .into_owned()
}

/// `wayrig run --mygo-socket FLAGS -- ARGV` with its temporary and runtime
/// directories in `dirs.session`; its stderr lines as they come.
fn run(dirs: &Dirs, flags: &[&str], argv: &[&str]) -> (OwnedGroup, std::sync::Arc<Lines>) {
    let mut child = Command::new(support::shipped("wayrig"))
        .args(["run", "--mygo-socket"])
        .arg(dirs.own.join("app.sock"))
        .args(flags)
        .args(["--env", "GSK_RENDERER=cairo", "--"])
        .args(argv)
        .env("TMPDIR", &dirs.session)
        .env("XDG_RUNTIME_DIR", &dirs.session)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("wayrig runs");
    let (_, stderr) = follow_output(&mut child);
    (OwnedGroup(child), stderr)
}

/// Wait for wayrig itself to end, then say what it left.
fn ended(wayrig: &mut OwnedGroup, dirs: &Dirs) -> Vec<String> {
    let pid = wayrig.0.id() as i32;
    assert!(
        wait_ended(&[pid], Duration::from_secs(30)).is_empty(),
        "wayrig did not end"
    );
    let _ = wayrig.0.wait();
    dirs.left()
}

/// While it runs, the session keeps one private directory, and its bus
/// listens there.
fn check_running(dirs: &Dirs, stderr: &Lines) {
    let line = stderr.wait_for("DBUS_SESSION_BUS_ADDRESS=", "the bus address");
    let address = line.split_once('=').unwrap().1;
    let left = dirs.left();
    assert_eq!(left.len(), 1, "one directory for the session: {left:?}");
    let dir = dirs.session.join(&left[0]);
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
    let socket = address.strip_prefix("unix:path=").unwrap_or(address);
    assert!(
        Path::new(socket.split(',').next().unwrap()).starts_with(&dir),
        "the bus listens in the session's directory: {address}"
    );
}

#[test]
fn a_session_ended_by_a_signal_leaves_nothing() {
    for (signal, name) in [(libc::SIGTERM, "term"), (libc::SIGINT, "int")] {
        let dirs = Dirs::new(name);
        let (mut wayrig, stderr) = run(&dirs, &[], &["/usr/bin/python3", &gtk4_fixture()]);
        check_running(&dirs, &stderr);
        stderr.wait_for("started /usr/bin/python3", "the app's start");
        // SAFETY: kill(2) on the wayrig this test started; no memory is touched.
        unsafe { libc::kill(wayrig.0.id() as i32, signal) };
        assert_eq!(ended(&mut wayrig, &dirs), Vec::<String>::new(), "{name}");
    }
}

#[test]
fn a_session_whose_app_exits_leaves_nothing() {
    let dirs = Dirs::new("exit");
    let (mut wayrig, stderr) = run(&dirs, &[], &["/bin/sh", "-c", "exit 0"]);
    check_running(&dirs, &stderr);
    assert_eq!(ended(&mut wayrig, &dirs), Vec::<String>::new());
}

#[test]
fn a_session_run_once_for_a_screenshot_leaves_nothing() {
    let dirs = Dirs::new("once");
    let shot = dirs.own.join("shot.png");
    let (mut wayrig, _) = run(
        &dirs,
        &["--screenshot", shot.to_str().unwrap(), "--once"],
        &["/usr/bin/python3", &gtk4_fixture()],
    );
    assert_eq!(ended(&mut wayrig, &dirs), Vec::<String>::new());
    assert!(shot.is_file(), "the screenshot was written");
}

#[test]
fn a_session_that_fails_to_start_its_app_leaves_nothing() {
    let dirs = Dirs::new("error");
    let (mut wayrig, stderr) = run(&dirs, &[], &["/nonexistent/app"]);
    assert_eq!(ended(&mut wayrig, &dirs), Vec::<String>::new());
    assert!(stderr.contains("wayrig: "), "the error is said");
    assert_eq!(wayrig.0.wait().unwrap().code(), Some(1));
}

/// Killed outright, a session cannot remove its directory; the next session
/// started beside it does, and leaves a live session's directory alone.
#[test]
fn a_session_killed_outright_is_swept_by_the_next_one() {
    let dirs = Dirs::new("kill");
    let (mut killed, stderr) = run(&dirs, &[], &["/usr/bin/python3", &gtk4_fixture()]);
    check_running(&dirs, &stderr);
    stderr.wait_for("started /usr/bin/python3", "the app's start");
    // SAFETY: kill(2) on the wayrig this test started; no memory is touched.
    unsafe { libc::kill(killed.0.id() as i32, libc::SIGKILL) };
    let left = ended(&mut killed, &dirs);
    assert_eq!(
        left.len(),
        1,
        "a killed session leaves its directory: {left:?}"
    );

    let (mut live, stderr) = run(&dirs, &[], &["/usr/bin/python3", &gtk4_fixture()]);
    check_running(&dirs, &stderr);
    assert!(
        !dirs.left().contains(&left[0]),
        "the killed session's directory is swept: {:?}",
        dirs.left()
    );
    // A third session leaves the running one's directory alone.
    let (mut third, third_err) = run(&dirs, &[], &["/bin/sh", "-c", "exit 0"]);
    third_err.wait_for("DBUS_SESSION_BUS_ADDRESS=", "the bus address");
    assert_eq!(
        ended(&mut third, &dirs).len(),
        1,
        "the live session's stays"
    );
    // SAFETY: as above.
    unsafe { libc::kill(live.0.id() as i32, libc::SIGTERM) };
    assert_eq!(ended(&mut live, &dirs), Vec::<String>::new());
}
