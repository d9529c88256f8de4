//! Where `ui.capture` may write, as MixOS confines it: `<runtime>/<app>/captures/`,
//! real directories made 0700, a bare `.png` name, a new file made 0600.
//!
//! Every step goes through directory descriptors opened without following
//! links, so a link planted between the checks and the write is never followed.

use std::ffi::{CStr, CString, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use wayrig_proto::abp::Refusal;

/// A name's longest, in bytes.
const NAME_LIMIT: usize = 128;

/// The `n` of the next default name, `capture-<pid>-<n>.png`.
static NEXT_DEFAULT: AtomicU64 = AtomicU64::new(1);

fn argument(message: impl Into<String>) -> Refusal {
    Refusal::new("ARGUMENT", message)
}

fn capture(message: impl Into<String>) -> Refusal {
    Refusal::new("CAPTURE", message)
}

/// Whether a caller's name may be written: a bare file name ending in
/// `.png`, at most 128 bytes, no `/`, `\`, NUL or `..`, not a dotfile.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.len() > NAME_LIMIT {
        return Err(format!(
            "name is {} bytes long; give at most {NAME_LIMIT}",
            name.len()
        ));
    }
    if !name.ends_with(".png") {
        return Err(format!(
            "name {name:?} does not end in .png; give a .png file name"
        ));
    }
    if name.contains(['/', '\\', '\0']) || name.contains("..") {
        return Err(format!(
            "name {name:?} holds a path: give a bare file name, without /, \\, NUL or .."
        ));
    }
    if name.starts_with('.') {
        return Err(format!(
            "name {name:?} starts with a dot: give a name that is not hidden"
        ));
    }
    Ok(())
}

/// The runtime directory captures go under: `XDG_RUNTIME_DIR` as Wayrig has it.
pub(crate) fn runtime_dir(xdg_runtime_dir: Option<OsString>) -> Result<PathBuf, Refusal> {
    xdg_runtime_dir
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            capture(
                "XDG_RUNTIME_DIR is not set for Wayrig, so there is nowhere to capture to; \
                 start wayrig with it set",
            )
        })
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// Open `name` in `dir` as a directory without following a link, making it
/// 0700 first when it is missing.
fn real_dir_at(dir: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `dir` is an open descriptor and `name` a NUL-terminated string.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o700) } != 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: as above; the flags ask for a new descriptor we then own.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat, open and owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An app's captures directory, held open.
#[derive(Debug)]
pub(crate) struct CaptureDir {
    dir: OwnedFd,
    path: PathBuf,
}

impl CaptureDir {
    /// `<runtime>/<app>/captures`, each of the two levels made 0700 where
    /// missing and refused when it is a link or no directory.
    pub(crate) fn open(runtime: &Path, app: &str) -> Result<CaptureDir, Refusal> {
        let root: OwnedFd = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(runtime)
            .map_err(|e| {
                capture(format!(
                    "the runtime directory {} cannot be opened: {e}",
                    runtime.display()
                ))
            })?
            .into();
        let mut dir = root;
        let mut path = runtime.to_path_buf();
        for level in [app, "captures"] {
            path.push(level);
            let name = c_name(level).map_err(|_| capture(format!("{level:?} holds a NUL")))?;
            dir = real_dir_at(&dir, &name).map_err(|e| {
                let why = match e.raw_os_error() {
                    Some(libc::ELOOP | libc::ENOTDIR) => {
                        "is a symbolic link or no directory; captures go to real directories only: \
                         remove it"
                            .to_string()
                    }
                    _ => format!("cannot be made or opened: {e}"),
                };
                capture(format!("{} {why}", path.display()))
            })?;
        }
        Ok(CaptureDir { dir, path })
    }

    /// Whether anything, a link too, has this name in the directory.
    fn exists(&self, name: &str) -> Result<bool, Refusal> {
        let c = c_name(name).map_err(|_| argument("name holds a NUL"))?;
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: an open directory descriptor, a NUL-terminated name, and a
        // buffer fstatat writes; it is never read here.
        let found = unsafe {
            libc::fstatat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                stat.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if found == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::NotFound => Ok(false),
            _ => Err(capture(format!(
                "{} cannot be looked at: {e}",
                self.path.join(name).display()
            ))),
        }
    }

    /// The name a capture takes: the caller's, checked and not yet taken, or
    /// a fresh `capture-<pid>-<n>.png`.
    pub(crate) fn choose(&self, name: Option<&str>, pid: u32) -> Result<String, Refusal> {
        let Some(name) = name else {
            return loop {
                let n = NEXT_DEFAULT.fetch_add(1, Ordering::Relaxed);
                let fresh = format!("capture-{pid}-{n}.png");
                if !self.exists(&fresh)? {
                    break Ok(fresh);
                }
            };
        };
        check_name(name).map_err(argument)?;
        if self.exists(name)? {
            return Err(argument(format!(
                "{} exists already (as a file or a link); give another name",
                self.path.join(name).display()
            )));
        }
        Ok(name.to_string())
    }

