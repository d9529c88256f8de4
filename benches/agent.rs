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

    let tasks = [
        calculator_sums_and_advanced_mode as fn() -> Result<Task, String>,
        calculator_about_dialog,
        factory_rows_switches_and_sliders,
        demo_spin_buttons,
        zenity_signup_form,
        kcalc_sums_and_science_mode,
    ];
    let mut rows = Vec::new();
    for task in tasks {
        match task() {
            Ok(t) => rows.push((
                t.name.to_string(),
                format!("{} chars", t.chars),
                format!(
                    "{} commands, about {} tokens{}",
                    t.commands,
                    t.chars / 4,
                    t.note.map(|n| format!("; {n}")).unwrap_or_default()
                ),
            )),
            Err(e) => rows.push((e.clone(), "-".into(), "not run".into())),
        }
    }
    println!();
    table::print_as("read by the agent", &rows);
}

/// An everyday task scripted as an agent does it, with what the agent read.
struct Task {
    name: &'static str,
    cache: std::path::PathBuf,
    chars: usize,
    commands: usize,
    /// The last `snapshot -i`, which refs are taken from.
    shown: String,
    /// What did not go as a person would expect.
    note: Option<String>,
    _wayrig: Wayrig,
}

impl Task {
    /// `wayrig run` hosting `argv`, once `title` is listed; `None` when the
    /// app is not installed here.
    fn start(name: &'static str, argv: &[&str], title: &str) -> Result<Task, String> {
        if !support::have(argv[0]) {
            return Err(format!("{name}: {} is not installed", argv[0]));
        }
        let wayrig = Wayrig::start_app(argv);
        let cache = open(&wayrig, title);
        let mut task = Task {
            name,
            cache,
            chars: 0,
            commands: 0,
            shown: String::new(),
            note: None,
            _wayrig: wayrig,
        };
        task.run(&["snapshot", "-i"]);
        Ok(task)
    }

    /// Run a command as the agent would, counting what it prints (its error
    /// too: the agent reads that as well).
    fn run(&mut self, args: &[&str]) -> String {
        self.commands += 1;
        let out = cli(&self.cache, args).unwrap_or_else(|e| {
            self.note.get_or_insert_with(|| format!("{args:?}: {e}"));
            e
        });
        self.chars += out.chars().count();
        if args.contains(&"snapshot") && args.contains(&"-i") {
            self.shown = out.clone();
        }
        out
    }

    /// The ref of the first shown line with all of `parts`.
    fn r(&mut self, parts: &[&str]) -> String {
        ref_of(&self.shown, parts).unwrap_or_else(|| {
            self.note
                .get_or_insert_with(|| format!("no line with {parts:?}"));
            "@e0".into()
        })
    }

    /// Press the control read by these parts, then read what changed.
    fn press(&mut self, parts: &[&str]) -> String {
        let r = self.r(parts);
        self.run(&["press", &r, "--settle"])
    }

    /// The id of the window `windows` lists with this title.
    fn window(&mut self, title: &str) -> String {
        let listed = self.run(&["windows"]);
        listed
            .lines()
            .find(|l| l.contains(title))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("0")
            .to_string()
    }
}

/// gnome-calculator: 12 + 7 = in Basic mode, then its Advanced mode.
fn calculator_sums_and_advanced_mode() -> Result<Task, String> {
    let mut t = Task::start(
        "calculator: a sum, Advanced mode",
        &["gnome-calculator"],
        "Calculator",
    )?;
    for key in ["\"1\"", "\"2\"", "\"+\"", "\"7\""] {
        let r = t.r(&["[button]", key]);
        t.run(&["press", &r]);
    }
    t.press(&["[button]", "\"=\""]);
    t.run(&["menu"]);
    t.run(&["menu", "Basic", "Advanced", "--settle"]);
    t.run(&["snapshot", "-i"]);
    Ok(t)
}

/// gnome-calculator: its About dialog, read and closed.
fn calculator_about_dialog() -> Result<Task, String> {
    let mut t = Task::start(
        "calculator: the About dialog",
        &["gnome-calculator"],
        "Calculator",
    )?;
    t.run(&["menu", "Primary menu", "About Calculator"]);
    let about = t.window("About");
    t.run(&["--window", &about, "snapshot", "-i"]);
    let close = t.r(&["[button]", "\"Close\""]);
    t.run(&["--window", &about, "press", &close, "--settle"]);
    Ok(t)
}

/// gtk4-widget-factory's second page: a list row's switch, a slider, a
/// spin button.
fn factory_rows_switches_and_sliders() -> Result<Task, String> {
    let mut t = Task::start(
        "widget factory: rows, a switch, a slider",
        &["gtk4-widget-factory"],
        "Widget Factory",
    )?;
    let page = t.r(&["[tab]", "\"Page 2\""]);
    t.run(&["press", &page]);
    t.run(&["snapshot", "-i"]);
    let switch = t.r(&["~\"Row 1\""]);
    t.run(&["press", &switch]);
    let slider = t.r(&["[slider]", "~\"Row 2\""]);
    t.run(&["fill", &slider, "80"]);
    let stepper = t.r(&["[stepper]", "~\"Row 4\""]);
    t.run(&["increment", &stepper]);
    t.run(&["snapshot", "-i"]);
    Ok(t)
}

/// gtk4-demo's Spin Buttons: a time and a month set by their text.
fn demo_spin_buttons() -> Result<Task, String> {
    let mut t = Task::start(
        "gtk4-demo: spin buttons by their text",
        &["gtk4-demo", "--run=spinbutton"],
        "Spin Buttons",
    )?;
    let time = t.r(&["\"Time\""]);
    t.run(&["fill", &time, "01:30", "--settle"]);
    let month = t.r(&["\"Month\""]);
    t.run(&["fill", &month, "March", "--settle"]);
    Ok(t)
}

/// zenity's form (GTK 3): Unicode text, a password, a combo's item.
fn zenity_signup_form() -> Result<Task, String> {
    let mut t = Task::start(
        "zenity: a signup form",
        &[
            "zenity",
            "--forms",
            "--title=Sign up",
            "--add-entry=Name",
            "--add-password=Password",
            "--add-combo=Plan",
            "--combo-values=Free|Pro|Team",
        ],
        "Sign up",
    )?;
    let name = t.r(&["[textField]", "~\"Name\""]);
    t.run(&["fill", &name, "Zoë Ångström 山田"]);
    let password = t.r(&["[textField]", "~\"Password\""]);
    t.run(&["fill", &password, "hunter2"]);
    t.run(&["menu"]);
    t.run(&["snapshot", "-i"]);
    Ok(t)
}

/// kcalc (Qt 5): 6 × 7 =, then its Science mode through its menu bar.
fn kcalc_sums_and_science_mode() -> Result<Task, String> {
    let mut t = Task::start("kcalc: a product, Science mode", &["kcalc"], "KCalc")?;
    for key in ["\"6\"", "\"×\"", "\"7\""] {
        let r = t.r(&["[button]", key]);
        t.run(&["press", &r]);
    }
    t.press(&["[button]", "\"=\""]);
    t.run(&["menu", "Settings", "Science Mode", "--settle"]);
    Ok(t)
}
