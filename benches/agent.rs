//! What the agent CLI costs an agent to read: characters (and lines) each
//! command prints, on gtk4-widget-factory and on the GTK 4 fixture.
//!
//! Run with `cargo bench --bench agent` (`--profile dev` reuses a debug build).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::path::Path;
use std::process::Command;

use support::Wayrig;

/// `wayrig ARGS` with its session under `cache`: its standard output, or
/// its error when it failed.
fn cli(cache: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(support::shipped("wayrig"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("MYGO_AUTOMATION_SESSION")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Open a session on the app and wait until `title` is listed.
fn open(wayrig: &Wayrig, title: &str) -> std::path::PathBuf {
    let cache = wayrig.dir.join("cache");
    cli(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    )
    .expect("open");
    let deadline = std::time::Instant::now() + support::APP_START;
    while !cli(&cache, &["windows"]).is_ok_and(|w| w.contains(title)) {
        assert!(std::time::Instant::now() < deadline, "no window {title:?}");
        let _ = cli(&cache, &["wait", "--timeout", "100"]);
    }
    cache
}

/// The ref of the first line with all of `parts`.
fn ref_of(snapshot: &str, parts: &[&str]) -> Option<String> {
    let line = snapshot
        .lines()
        .find(|l| parts.iter().all(|p| l.contains(p)))?;
    line.split_whitespace().next().map(str::to_string)
}

/// A row for one command's output: characters, with lines and tokens noted.
fn row(name: &str, printed: Result<String, String>) -> (String, String, String) {
    match printed {
        Ok(out) => {
            let chars = out.chars().count();
            (
                name.to_string(),
                format!("{chars} chars"),
                format!("{} lines, about {} tokens", out.lines().count(), chars / 4),
            )
        }
        Err(e) => (name.to_string(), "-".to_string(), format!("failed: {e}")),
    }
}

fn main() {
    if table::listing_only() {
        return;
    }
    let mut rows = Vec::new();

    let factory = Wayrig::start_app(&["gtk4-widget-factory"]);
    let cache = open(&factory, "Widget Factory");
    let app = "gtk4-widget-factory";
    let full = cli(&cache, &["snapshot"]);
    rows.push(row(&format!("{app}: snapshot"), full));
    rows.push(row(
        &format!("{app}: snapshot --json"),
        cli(&cache, &["snapshot", "--json"]),
    ));
    let interactive = cli(&cache, &["snapshot", "-i"]);
    rows.push(row(&format!("{app}: snapshot -i"), interactive.clone()));
    let snap = interactive.unwrap_or_default();
    // It animates forever: each --settle waits its whole 5 s.
    if let Some(check) = ref_of(&snap, &["[checkBox]"]) {
        rows.push(row(
            &format!("{app}: press (a check box) --settle"),
            cli(&cache, &["press", &check, "--settle"]),
        ));
    }
    if let Some(field) = ref_of(&snap, &["[textField]"]) {
        rows.push(row(
            &format!("{app}: fill (a text field) --settle"),
            cli(&cache, &["fill", &field, "Ada Lovelace", "--settle"]),
        ));
    }
    drop(factory);

    let fixture = Wayrig::start();
    let cache = open(&fixture, "wayrig-gtk4-fixture");
    let app = "GTK 4 fixture";
    let _ = cli(&cache, &["wait"]);
    rows.push(row(&format!("{app}: snapshot"), cli(&cache, &["snapshot"])));
    let interactive = cli(&cache, &["snapshot", "-i"]);
    rows.push(row(&format!("{app}: snapshot -i"), interactive.clone()));
    let snap = interactive.unwrap_or_default();
    if let Some(press) = ref_of(&snap, &["[button]", "\"Press\""]) {
        rows.push(row(
            &format!("{app}: press \"Press\" --settle"),
            cli(&cache, &["press", &press, "--settle"]),
        ));
    }
    if let Some(second) = ref_of(&snap, &["[textField]", "\"Second\""]) {
        rows.push(row(
            &format!("{app}: fill \"Second\" --settle"),
            cli(&cache, &["fill", &second, "Ada Lovelace", "--settle"]),
        ));
    }
    table::print_as("printed", &rows);
}
