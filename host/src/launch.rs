//! Starting apps for a host: an argument vector (never a shell), the host's
//! environment, one process group each, ended with SIGTERM then SIGKILL.
//!
//! Both hosts launch through this: the compositor into its own display, the
//! portal onto a desktop's.

use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::devtools::{PageDebugger, PageDebuggers, PipeToSpawn};
use crate::rdp::FirefoxServer;
use crate::{chromium, firefox};
use crate::{HostError, LaunchSpec};

/// Launched apps still running, shared with their waiter threads, which
/// say when one ends.
#[derive(Debug, Default)]
struct Exits {
    running: Mutex<HashSet<u32>>,
    ended: Condvar,
}

/// The command that starts an app in the session: no shell, stdin closed, a
/// process group of its own, the session's environment (`env`) in place of
/// the desktop's display, accessibility bus and automation socket.
pub fn app_command<'a>(
    program: &str,
    args: &[String],
    env: impl IntoIterator<Item = &'a (String, String)>,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .process_group(0)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        // The desktop's accessibility bus is not the session's.
        .env_remove("AT_SPI_BUS_ADDRESS")
        // The automation socket is Wayrig's, not the app's to open.
        .env_remove("MYGO_AUTOMATION")
        // Readiness is Wayrig's to report to its service manager.
        .env_remove("NOTIFY_SOCKET");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The apps this session started.
#[derive(Debug)]
pub struct Apps {
    base_env: Vec<(String, String)>,
    exits: Arc<Exits>,
    launched: Vec<u32>,
    /// Apps launched in the background: their windows map without focus.
    background: Vec<u32>,
    /// The debuggers of the browsers among them.
    debuggers: PageDebuggers,
    /// Firefox debugger sockets opened so far, to name the next one.
    firefox_sockets: u32,
}

impl Apps {
    /// `base_env` is what every app gets (WAYLAND_DISPLAY, XDG_RUNTIME_DIR, ...).
    pub fn new(base_env: Vec<(String, String)>) -> Self {
        Apps {
            base_env,
            exits: Arc::default(),
            launched: Vec::new(),
            background: Vec::new(),
            debuggers: PageDebuggers::default(),
            firefox_sockets: 0,
        }
    }

    /// The debuggers of the browsers this launcher starts, shared with
    /// whoever evaluates scripts in their pages.
    pub fn debuggers(&self) -> PageDebuggers {
        self.debuggers.clone()
    }

    /// Where a Firefox's debugger server is to listen: the session's runtime
    /// directory, private to it (Firefox makes the socket 0666), if any.
    fn firefox_socket(&mut self) -> Option<std::path::PathBuf> {
        let dir = self
            .base_env
            .iter()
            .find(|(k, _)| k == "XDG_RUNTIME_DIR")
            .map(|(_, v)| std::path::PathBuf::from(v))?;
        self.firefox_sockets += 1;
        Some(dir.join(format!("firefox-debugger-{}.sock", self.firefox_sockets)))
    }

