//! MIME types of files and URLs: shared-mime-info's globs2 of every data dir,
//! matched against a file name, with the special types of directories and URLs.

use std::fs;

use crate::base_dirs::XdgDirs;
use crate::target::Target;

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
    use crate::test_tree::{path, TempTree, HOME, SYSTEM};

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
}
