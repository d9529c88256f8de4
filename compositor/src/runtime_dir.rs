//! The session's runtime directory: private (0700), holding its Wayland
//! socket and every file of the session, removed with it.

use std::os::unix::fs::DirBuilderExt;
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
}
