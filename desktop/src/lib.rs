//! Launching apps and opening files the way a Linux desktop does: desktop entries
//! found by id or name, their Exec turned into an argv, and xdg-open's default handlers.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt;
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

/// An application's desktop entry: the `[Desktop Entry]` group of a `.desktop` file
/// of Type=Application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopEntry {
    /// The desktop id: the path under `applications/` with `/` turned into `-`.
    pub id: String,
    /// The `.desktop` file the entry was read from.
    pub file: PathBuf,
    /// Where the file was found in [`XdgDirs::data_search_path`] (0 is `$XDG_DATA_HOME`).
    pub data_dir_index: usize,
    /// The unlocalized `Name`.
    pub name: String,
    /// `Exec`, string escapes undone; the quoting and field codes stay for [`exec_argvs`].
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

    fn lists_mime(&self, mime: &str) -> bool {
        self.mime_types.iter().any(|m| m.eq_ignore_ascii_case(mime))
    }
}

/// The raw values of the unlocalized keys of the first group named `name` in a
/// key file (desktop entries and mimeapps.list share the format); the first of
/// duplicated keys counts.
fn group(text: &str, name: &str) -> Option<HashMap<String, String>> {
    let mut keys = None::<HashMap<String, String>>;
    for line in text.lines() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            if keys.is_some() {
                break;
            }
            if header.trim_end().strip_suffix(']') == Some(name) {
                keys = Some(HashMap::new());
            }
            continue;
        }
        let Some(keys) = keys.as_mut() else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim_end();
        // Localized keys (Name[de]) are not read: the unlocalized value is wanted.
        if key.contains('[') {
            continue;
        }
        keys.entry(key.to_string())
            .or_insert_with(|| value.trim_start_matches([' ', '\t']).to_string());
    }
    keys
}

/// Undoes a string value's escapes: `\s \n \t \r \\`; any other backslash stays.
fn unescape_string(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits a `;`-list value, with `\;` a `;` inside an element and the string
/// escapes undone; empty elements (the trailing `;`) are dropped.
fn split_list(raw: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            ';' => items.push(std::mem::take(&mut current)),
            '\\' => match chars.next() {
                Some(';') => current.push(';'),
                Some(other) => current.push_str(&unescape_string(&format!("\\{other}"))),
                None => current.push('\\'),
            },
            c => current.push(c),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

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

/// One mimeapps.list file's groups, keyed by lowercased MIME type.
#[derive(Debug, Clone, Default)]
struct MimeAppsList {
    /// Its additions and removals reach entries from this data dir index on
    /// (0 for the config dirs and `$XDG_DATA_HOME`).
    first_data_dir: usize,
    defaults: HashMap<String, Vec<String>>,
    added: HashMap<String, Vec<String>>,
    removed: HashMap<String, Vec<String>>,
}

impl MimeAppsList {
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

/// The installed applications and the MIME associations of one set of [`XdgDirs`].
#[derive(Debug, Clone, Default)]
pub struct Applications {
    /// Ordered by data dir, then id.
    entries: Vec<DesktopEntry>,
    by_id: HashMap<String, usize>,
    /// In lookup order: config home, config dirs, data home, data dirs.
    mime_apps: Vec<MimeAppsList>,
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

        let mut mime_apps = Vec::new();
        let config = std::iter::once(&dirs.config_home).chain(&dirs.config_dirs);
        for dir in config {
            mime_apps.extend(MimeAppsList::read(&dir.join("mimeapps.list"), 0));
        }
        for (index, data_dir) in dirs.data_search_path().into_iter().enumerate() {
            let path = data_dir.join("applications/mimeapps.list");
            mime_apps.extend(MimeAppsList::read(&path, index));
        }
        Applications {
            entries,
            by_id,
            mime_apps,
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

    fn get(&self, id: &str) -> Option<&DesktopEntry> {
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

/// A file or URL to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A local file or directory.
    Path(PathBuf),
    /// A URL with a scheme (`https:`, `mailto:`, a `file:` URL of another host).
    Url(String),
}

impl Target {
    /// Reads a command-line argument as xdg-open does: `scheme:...` is a URL,
    /// a local `file:` URL is its path, anything else a path, made absolute
    /// against `cwd` so the app finds it from its own working directory.
    pub fn from_arg(arg: &str, cwd: &Path) -> Target {
        match url_scheme(arg) {
            Some(scheme) if scheme.eq_ignore_ascii_case("file") => {
                local_path_of_file_url(arg).unwrap_or_else(|| Target::Url(arg.to_string()))
            }
            Some(_) => Target::Url(arg.to_string()),
            None => Target::Path(cwd.join(arg)),
        }
    }

    /// The URL scheme, lowercased; `None` for a path.
    pub fn scheme(&self) -> Option<String> {
        match self {
            Target::Path(_) => None,
            Target::Url(url) => url_scheme(url).map(str::to_ascii_lowercase),
        }
    }

    fn as_arg(&self) -> Result<String, ExecError> {
        match self {
            Target::Path(path) => {
                path.to_str()
                    .map(str::to_string)
                    .ok_or_else(|| ExecError::PathNotUtf8 {
                        path: path.to_path_buf(),
                    })
            }
            Target::Url(url) => Ok(url.clone()),
        }
    }
}

/// The scheme of a URL (`[A-Za-z][A-Za-z0-9+.-]*:`, at least two characters so a
/// drive letter is never one); `None` when `text` has none.
fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let starts = chars.next()?.is_ascii_alphabetic();
    let rest = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (starts && rest && scheme.len() >= 2).then_some(scheme)
}

/// The path of a `file:` URL of this host (`file:///p`, `file://localhost/p`,
/// `file:/p`), percent-decoded.
fn local_path_of_file_url(url: &str) -> Option<Target> {
    let rest = &url[url.find(':')? + 1..];
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let slash = authority_and_path.find('/')?;
            let host = &authority_and_path[..slash];
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return None;
            }
            &authority_and_path[slash..]
        }
        None if rest.starts_with('/') => rest,
        None => return None,
    };
    // A query or fragment is not part of a file's path.
    let path = path.split(['?', '#']).next().unwrap_or_default();
    Some(Target::Path(PathBuf::from(OsString::from_vec(
        percent_decode(path),
    ))))
}

fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// What turning an entry's Exec into a command can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("{id} has no Exec line, so it can't be started by command (it may be D-Bus activated only); choose another app")]
    NoExec { id: String },
    #[error("the Exec of {id} ({exec:?}) names no program; fix the entry")]
    NoProgram { id: String, exec: String },
    #[error("the Exec of {id} ({exec:?}) has an unterminated double quote; fix the entry")]
    UnterminatedQuote { id: String, exec: String },
    #[error(
        "the Exec of {id} ({exec:?}) has {character:?} outside quotes, which the Desktop Entry \
         spec reserves (it is shell syntax and no shell runs it); quote the argument in the entry"
    )]
    UnquotedReserved {
        id: String,
        exec: String,
        character: char,
    },
    #[error("the Exec of {id} ({exec:?}) has the unknown field code {code}; fix the entry (%% is a literal %)")]
    UnknownFieldCode {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) has the field code {code} inside quotes, which the spec forbids; fix the entry")]
    FieldCodeInQuotes {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) joins {code} to other text; it must be an argument of its own; fix the entry")]
    FieldCodeNotAlone {
        id: String,
        exec: String,
        code: String,
    },
    #[error("the Exec of {id} ({exec:?}) has more than one of %f %F %u %U; fix the entry")]
    SeveralFileFieldCodes { id: String, exec: String },
    #[error("{id} does not accept files (its Exec has no %f %F %u %U); start it without files, or choose an app that opens them")]
    TakesNoFiles { id: String },
    #[error("{id} opens one file per start (%f or %u) and {count} were given; start it once per file (exec_argvs)")]
    OnePerStart { id: String, count: usize },
    #[error("{id} opens local files only (%f or %F), not {url}; download it first, or choose an app that takes URLs")]
    NeedsLocalFile { id: String, url: String },
    #[error("the path {path:?} is not UTF-8 and can't be passed as an argument; rename it")]
    PathNotUtf8 { path: PathBuf },
    #[error("{name} was not found in {}; install it or fix the PATH", list_dirs(.searched))]
    ExecutableNotFound {
        name: String,
        searched: Vec<PathBuf>,
    },
    #[error("{} is not an executable file ({why}); install the program or make it executable (chmod +x)", .path.display())]
    NotExecutable { path: PathBuf, why: String },
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "an empty PATH".to_string();
    }
    let joined = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    format!("PATH {joined}")
}

