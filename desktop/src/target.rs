//! A file or URL to open, read from an argument as xdg-open reads it: a URL
//! by its scheme, a local `file:` URL as its path, anything else a path.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::exec::ExecError;

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

    pub(crate) fn as_arg(&self) -> Result<String, ExecError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tree::{path, url};

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
}
