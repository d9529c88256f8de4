//! A private D-Bus session bus per Wayrig session, with the AT-SPI bus activated
//! from it and accessibility switched on: two sessions never see each other's apps.
//!
//! The bus daemon runs in a process group of its own, ended when this is dropped,
//! with what it activated and what those mounted in its directory.

use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use std::io::BufRead;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

/// How long the bus may take to say its address.
const START_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("cannot start dbus-daemon (is the dbus package installed?): {0}")]
    Spawn(std::io::Error),
    #[error("dbus-daemon did not give its address: {0}")]
    NoAddress(String),
    #[error("cannot reach the session bus: {0}")]
    Connect(zbus::Error),
    #[error("cannot switch accessibility on: {0}")]
    Enable(zbus::Error),
    #[error("the AT-SPI bus did not start (is at-spi2-core installed?): {0}")]
    Atspi(zbus::Error),
    #[error("cannot make the bus directory: {0}")]
    Dir(std::io::Error),
}

/// A running private session bus with accessibility on.
#[derive(Debug)]
pub struct PrivateBus {
    daemon: Child,
    dir: PathBuf,
    /// Address of the session bus apps are given.
    pub address: String,
    /// Address of the AT-SPI bus the session bus activated.
    pub a11y_address: String,
}

impl PrivateBus {
    /// Start dbus-daemon in a private directory, activate the AT-SPI bus from it
    /// and set org.a11y.Status IsEnabled.
    pub async fn start(parent: &Path) -> Result<Self, BusError> {
        let dir = private_dir(parent).map_err(BusError::Dir)?;
        let mut cmd = Command::new("dbus-daemon");
        cmd.args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            // Listening in the private directory, not where the session
            // configuration says (/tmp), the socket goes with the directory.
            .arg(format!("--address=unix:path={}", dir.join("bus").display()))
            // The AT-SPI bus puts its socket under the runtime directory.
            .env("XDG_RUNTIME_DIR", &dir)
            // The AT-SPI launcher stores IsEnabled in GSettings: keep it off the
            // user's own settings, and off the X display it would publish on.
            .env("GSETTINGS_BACKEND", "memory")
            .env_remove("DISPLAY")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("AT_SPI_BUS_ADDRESS")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        // Should this process die without stopping it (SIGKILL, a crash), the
        // kernel kills the daemon; the AT-SPI launcher, its bus and the
        // registry end with it. The signal follows the thread that forked,
        // so the fork happens on a thread that lasts as long as the process.
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls are made
        // (prctl, getppid), touching no memory of the parent.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("the parent is gone"));
                }
                Ok(())
            });
        }
        let mut daemon = spawn_from_lasting_thread(cmd).map_err(BusError::Spawn)?;
        let stdout = daemon
            .stdout
            .take()
            .ok_or_else(|| BusError::NoAddress("no stdout".into()))?;
        let mut bus = PrivateBus {
            daemon,
            dir,
            address: String::new(),
            a11y_address: String::new(),
        };
        // The read ends when the daemon says its address or, killed with
        // `bus` on an error, closes its end.
        let first_line = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            std::io::BufReader::new(stdout)
                .read_line(&mut line)
                .map(|_| line)
        });
        bus.address = match tokio::time::timeout(START_LIMIT, first_line).await {
            Ok(Ok(Ok(line))) if !line.trim().is_empty() => line.trim().to_string(),
            Ok(Ok(Ok(_))) => return Err(BusError::NoAddress("it exited".into())),
            Ok(Ok(Err(e))) => return Err(BusError::NoAddress(e.to_string())),
            Ok(Err(e)) => return Err(BusError::NoAddress(e.to_string())),
            Err(_) => {
                return Err(BusError::NoAddress(format!(
                    "nothing within {START_LIMIT:?}"
                )))
            }
        };
        let conn = zbus::connection::Builder::address(bus.address.as_str())
            .map_err(BusError::Connect)?
            .build()
            .await
            .map_err(BusError::Connect)?;
        // Asking the AT-SPI bus for its address activates at-spi-bus-launcher.
        let launcher = atspi::proxy::bus::BusProxy::new(&conn)
            .await
            .map_err(BusError::Atspi)?;
        bus.a11y_address = launcher.get_address().await.map_err(BusError::Atspi)?;
        let status = atspi::proxy::bus::StatusProxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(BusError::Enable)?;
        status
            .set_is_enabled(true)
            .await
            .map_err(BusError::Enable)?;
        Ok(bus)
    }

    /// The environment that puts an app on this bus with accessibility on, for
    /// every toolkit: GTK (AT-SPI through the bus), Qt, and AccessKit (IsEnabled).
    /// No AT_SPI_BUS_ADDRESS: toolkits ask org.a11y.Bus on the session bus for
    /// it (Qt 6.4, given the address, loses IsEnabled and never registers).
    /// Qt draws no title bar of its own: Qt 5 places its elements from the
    /// area under the title bar it draws inside its surface, so every place
    /// it gives would be off by that bar.
    pub fn app_env(&self) -> Vec<(String, String)> {
        [
            ("DBUS_SESSION_BUS_ADDRESS", self.address.as_str()),
            ("QT_WAYLAND_DISABLE_WINDOWDECORATION", "1"),
            ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
            ("QT_ACCESSIBILITY", "1"),
            ("NO_AT_BRIDGE", "0"),
            ("GTK_A11Y", "atspi"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}

/// A command and where its spawned child goes.
type SpawnJob = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawn `cmd` from a thread that lives as long as the process, so that a
/// `PR_SET_PDEATHSIG` set in the child fires when the process dies, not when
/// the (perhaps short-lived) calling thread ends.
fn spawn_from_lasting_thread(cmd: Command) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("wayrig-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in queue {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = started {
            tracing::error!(%e, "cannot start the spawning thread");
        }
        Mutex::new(jobs)
    });
    let (reply, child) = mpsc::channel();
    spawner
        .lock()
        .unwrap()
        .send((cmd, reply))
        .map_err(|_| std::io::Error::other("the spawning thread is gone"))?;
    child
        .recv()
        .map_err(|_| std::io::Error::other("the spawning thread is gone"))?
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let pid = self.daemon.id();
        // SAFETY: kill(2) on the bus daemon's own process group; the AT-SPI
        // launcher and registry it activated are in it too, and so is
        // whatever else the apps had it activate (the document portal).
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
        // Killed, it is reaped at once.
        let _ = self.daemon.wait();
        // Services the apps had it activate mount FUSE file systems under
        // the runtime directory (the document portal's `doc`), which outlive
        // their killed servers and keep the directory from being removed.
        unmount_all_under(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Unmount what is mounted under `dir` (deepest first): lazily, as root
/// can, else through fusermount3 as the mount's owner can.
fn unmount_all_under(dir: &Path) {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return;
    };
    // The fifth field is the mount point, with spaces and the like escaped
    // as octal, which a directory of ours never holds.
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|p| p.starts_with(dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for point in points {
        let Ok(c_path) = std::ffi::CString::new(point.as_os_str().as_encoded_bytes()) else {
            continue;
        };
        // SAFETY: umount2(2) with a valid C string; no memory is handed over.
        if unsafe { libc::umount2(c_path.as_ptr(), libc::MNT_DETACH) } == 0 {
            continue;
        }
        let _ = std::process::Command::new("fusermount3")
            .args(["-u", "-z"])
            .arg(&point)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A new 0700 directory for one bus under `parent`.
fn private_dir(parent: &Path) -> std::io::Result<PathBuf> {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    loop {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = parent.join(format!("wayrig-bus-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