/// Characters the Desktop Entry spec says must be quoted in Exec.
const RESERVED: &[char] = &[
    ' ', '\t', '\n', '"', '\'', '\\', '>', '<', '~', '|', '&', ';', '$', '*', '?', '#', '(', ')',
    '`',
];

/// One part of an Exec argument.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// A field code's letter.
    Code(char),
}

#[derive(Debug, Clone, Default)]
struct ExecArg {
    pieces: Vec<Piece>,
    /// Some of it was quoted: `""` is an empty argument, not nothing.
    quoted: bool,
}

impl ExecArg {
    fn push_char(&mut self, c: char) {
        match self.pieces.last_mut() {
            Some(Piece::Text(text)) => text.push(c),
            _ => self.pieces.push(Piece::Text(c.to_string())),
        }
    }

    fn is_one_code(&self) -> bool {
        !self.quoted && self.pieces.len() == 1 && matches!(self.pieces[0], Piece::Code(_))
    }
}

/// How an Exec takes files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileCodes {
    None,
    /// `%f`, `%u`: one file per start.
    One {
        urls: bool,
    },
    /// `%F`, `%U`: all files in one start.
    All {
        urls: bool,
    },
}

/// Splits an Exec value (string escapes already undone) into arguments.
fn split_exec(id: &str, exec: &str) -> Result<Vec<ExecArg>, ExecError> {
    let id_exec = || (id.to_string(), exec.to_string());
    let mut args = Vec::new();
    let mut current: Option<ExecArg> = None;
    let mut chars = exec.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => args.extend(current.take()),
            '"' => {
                let arg = current.get_or_insert_with(ExecArg::default);
                arg.quoted = true;
                loop {
                    let (id, exec) = id_exec();
                    match chars.next() {
                        None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '`' | '$' | '\\')) => arg.push_char(e),
                            Some(other) => {
                                arg.push_char('\\');
                                arg.push_char(other);
                            }
                            None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        },
                        Some('%') => match chars.next() {
                            Some('%') => arg.push_char('%'),
                            Some(code) => {
                                let code = format!("%{code}");
                                return Err(ExecError::FieldCodeInQuotes { id, exec, code });
                            }
                            None => return Err(ExecError::UnterminatedQuote { id, exec }),
                        },
                        Some(other) => arg.push_char(other),
                    }
                }
            }
            '%' => {
                let arg = current.get_or_insert_with(ExecArg::default);
                match chars.next() {
                    Some('%') => arg.push_char('%'),
                    Some(code @ ('f' | 'F' | 'u' | 'U' | 'i' | 'c' | 'k')) => {
                        arg.pieces.push(Piece::Code(code))
                    }
                    // Deprecated: expand to nothing.
                    Some(code @ ('d' | 'D' | 'n' | 'N' | 'v' | 'm')) => {
                        arg.pieces.push(Piece::Code(code))
                    }
                    other => {
                        let (id, exec) = id_exec();
                        let code = other.map_or("%".to_string(), |c| format!("%{c}"));
                        return Err(ExecError::UnknownFieldCode { id, exec, code });
                    }
                }
            }
            c if RESERVED.contains(&c) => {
                let (id, exec) = id_exec();
                return Err(ExecError::UnquotedReserved {
                    id,
                    exec,
                    character: c,
                });
            }
            c => current.get_or_insert_with(ExecArg::default).push_char(c),
        }
    }
    args.extend(current);
    Ok(args)
}

