//! Which application opens a MIME type: mimeapps.list's defaults, added and
//! removed associations, then the entries' own MimeType lists, as xdg-open decides.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use crate::applications::{Applications, LookupError};
use crate::base_dirs::XdgDirs;
use crate::entry::DesktopEntry;
use crate::key_file::{group, split_list};
use crate::mime_types::MimeDatabase;
use crate::target::Target;

/// One mimeapps.list file's groups, keyed by lowercased MIME type.
#[derive(Debug, Clone, Default)]
pub(crate) struct MimeAppsList {
    /// Its additions and removals reach entries from this data dir index on
    /// (0 for the config dirs and `$XDG_DATA_HOME`).
    first_data_dir: usize,
    defaults: HashMap<String, Vec<String>>,
    added: HashMap<String, Vec<String>>,
    removed: HashMap<String, Vec<String>>,
}

impl MimeAppsList {
    /// Every mimeapps.list of `dirs`, most important first: the config dirs'
    /// (home first), then each data dir's `applications/mimeapps.list`.
    pub(crate) fn read_all(dirs: &XdgDirs) -> Vec<MimeAppsList> {
        let mut lists = Vec::new();
        let config = std::iter::once(&dirs.config_home).chain(&dirs.config_dirs);
        for dir in config {
            lists.extend(MimeAppsList::read(&dir.join("mimeapps.list"), 0));
        }
        for (index, data_dir) in dirs.data_search_path().into_iter().enumerate() {
            let path = data_dir.join("applications/mimeapps.list");
            lists.extend(MimeAppsList::read(&path, index));
        }
        lists
    }

    fn read(path: &Path, first_data_dir: usize) -> Option<MimeAppsList> {
        let text = fs::read_to_string(path).ok()?;
        let lists = |name: &str| -> HashMap<String, Vec<String>> {
            group(&text, name)
                .unwrap_or_default()
                .into_iter()
                .map(|(mime, ids)| (mime.to_ascii_lowercase(), split_list(&ids)))
                .collect()
        };
        Some(MimeAppsList {
            first_data_dir,
            defaults: lists("Default Applications"),
            added: lists("Added Associations"),
            removed: lists("Removed Associations"),
        })
    }
}

impl Applications {
    /// The applications associated with a MIME type, most preferred first: the
    /// mimeapps.list files' Added Associations, then the entries listing it in
    /// MimeType (by data dir, then id), less the Removed Associations.
    pub fn associated(&self, mime: &str) -> Vec<&DesktopEntry> {
        let mime = mime.to_ascii_lowercase();
        let mut result: Vec<&DesktopEntry> = Vec::new();
        // Removals reach entries from their file's data dir on.
        let mut removed: Vec<(&str, usize)> = Vec::new();
        let is_removed = |removed: &[(&str, usize)], e: &DesktopEntry| {
            removed
                .iter()
                .any(|&(id, from)| id == e.id && e.data_dir_index >= from)
        };
        for list in &self.mime_apps {
            for id in list.added.get(&mime).into_iter().flatten() {
                let Some(entry) = self.get(id) else { continue };
                if entry.data_dir_index >= list.first_data_dir
                    && !is_removed(&removed, entry)
                    && !result.iter().any(|e| e.id == entry.id)
                {
                    result.push(entry);
                }
            }
            for id in list.removed.get(&mime).into_iter().flatten() {
                removed.push((id, list.first_data_dir));
            }
        }
        for entry in &self.entries {
            if entry.lists_mime(&mime)
                && !is_removed(&removed, entry)
                && !result.iter().any(|e| e.id == entry.id)
            {
                result.push(entry);
            }
        }
        result
    }

    /// The application xdg-open would open a MIME type with: the first installed
    /// one listed under [Default Applications] in the mimeapps.list files, else
    /// the most preferred associated one; a `text/*` type falls back to `text/plain`.
    pub fn default_handler(&self, mime: &str) -> Result<&DesktopEntry, LookupError> {
        let found = self.handler_of(mime).or_else(|| {
            let lower = mime.to_ascii_lowercase();
            (lower.starts_with("text/") && lower != "text/plain")
                .then(|| self.handler_of("text/plain"))
                .flatten()
        });
        found.ok_or_else(|| LookupError::NoHandler {
            mime: mime.to_string(),
        })
    }

    fn handler_of(&self, mime: &str) -> Option<&DesktopEntry> {
        let key = mime.to_ascii_lowercase();
        self.mime_apps
            .iter()
            .flat_map(|list| list.defaults.get(&key).into_iter().flatten())
            .find_map(|id| self.get(id))
            .or_else(|| self.associated(mime).into_iter().next())
    }

