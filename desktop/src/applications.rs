//! The installed applications of a set of XDG directories, and finding one by
//! desktop id, by the name people call it, or by a window's app id.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use crate::base_dirs::XdgDirs;
use crate::entry::DesktopEntry;
use crate::mime_apps::MimeAppsList;

/// What looking up an application or a handler can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error(
        "no application has desktop id {id}; ids are the .desktop file names under \
         $XDG_DATA_HOME/applications and $XDG_DATA_DIRS/applications (subdirectories joined with -)"
    )]
    NoSuchId { id: String },
    #[error("no application is named {name:?}; give part of its name or its desktop id")]
    NoSuchName { name: String },
    #[error("{name:?} names several applications: {}; give one of these desktop ids or a more exact name", list_candidates(.candidates))]
    AmbiguousName {
        name: String,
        /// The candidates' desktop ids and names.
        candidates: Vec<(String, String)>,
    },
    #[error(
        "no application opens {mime}; install one (its desktop entry lists {mime} in MimeType), \
         set one in $XDG_CONFIG_HOME/mimeapps.list under [Default Applications], or name the app"
    )]
    NoHandler { mime: String },
}

fn list_candidates(candidates: &[(String, String)]) -> String {
    candidates
        .iter()
        .map(|(id, name)| format!("{id} ({name})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The installed applications and the MIME associations of one set of [`XdgDirs`].
#[derive(Debug, Clone, Default)]
pub struct Applications {
    /// Ordered by data dir, then id.
    pub(crate) entries: Vec<DesktopEntry>,
    by_id: HashMap<String, usize>,
    /// In lookup order: config home, config dirs, data home, data dirs.
    pub(crate) mime_apps: Vec<MimeAppsList>,
}

impl Applications {
    /// Reads every `applications/` directory of the data dirs (earlier ones
    /// winning for a desktop id) and every mimeapps.list.
    pub fn load(dirs: &XdgDirs) -> Applications {
        let mut claimed = HashSet::new();
        let mut entries = Vec::new();
        for (index, data_dir) in dirs.data_search_path().into_iter().enumerate() {
            let mut files = Vec::new();
            desktop_files(&data_dir.join("applications"), "", 0, &mut files);
            files.sort();
            let mut found = Vec::new();
            for (id, file) in files {
                // The first file of an id decides it, even when it hides it.
                if !claimed.insert(id.clone()) {
                    continue;
                }
                let Ok(text) = fs::read_to_string(&file) else {
                    continue;
                };
                if let Some(mut entry) = DesktopEntry::parse(&id, &file, &text) {
                    entry.data_dir_index = index;
                    found.push(entry);
                }
            }
            found.sort_by(|a, b| a.id.cmp(&b.id));
            entries.extend(found);
        }
        let by_id = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect();

        Applications {
            entries,
            by_id,
            mime_apps: MimeAppsList::read_all(dirs),
        }
    }

    /// Every installed application, by data dir then id.
    pub fn entries(&self) -> &[DesktopEntry] {
        &self.entries
    }

    /// Drops the entries whose `TryExec` program is not installed (the spec lets
    /// them be ignored); answers the dropped ids.
    pub fn retain_runnable(&mut self, path_env: Option<&OsStr>) -> Vec<String> {
        let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|e| e.check_try_exec(path_env).is_ok());
        self.entries = kept;
        self.by_id = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect();
        dropped.into_iter().map(|e| e.id).collect()
    }

    /// The entry of a desktop id, given with or without `.desktop`.
    pub fn by_id(&self, id: &str) -> Result<&DesktopEntry, LookupError> {
        self.get(id).ok_or_else(|| LookupError::NoSuchId {
            id: with_desktop_suffix(id),
        })
    }

    pub(crate) fn get(&self, id: &str) -> Option<&DesktopEntry> {
        self.by_id
            .get(&with_desktop_suffix(id))
            .map(|&i| &self.entries[i])
    }

    /// The entry a user means by a name: the one whose Name is `name` (ignoring
    /// case), else the one shown app whose Name contains it.
    pub fn by_name(&self, name: &str) -> Result<&DesktopEntry, LookupError> {
        let wanted = name.trim().to_lowercase();
        let no_such = || LookupError::NoSuchName {
            name: name.to_string(),
        };
        if wanted.is_empty() {
            return Err(no_such());
        }
        let ambiguous = |matches: &[&DesktopEntry]| LookupError::AmbiguousName {
            name: name.to_string(),
            candidates: matches
                .iter()
                .map(|e| (e.id.clone(), e.name.clone()))
                .collect(),
        };
        let exact: Vec<&DesktopEntry> = self
            .entries
            .iter()
            .filter(|e| e.name.to_lowercase() == wanted)
            .collect();
        match exact.as_slice() {
            [one] => return Ok(one),
            [] => {}
            several => {
                // Two entries of one name: the one shown in menus is the app.
                let shown: Vec<_> = several.iter().filter(|e| !e.no_display).collect();
                return match shown.as_slice() {
                    [one] => Ok(one),
                    _ => Err(ambiguous(several)),
                };
            }
        }
        let partial: Vec<&DesktopEntry> = self
            .entries
            .iter()
            .filter(|e| !e.no_display && e.name.to_lowercase().contains(&wanted))
            .collect();
        match partial.as_slice() {
            [one] => Ok(one),
            [] => Err(no_such()),
            several => Err(ambiguous(several)),
        }
    }

    /// The entry of a Wayland app id: the one whose desktop id is it, else the
    /// one whose StartupWMClass is it (exact case preferred, then any case).
    pub fn for_app_id(&self, app_id: &str) -> Option<&DesktopEntry> {
        let app_id = app_id.strip_suffix(".desktop").unwrap_or(app_id);
        if app_id.is_empty() {
            return None;
        }
        let stem = |e: &&DesktopEntry| -> bool {
            e.id.strip_suffix(".desktop")
                .is_some_and(|s| s.eq_ignore_ascii_case(app_id))
        };
        let class = |e: &&DesktopEntry| -> bool {
            e.startup_wm_class
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(app_id))
        };
        self.get(app_id)
            .or_else(|| self.entries.iter().find(stem))
            .or_else(|| {
                self.entries
                    .iter()
                    .find(|e| e.startup_wm_class.as_deref() == Some(app_id))
            })
            .or_else(|| self.entries.iter().find(class))
    }
}

fn with_desktop_suffix(id: &str) -> String {
    if id.ends_with(".desktop") {
        id.to_string()
    } else {
        format!("{id}.desktop")
    }
}

/// Collects `(desktop id, file)` of the `.desktop` files under `dir`, whose path
/// relative to `applications/` is `prefix` + name.
fn desktop_files(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, PathBuf)>) {
    // Symlinked directories are followed; the depth bounds a loop of them.
    const MAX_DEPTH: usize = 8;
    let Ok(read) = fs::read_dir(dir) else { return };
    for item in read.flatten() {
        let path = item.path();
        let Some(name) = item.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if depth < MAX_DEPTH {
                desktop_files(&path, &format!("{prefix}{name}-"), depth + 1, out);
            }
        } else if meta.is_file() && name.ends_with(".desktop") {
            out.push((format!("{prefix}{name}"), path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::{strings, TempTree, HOME, LOCAL, SYSTEM};

    #[test]
    fn id_of_an_entry_in_a_subdirectory_joins_the_path_with_dashes() {
        let tree = TempTree::new("subdir-id");
        tree.app(SYSTEM, "foo/bar.desktop", "Bar", "Exec=bar\n");
        tree.app(SYSTEM, "kde/apps/deep.desktop", "Deep", "Exec=deep\n");
        let apps = Applications::load(&tree.dirs());
        assert_eq!(apps.by_id("foo-bar.desktop").unwrap().name, "Bar");
        assert_eq!(apps.by_id("kde-apps-deep").unwrap().name, "Deep");
        assert!(apps.by_id("bar.desktop").is_err());
    }

    #[test]
    fn earlier_data_dir_wins_for_the_same_id() {
        let tree = TempTree::new("earlier-wins");
        tree.app(SYSTEM, "editor.desktop", "System Editor", "Exec=sys\n");
        tree.app(LOCAL, "editor.desktop", "Local Editor", "Exec=local\n");
        tree.app(HOME, "editor.desktop", "My Editor", "Exec=mine\n");
        tree.app(SYSTEM, "other.desktop", "Other", "Exec=other\n");
        let apps = Applications::load(&tree.dirs());
        let editor = apps.by_id("editor").unwrap();
        assert_eq!(editor.name, "My Editor");
        assert_eq!(editor.exec.as_deref(), Some("mine"));
        assert_eq!(editor.data_dir_index, 0);
        assert_eq!(apps.by_id("other").unwrap().data_dir_index, 2);
        assert_eq!(apps.entries().len(), 2);
    }

    #[test]
    fn hidden_entry_hides_the_id_in_later_data_dirs_too() {
        let tree = TempTree::new("hidden");
        tree.app(SYSTEM, "gone.desktop", "Gone", "Exec=gone\n");
        tree.app(HOME, "gone.desktop", "Gone", "Hidden=true\n");
        tree.app(
            SYSTEM,
            "alone.desktop",
            "Alone",
            "Exec=alone\nHidden=true\n",
        );
        let apps = Applications::load(&tree.dirs());
        assert_eq!(
            apps.by_id("gone").unwrap_err(),
            LookupError::NoSuchId {
                id: "gone.desktop".into()
            }
        );
        assert!(apps.by_id("alone").is_err());
        assert!(apps.entries().is_empty());
    }

    #[test]
    fn other_types_and_other_groups_are_ignored() {
        let tree = TempTree::new("types");
        tree.write(
            &format!("{SYSTEM}/applications/link.desktop"),
            "[Desktop Entry]\nType=Link\nName=Link\nURL=https://example.org\n",
        );
        tree.write(
            &format!("{SYSTEM}/applications/app.desktop"),
            "# comment\n[Desktop Entry]\nType=Application\nName=App\nName[de]=Anwendung\n\
             Exec=app\n[Desktop Action New]\nName=New Window\nExec=app --new\n",
        );
        tree.write(&format!("{SYSTEM}/applications/readme.txt"), "not an entry");
        let apps = Applications::load(&tree.dirs());
        assert!(apps.by_id("link").is_err());
        let app = apps.by_id("app.desktop").unwrap();
        assert_eq!(app.name, "App");
        assert_eq!(app.exec.as_deref(), Some("app"));
        assert_eq!(apps.entries().len(), 1);
    }

    #[test]
    fn by_name_prefers_exact_then_unique_substring_else_lists_candidates() {
        let tree = TempTree::new("by-name");
        tree.app(
            SYSTEM,
            "org.gtk.Demo4.desktop",
            "GTK Demo",
            "Exec=gtk4-demo\n",
        );
        tree.app(
            SYSTEM,
            "gtk3-demo.desktop",
            "GTK 3 Demo",
            "Exec=gtk3-demo\n",
        );
        tree.app(SYSTEM, "factory.desktop", "Widget Factory", "Exec=f\n");
        tree.app(
            SYSTEM,
            "helper.desktop",
            "Factory Helper",
            "Exec=h\nNoDisplay=true\n",
        );
        let apps = Applications::load(&tree.dirs());
        assert_eq!(
            apps.by_name("gtk demo").unwrap().id,
            "org.gtk.Demo4.desktop"
        );
        assert_eq!(apps.by_name("factory").unwrap().id, "factory.desktop");
        // Exact names find NoDisplay entries; substrings do not.
        assert_eq!(apps.by_name("FACTORY HELPER").unwrap().id, "helper.desktop");
        assert_eq!(
            apps.by_name("nothing").unwrap_err(),
            LookupError::NoSuchName {
                name: "nothing".into()
            }
        );
        let err = apps.by_name("demo").unwrap_err();
        assert_eq!(
            err,
            LookupError::AmbiguousName {
                name: "demo".into(),
                candidates: vec![
                    ("gtk3-demo.desktop".into(), "GTK 3 Demo".into()),
                    ("org.gtk.Demo4.desktop".into(), "GTK Demo".into()),
                ]
            }
        );
        let message = err.to_string();
        assert!(
            message.contains("gtk3-demo.desktop (GTK 3 Demo)"),
            "{message}"
        );
        assert!(
            message.contains("org.gtk.Demo4.desktop (GTK Demo)"),
            "{message}"
        );
    }

    #[test]
    fn by_id_accepts_the_id_with_or_without_desktop() {
        let tree = TempTree::new("by-id");
        tree.app(
            SYSTEM,
            "org.gtk.Demo4.desktop",
            "GTK Demo",
            "Exec=gtk4-demo\n",
        );
        let apps = Applications::load(&tree.dirs());
        assert_eq!(apps.by_id("org.gtk.Demo4").unwrap().name, "GTK Demo");
        assert_eq!(
            apps.by_id("org.gtk.Demo4.desktop").unwrap().name,
            "GTK Demo"
        );
        let message = apps.by_id("org.gtk.Nope").unwrap_err().to_string();
        assert!(message.contains("org.gtk.Nope.desktop"), "{message}");
    }

    #[test]
    fn for_app_id_matches_the_id_then_startup_wm_class() {
        let tree = TempTree::new("app-id");
        tree.app(
            SYSTEM,
            "org.gtk.Demo4.desktop",
            "GTK Demo",
            "Exec=gtk4-demo\n",
        );
        tree.app(SYSTEM, "foot.desktop", "Foot", "Exec=foot\n");
        tree.app(
            SYSTEM,
            "fm.desktop",
            "Files",
            "Exec=fm\nStartupWMClass=org.example.Files\n",
        );
        let apps = Applications::load(&tree.dirs());
        assert_eq!(apps.for_app_id("org.gtk.Demo4").unwrap().name, "GTK Demo");
        assert_eq!(apps.for_app_id("org.gtk.demo4").unwrap().name, "GTK Demo");
        assert_eq!(apps.for_app_id("Foot").unwrap().name, "Foot");
        assert_eq!(apps.for_app_id("org.example.Files").unwrap().name, "Files");
        assert_eq!(apps.for_app_id("org.example.files").unwrap().name, "Files");
        assert!(apps.for_app_id("org.example.None").is_none());
        assert!(apps.for_app_id("").is_none());
    }

    #[test]
    fn try_exec_decides_whether_an_entry_is_runnable() {
        let tree = TempTree::new("try-exec");
        tree.executable("bin/present");
        tree.app(
            SYSTEM,
            "yes.desktop",
            "Yes",
            "Exec=present\nTryExec=present\n",
        );
        tree.app(SYSTEM, "no.desktop", "No", "Exec=absent\nTryExec=absent\n");
        tree.app(SYSTEM, "plain.desktop", "Plain", "Exec=plain\n");
        let mut apps = Applications::load(&tree.dirs());
        let path_env = tree.root.join("bin").into_os_string();
        assert_eq!(
            apps.retain_runnable(Some(&path_env)),
            strings(&["no.desktop"])
        );
        assert!(apps.by_id("yes").is_ok() && apps.by_id("plain").is_ok());
        assert!(apps.by_id("no").is_err());
    }
}