/// Checks the field codes' placement and answers how the Exec takes files.
fn file_codes(id: &str, exec: &str, args: &[ExecArg]) -> Result<FileCodes, ExecError> {
    let mut found = FileCodes::None;
    for arg in args {
        for piece in &arg.pieces {
            let Piece::Code(code) = *piece else { continue };
            if matches!(code, 'F' | 'U' | 'i') && !arg.is_one_code() {
                return Err(ExecError::FieldCodeNotAlone {
                    id: id.to_string(),
                    exec: exec.to_string(),
                    code: format!("%{code}"),
                });
            }
            let this = match code {
                'f' => FileCodes::One { urls: false },
                'u' => FileCodes::One { urls: true },
                'F' => FileCodes::All { urls: false },
                'U' => FileCodes::All { urls: true },
                _ => continue,
            };
            if found != FileCodes::None {
                return Err(ExecError::SeveralFileFieldCodes {
                    id: id.to_string(),
                    exec: exec.to_string(),
                });
            }
            found = this;
        }
    }
    Ok(found)
}

/// The argv of one start of `entry` with `files` (all of them for `%F`/`%U`, at
/// most one for `%f`/`%u`).
fn expand(
    entry: &DesktopEntry,
    args: &[ExecArg],
    files: &[Target],
) -> Result<Vec<String>, ExecError> {
    let mut argv = Vec::new();
    for arg in args {
        if arg.is_one_code() {
            match arg.pieces[0] {
                Piece::Code('F' | 'U') => {
                    for file in files {
                        argv.push(file.as_arg()?);
                    }
                    continue;
                }
                Piece::Code('i') => {
                    if let Some(icon) = &entry.icon {
                        argv.push("--icon".to_string());
                        argv.push(icon.clone());
                    }
                    continue;
                }
                _ => {}
            }
        }
        let mut text = String::new();
        for piece in &arg.pieces {
            match piece {
                Piece::Text(t) => text.push_str(t),
                Piece::Code('f' | 'u') => {
                    if let Some(file) = files.first() {
                        text.push_str(&file.as_arg()?);
                    }
                }
                Piece::Code('c') => text.push_str(&entry.name),
                Piece::Code('k') => text.push_str(&entry.file.to_string_lossy()),
                Piece::Code(_) => {}
            }
        }
        // An argument of field codes only that expanded to nothing is no argument.
        let codes_only = !arg.quoted && arg.pieces.iter().all(|p| matches!(p, Piece::Code(_)));
        if !(codes_only && text.is_empty()) {
            argv.push(text);
        }
    }
    if argv.first().is_none_or(|program| program.is_empty()) {
        return Err(ExecError::NoProgram {
            id: entry.id.clone(),
            exec: entry.exec.clone().unwrap_or_default(),
        });
    }
    Ok(argv)
}

/// The commands that start `entry` on `targets`, no shell involved: one argv,
/// or one per target when its Exec takes a single file (`%f`, `%u`). Paths go
/// to every file code; URLs only to `%u`/`%U`. Run them in `entry.working_dir`
/// when set, and in a terminal when `entry.terminal`.
pub fn exec_argvs(entry: &DesktopEntry, targets: &[Target]) -> Result<Vec<Vec<String>>, ExecError> {
    let exec = entry.exec.as_deref().ok_or_else(|| ExecError::NoExec {
        id: entry.id.clone(),
    })?;
    let args = split_exec(&entry.id, exec)?;
    let codes = file_codes(&entry.id, exec, &args)?;
    if let FileCodes::One { urls: false } | FileCodes::All { urls: false } = codes {
        if let Some(Target::Url(url)) = targets.iter().find(|t| matches!(t, Target::Url(_))) {
            return Err(ExecError::NeedsLocalFile {
                id: entry.id.clone(),
                url: url.clone(),
            });
        }
    }
    match codes {
        FileCodes::None if !targets.is_empty() => Err(ExecError::TakesNoFiles {
            id: entry.id.clone(),
        }),
        FileCodes::One { .. } if targets.len() > 1 => targets
            .iter()
            .map(|target| expand(entry, &args, std::slice::from_ref(target)))
            .collect(),
        _ => Ok(vec![expand(entry, &args, targets)?]),
    }
}

