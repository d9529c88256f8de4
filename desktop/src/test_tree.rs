//! What the unit tests share: a desktop's directories in a temporary tree of
//! their own, and short ways to write targets and argvs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::base_dirs::XdgDirs;
use crate::target::Target;

/// A directory tree under the system temp dir, removed when dropped.
pub(crate) struct TempTree {
    pub(crate) root: PathBuf,
}

impl TempTree {
    pub(crate) fn new(test: &str) -> TempTree {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "wayrig-desktop-{test}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        TempTree { root }
    }

    pub(crate) fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn executable(&self, relative: &str) -> PathBuf {
        let path = self.write(relative, "#!/bin/sh\n");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// data home, two data dirs, config home and one config dir, all inside.
    pub(crate) fn dirs(&self) -> XdgDirs {
        XdgDirs {
            data_home: self.root.join("home/.local/share"),
            data_dirs: vec![
                self.root.join("usr/local/share"),
                self.root.join("usr/share"),
            ],
            config_home: self.root.join("home/.config"),
            config_dirs: vec![self.root.join("etc/xdg")],
        }
    }

    pub(crate) fn app(&self, data_dir: &str, relative: &str, name: &str, extra: &str) -> PathBuf {
        self.write(
            &format!("{data_dir}/applications/{relative}"),
            &format!("[Desktop Entry]\nType=Application\nName={name}\n{extra}"),
        )
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

pub(crate) const HOME: &str = "home/.local/share";
pub(crate) const LOCAL: &str = "usr/local/share";
pub(crate) const SYSTEM: &str = "usr/share";

pub(crate) fn path(p: &str) -> Target {
    Target::Path(PathBuf::from(p))
}

pub(crate) fn url(u: &str) -> Target {
    Target::Url(u.to_string())
}

pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