    /// Create `name` exclusively, mode 0600, holding `bytes`; its path.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, Refusal> {
        let path = self.path.join(name);
        let c = c_name(name).map_err(|_| argument("name holds a NUL"))?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: an open directory descriptor, a NUL-terminated name, and a
        // mode for the new file; the descriptor returned is ours.
        let fd = unsafe { libc::openat(self.dir.as_raw_fd(), c.as_ptr(), flags, 0o600) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(capture(format!(
                "{} cannot be created{}: {e}",
                path.display(),
                if e.kind() == io::ErrorKind::AlreadyExists {
                    " (something took the name while the screenshot was taken; it was not followed)"
                } else {
                    ""
                }
            )));
        }
        // SAFETY: `fd` was just returned by openat, open and owned by nothing else.
        let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_data()) {
            // SAFETY: a NUL-terminated name in the directory we just created it in.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) };
            return Err(capture(format!(
                "{} cannot be written: {e}",
                path.display()
            )));
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    /// A fresh directory standing in for XDG_RUNTIME_DIR, removed when dropped.
    struct Runtime(PathBuf);

    impl Runtime {
        fn new(test: &str) -> Runtime {
            let dir =
                std::env::temp_dir().join(format!("wayrig-captures-{test}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Runtime(dir)
        }
    }

    impl Drop for Runtime {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn names_are_bare_png_file_names_that_are_not_hidden() {
        assert!(check_name("settings.png").is_ok());
        assert!(check_name(&format!("{}.png", "x".repeat(124))).is_ok());
        for bad in [
            "shot.jpg",
            "a/b.png",
            "a\\b.png",
            "a\0.png",
            "a..b.png",
            ".hidden.png",
            ".png",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let long = format!("{}.png", "x".repeat(125));
        assert!(check_name(&long).unwrap_err().contains("128"));
    }

    #[test]
    fn without_a_runtime_directory_every_capture_is_refused() {
        assert_eq!(runtime_dir(None).unwrap_err().error_code, "CAPTURE");
        assert_eq!(
            runtime_dir(Some("".into())).unwrap_err().error_code,
            "CAPTURE"
        );
        assert_eq!(
            runtime_dir(Some("/run/x".into())).unwrap(),
            Path::new("/run/x")
        );
    }

    #[test]
    fn a_capture_is_a_new_0600_file_in_0700_directories() {
        let runtime = Runtime::new("write");
        let dir = CaptureDir::open(&runtime.0, "fx").unwrap();
        let name = dir.choose(Some("one.png"), 42).unwrap();
        let path = dir.write(&name, b"pixels").unwrap();
        assert_eq!(path, runtime.0.join("fx/captures/one.png"));
        assert_eq!(std::fs::read(&path).unwrap(), b"pixels");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&runtime.0.join("fx")), 0o700);
        assert_eq!(mode(&runtime.0.join("fx/captures")), 0o700);

        let taken = dir.choose(Some("one.png"), 42).unwrap_err();
        assert_eq!(taken.error_code, "ARGUMENT");
        assert!(taken.message.contains("another name"), "{}", taken.message);
        let fresh = dir.choose(None, 42).unwrap();
        assert!(
            fresh.starts_with("capture-42-") && fresh.ends_with(".png"),
            "{fresh}"
        );
        // A name taken by anything, a dangling link too, is taken.
        std::os::unix::fs::symlink("/nonexistent", runtime.0.join("fx/captures/link.png")).unwrap();
        assert_eq!(
            dir.choose(Some("link.png"), 42).unwrap_err().error_code,
            "ARGUMENT"
        );
    }

    #[test]
    fn a_link_planted_while_the_capture_waits_is_not_followed() {
        let runtime = Runtime::new("planted");
        let dir = CaptureDir::open(&runtime.0, "fx").unwrap();
        let name = dir.choose(Some("late.png"), 1).unwrap();
        let target = runtime.0.join("target");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, runtime.0.join("fx/captures/late.png")).unwrap();
        assert_eq!(
            dir.write(&name, b"pixels").unwrap_err().error_code,
            "CAPTURE"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn a_linked_level_is_refused_whichever_it_is() {
        let runtime = Runtime::new("linked");
        let elsewhere = runtime.0.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, runtime.0.join("app")).unwrap();
        let refused = CaptureDir::open(&runtime.0, "app").unwrap_err();
        assert_eq!(refused.error_code, "CAPTURE");
        assert!(
            refused.message.contains("symbolic link"),
            "{}",
            refused.message
        );

        std::fs::create_dir(runtime.0.join("fx")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, runtime.0.join("fx/captures")).unwrap();
        assert_eq!(
            CaptureDir::open(&runtime.0, "fx").unwrap_err().error_code,
            "CAPTURE"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