/// The one command that starts `entry` on `targets`; an entry that opens one
/// file per start given several is an error (see [`exec_argvs`]).
pub fn exec_argv(entry: &DesktopEntry, targets: &[Target]) -> Result<Vec<String>, ExecError> {
    let mut argvs = exec_argvs(entry, targets)?;
    if argvs.len() > 1 {
        return Err(ExecError::OnePerStart {
            id: entry.id.clone(),
            count: targets.len(),
        });
    }
    Ok(argvs.remove(0))
}

/// The path of a program: `name` itself when it has a `/`, else the first
/// match in `path_env` (`$PATH`; unset means `/usr/local/bin:/usr/bin:/bin`),
/// which must be a regular file with an execute bit.
pub fn find_executable(name: &str, path_env: Option<&OsStr>) -> Result<PathBuf, ExecError> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return match executable_problem(&path) {
            None => Ok(path),
            Some(why) => Err(ExecError::NotExecutable { path, why }),
        };
    }
    let path_env = path_env.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    // Empty PATH entries (the current directory, historically) are not searched.
    let searched: Vec<PathBuf> = std::env::split_paths(path_env)
        .filter(|dir| !dir.as_os_str().is_empty())
        .collect();
    if !name.is_empty() {
        for dir in &searched {
            let candidate = dir.join(name);
            if executable_problem(&candidate).is_none() {
                return Ok(candidate);
            }
        }
    }
    Err(ExecError::ExecutableNotFound {
        name: name.to_string(),
        searched,
    })
}

/// Why `path` is not a runnable program, or `None` when it is.
fn executable_problem(path: &Path) -> Option<String> {
    match fs::metadata(path) {
        Err(e) => Some(e.to_string()),
        Ok(meta) if !meta.is_file() => Some("not a regular file".to_string()),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => {
            Some("no execute permission".to_string())
        }
        Ok(_) => None,
    }
}

/// One line of shared-mime-info's globs2.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Glob {
    weight: u32,
    mime: String,
    /// Lowercased unless `case_sensitive`.
    pattern: Vec<char>,
    case_sensitive: bool,
}

/// MIME types by file name, from shared-mime-info's `mime/globs2` files.
#[derive(Debug, Clone, Default)]
pub struct MimeDatabase {
    globs: Vec<Glob>,
}

/// The types by extension used when no data dir has a `mime/globs2`.
const BUILT_IN_GLOBS: &[(&str, &str)] = &[
    ("*.txt", "text/plain"),
    ("*.md", "text/markdown"),
    ("*.html", "text/html"),
    ("*.htm", "text/html"),
    ("*.css", "text/css"),
    ("*.csv", "text/csv"),
    ("*.xml", "application/xml"),
    ("*.json", "application/json"),
    ("*.pdf", "application/pdf"),
    ("*.zip", "application/zip"),
    ("*.png", "image/png"),
    ("*.jpg", "image/jpeg"),
    ("*.jpeg", "image/jpeg"),
    ("*.gif", "image/gif"),
    ("*.svg", "image/svg+xml"),
    ("*.webp", "image/webp"),
    ("*.mp3", "audio/mpeg"),
    ("*.ogg", "audio/ogg"),
    ("*.mp4", "video/mp4"),
    ("*.webm", "video/webm"),
    ("*.desktop", "application/x-desktop"),
    ("*.sh", "application/x-shellscript"),
];

impl MimeDatabase {
    /// Reads `mime/globs2` of every data dir (`__NOGLOBS__` in an earlier dir
    /// drops a type's globs of later ones); a small built-in table when none exists.
    pub fn load(dirs: &XdgDirs) -> MimeDatabase {
        let mut globs: Vec<Glob> = Vec::new();
        let mut any = false;
        // From the least important dir, so a more important one can drop globs.
        for data_dir in dirs.data_search_path().into_iter().rev() {
            let Ok(text) = fs::read_to_string(data_dir.join("mime/globs2")) else {
                continue;
            };
            any = true;
            let mut these = Vec::new();
            for line in text.lines() {
                if line.starts_with('#') {
                    continue;
                }
                let mut fields = line.splitn(4, ':');
                let (Some(weight), Some(mime), Some(pattern)) =
                    (fields.next(), fields.next(), fields.next())
                else {
                    continue;
                };
                let Ok(weight) = weight.trim().parse() else {
                    continue;
                };
                if pattern == "__NOGLOBS__" {
                    globs.retain(|g| g.mime != mime);
                    continue;
                }
                let case_sensitive = fields
                    .next()
                    .is_some_and(|flags| flags.split(',').any(|flag| flag.trim() == "cs"));
                these.push(Glob::new(weight, mime, pattern, case_sensitive));
            }
            // This dir's globs go first: on a full tie the more important dir wins.
            these.append(&mut globs);
            globs = these;
        }
        if !any {
            globs = BUILT_IN_GLOBS
                .iter()
                .map(|(pattern, mime)| Glob::new(50, mime, pattern, false))
                .collect();
        }
        MimeDatabase { globs }
    }

