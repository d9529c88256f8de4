//! Launching apps and opening files as a desktop does: by executable, desktop
//! id or display name, never through a shell, and URLs or paths with their
//! default handler, waiting for the first windows when asked.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wayrig_desktop::{
    exec_argv, find_executable, Applications, DesktopEntry, ExecError, LookupError, MimeDatabase,
    Target, XdgDirs,
};
use wayrig_host::Capability;

use wayrig_host::{LaunchSpec, WindowInfo};

use super::windows::is_top_level;
use super::Session;
use crate::model::Error;

/// What to launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppSpec {
    /// A program on PATH, or an absolute path.
    Executable(String),
    /// A .desktop id (`org.gtk.Demo4` or `org.gtk.Demo4.desktop`); its Exec
    /// line is run without a shell.
    DesktopId(String),
    /// A display name matched against the installed applications; failing
    /// that a desktop id, then a program on PATH or a path, as "application
    /// name or path" reads.
    Name(String),
}

/// What an [`AppSpec`] names on this desktop.
enum Resolved<'d> {
    Entry(&'d DesktopEntry),
    Program(String),
}

/// A launch request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    pub app: Option<AppSpec>,
    /// Passed verbatim after what the app's Exec line gives.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The app's working directory; the home directory when not given.
    pub cwd: Option<PathBuf>,
    /// Leave focus where it is: the app's windows map behind, unfocused.
    pub background: bool,
    /// Wait this long for the app's first windows.
    pub wait_for_window: Option<Duration>,
}

/// A launched app.
#[derive(Debug, Clone, PartialEq)]
pub struct Launched {
    pub pid: u32,
    /// The top-level windows that mapped within the wait, front to back.
    pub windows: Vec<WindowInfo>,
    /// The app ended within the wait (a command-line tool, a crash, an app
    /// that handed its work to a running instance).
    pub ended: bool,
}

/// What to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenTarget {
    Url(String),
    Path(PathBuf),
}

/// The longest wait for an app's first windows; a longer one asked is cut to it.
pub const WINDOW_WAIT_LIMIT: Duration = Duration::from_secs(120);

/// Terminal emulators that run an app whose entry says `Terminal=true`, in
/// the order tried, with the argument that comes before the command.
const TERMINALS: [(&str, Option<&str>); 6] = [
    ("x-terminal-emulator", Some("-e")),
    ("foot", None),
    ("alacritty", Some("-e")),
    ("kitty", None),
    ("gnome-terminal", Some("--")),
    ("xterm", Some("-e")),
];

/// The desktop's view of installed applications and MIME types.
pub(crate) struct Desktop {
    pub apps: Applications,
    pub mime: MimeDatabase,
    path_env: Option<OsString>,
    home: PathBuf,
}

impl Desktop {
    pub(crate) fn load(dirs: &XdgDirs) -> Self {
        Desktop {
            apps: Applications::load(dirs),
            mime: MimeDatabase::load(dirs),
            path_env: std::env::var_os("PATH"),
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        }
    }

