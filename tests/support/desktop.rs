//! A desktop that is not Wayrig's: sway 1.7 headless with its own session bus,
//! run as the unprivileged user scripts/install-deps creates (sway refuses root).
//!
//! Everything here is started in process groups the test owns and ends on drop.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::{follow_output, Lines, OwnedGroup};

/// The user sway and the desktop's apps run as.
pub const DESKTOP_USER: &str = "wayrig-desk";

/// A running sway desktop, its session bus, and what the test started in it.
pub struct Desktop {
    /// Dropped first: apps and attach before sway, sway before its bus.
    pub started: Vec<OwnedGroup>,
    sway: OwnedGroup,
    _bus: OwnedGroup,
    pub dir: PathBuf,
    pub uid: u32,
    pub gid: u32,
    pub wayland_display: String,
    pub swaysock: PathBuf,
    pub bus_address: String,
}

fn user_ids(name: &str) -> Option<(u32, u32)> {
    let cname = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam with a valid C string; the record is read at once.
    let pw = unsafe { libc::getpwnam(cname.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: pw is non-null and points at libc's static record.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

impl Desktop {
    /// Start sway headless (1280x800) as the desktop user; `None`, with the
    /// reason printed, when sway or the user is missing (run scripts/install-deps).
    pub fn start(test: &str) -> Option<Desktop> {
        Desktop::start_with_backends(test, "headless")
    }

    /// Like `start`, with wlroots' `backends`: "headless,libinput" also reads
    /// the machine's input devices (uinput's among them), which takes a seat
    /// the desktop user may open (seatd or logind).
    pub fn start_with_backends(test: &str, backends: &str) -> Option<Desktop> {
        if !super::have("sway") {
            super::skip(test, "sway is not installed; run scripts/install-deps");
            return None;
        }
        let Some((uid, gid)) = user_ids(DESKTOP_USER) else {
            super::skip(
                test,
                &format!("no user {DESKTOP_USER}; run scripts/install-deps"),
            );
            return None;
        };
        // SAFETY: geteuid(2) reads the caller's effective uid; nothing else.
        let euid = unsafe { libc::geteuid() };
        if euid != 0 && euid != uid {
            super::skip(
                test,
                &format!(
                    "starting sway as {DESKTOP_USER} takes root (sway refuses root itself); \
                     run the tests as root or as {DESKTOP_USER}"
                ),
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "wayrig-desktop-{}-{}",
            std::process::id(),
            super::rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let config = dir.join("sway.conf");
        std::fs::write(
            &config,
            "output HEADLESS-1 resolution 1280x800\nxwayland disable\n",
        )
        .unwrap();
        let as_user = |program: &str| {
            let mut command = Command::new(program);
            command
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", &dir)
                .env("XDG_RUNTIME_DIR", &dir)
                .env("GSETTINGS_BACKEND", "memory")
                .current_dir(&dir)
                .uid(uid)
                .gid(gid)
                .stdin(Stdio::null())
                .process_group(0);
            command
        };
        let mut bus = as_user("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon starts");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().unwrap())
            .read_line(&mut address)
            .expect("dbus-daemon says its address");
        let bus = OwnedGroup(bus);
        let bus_address = address.trim().to_string();
        let mut sway = as_user("sway")
            .arg("--verbose")
            .arg("--config")
            .arg(&config)
            .env("WLR_BACKENDS", backends)
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("DBUS_SESSION_BUS_ADDRESS", &bus_address)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sway starts");
        let log = quiet_output(&mut sway);
        let sway = OwnedGroup(sway);
        // Sway says this once its Wayland socket and its IPC socket are up.
        let line = log.wait_for("Running compositor on wayland display", "sway's display");
        let wayland_display = line
            .rsplit('\'')
            .nth(1)
            .expect("the display's name in quotes")
            .to_string();
        let swaysock = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("sway-ipc."))
            })
            .expect("sway's IPC socket");
        Some(Desktop {
            started: Vec::new(),
            sway,
            _bus: bus,
            dir,
            uid,
            gid,
            wayland_display,
            swaysock,
            bus_address,
        })
    }

    /// A command run as the desktop user, in the desktop's session (its display,
    /// its buses), in a process group of its own.
    pub fn command(&self, program: impl AsRef<Path>) -> Command {
        let mut command = Command::new(program.as_ref());
        command
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.dir)
            .env("XDG_RUNTIME_DIR", &self.dir)
            .env("WAYLAND_DISPLAY", &self.wayland_display)
            .env("SWAYSOCK", &self.swaysock)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus_address)
            .env("GSETTINGS_BACKEND", "memory")
            .env("GSK_RENDERER", "cairo")
            .env("LANG", "C.UTF-8")
            .current_dir(&self.dir)
            .uid(self.uid)
            .gid(self.gid)
            .stdin(Stdio::null())
            .process_group(0);
        command
    }

    /// Start `argv` on the desktop; its stdout and stderr lines are followed.
    pub fn start_app(&mut self, argv: &[&str]) -> (u32, Arc<Lines>, Arc<Lines>) {
        let child = self
            .command(argv[0])
            .args(&argv[1..])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", argv[0]));
        let pid = child.id();
        let (out, err) = follow(child, &mut self.started);
        (pid, out, err)
    }

    /// `wayrig attach` as the desktop user with a MyGo socket and `flags`;
    /// answers the socket once it listens, and what attach printed.
    pub fn attach(&mut self, flags: &[&str]) -> (PathBuf, Arc<Lines>) {
        let socket = self.dir.join("mygo.sock");
        let mut args = vec!["--mygo-socket", socket.to_str().unwrap()];
        args.extend_from_slice(flags);
        let said = self.attach_serving(&args);
        (socket, said)
    }

    /// `wayrig attach ARGS` as the desktop user (ARGS name the faces); what
    /// attach printed, once it says it is attached.
    pub fn attach_serving(&mut self, args: &[&str]) -> Arc<Lines> {
        let (_, err) = self.spawn_attach(args);
        err.wait_for("wayrig: attached", "wayrig attach's readiness");
        err
    }

    /// `wayrig attach ARGS` started as the desktop user: its pid, and its
    /// stderr lines as they come.
    pub fn spawn_attach(&mut self, args: &[&str]) -> (u32, Arc<Lines>) {
        let child = self
            .command(super::shipped("wayrig"))
            .arg("attach")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wayrig attach starts");
        let pid = child.id();
        let (_, err) = follow(child, &mut self.started);
        (pid, err)
    }

    /// The environment an in-process portal host of the test needs.
    pub fn client_env(&self) {
        std::env::set_var("XDG_RUNTIME_DIR", &self.dir);
        std::env::set_var("WAYLAND_DISPLAY", &self.wayland_display);
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        self.started.clear();
        // SAFETY: kill(2) on sway's own process group, which the test started.
        unsafe { libc::kill(-(self.sway.0.id() as i32), libc::SIGKILL) };
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Own `child` first (ended however the test ends), then follow its output.
fn follow(mut child: std::process::Child, owned: &mut Vec<OwnedGroup>) -> (Arc<Lines>, Arc<Lines>) {
    let (out, err) = follow_output(&mut child);
    owned.push(OwnedGroup(child));
    (out, err)
}

/// Like `follow_output`, for sway's verbose log: kept, not shown.
fn quiet_output(child: &mut std::process::Child) -> Arc<Lines> {
    let lines = Arc::new(Lines::default());
    let stderr = child.stderr.take().unwrap();
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.push(line);
        }
    });
    lines
}