    /// Start an app; `on_exit` runs on a waiter thread with the pid and exit code.
    pub fn launch(
        &mut self,
        spec: &LaunchSpec,
        on_exit: impl FnOnce(u32, Option<i32>) + Send + 'static,
    ) -> Result<u32, HostError> {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err(HostError::InvalidRequest(
                "launch needs a program to run".into(),
            ));
        };
        let mut args = args.to_vec();
        if chromium::wants_renderer_accessibility(program, &args) {
            args.insert(0, chromium::RENDERER_ACCESSIBILITY.to_string());
        }
        let firefox_socket = firefox::debugger_profile(program, &args)
            .and_then(|profile| Some((profile, self.firefox_socket()?)))
            .and_then(|(profile, socket)| match firefox::enable_debugger(&profile) {
                Ok(()) => Some(socket),
                Err(e) => {
                    tracing::warn!(%e, profile = %profile.display(), "no debugger server for Firefox");
                    None
                }
            });
        if let Some(socket) = &firefox_socket {
            args.insert(0, socket.to_string_lossy().into_owned());
            args.insert(0, firefox::DEBUGGER_SWITCH.to_string());
        }
        let mut cmd = app_command(program, &args, self.base_env.iter().chain(spec.env.iter()));
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let pipe = if chromium::wants_devtools_pipe(program, &args) {
            Some(
                PipeToSpawn::attach(&mut cmd).map_err(|e| HostError::Launch {
                    argv0: program.clone(),
                    reason: format!("cannot open its DevTools pipe: {e}"),
                })?,
            )
        } else {
            None
        };
        let mut child = cmd.spawn().map_err(|e| HostError::Launch {
            argv0: program.clone(),
            reason: e.to_string(),
        })?;
        let pid = child.id();
        if let Some(pipe) = pipe {
            match pipe.connect(pid) {
                Ok(pipe) => self.debuggers.insert(pid, PageDebugger::Chromium(pipe)),
                Err(e) => tracing::warn!(pid, %e, "no DevTools pipe to the browser"),
            }
        }
        if let Some(socket) = firefox_socket {
            let server = FirefoxServer::new(socket);
            self.debuggers
                .insert(pid, PageDebugger::Firefox(std::sync::Arc::new(server)));
        }
        self.launched.push(pid);
        if spec.background {
            self.background.push(pid);
        }
        self.exits.running.lock().unwrap().insert(pid);
        let exits = self.exits.clone();
        let debuggers = self.debuggers.clone();
        std::thread::Builder::new()
            .name(format!("wayrig-wait-{pid}"))
            .spawn(move || {
                let code = child.wait().ok().and_then(|s| s.code());
                // Firefox leaves its debugger's socket behind.
                if let Some(PageDebugger::Firefox(server)) = debuggers.remove(pid) {
                    server.remove_socket();
                }
                exits.running.lock().unwrap().remove(&pid);
                exits.ended.notify_all();
                on_exit(pid, code);
            })
            .map_err(|e| HostError::Failed(format!("cannot watch pid {pid}: {e}")))?;
        tracing::info!(pid, program = %program, "launched app");
        Ok(pid)
    }

    /// The process group of an app this session launched that `pid` is in.
    pub fn launched_group_of(&self, pid: u32) -> Option<u32> {
        // SAFETY: getpgid(2) reads a process's group id; no memory is touched.
        let group = unsafe { libc::getpgid(pid as i32) };
        (group > 0 && self.launched.contains(&(group as u32))).then_some(group as u32)
    }

    /// Whether a process belongs to an app launched in the background: each
    /// app leads its own process group, so its children count too.
    pub fn in_background(&self, pid: u32) -> bool {
        self.launched_group_of(pid)
            .is_some_and(|group| self.background.contains(&group))
    }

    /// Pids of launched apps still running, oldest first.
    pub fn running(&self) -> Vec<u32> {
        let running = self.exits.running.lock().unwrap();
        self.launched
            .iter()
            .copied()
            .filter(|p| running.contains(p))
            .collect()
    }

    /// Ask every launched app still running to end, the app alone: SIGTERM.
    /// An app that ends its own helpers (a browser its GPU and page
    /// processes) must not see them killed under it first.
    pub fn signal_apps(&self) {
        let running = self.exits.running.lock().unwrap();
        for &pid in self.launched.iter().filter(|p| running.contains(p)) {
            signal_process(pid, libc::SIGTERM);
        }
    }

    /// Ask every launched app's process group to end: SIGHUP (interactive shells
    /// under terminals ignore SIGTERM) and SIGTERM.
    pub fn signal_all(&self) {
        for &pid in self.launched.iter().filter(|p| group_alive(**p)) {
            signal_group(pid, libc::SIGHUP);
            signal_group(pid, libc::SIGTERM);
        }
    }

    /// Wait until every launched app has ended, or `grace` has passed;
    /// whether they all ended. (A host that serves its apps while they end,
    /// as the compositor does, waits in its own loop instead.)
    pub fn wait_ended(&self, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        let mut running = self.exits.running.lock().unwrap();
        while self.launched.iter().any(|p| running.contains(p)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            running = self.exits.ended.wait_timeout(running, left).unwrap().0;
        }
        true
    }

    /// End every launched app: SIGTERM to each app, then SIGHUP and SIGTERM
    /// to what is left of their groups, each given half of `grace`, then
    /// SIGKILL for what still is.
    pub fn end_all(&self, grace: Duration) {
        self.signal_apps();
        self.wait_ended(grace / 2);
        self.signal_all();
        self.wait_ended(grace / 2);
        self.kill_remaining();
    }

    /// SIGKILL every launched app's process group that still has a live member,
    /// children that outlived their app included, and see them gone.
    pub fn kill_remaining(&self) {
        let alive: Vec<u32> = self
            .launched
            .iter()
            .copied()
            .filter(|p| group_alive(*p))
            .collect();
        for &pid in &alive {
            tracing::warn!(
                pid,
                "app's process group still running at shutdown; killing it"
            );
            signal_group(pid, libc::SIGKILL);
        }
        // SIGKILL lands asynchronously; nothing signals a grandchild's death to
        // us, so look at /proc until the kernel has ended them (bounded).
        let deadline = Instant::now() + KILL_LIMIT;
        while alive.iter().any(|p| group_alive(*p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// How long SIGKILLed processes may take to be gone.
const KILL_LIMIT: Duration = Duration::from_secs(2);

/// Whether a process group has a member that is still running. Zombies do not
/// count: an orphan's zombie waits for PID 1 to reap it, which is not ours to hurry.
pub fn group_alive(pgid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    let pgid = pgid.to_string();
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            // After the command's closing parenthesis: state, ppid, pgrp, ...
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1);
            state != Some("Z") && pgrp == Some(pgid.as_str())
        })
}