    /// A command line that runs `argv` in a terminal emulator, as a desktop
    /// runs an app that needs one.
    fn in_terminal(&self, argv: Vec<String>) -> Result<Vec<String>, Error> {
        let path = self.path_env.as_deref();
        let (terminal, before) = TERMINALS
            .iter()
            .find_map(|(name, before)| find_executable(name, path).ok().map(|p| (p, before)))
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "{} runs in a terminal, and none is installed (foot, xterm, ...)",
                    argv[0]
                ))
            })?;
        let mut wrapped = vec![terminal.to_string_lossy().into_owned()];
        wrapped.extend(before.map(str::to_string));
        wrapped.extend(argv);
        Ok(wrapped)
    }

    fn resolve(&self, app: &AppSpec) -> Result<Resolved<'_>, Error> {
        let lookup = |e: LookupError| match e {
            LookupError::AmbiguousName { .. } => Error::InvalidRequest(e.to_string()),
            _ => Error::NotFound(e.to_string()),
        };
        match app {
            AppSpec::Executable(program) => Ok(Resolved::Program(program.clone())),
            AppSpec::DesktopId(id) => self.apps.by_id(id).map(Resolved::Entry).map_err(lookup),
            AppSpec::Name(name) => match self.apps.by_name(name) {
                Ok(entry) => Ok(Resolved::Entry(entry)),
                Err(e @ LookupError::AmbiguousName { .. }) => Err(lookup(e)),
                Err(by_name) => {
                    if let Ok(entry) = self.apps.by_id(name) {
                        return Ok(Resolved::Entry(entry));
                    }
                    if find_executable(name, self.path_env.as_deref()).is_ok() {
                        return Ok(Resolved::Program(name.clone()));
                    }
                    Err(Error::NotFound(format!(
                        "{by_name}; nor is it a desktop id, a program on PATH or a path"
                    )))
                }
            },
        }
    }

    /// The argument vector and working directory for an app, opening
    /// `targets` where given.
    fn command(
        &self,
        app: &AppSpec,
        targets: &[Target],
        cwd: Option<&Path>,
    ) -> Result<(Vec<String>, PathBuf), Error> {
        let bad = |e: ExecError| Error::InvalidRequest(e.to_string());
        let resolved = self.resolve(app)?;
        let terminal = matches!(resolved, Resolved::Entry(e) if e.terminal);
        let (mut argv, own_dir) = match resolved {
            Resolved::Entry(entry) => (
                exec_argv(entry, targets).map_err(bad)?,
                entry.working_dir.clone(),
            ),
            Resolved::Program(name) => {
                let mut argv = vec![name];
                for t in targets {
                    argv.push(match t {
                        Target::Path(p) => p.to_string_lossy().into_owned(),
                        Target::Url(u) => u.clone(),
                    });
                }
                (argv, None)
            }
        };
        // A missing program is an error now, not a silent exit later.
        let program = find_executable(&argv[0], self.path_env.as_deref())
            .map_err(|e| Error::NotFound(e.to_string()))?;
        argv[0] = program.to_string_lossy().into_owned();
        if terminal {
            argv = self.in_terminal(argv)?;
        }
        let dir = cwd
            .map(Path::to_path_buf)
            .or(own_dir)
            .unwrap_or_else(|| self.home.clone());
        Ok((argv, dir))
    }
}

impl Session {
    /// Find apps, MIME types and handlers in these directories instead of
    /// those of Wayrig's own environment (a desktop of another user, a test's).
    pub fn with_desktop(mut self, dirs: XdgDirs) -> Self {
        self.desktop_dirs = std::sync::OnceLock::from(dirs);
        self.installed = std::sync::OnceLock::new();
        self
    }

    pub(crate) fn desktop_dirs(&self) -> &XdgDirs {
        self.desktop_dirs.get_or_init(XdgDirs::from_env)
    }

    /// Start an app in the session; with `wait_for_window`, answer with the
    /// windows it maps within that wait.
    pub async fn launch(&self, launch: Launch) -> Result<Launched, Error> {
        self.require(Capability::Launch, "launching apps")?;
        let app = launch
            .app
            .as_ref()
            .ok_or_else(|| Error::InvalidRequest("launch needs an app to start".into()))?;
        check_launch(&launch)?;
        let desktop = Desktop::load(self.desktop_dirs());
        let (mut argv, cwd) = desktop.command(app, &[], launch.cwd.as_deref())?;
        argv.extend(launch.args.iter().cloned());
        self.start(
            argv,
            launch.env,
            cwd,
            launch.background,
            launch.wait_for_window,
        )
        .await
    }

