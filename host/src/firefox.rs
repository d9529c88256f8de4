//! What Firefox is started with: its debugger server on a Unix socket in
//! the session's private directory, so that scripts run in its pages.
//!
//! Firefox opens that server only where its profile allows it, so Wayrig
//! sets the three preferences it needs in the profile the user names.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Program names of Firefox: Mozilla's, Debian's ESR, and the binary itself.
const BROWSERS: &[&str] = &["firefox", "firefox-esr", "firefox-bin"];

/// The switch that opens the debugger server: on a Unix socket when given
/// an absolute path.
pub const DEBUGGER_SWITCH: &str = "--start-debugger-server";

/// The line that marks the preferences Wayrig added to a profile.
const PREFS_MARK: &str = "// Wayrig: its MyGo eval runs scripts in pages through this debugger server, on a private socket.";

/// What the server needs: enabled (both switches, or no socket is opened)
/// and no prompt before a connection (an unseen prompt would hang it).
const PREFS: &str = "user_pref(\"devtools.debugger.remote-enabled\", true);
user_pref(\"devtools.chrome.enabled\", true);
user_pref(\"devtools.debugger.prompt-connection\", false);
";

/// The profile directory of a Firefox started with `args`, when Wayrig
/// should open its debugger server: the user named a profile (`--profile
/// DIR`, `-profile DIR`, `--profile=DIR`) and opened no server themselves.
/// Without a profile of theirs to set, Firefox's own stays untouched.
pub fn debugger_profile(program: &str, args: &[String]) -> Option<PathBuf> {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    if !BROWSERS.contains(&name)
        || args
            .iter()
            .any(|a| a.trim_start_matches('-').split('=').next() == Some(&DEBUGGER_SWITCH[2..]))
    {
        return None;
    }
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let flag = arg.trim_start_matches('-');
        if arg.starts_with('-') && flag == "profile" {
            return args.next().map(PathBuf::from);
        }
        if let Some(dir) = arg.strip_prefix("--profile=") {
            return Some(PathBuf::from(dir));
        }
    }
    None
}

/// Set the preferences the debugger server needs in `profile`'s `user.js`
/// (kept once there; the user's other preferences stay as they are).
pub fn enable_debugger(profile: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(profile)?;
    let prefs = profile.join("user.js");
    let had = std::fs::read_to_string(&prefs).unwrap_or_default();
    if had.contains(PREFS_MARK) {
        return Ok(());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&prefs)?;
    let gap = if had.is_empty() || had.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    write!(file, "{gap}{PREFS_MARK}\n{PREFS}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_firefox_given_a_profile_gets_a_server_unless_it_has_one() {
        let p = |program: &str, a: &[&str]| debugger_profile(program, &args(a));
        let dir = Some(PathBuf::from("/tmp/p"));
        assert_eq!(p("firefox-esr", &["--profile", "/tmp/p", "x.html"]), dir);
        assert_eq!(p("/usr/bin/firefox", &["-profile", "/tmp/p"]), dir);
        assert_eq!(p("firefox", &["--no-remote", "--profile=/tmp/p"]), dir);
        assert_eq!(p("firefox-esr", &["x.html"]), None, "its own profile");
        assert_eq!(
            p(
                "firefox-esr",
                &["--profile", "/tmp/p", "--start-debugger-server", "6000"]
            ),
            None
        );
        assert_eq!(p("chromium", &["--profile", "/tmp/p"]), None);
    }

    #[test]
    fn the_preferences_are_added_once_beside_the_users_own() {
        let dir = std::env::temp_dir().join(format!("wayrig-ff-prefs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let own = "user_pref(\"browser.newtab.preload\", false);";
        std::fs::write(dir.join("user.js"), own).unwrap();
        enable_debugger(&dir).unwrap();
        enable_debugger(&dir).unwrap();
        let prefs = std::fs::read_to_string(dir.join("user.js")).unwrap();
        assert!(prefs.starts_with(&format!("{own}\n")), "{prefs}");
        assert_eq!(prefs.matches(PREFS_MARK).count(), 1, "{prefs}");
        assert!(prefs.ends_with(PREFS), "{prefs}");
        // A profile that does not exist yet is made, as Firefox would.
        let fresh = dir.join("fresh");
        enable_debugger(&fresh).unwrap();
        assert!(std::fs::read_to_string(fresh.join("user.js"))
            .unwrap()
            .contains("prompt-connection\", false"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
