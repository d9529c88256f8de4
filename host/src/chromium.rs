//! What Chromium-based apps are started with: a browser gets a DevTools
//! pipe (scripts in its pages), an Electron app the switch that builds its pages' trees.
//!
//! Both are told from the program alone, before it runs; a user's own
//! remote debugging or accessibility switch is left as it is.

use std::path::{Path, PathBuf};

/// Program names of Chromium browsers: Debian's and upstream's, and Google's builds.
const BROWSERS: &[&str] = &[
    "chromium",
    "chromium-browser",
    "chrome",
    "google-chrome",
    "google-chrome-stable",
    "google-chrome-beta",
    "google-chrome-unstable",
];

/// The prefix of every remote debugging switch: a browser started with
/// one is its user's to debug, not Wayrig's.
const REMOTE_DEBUGGING: &str = "--remote-debugging-";

/// Chromium builds a page's accessibility tree with the page when started
/// with this; without it, only once a screen reader asks. Wayrig asks too,
/// but not before its first read: this saves that read's wait.
pub const RENDERER_ACCESSIBILITY: &str = "--force-renderer-accessibility";

/// Whether `program` with `args` is a Chromium browser the user did not ask
/// to debug themselves: Wayrig opens a DevTools pipe to it.
pub fn wants_devtools_pipe(program: &str, args: &[String]) -> bool {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    BROWSERS.contains(&name) && !args.iter().any(|a| a.starts_with(REMOTE_DEBUGGING))
}

/// Whether `program` is an Electron app that was not told how to build its
/// pages' trees: `electron` itself, or a program whose directory (or the
/// one above it, where a launcher script sits in `bin/`) holds Electron's
/// `resources/app.asar` or `resources/app/`.
pub fn wants_renderer_accessibility(program: &str, args: &[String]) -> bool {
    if args.iter().any(|a| {
        a.starts_with(RENDERER_ACCESSIBILITY) || a.starts_with("--disable-renderer-accessibility")
    }) {
        return false;
    }
    let Some(path) = resolved(program) else {
        return false;
    };
    if path.file_name().is_some_and(|n| n == "electron") {
        return true;
    }
    path.ancestors().skip(1).take(2).any(|dir| {
        let resources = dir.join("resources");
        resources.join("app.asar").is_file() || resources.join("app").is_dir()
    })
}

/// The program's file, as exec would find it, its links followed.
fn resolved(program: &str) -> Option<PathBuf> {
    let found = if program.contains('/') {
        PathBuf::from(program)
    } else {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())?
    };
    found.canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chromium_browser_gets_a_pipe_unless_it_is_debugged_already() {
        assert!(wants_devtools_pipe("/usr/bin/chromium", &[]));
        assert!(wants_devtools_pipe(
            "google-chrome",
            &["https://example.org".into()]
        ));
        assert!(!wants_devtools_pipe(
            "chromium",
            &["--remote-debugging-port=9222".into()]
        ));
        assert!(!wants_devtools_pipe("firefox-esr", &[]));
        assert!(!wants_devtools_pipe("/opt/chromium-tools/run", &[]));
    }

    /// An app laid out as Electron's packagers lay one out: the binary
    /// beside `resources/app.asar`, a launcher script in `bin/` above it.
    #[test]
    fn an_electron_app_is_told_by_its_resources() {
        let dir = std::env::temp_dir().join(format!("wayrig-electron-{}", std::process::id()));
        let bin = dir.join("bin");
        std::fs::create_dir_all(dir.join("resources")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(dir.join("resources/app.asar"), b"").unwrap();
        std::fs::write(dir.join("todo"), b"").unwrap();
        std::fs::write(bin.join("todo"), b"").unwrap();
        let app = dir.join("todo").to_string_lossy().to_string();
        let launcher = bin.join("todo").to_string_lossy().to_string();
        assert!(wants_renderer_accessibility(&app, &[]));
        assert!(wants_renderer_accessibility(&launcher, &[]));
        assert!(!wants_renderer_accessibility(
            &app,
            &["--disable-renderer-accessibility".into()]
        ));
        assert!(!wants_renderer_accessibility(
            &app,
            &[RENDERER_ACCESSIBILITY.into()]
        ));
        // Chromium itself, GTK apps and missing programs are not Electron.
        assert!(!wants_renderer_accessibility("/usr/bin/python3", &[]));
        assert!(!wants_renderer_accessibility("no-such-program-here", &[]));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