    /// The application xdg-open would open a file or URL with.
    pub fn handler_for(
        &self,
        mime_types: &MimeDatabase,
        target: &Target,
    ) -> Result<&DesktopEntry, LookupError> {
        self.default_handler(&mime_types.mime_type_of(target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::exec_argv;
    use crate::test_tree::{strings, url, TempTree, HOME, SYSTEM};
    use std::path::Path;

    /// Three editors: `a` and `b` list text/plain, `c` does not.
    fn editors(tree: &TempTree) {
        tree.app(
            SYSTEM,
            "a.desktop",
            "A",
            "Exec=a %f\nMimeType=text/plain;\n",
        );
        tree.app(
            SYSTEM,
            "b.desktop",
            "B",
            "Exec=b %f\nMimeType=text/plain;image/png;\n",
        );
        tree.app(SYSTEM, "c.desktop", "C", "Exec=c %f\n");
    }

    #[test]
    fn mime_type_lists_give_handlers_by_data_dir_then_id() {
        let tree = TempTree::new("mimetype-order");
        editors(&tree);
        tree.app(HOME, "z.desktop", "Z", "Exec=z %f\nMimeType=text/plain\n");
        let apps = Applications::load(&tree.dirs());
        let ids: Vec<_> = apps
            .associated("text/plain")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["z.desktop", "a.desktop", "b.desktop"]);
        assert_eq!(apps.default_handler("text/plain").unwrap().id, "z.desktop");
        assert_eq!(apps.default_handler("IMAGE/PNG").unwrap().id, "b.desktop");
    }

    #[test]
    fn default_from_mimeapps_list_beats_mime_type() {
        let tree = TempTree::new("mimeapps-default");
        editors(&tree);
        tree.write(
            "home/.config/mimeapps.list",
            "[Default Applications]\ntext/plain=uninstalled.desktop;c.desktop;\n",
        );
        tree.write(
            "etc/xdg/mimeapps.list",
            "[Default Applications]\ntext/plain=b.desktop\n",
        );
        let apps = Applications::load(&tree.dirs());
        // The first installed entry of the most important file, associated or not.
        assert_eq!(apps.default_handler("text/plain").unwrap().id, "c.desktop");
    }

    #[test]
    fn added_associations_come_first_and_removed_ones_drop_out() {
        let tree = TempTree::new("mimeapps-assoc");
        editors(&tree);
        tree.write(
            "home/.config/mimeapps.list",
            "[Added Associations]\ntext/plain=c.desktop;\n[Removed Associations]\ntext/plain=a.desktop;\n",
        );
        let apps = Applications::load(&tree.dirs());
        let ids: Vec<_> = apps
            .associated("text/plain")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["c.desktop", "b.desktop"]);
        assert_eq!(apps.default_handler("text/plain").unwrap().id, "c.desktop");
    }

    #[test]
    fn removed_associations_leave_no_handler_and_say_what_to_do() {
        let tree = TempTree::new("mimeapps-removed");
        editors(&tree);
        tree.write(
            "home/.config/mimeapps.list",
            "[Removed Associations]\nimage/png=b.desktop\n",
        );
        let apps = Applications::load(&tree.dirs());
        let err = apps.default_handler("image/png").unwrap_err();
        assert_eq!(
            err,
            LookupError::NoHandler {
                mime: "image/png".into()
            }
        );
        assert!(err
            .to_string()
            .starts_with("no application opens image/png; install one"));
    }

    #[test]
    fn a_data_dir_mimeapps_list_reaches_only_its_own_and_later_dirs() {
        let tree = TempTree::new("mimeapps-scope");
        editors(&tree);
        tree.app(
            HOME,
            "mine.desktop",
            "Mine",
            "Exec=mine %f\nMimeType=text/plain;\n",
        );
        tree.write(
            &format!("{SYSTEM}/applications/mimeapps.list"),
            "[Removed Associations]\ntext/plain=mine.desktop;a.desktop;\n",
        );
        let apps = Applications::load(&tree.dirs());
        let ids: Vec<_> = apps
            .associated("text/plain")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["mine.desktop", "b.desktop"]);
    }

    #[test]
    fn text_types_fall_back_to_text_plain_handlers() {
        let tree = TempTree::new("text-parent");
        editors(&tree);
        let apps = Applications::load(&tree.dirs());
        assert_eq!(apps.default_handler("text/x-rust").unwrap().id, "a.desktop");
        assert!(apps.default_handler("application/x-rust").is_err());
    }

    #[test]
    fn scheme_handler_for_urls() {
        let tree = TempTree::new("scheme");
        tree.app(
            SYSTEM,
            "browser.desktop",
            "Browser",
            "Exec=browser %u\nMimeType=x-scheme-handler/https;text/html;\n",
        );
        let apps = Applications::load(&tree.dirs());
        let mimes = MimeDatabase::load(&tree.dirs());
        let target = Target::from_arg("HTTPS://example.org/page", Path::new("/"));
        assert_eq!(mimes.mime_type_of(&target), "x-scheme-handler/https");
        let browser = apps.handler_for(&mimes, &target).unwrap();
        assert_eq!(
            exec_argv(browser, &[target]).unwrap(),
            strings(&["browser", "HTTPS://example.org/page"])
        );
        assert_eq!(
            mimes.mime_type_of(&url("mailto:me@example.org")),
            "x-scheme-handler/mailto"
        );
    }

    #[test]
    fn directory_is_inode_directory() {
        let tree = TempTree::new("directory");
        tree.app(
            SYSTEM,
            "files.desktop",
            "Files",
            "Exec=files %U\nMimeType=inode/directory;\n",
        );
        fs::create_dir_all(tree.root.join("docs.txt")).unwrap();
        let mimes = MimeDatabase::load(&tree.dirs());
        let target = Target::Path(tree.root.join("docs.txt"));
        assert_eq!(mimes.mime_type_of(&target), "inode/directory");
        let apps = Applications::load(&tree.dirs());
        assert_eq!(
            apps.handler_for(&mimes, &target).unwrap().id,
            "files.desktop"
        );
    }
}
