//! One application's desktop entry: the `[Desktop Entry]` group of a
//! `.desktop` file read into the keys a launcher needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::exec::{find_executable, ExecError};
use crate::key_file::{group, split_list, unescape_string};

/// An application's desktop entry: the `[Desktop Entry]` group of a `.desktop` file
/// of Type=Application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopEntry {
    /// The desktop id: the path under `applications/` with `/` turned into `-`.
    pub id: String,
    /// The `.desktop` file the entry was read from.
    pub file: PathBuf,
    /// Where the file was found in the data search path (0 is `$XDG_DATA_HOME`;
    /// see [`XdgDirs::data_search_path`](crate::XdgDirs::data_search_path)).
    pub data_dir_index: usize,
    /// The unlocalized `Name`.
    pub name: String,
    /// `Exec`, string escapes undone; the quoting and field codes stay for
    /// [`exec_argvs`](crate::exec_argvs).
    pub exec: Option<String>,
    /// `TryExec`: the program that must be installed for the entry to be usable.
    pub try_exec: Option<String>,
    /// `Path`: the directory the app runs in.
    pub working_dir: Option<PathBuf>,
    /// `Icon`, passed on by the `%i` field code.
    pub icon: Option<String>,
    /// `MimeType`: the MIME types the app says it opens.
    pub mime_types: Vec<String>,
    /// `NoDisplay`: the app is installed but kept out of menus.
    pub no_display: bool,
    /// `Terminal`: the app runs in a terminal, which the launcher provides.
    pub terminal: bool,
    /// `StartupWMClass`: the app id (or WM class) its windows carry.
    pub startup_wm_class: Option<String>,
}

impl DesktopEntry {
    /// The entry a `.desktop` file's text describes, or `None` when it is no
    /// application (Hidden, another Type, or no Name).
    pub fn parse(id: &str, file: &Path, text: &str) -> Option<DesktopEntry> {
        let keys = group(text, "Desktop Entry")?;
        let string = |key: &str| keys.get(key).map(|raw| unescape_string(raw));
        let boolean = |key: &str| keys.get(key).is_some_and(|raw| raw.trim() == "true");
        // Hidden=true: the id is deleted (Applications::load keeps it so in later dirs).
        if boolean("Hidden") || string("Type").as_deref() != Some("Application") {
            return None;
        }
        Some(DesktopEntry {
            id: id.to_string(),
            file: file.to_path_buf(),
            data_dir_index: 0,
            name: string("Name").filter(|n| !n.is_empty())?,
            exec: string("Exec").filter(|e| !e.trim().is_empty()),
            try_exec: string("TryExec").filter(|t| !t.is_empty()),
            working_dir: string("Path").filter(|p| !p.is_empty()).map(PathBuf::from),
            icon: string("Icon").filter(|i| !i.is_empty()),
            mime_types: keys
                .get("MimeType")
                .map(|raw| split_list(raw))
                .unwrap_or_default(),
            no_display: boolean("NoDisplay"),
            terminal: boolean("Terminal"),
            startup_wm_class: string("StartupWMClass").filter(|c| !c.is_empty()),
        })
    }

    /// Whether the entry's `TryExec` (if any) names an installed executable.
    pub fn check_try_exec(&self, path_env: Option<&OsStr>) -> Result<(), ExecError> {
        match &self.try_exec {
            Some(program) => find_executable(program, path_env).map(|_| ()),
            None => Ok(()),
        }
    }

    pub(crate) fn lists_mime(&self, mime: &str) -> bool {
        self.mime_types.iter().any(|m| m.eq_ignore_ascii_case(mime))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::strings;

    #[test]
    fn keys_are_parsed_with_string_and_list_escapes() {
        let text = "[Desktop Entry]\nType = Application\nName=Tab\\tand\\sspace\\\\\n\
                    Exec=viewer --title \"A B\" %F\nTryExec=viewer\nPath=/srv/work\nIcon=viewer\n\
                    MimeType=image/png;text/x-semi\\;colon;;\nNoDisplay=true\nTerminal=true\n\
                    StartupWMClass=Viewer\n";
        let e =
            DesktopEntry::parse("viewer.desktop", Path::new("/a/viewer.desktop"), text).unwrap();
        assert_eq!(e.name, "Tab\tand space\\");
        assert_eq!(e.exec.as_deref(), Some("viewer --title \"A B\" %F"));
        assert_eq!(e.try_exec.as_deref(), Some("viewer"));
        assert_eq!(e.working_dir, Some(PathBuf::from("/srv/work")));
        assert_eq!(e.icon.as_deref(), Some("viewer"));
        assert_eq!(e.mime_types, strings(&["image/png", "text/x-semi;colon"]));
        assert!(e.no_display && e.terminal);
        assert_eq!(e.startup_wm_class.as_deref(), Some("Viewer"));
    }
}