/// Send `sig` to the process group led by `pid` (each app leads its own).
pub fn signal_group(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

/// Send `sig` to one process.
pub fn signal_process(pid: u32, sig: i32) {
    // SAFETY: kill(2) only sends a signal; no memory is touched.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn launch_runs_argv_without_a_shell_and_reports_exit() {
        let mut apps = Apps::new(vec![("WAYRIG_TEST_VAR".into(), "x".into())]);
        let (tx, rx) = mpsc::channel();
        // `$WAYRIG_TEST_VAR` would expand under a shell; as an argv it is literal.
        let spec = LaunchSpec {
            argv: vec![
                "sh".into(),
                "-c".into(),
                "test \"$WAYRIG_TEST_VAR\" = x && exit 7".into(),
            ],
            ..Default::default()
        };
        let pid = apps
            .launch(&spec, move |pid, code| tx.send((pid, code)).unwrap())
            .unwrap();
        let (got, code) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!((got, code), (pid, Some(7)));
        assert!(apps.running().is_empty());
    }

    #[test]
    fn missing_program_is_a_launch_error() {
        let mut apps = Apps::new(vec![]);
        let spec = LaunchSpec {
            argv: vec!["/nonexistent/wayrig-app".into()],
            ..Default::default()
        };
        let err = apps.launch(&spec, |_, _| {}).unwrap_err();
        assert!(matches!(err, HostError::Launch { .. }), "{err:?}");
        let empty = apps.launch(&LaunchSpec::default(), |_, _| {}).unwrap_err();
        assert!(matches!(empty, HostError::InvalidRequest(_)));
    }

    #[test]
    fn signal_then_kill_ends_the_whole_group() {
        let mut apps = Apps::new(vec![]);
        let (tx, rx) = mpsc::channel();
        // A shell that ignores HUP and TERM and leaves a child behind: both must end.
        let spec = LaunchSpec {
            argv: vec![
                "sh".into(),
                "-c".into(),
                "trap '' HUP TERM; sleep 300 & wait".into(),
            ],
            ..Default::default()
        };
        let pid = apps
            .launch(&spec, move |_, code| tx.send(code).unwrap())
            .unwrap();
        assert!(group_alive(pid));
        apps.end_all(Duration::from_millis(200));
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(!group_alive(pid), "process group {pid} survived");
    }

    #[test]
    fn an_app_is_asked_to_end_before_its_helpers_are() {
        let mut apps = Apps::new(vec![]);
        // The app says through a fifo when its trap is set and its helper runs.
        let fifo = std::env::temp_dir().join(format!("wayrig-launch-{}", std::process::id()));
        let path = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        // An app that ends on TERM and leaves a helper in its group.
        let script = format!(
            "trap 'exit 0' TERM; sleep 300 & echo up > '{}'; wait",
            fifo.display()
        );
        let spec = LaunchSpec {
            argv: vec!["sh".into(), "-c".into(), script],
            ..Default::default()
        };
        let pid = apps.launch(&spec, |_, _| {}).unwrap();
        let said = std::fs::read_to_string(&fifo).unwrap();
        let _ = std::fs::remove_file(&fifo);
        assert_eq!(said, "up\n");
        apps.signal_apps();
        assert!(apps.wait_ended(Duration::from_secs(10)), "the app ended");
        assert!(group_alive(pid), "its helper was not signalled with it");
        apps.kill_remaining();
        assert!(!group_alive(pid));
    }

    #[test]
    fn an_app_that_ends_on_term_is_waited_for_not_killed() {
        let mut apps = Apps::new(vec![]);
        let spec = LaunchSpec {
            argv: vec!["sleep".into(), "300".into()],
            ..Default::default()
        };
        apps.launch(&spec, |_, _| {}).unwrap();
        apps.signal_all();
        assert!(apps.wait_ended(Duration::from_secs(10)));
        assert!(apps.running().is_empty());
    }

    #[test]
    fn an_app_gets_the_hosts_environment_not_wayrigs_own() {
        let env = [("WAYLAND_DISPLAY".to_string(), "wayland-9".to_string())];
        let cmd = app_command("true", &[], &env);
        let set: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
                (text(k), v.map(text))
            })
            .collect();
        for removed in [
            "DISPLAY",
            "AT_SPI_BUS_ADDRESS",
            "MYGO_AUTOMATION",
            "NOTIFY_SOCKET",
        ] {
            assert!(
                set.contains(&(removed.into(), None)),
                "{removed} kept: {set:?}"
            );
        }
        assert!(set.contains(&("WAYLAND_DISPLAY".into(), Some("wayland-9".into()))));
    }
}
