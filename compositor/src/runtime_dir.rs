//! The session's runtime directory: private (0700), holding its Wayland
//! socket and every file of the session, removed with it, or by the next
//! session when its process was killed outright.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// A private directory (0700), removed with everything in it when dropped:
/// the session's runtime directory holding its Wayland socket, and the one
/// `wayrig run` keeps every file of a session under.
#[derive(Debug)]
pub struct RuntimeDir {
    path: PathBuf,
}

impl RuntimeDir {
    pub fn create(parent: Option<&Path>) -> std::io::Result<Self> {
        let parent = match parent {
            Some(p) => p.to_path_buf(),
            None => std::env::var_os("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|p| p.is_dir())
                .unwrap_or_else(std::env::temp_dir),
        };
        sweep_killed(&parent);
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        loop {
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = parent.join(format!("wayrig-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(RuntimeDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Remove what sessions killed outright (SIGKILL) left in `parent`: a
/// directory named as [`RuntimeDir`] names them, owned by this user, whose
/// process is gone and whose Wayland socket's lock no compositor holds (a
/// process of another PID namespace may share the parent).
fn sweep_killed(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(session_pid) else {
            continue;
        };
        let path = entry.path();
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if ours && pid != std::process::id() && !alive(pid) && !socket_held(&path, 2) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// The process id in a name `wayrig-PID-N`, as [`RuntimeDir::create`] names.
fn session_pid(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix("wayrig-")?.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` runs (one of another user's counts as running).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 only checks the process; nothing is sent.
    let signalled = unsafe { libc::kill(pid, 0) } == 0;
    signalled || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Whether a Wayland socket's lock file (`wayland-N.lock`) within `depth`
/// levels of `dir` is held: its compositor still runs.
fn socket_held(dir: &Path, depth: u32) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            return false;
        };
        if kind.is_dir() {
            return depth > 1 && socket_held(&path, depth - 1);
        }
        if !kind.is_file() || path.extension().is_none_or(|e| e != "lock") {
            return false;
        }
        let Ok(file) = std::fs::File::open(&path) else {
            return false;
        };
        // SAFETY: flock(2) on a descriptor this function owns; the lock,
        // if taken, goes with the file at the end of this closure.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = RuntimeDir::create(None).unwrap();
        let path = dir.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(dir);
        assert!(!path.exists());
    }
    #[test]
    fn only_session_directories_name_their_process() {
        assert_eq!(session_pid("wayrig-4711-0"), Some(4711));
        assert_eq!(session_pid("wayrig-4711-12"), Some(4711));
        for other in [
            "wayrig-bus-4711-0",
            "wayrig-record-video-4711",
            "wayrig-4711",
            "wayrig-x-0",
            "other-4711-0",
        ] {
            assert_eq!(session_pid(other), None, "{other}");
        }
    }

    #[test]
    fn a_held_wayland_lock_keeps_a_directory_and_a_free_one_does_not() {
        let dir = RuntimeDir::create(None).unwrap();
        let inner = dir.path().join("wayrig-1-1");
        std::fs::create_dir(&inner).unwrap();
        let lock = inner.join("wayland-0.lock");
        let held = std::fs::File::create(&lock).unwrap();
        assert!(!socket_held(dir.path(), 2), "not yet locked");
        // SAFETY: flock(2) on a file this test owns.
        assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
        assert!(socket_held(dir.path(), 2));
        assert!(!socket_held(dir.path(), 1), "deeper than looked");
        drop(held);
        assert!(!socket_held(dir.path(), 2));
    }
}