    /// Open a URL or a path with its default handler (as xdg-open would), or
    /// with the app given.
    pub async fn open(
        &self,
        target: OpenTarget,
        with: Option<AppSpec>,
        background: bool,
    ) -> Result<Launched, Error> {
        self.require(Capability::Launch, "opening files")?;
        let desktop = Desktop::load(self.desktop_dirs());
        let target = match target {
            OpenTarget::Url(url) => Target::from_arg(&url, &desktop.home),
            OpenTarget::Path(path) => {
                if !path.exists() {
                    return Err(Error::NotFound(format!(
                        "{} does not exist",
                        path.display()
                    )));
                }
                Target::Path(path)
            }
        };
        let app = match with {
            Some(app) => app,
            None => {
                let entry = desktop
                    .apps
                    .handler_for(&desktop.mime, &target)
                    .map_err(|e| Error::Unsupported(e.to_string()))?;
                AppSpec::DesktopId(entry.id.clone())
            }
        };
        let (argv, cwd) = desktop.command(&app, &[target], None)?;
        self.start(argv, Vec::new(), cwd, background, None).await
    }

    async fn start(
        &self,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
        background: bool,
        wait_for_window: Option<Duration>,
    ) -> Result<Launched, Error> {
        let app = self
            .host
            .launch(LaunchSpec {
                argv,
                env,
                cwd: Some(cwd),
                background,
            })
            .await?;
        let mut windows = Vec::new();
        let mut ended = false;
        if let Some(limit) = wait_for_window {
            let limit = limit.min(WINDOW_WAIT_LIMIT);
            let mine = |w: &WindowInfo| w.pid == Some(app.pid) && is_top_level(w);
            // An app that exits without a window ends the wait at once.
            tokio::select! {
                _ = self.windows.wait_for(limit, |list| list.iter().any(mine)) => {}
                _ = exited(app.pid) => ended = true,
            }
            windows = self
                .windows
                .now()
                .iter()
                .filter(|w| mine(w))
                .cloned()
                .collect();
        }
        Ok(Launched {
            pid: app.pid,
            windows,
            ended,
        })
    }
}

/// What no launch can carry, refused before anything starts: a NUL in an
/// argument or the environment, a working directory that is not one.
fn check_launch(launch: &Launch) -> Result<(), Error> {
    let strings = launch
        .args
        .iter()
        .chain(launch.env.iter().flat_map(|(k, v)| [k, v]));
    if let Some(bad) = strings.into_iter().find(|s| s.contains('\0')) {
        return Err(Error::InvalidRequest(format!(
            "{bad:?} holds a NUL byte, which no argument or environment variable can"
        )));
    }
    if launch
        .env
        .iter()
        .any(|(k, _)| k.is_empty() || k.contains('='))
    {
        return Err(Error::InvalidRequest(
            "an environment variable's name is non-empty and holds no '='".into(),
        ));
    }
    if let Some(dir) = &launch.cwd {
        if !dir.is_dir() {
            return Err(Error::NotFound(format!(
                "the working directory {} does not exist",
                dir.display()
            )));
        }
    }
    Ok(())
}

impl Session {
    /// Until the process `pid` has ended (at once if it has): an app's end,
    /// which may come long after its last window closed.
    pub async fn app_ended(&self, pid: u32) {
        exited(pid).await
    }
}

