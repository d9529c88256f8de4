//! The XDG base directories: where data and configuration are looked up, read
//! from a set of environment variables (this process's or a session's own).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The XDG base directories the lookups read, earlier entries winning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XdgDirs {
    /// `$XDG_DATA_HOME`, by default `~/.local/share`.
    pub data_home: PathBuf,
    /// `$XDG_DATA_DIRS`, by default `/usr/local/share:/usr/share`.
    pub data_dirs: Vec<PathBuf>,
    /// `$XDG_CONFIG_HOME`, by default `~/.config`.
    pub config_home: PathBuf,
    /// `$XDG_CONFIG_DIRS`, by default `/etc/xdg`.
    pub config_dirs: Vec<PathBuf>,
}

impl XdgDirs {
    /// The directories this process's environment names.
    pub fn from_env() -> XdgDirs {
        XdgDirs::from_vars(|name| std::env::var_os(name))
    }

    /// The directories a set of environment variables names; unset, empty and
    /// relative values fall back to the defaults, as the base directory spec says.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> XdgDirs {
        let home = var("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let one = |name: &str, default: PathBuf| {
            var(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or(default)
        };
        let list = |name: &str, default: &str| {
            let absolute = |value: &OsStr| -> Vec<PathBuf> {
                std::env::split_paths(value)
                    .filter(|p| p.is_absolute())
                    .collect()
            };
            var(name)
                .map(|v| absolute(&v))
                .filter(|dirs| !dirs.is_empty())
                .unwrap_or_else(|| absolute(OsStr::new(default)))
        };
        XdgDirs {
            data_home: one("XDG_DATA_HOME", home.join(".local/share")),
            data_dirs: list("XDG_DATA_DIRS", "/usr/local/share:/usr/share"),
            config_home: one("XDG_CONFIG_HOME", home.join(".config")),
            config_dirs: list("XDG_CONFIG_DIRS", "/etc/xdg"),
        }
    }

    /// `$XDG_DATA_HOME` then each of `$XDG_DATA_DIRS`: where data is looked up, in order.
    pub fn data_search_path(&self) -> Vec<&Path> {
        std::iter::once(self.data_home.as_path())
            .chain(self.data_dirs.iter().map(PathBuf::as_path))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn xdg_dirs_default_when_unset_empty_or_relative() {
        let vars: HashMap<&str, &str> = [
            ("HOME", "/home/u"),
            ("XDG_DATA_HOME", ""),
            ("XDG_CONFIG_HOME", "relative/config"),
            ("XDG_DATA_DIRS", "/opt/share:relative:/usr/share"),
        ]
        .into_iter()
        .collect();
        let dirs = XdgDirs::from_vars(|name| vars.get(name).map(OsString::from));
        assert_eq!(dirs.data_home, PathBuf::from("/home/u/.local/share"));
        assert_eq!(dirs.config_home, PathBuf::from("/home/u/.config"));
        assert_eq!(
            dirs.data_dirs,
            vec![PathBuf::from("/opt/share"), PathBuf::from("/usr/share")]
        );
        assert_eq!(dirs.config_dirs, vec![PathBuf::from("/etc/xdg")]);
        let unset = XdgDirs::from_vars(|name| (name == "HOME").then(|| "/h".into()));
        assert_eq!(
            unset.data_dirs,
            vec![
                PathBuf::from("/usr/local/share"),
                PathBuf::from("/usr/share")
            ]
        );
    }
}