    /// The MIME type xdg-open would give a target: `x-scheme-handler/<scheme>`
    /// for a URL, `inode/directory` for a directory, else by file name, else
    /// `application/octet-stream`.
    pub fn mime_type_of(&self, target: &Target) -> String {
        let path = match target {
            Target::Url(url) => {
                let scheme = target.scheme().unwrap_or_default();
                if scheme != "file" {
                    return format!("x-scheme-handler/{scheme}");
                }
                // A file: URL of another host: by the name at its end.
                let name = url.rsplit('/').next().unwrap_or_default();
                return self
                    .mime_type_of_name(name)
                    .unwrap_or(OCTET_STREAM)
                    .to_string();
            }
            Target::Path(path) => path,
        };
        if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return "inode/directory".to_string();
        }
        path.file_name()
            .and_then(|name| self.mime_type_of_name(&name.to_string_lossy()))
            .unwrap_or(OCTET_STREAM)
            .to_string()
    }

    /// The type a file name's globs give: the highest weight, then the longest
    /// pattern, then a case-sensitive pattern; `None` when no glob matches.
    pub fn mime_type_of_name(&self, file_name: &str) -> Option<&str> {
        let exact: Vec<char> = file_name.chars().collect();
        let lower: Vec<char> = file_name.to_lowercase().chars().collect();
        self.globs
            .iter()
            .filter(|g| {
                let name = if g.case_sensitive { &exact } else { &lower };
                glob_matches(&g.pattern, name)
            })
            // max_by_key keeps the last of equals; rev keeps the first listed.
            .rev()
            .max_by_key(|g| (g.weight, g.pattern.len(), g.case_sensitive))
            .map(|g| g.mime.as_str())
    }
}

const OCTET_STREAM: &str = "application/octet-stream";

impl Glob {
    fn new(weight: u32, mime: &str, pattern: &str, case_sensitive: bool) -> Glob {
        let pattern = if case_sensitive {
            pattern.to_string()
        } else {
            pattern.to_lowercase()
        };
        Glob {
            weight,
            mime: mime.to_string(),
            pattern: pattern.chars().collect(),
            case_sensitive,
        }
    }
}

/// fnmatch for file names: `*`, `?`, `[abc]`, `[a-z]`, `[!a]`; other characters
/// match themselves.
fn glob_matches(pattern: &[char], name: &[char]) -> bool {
    match pattern.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|skip| glob_matches(&pattern[1..], &name[skip..])),
        Some('?') => !name.is_empty() && glob_matches(&pattern[1..], &name[1..]),
        Some('[') => match (bracket(&pattern[1..]), name.first()) {
            (Some((set, used)), Some(&c)) => {
                set.matches(c) && glob_matches(&pattern[1 + used..], &name[1..])
            }
            (Some(_), None) => false,
            // No closing bracket: a literal `[`.
            (None, first) => first == Some(&'[') && glob_matches(&pattern[1..], &name[1..]),
        },
        Some(&literal) => name.first() == Some(&literal) && glob_matches(&pattern[1..], &name[1..]),
    }
}

struct CharSet {
    negated: bool,
    ranges: Vec<(char, char)>,
}