/// Until the process `pid` has exited (at once if it has, or cannot be
/// watched): a pidfd becomes readable when its process ends.
async fn exited(pid: u32) {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: pidfd_open(2) takes a pid and flags and touches no memory.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return;
    }
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open, the same
    // descriptor, until the AsyncFd is dropped.
    let watched = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    };
    if let Ok(watched) = watched {
        let _ = watched.readable().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A desktop of its own for each test: tests run in parallel and each
    /// removes its directory when done.
    fn desktop_with(entries: &[(&str, &str)]) -> (Desktop, PathBuf) {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "wayrig-launch-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let apps = root.join("share/applications");
        std::fs::create_dir_all(&apps).unwrap();
        for (id, text) in entries {
            std::fs::write(apps.join(id), text).unwrap();
        }
        let dirs = XdgDirs {
            data_home: root.join("home"),
            data_dirs: vec![root.join("share")],
            config_home: root.join("config"),
            config_dirs: vec![],
        };
        let desktop = Desktop {
            apps: Applications::load(&dirs),
            mime: MimeDatabase::load(&dirs),
            path_env: Some("/usr/bin:/bin".into()),
            home: PathBuf::from("/home/ada"),
        };
        (desktop, root)
    }

    #[test]
    fn a_desktop_id_runs_its_exec_line_from_its_own_directory() {
        let (desktop, root) = desktop_with(&[(
            "org.example.Echo.desktop",
            "[Desktop Entry]\nType=Application\nName=Echo Tool\nExec=echo \"two words\" %F\nPath=/tmp\n",
        )]);
        let (argv, cwd) = desktop
            .command(&AppSpec::DesktopId("org.example.Echo".into()), &[], None)
            .unwrap();
        assert!(argv[0].ends_with("/echo"), "{argv:?}");
        assert_eq!(&argv[1..], ["two words"]);
        assert_eq!(cwd, PathBuf::from("/tmp"));
        // By name, and a file to open.
        let (argv, _) = desktop
            .command(
                &AppSpec::Name("echo tool".into()),
                &[Target::Path("/tmp/a b.txt".into())],
                Some(Path::new("/srv")),
            )
            .unwrap();
        assert_eq!(&argv[1..], ["two words", "/tmp/a b.txt"]);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_missing_program_or_app_is_refused_at_once_and_says_which() {
        let (desktop, root) = desktop_with(&[(
            "gone.desktop",
            "[Desktop Entry]\nType=Application\nName=Gone\nExec=wayrig-no-such-program\n",
        )]);
        let err = |app: AppSpec| desktop.command(&app, &[], None).unwrap_err().to_string();
        assert!(err(AppSpec::Executable("wayrig-no-such-program".into()))
            .contains("wayrig-no-such-program"));
        assert!(err(AppSpec::DesktopId("gone".into())).contains("wayrig-no-such-program"));
        assert!(err(AppSpec::DesktopId("nothing.here".into())).contains("nothing.here"));
        assert!(err(AppSpec::Name("Nobody".into())).contains("Nobody"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_name_no_entry_has_is_a_desktop_id_then_a_program_or_a_path() {
        let (desktop, root) = desktop_with(&[(
            "org.example.Echo.desktop",
            "[Desktop Entry]\nType=Application\nName=Echo Tool\nExec=echo entry\n",
        )]);
        let argv = |name: &str| desktop.command(&AppSpec::Name(name.into()), &[], None);
        assert_eq!(&argv("org.example.Echo").unwrap().0[1..], ["entry"]);
        assert_eq!(&argv("org.example.Echo.desktop").unwrap().0[1..], ["entry"]);
        assert!(argv("sh").unwrap().0[0].ends_with("/sh"));
        assert_eq!(argv("/bin/sh").unwrap().0, ["/bin/sh"]);
        let missing = argv("wayrig-no-such-app").unwrap_err().to_string();
        assert!(missing.contains("program on PATH"), "{missing}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn nul_bytes_and_missing_directories_are_refused_before_a_start() {
        let launch = |args: &[&str], cwd: Option<&str>| Launch {
            app: Some(AppSpec::Executable("true".into())),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.map(PathBuf::from),
            ..Launch::default()
        };
        assert!(check_launch(&launch(&["a"], Some("/tmp"))).is_ok());
        assert!(matches!(
            check_launch(&launch(&["a\0b"], None)),
            Err(Error::InvalidRequest(_))
        ));
        assert!(matches!(
            check_launch(&launch(&[], Some("/nonexistent"))),
            Err(Error::NotFound(_))
        ));
    }

    #[tokio::test]
    async fn the_exit_of_a_process_is_seen() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        exited(child.id()).await;
        child.wait().unwrap();
    }

    #[test]
    fn an_executable_runs_from_the_home_directory_unless_told() {
        let (desktop, root) = desktop_with(&[]);
        let (argv, cwd) = desktop
            .command(&AppSpec::Executable("sh".into()), &[], None)
            .unwrap();
        assert!(argv[0].ends_with("/sh"));
        assert_eq!(cwd, PathBuf::from("/home/ada"));
        std::fs::remove_dir_all(root).unwrap();
    }
}
