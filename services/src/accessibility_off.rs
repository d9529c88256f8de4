//! Why an app shows no accessibility tree, told from how it was started:
//! the switches toolkits read to turn their accessibility off.
//!
//! An empty answer is a guess a client cannot act on; this says what to change.

/// Environment settings that turn an app's accessibility off, and who reads them.
const OFF_IN_ENVIRONMENT: &[(&str, &str, &str)] = &[
    ("NO_AT_BRIDGE", "1", "GTK 3 and ATK"),
    ("QT_ACCESSIBILITY", "0", "Qt and Chromium"),
    ("GNOME_ACCESSIBILITY", "0", "Firefox and Chromium"),
    ("ACCESSIBILITY_ENABLED", "0", "Chromium and Electron"),
];

/// Command-line switches that do the same.
const OFF_ON_COMMAND_LINE: &[(&str, &str)] =
    &[("--disable-renderer-accessibility", "Chromium and Electron")];

/// What in process `pid`'s start turns its accessibility off, said as what
/// to change; or what to check when nothing visible does.
pub fn advice(pid: u32) -> String {
    let environment = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    let command_line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut found: Vec<String> = Vec::new();
    for entry in environment.split(|&b| b == 0) {
        let entry = String::from_utf8_lossy(entry);
        for (name, off, readers) in OFF_IN_ENVIRONMENT {
            if entry == format!("{name}={off}") {
                found.push(format!("{entry} (read by {readers})"));
            }
        }
    }
    for arg in command_line.split(|&b| b == 0) {
        let arg = String::from_utf8_lossy(arg);
        for (switch, readers) in OFF_ON_COMMAND_LINE {
            if arg == *switch {
                found.push(format!("{switch} (read by {readers})"));
            }
        }
    }
    if found.is_empty() {
        "is its toolkit's accessibility on? Wayrig turns it on for the GTK, Qt, \
         Chromium and Firefox apps it starts; an app that draws its own UI with no \
         accessibility support (SDL, plain OpenGL) has no tree to read"
            .to_string()
    } else {
        format!(
            "it was started with its accessibility turned off: {}; start it without that",
            found.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn an_app_started_with_accessibility_off_is_told_how() {
        // It says so once it runs with the environment it was given; it
        // execs nothing after (an exec under way reads as no environment),
        // and waits on its input until killed.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo started; read line"])
            .env("NO_AT_BRIDGE", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sh runs");
        let mut started = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut started,
        )
        .unwrap();
        let said = advice(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            said.contains("NO_AT_BRIDGE=1 (read by GTK 3 and ATK)"),
            "{said}"
        );
        assert!(said.contains("start it without that"), "{said}");
    }

    #[test]
    fn an_app_with_nothing_turned_off_is_asked_about_its_toolkit() {
        let said = advice(std::process::id());
        assert!(said.contains("toolkit's accessibility on"), "{said}");
    }
}