impl CharSet {
    fn matches(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

/// Reads a bracket expression after its `[`; answers the set and how many
/// pattern characters it used, including the `]`.
fn bracket(pattern: &[char]) -> Option<(CharSet, usize)> {
    let mut i = 0;
    let negated = matches!(pattern.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while i < pattern.len() {
        let c = pattern[i];
        if c == ']' && !first {
            return Some((CharSet { negated, ranges }, i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|&e| e != ']') {
            ranges.push((c, pattern[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A directory tree under the system temp dir, removed when dropped.
    struct TempTree {
        root: PathBuf,
    }

    impl TempTree {
        fn new(test: &str) -> TempTree {
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

        fn write(&self, relative: &str, text: &str) -> PathBuf {
            let path = self.root.join(relative);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }

        fn executable(&self, relative: &str) -> PathBuf {
            let path = self.write(relative, "#!/bin/sh\n");
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            path
        }

        /// data home, two data dirs, config home and one config dir, all inside.
        fn dirs(&self) -> XdgDirs {
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

        fn app(&self, data_dir: &str, relative: &str, name: &str, extra: &str) -> PathBuf {
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

    const HOME: &str = "home/.local/share";
    const LOCAL: &str = "usr/local/share";
    const SYSTEM: &str = "usr/share";

    /// An entry with an Exec, as if read from /apps/<id>.
    fn entry(exec: &str) -> DesktopEntry {
        DesktopEntry {
            id: "org.example.App.desktop".to_string(),
            file: PathBuf::from("/apps/org.example.App.desktop"),
            data_dir_index: 0,
            name: "Example App".to_string(),
            exec: Some(exec.to_string()),
            try_exec: None,
            working_dir: None,
            icon: Some("org.example.App".to_string()),
            mime_types: Vec::new(),
            no_display: false,
            terminal: false,
            startup_wm_class: None,
        }
    }

    fn path(p: &str) -> Target {
        Target::Path(PathBuf::from(p))
    }

    fn url(u: &str) -> Target {
        Target::Url(u.to_string())
    }

    fn argv(exec: &str, targets: &[Target]) -> Result<Vec<String>, ExecError> {
        exec_argv(&entry(exec), targets)
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

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
        assert_eq!(unescape_string("a\\nb\\rc\\qd"), "a\nb\rc\\qd");
    }

    #[test]
    fn exec_splits_on_spaces_and_undoes_quoting() {
        assert_eq!(
            argv("app  -x   y", &[]).unwrap(),
            strings(&["app", "-x", "y"])
        );
        assert_eq!(
            argv(r#"app "two words" "" --t="A B""#, &[]).unwrap(),
            strings(&["app", "two words", "", "--t=A B"])
        );
        assert_eq!(
            argv(r#"sh -c "echo \"hi\" \$HOME \`x\` a\\b""#, &[]).unwrap(),
            strings(&["sh", "-c", r#"echo "hi" $HOME `x` a\b"#])
        );
        // Reserved characters are fine inside quotes.
        assert_eq!(
            argv(r#"sh -c "ls ~ | wc; echo *?#()<>&'""#, &[]).unwrap(),
            strings(&["sh", "-c", "ls ~ | wc; echo *?#()<>&'"])
        );
    }

    #[test]
    fn exec_string_escapes_apply_before_quoting() {
        // In the file a literal backslash inside quotes takes four, a $ two; \s
        // is a plain space, so it separates arguments.
        let text = r#"[Desktop Entry]
Type=Application
Name=Q
Exec=q "a\\\\b" "\\$x" arg\sspace
"#;
        let e = DesktopEntry::parse("q.desktop", Path::new("/q.desktop"), text).unwrap();
        assert_eq!(e.exec.as_deref(), Some(r#"q "a\\b" "\$x" arg space"#));
        assert_eq!(
            exec_argv(&e, &[]).unwrap(),
            strings(&["q", r"a\b", "$x", "arg", "space"])
        );
    }

    #[test]
    fn exec_errors_on_unquoted_reserved_characters_and_open_quotes() {
        for (exec, character) in [
            ("a > log", '>'),
            ("a|b", '|'),
            ("a $HOME", '$'),
            ("a 'x y'", '\''),
            ("a\\ b", '\\'),
            ("a ~/f", '~'),
            ("a\tb", '\t'),
        ] {
            match argv(exec, &[]) {
                Err(ExecError::UnquotedReserved { character: c, .. }) => {
                    assert_eq!(c, character, "{exec}")
                }
                other => panic!("{exec}: {other:?}"),
            }
        }
        assert!(matches!(
            argv(r#"a "open"#, &[]),
            Err(ExecError::UnterminatedQuote { .. })
        ));
        let message = argv("a > log", &[]).unwrap_err().to_string();
        assert!(message.contains("quote the argument"), "{message}");
    }

    #[test]
    fn field_code_inside_quotes_is_an_error_but_percent_percent_is_a_percent() {
        assert_eq!(
            argv(r#"app "%f""#, &[]).unwrap_err(),
            ExecError::FieldCodeInQuotes {
                id: "org.example.App.desktop".into(),
                exec: r#"app "%f""#.into(),
                code: "%f".into()
            }
        );
        assert!(matches!(
            argv(r#"app "--name=%c""#, &[]),
            Err(ExecError::FieldCodeInQuotes { .. })
        ));
        assert_eq!(
            argv(r#"date "+%%s" 100%%"#, &[]).unwrap(),
            strings(&["date", "+%s", "100%"])
        );
    }

    #[test]
    fn every_field_code_expands() {
        let file = [path("/tmp/a b.txt")];
        assert_eq!(
            argv("app %f", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %F", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %u", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %U", &file).unwrap(),
            strings(&["app", "/tmp/a b.txt"])
        );
        assert_eq!(
            argv("app %i", &[]).unwrap(),
            strings(&["app", "--icon", "org.example.App"])
        );
        let mut no_icon = entry("app %i");
        no_icon.icon = None;
        assert_eq!(exec_argv(&no_icon, &[]).unwrap(), strings(&["app"]));
        assert_eq!(
            argv("app %c", &[]).unwrap(),
            strings(&["app", "Example App"])
        );
        assert_eq!(
            argv("app --name=%c", &[]).unwrap(),
            strings(&["app", "--name=Example App"])
        );
        assert_eq!(
            argv("app %k", &[]).unwrap(),
            strings(&["app", "/apps/org.example.App.desktop"])
        );
        assert_eq!(argv("app 50%%", &[]).unwrap(), strings(&["app", "50%"]));
        assert_eq!(
            argv("app %d %D %n %N %v %m -x", &[]).unwrap(),
            strings(&["app", "-x"])
        );
        assert_eq!(
            argv("app --file=%f", &file).unwrap(),
            strings(&["app", "--file=/tmp/a b.txt"])
        );
        // No targets: the file codes expand to nothing.
        assert_eq!(argv("app %U -x", &[]).unwrap(), strings(&["app", "-x"]));
        assert_eq!(
            argv("app --file=%f", &[]).unwrap(),
            strings(&["app", "--file="])
        );
    }

    #[test]
    fn unknown_or_misplaced_field_codes_are_errors() {
        assert!(matches!(
            argv("app %x", &[]),
            Err(ExecError::UnknownFieldCode { code, .. }) if code == "%x"
        ));
        assert!(matches!(
            argv("app %", &[]),
            Err(ExecError::UnknownFieldCode { code, .. }) if code == "%"
        ));
        assert!(matches!(
            argv("app --files=%F", &[]),
            Err(ExecError::FieldCodeNotAlone { code, .. }) if code == "%F"
        ));
        assert!(matches!(
            argv("app -x%i", &[]),
            Err(ExecError::FieldCodeNotAlone { code, .. }) if code == "%i"
        ));
        assert!(matches!(
            argv("app %f %u", &[]),
            Err(ExecError::SeveralFileFieldCodes { .. })
        ));
    }

    #[test]
    fn several_files_start_once_per_file_with_f_and_once_with_all_for_big_f() {
        let files = [path("/a.txt"), path("/b.txt")];
        assert_eq!(
            exec_argvs(&entry("app -o %f"), &files).unwrap(),
            vec![
                strings(&["app", "-o", "/a.txt"]),
                strings(&["app", "-o", "/b.txt"])
            ]
        );
        assert_eq!(
            exec_argvs(&entry("app %F -o"), &files).unwrap(),
            vec![strings(&["app", "/a.txt", "/b.txt", "-o"])]
        );
        assert_eq!(
            exec_argvs(&entry("app %u"), &[url("https://a"), path("/b")]).unwrap(),
            vec![strings(&["app", "https://a"]), strings(&["app", "/b"])]
        );
        assert_eq!(
            exec_argv(&entry("app %f"), &files).unwrap_err(),
            ExecError::OnePerStart {
                id: "org.example.App.desktop".into(),
                count: 2
            }
        );
    }

    #[test]
    fn urls_go_to_u_codes_only() {
        assert_eq!(
            argv(
                "browser %U",
                &[url("https://example.org/?q=a b"), path("/x.html")]
            )
            .unwrap(),
            strings(&["browser", "https://example.org/?q=a b", "/x.html"])
        );
        assert!(matches!(
            argv("viewer %F", &[url("https://example.org/a.png")]),
            Err(ExecError::NeedsLocalFile { url, .. }) if url == "https://example.org/a.png"
        ));
        assert!(matches!(
            argv("viewer %f", &[url("https://example.org/a.png")]),
            Err(ExecError::NeedsLocalFile { .. })
        ));
    }

    #[test]
    fn targets_without_a_file_code_are_an_error() {
        let err = argv("gtk4-demo", &[path("/a.txt")]).unwrap_err();
        assert_eq!(
            err,
            ExecError::TakesNoFiles {
                id: "org.example.App.desktop".into()
            }
        );
        assert!(err.to_string().contains("does not accept files"));
        assert_eq!(argv("gtk4-demo", &[]).unwrap(), strings(&["gtk4-demo"]));
    }

    #[test]
    fn missing_or_empty_exec_is_an_error() {
        let mut e = entry("x");
        e.exec = None;
        assert!(matches!(exec_argv(&e, &[]), Err(ExecError::NoExec { .. })));
        assert!(matches!(argv("%f", &[]), Err(ExecError::NoProgram { .. })));
        assert!(matches!(
            argv(r#""""#, &[]),
            Err(ExecError::NoProgram { .. })
        ));
    }

    #[test]
    fn target_from_arg_tells_urls_from_paths() {
        let cwd = Path::new("/work");
        assert_eq!(Target::from_arg("notes.txt", cwd), path("/work/notes.txt"));
        assert_eq!(Target::from_arg("/etc/hosts", cwd), path("/etc/hosts"));
        assert_eq!(
            Target::from_arg("file:///tmp/a%20b.txt", cwd),
            path("/tmp/a b.txt")
        );
        assert_eq!(
            Target::from_arg("file://localhost/tmp/x", cwd),
            path("/tmp/x")
        );
        assert_eq!(
            Target::from_arg("file://server/share/x", cwd),
            url("file://server/share/x")
        );
        assert_eq!(Target::from_arg("https://a.org", cwd), url("https://a.org"));
        assert_eq!(
            Target::from_arg("mailto:me@a.org", cwd).scheme().as_deref(),
            Some("mailto")
        );
        assert_eq!(Target::from_arg("./a:b", cwd), path("/work/./a:b"));
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
    fn find_executable_searches_path_and_checks_the_file() {
        let tree = TempTree::new("exe");
        let bin1 = tree.root.join("bin1");
        let bin2 = tree.root.join("bin2");
        tree.write("bin1/tool", "not executable");
        let tool = tree.executable("bin2/tool");
        fs::create_dir_all(bin1.join("dir-not-file")).unwrap();
        let path_env = std::env::join_paths([&bin1, &bin2]).unwrap();
        assert_eq!(find_executable("tool", Some(&path_env)).unwrap(), tool);
        assert_eq!(find_executable(tool.to_str().unwrap(), None).unwrap(), tool);
        match find_executable("missing-tool", Some(&path_env)) {
            Err(e @ ExecError::ExecutableNotFound { .. }) => {
                let message = e.to_string();
                assert!(message.contains("missing-tool"), "{message}");
                assert!(message.contains(bin1.to_str().unwrap()), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            find_executable("dir-not-file", Some(&path_env)),
            Err(ExecError::ExecutableNotFound { .. })
        ));
        let plain = tree.root.join("bin1/tool");
        assert!(matches!(
            find_executable(plain.to_str().unwrap(), Some(&path_env)),
            Err(ExecError::NotExecutable { why, .. }) if why.contains("execute")
        ));
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

    #[test]
    fn globs2_highest_weight_then_longest_pattern_wins() {
        let tree = TempTree::new("globs2");
        tree.write(
            &format!("{SYSTEM}/mime/globs2"),
            "# generated\n\
             50:application/gzip:*.gz\n\
             50:application/x-compressed-tar:*.tar.gz\n\
             50:text/x-csrc:*.c:cs\n\
             50:text/x-c++src:*.C:cs\n\
             10:text/x-low:*.log\n\
             60:text/x-high:*.log\n\
             50:text/x-makefile:makefile\n\
             50:application/x-troff-man:*.[1-9]\n\
             50:text/html:*.html\n",
        );
        let mimes = MimeDatabase::load(&tree.dirs());
        let of = |name: &str| mimes.mime_type_of(&path(&format!("/nonexistent/{name}")));
        assert_eq!(of("backup.tar.gz"), "application/x-compressed-tar");
        assert_eq!(of("notes.gz"), "application/gzip");
        assert_eq!(of("x.log"), "text/x-high");
        assert_eq!(of("main.c"), "text/x-csrc");
        assert_eq!(of("main.C"), "text/x-c++src");
        assert_eq!(of("Makefile"), "text/x-makefile");
        assert_eq!(of("ls.1"), "application/x-troff-man");
        assert_eq!(of("ls.x"), "application/octet-stream");
        assert_eq!(of("INDEX.HTML"), "text/html");
    }

    #[test]
    fn globs2_of_an_earlier_data_dir_can_drop_a_later_ones_globs() {
        let tree = TempTree::new("noglobs");
        tree.write(&format!("{SYSTEM}/mime/globs2"), "50:text/x-old:*.thing\n");
        tree.write(
            &format!("{HOME}/mime/globs2"),
            "0:text/x-old:__NOGLOBS__\n50:text/x-new:*.thing\n",
        );
        let mimes = MimeDatabase::load(&tree.dirs());
        assert_eq!(mimes.mime_type_of_name("a.thing"), Some("text/x-new"));
    }

    #[test]
    fn built_in_globs_only_without_any_globs2() {
        let tree = TempTree::new("builtin");
        let mimes = MimeDatabase::load(&tree.dirs());
        assert_eq!(mimes.mime_type_of_name("Photo.PNG"), Some("image/png"));
        assert_eq!(mimes.mime_type_of_name("a.pdf"), Some("application/pdf"));
        tree.write(&format!("{SYSTEM}/mime/globs2"), "50:text/x-only:*.only\n");
        let mimes = MimeDatabase::load(&tree.dirs());
        assert_eq!(mimes.mime_type_of_name("a.png"), None);
    }

    #[test]
    fn glob_matching_handles_brackets_and_stars() {
        let m = |p: &str, n: &str| {
            glob_matches(
                &p.chars().collect::<Vec<_>>(),
                &n.chars().collect::<Vec<_>>(),
            )
        };
        assert!(m("*.so.[0-9]*", "libx.so.1.2"));
        assert!(!m("*.so.[0-9]*", "libx.so.a"));
        assert!(m("*.anim[1-9j]", "a.animj"));
        assert!(m("[!a]b", "cb") && !m("[!a]b", "ab"));
        assert!(m("a?c", "abc") && !m("a?c", "ac"));
        assert!(m("*~", "file~") && m("[x", "[x"));
    }

    #[test]
    fn real_gtk_demo_entry_parses_and_its_program_is_on_path() {
        let system = XdgDirs {
            data_home: PathBuf::from("/nonexistent/wayrig-data-home"),
            data_dirs: vec![PathBuf::from("/usr/share")],
            config_home: PathBuf::from("/nonexistent/wayrig-config-home"),
            config_dirs: Vec::new(),
        };
        if !Path::new("/usr/share/applications/org.gtk.Demo4.desktop").exists() {
            println!("skipped: /usr/share/applications/org.gtk.Demo4.desktop is not installed (gtk-4-examples)");
            return;
        }
        let apps = Applications::load(&system);
        let demo = apps.by_id("org.gtk.Demo4").unwrap();
        let argv = exec_argv(demo, &[]).unwrap();
        let path_env = std::env::var_os("PATH");
        let program = find_executable(&argv[0], path_env.as_deref()).unwrap();
        assert!(program.ends_with(&argv[0]), "{program:?}");
        assert_eq!(apps.for_app_id("org.gtk.Demo4").unwrap().id, demo.id);
        if Path::new("/usr/share/mime/globs2").exists() {
            let mimes = MimeDatabase::load(&system);
            assert_eq!(mimes.mime_type_of(&path("/x/photo.png")), "image/png");
            assert_eq!(mimes.mime_type_of(&path("/x/page.html")), "text/html");
        }
    }
}
