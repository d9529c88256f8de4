//! The agent CLI end to end against `wayrig run` hosting GTK 4 apps: open, snapshot -i
//! in reading order, --settle diffs, fill, stale refs, sessions, close, the guide.

mod support;

use std::path::Path;
use std::process::Command;

use support::{cli, cli_ok as ok, Wayrig};

fn err(cache: &Path, args: &[&str]) -> String {
    let out = cli(cache, args);
    assert!(!out.status.success(), "wayrig {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

/// Wait, through the CLI's own `wait`, until `windows` lists `title`.
fn wait_for_window(cache: &Path, title: &str) {
    let deadline = std::time::Instant::now() + support::APP_START;
    while !ok(cache, &["windows"]).contains(title) {
        assert!(std::time::Instant::now() < deadline, "no window {title:?}");
        let _ = cli(cache, &["wait", "--timeout", "100"]);
    }
}

/// The ref of the first line matching all `parts`.
fn ref_of(snapshot: &str, parts: &[&str]) -> String {
    let line = snapshot
        .lines()
        .find(|l| parts.iter().all(|p| l.contains(p)))
        .unwrap_or_else(|| panic!("no line with {parts:?} in:\n{snapshot}"));
    line.split_whitespace().next().unwrap().to_string()
}

#[test]
fn an_agent_drives_the_app_with_short_commands() {
    let wayrig = Wayrig::start();
    let cache = wayrig.dir.join("cache");
    let socket = wayrig.socket.to_str().unwrap();
    let opened = ok(&cache, &["open", "--socket", socket]);
    assert!(opened.contains("session default"), "{opened}");
    // The app may still be mapping its window: wait knows when it has settled.
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    ok(&cache, &["wait"]);

    let snap = ok(&cache, &["snapshot", "-i"]);
    let press = ref_of(&snap, &["[button]", "\"Press\""]);
    let second = ref_of(&snap, &["[textField]", "\"Second\""]);
    assert!(press.starts_with("@e") && second.starts_with("@e"));
    // Compact lines only, and one closing line counting what does not show
    // (the list's rows scrolled out of view).
    let (lines, last) = snap.trim_end().rsplit_once('\n').unwrap();
    assert!(
        lines.lines().all(|l| l.starts_with("@e")),
        "compact lines only:\n{snap}"
    );
    assert!(
        last.contains("controls that do not show left out"),
        "{last}"
    );

    // Press with --settle: the changed element as - and + lines.
    let diff = ok(&cache, &["press", &press, "--settle"]);
    assert!(
        diff.contains(&format!("- {press} [button] \"Press\"")),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("+ {press} [button] \"Press\" (focused)")),
        "{diff}"
    );

    let diff = ok(&cache, &["fill", &second, "Ada Lovelace", "--settle"]);
    assert!(
        diff.contains(&format!(
            "+ {second} [textField] \"Second\" value=\"Ada Lovelace\""
        )),
        "{diff}"
    );

    // Refs stay with their element; unknown and stale refs are refused.
    let again = ok(&cache, &["snapshot", "-i"]);
    assert_eq!(ref_of(&again, &["[button]", "\"Press\""]), press);
    assert!(err(&cache, &["press", "@e9999"]).contains("unknown ref"));
    let session_file = cache.join("wayrig/sessions/default.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&session_file).unwrap()).unwrap();
    state["refs"]["424242"] = serde_json::json!(99999);
    std::fs::write(&session_file, state.to_string()).unwrap();
    let stale = err(&cache, &["press", "@e99999"]);
    assert!(stale.contains("stale ref @e99999"), "{stale}");
    assert!(err(&cache, &["press", "key=nobody"]).contains("no_element"));

    // A second session keeps refs of its own.
    ok(&cache, &["--session", "other", "open", "--socket", socket]);
    let other = ok(&cache, &["--session", "other", "snapshot"]);
    assert!(other.lines().next().unwrap().starts_with("@e1 "), "{other}");
    assert_eq!(
        ref_of(&ok(&cache, &["snapshot", "-i"]), &["\"Press\""]),
        press
    );

    // Input, screenshot, the guide.
    ok(&cache, &["type", "!"]);
    ok(&cache, &["key", "CmdOrCtrl+A"]);
    let shot = wayrig.dir.join("shot.png");
    let said = ok(&cache, &["screenshot", shot.to_str().unwrap()]);
    assert!(said.contains("x"), "{said}");
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
    let guide = ok(&cache, &["skills"]);
    assert!(guide.contains("--settle") && guide.contains("stale") && guide.contains("@e"));
    assert!(err(&cache, &["eval", "1+1"]).contains("unsupported"));

    // The same commands answer as mygo-automation, on the same sessions.
    let same = Command::new(support::shipped("mygo-automation"))
        .args(["snapshot", "-i"])
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("MYGO_AUTOMATION_SESSION")
        .output()
        .unwrap();
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert_eq!(
        ref_of(&String::from_utf8_lossy(&same.stdout), &["\"Press\""]),
        press
    );

    // close ends the session and leaves the app running.
    ok(&cache, &["close"]);
    assert!(err(&cache, &["snapshot"]).contains("no session"));
    assert!(ok(&cache, &["--session", "other", "windows"]).contains("wayrig-gtk4-fixture"));
}

/// An app whose spinner turns forever still settles: what the spinner draws
/// is its animation, not an effect, so `wait` answers and `--settle` shows
/// the change without waiting out its limit.
#[test]
fn settle_beside_a_spinner_shows_the_change() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "Widget Factory");
    assert_eq!(ok(&cache, &["wait"]).trim(), "settled");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let check = ref_of(&snap, &["[checkBox]"]);
    let out = cli(&cache, &["press", &check, "--settle"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("did not settle"), "{stderr}");
    let changed = stdout
        .lines()
        .find(|l| l.starts_with("+ ") && l.contains(&format!("{check} ")))
        .unwrap_or_else(|| panic!("the check box changed:\n{stdout}"));
    let before = snap
        .lines()
        .find(|l| l.starts_with(&format!("{check} ")))
        .unwrap();
    // The states close the line, in parentheses: "checked" among them flipped.
    let checked = |l: &str| {
        l.rsplit_once(" (")
            .is_some_and(|(_, states)| states.split([' ', ')']).any(|s| s == "checked"))
    };
    assert_ne!(
        checked(before),
        checked(&changed[2..]),
        "{before} -> {changed}"
    );
}

#[test]
fn a_reader_that_stops_early_does_not_cost_the_session_its_refs() {
    use std::io::{BufRead, BufReader};
    let wayrig = Wayrig::start();
    let cache = wayrig.dir.join("cache");
    let socket = wayrig.socket.to_str().unwrap().to_string();
    ok(&cache, &["open", "--socket", &socket]);
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    // `wayrig snapshot -i | head -1`: the reader goes after one line.
    let mut child = Command::new(support::shipped("wayrig"))
        .args(["snapshot", "-i"])
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("MYGO_AUTOMATION_SESSION")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.wait().unwrap();
    // The ref it printed (the menu bar's first item: it reads first, though
    // GTK lists it last) is known to the next command.
    assert!(first.contains("[menuItem] \"File\""), "{first}");
    let listed = first.split_whitespace().next().unwrap();
    assert!(ok(&cache, &["wait", "--ref", listed, "--shown"]).contains("\"File\""));
}

/// A press that opens a second window leaves the session on its own window:
/// its refs still act there, until `--window` moves the session.
#[test]
fn a_session_keeps_its_window_when_a_press_opens_another() {
    let (_wayrig, cache) = fixture_session();
    let snap = ok(&cache, &["snapshot", "-i"]);
    let opener = ref_of(&snap, &["[button]", "\"Open window\""]);
    let press = ref_of(&snap, &["[button]", "\"Press\""]);
    // The window that opens is told once: by the press, when it has mapped
    // by the press's answer, else by the next command.
    let mut told = ok(&cache, &["press", &opener]);
    let deadline = std::time::Instant::now() + support::APP_START;
    while !told.contains("+ window") {
        assert!(std::time::Instant::now() < deadline, "never told: {told}");
        told += &ok(&cache, &["wait", "--timeout", "100"]);
    }
    assert!(told.contains("\"wayrig-gtk4-second\""), "{told}");
    assert!(
        !ok(&cache, &["snapshot", "-i"]).contains("+ window"),
        "told twice"
    );
    wait_for_window(&cache, "wayrig-gtk4-second");
    let windows = ok(&cache, &["windows"]);
    let second = windows
        .lines()
        .find(|l| l.contains("wayrig-gtk4-second"))
        .unwrap();
    assert!(second.contains("focused"), "{windows}");
    let first_line = windows.lines().find(|l| l.contains("fixture")).unwrap();
    assert!(first_line.contains(" session"), "{windows}");
    assert!(!second.contains(" session"), "{windows}");
    // Reading another window with --window leaves the session where it is.
    let id = second.split_whitespace().next().unwrap();
    let shot = cache.join("second.png");
    ok(
        &cache,
        &["--window", id, "screenshot", shot.to_str().unwrap()],
    );
    let other = ok(&cache, &["--window", id, "snapshot", "-i"]);
    assert!(!other.contains("\"Press\""), "{other}");
    // Still the first window: its ref acts, its snapshot is its own.
    ok(&cache, &["press", &press]);
    assert!(ok(&cache, &["snapshot"]).contains("\"Press\""));
    // --window on an action moves the session, and it stays there; its
    // first read there is a snapshot of the window, not a diff against the
    // other.
    let first = ok(&cache, &["--window", id, "key", "Escape", "--settle"]);
    assert!(first.contains("Second window label"), "{first}");
    assert!(!first.lines().any(|l| l.starts_with("+ @")), "{first}");
    assert!(ok(&cache, &["snapshot"]).contains("Second window label"));
    assert!(ok(&cache, &["snapshot"]).contains("Second window label"));
    // A ref of the first window, named with --window on the second, is
    // refused and says where it belongs.
    let elsewhere = err(&cache, &["--window", id, "press", &press]);
    let home = first_line.split_whitespace().next().unwrap();
    assert!(
        elsewhere.contains(&format!(
            "{press} is an element of window {home}, not of window {id}: leave out --window"
        )),
        "{elsewhere}"
    );
    // Without it the ref's window is where the press goes, and the session
    // with it.
    let moved = ok(&cache, &["press", &press]);
    assert!(
        moved.contains(&format!(
            "the session moves to window {home}, where {press} is"
        )),
        "{moved}"
    );
    let windows = ok(&cache, &["windows"]);
    let session_line = windows.lines().find(|l| l.contains(" session")).unwrap();
    assert!(session_line.starts_with(&format!("{home} ")), "{windows}");
}

/// `version` answers under the name the command was called by.
#[test]
fn version_names_the_command_it_was_called_as() {
    for (program, name) in [
        (support::shipped("wayrig"), "wayrig"),
        (support::shipped("mygo-automation"), "mygo-automation"),
    ] {
        let out = Command::new(program).arg("version").output().unwrap();
        let said = String::from_utf8(out.stdout).unwrap();
        assert_eq!(said, format!("{name} {}\n", env!("CARGO_PKG_VERSION")));
    }
}

/// The lines of `snapshot -i` an agent reads on gtk4-widget-factory's first
/// page: every control it shows, none of the hidden pages' or of closed
/// popovers', GTK's class names and mnemonic markers gone, long values cut.
#[test]
fn snapshot_i_lists_the_controls_that_show_and_nothing_else() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "Widget Factory");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let count = |parts: &[&str]| {
        snap.lines()
            .filter(|l| parts.iter().all(|p| l.contains(p)))
            .count()
    };
    // The first page's controls, as a person sees them there.
    assert_eq!(count(&["[checkBox] \"checkbutton\""]), 6, "{snap}");
    assert_eq!(count(&["[checkBox] \"radiobutton\""]), 6, "{snap}");
    assert_eq!(count(&["[button] \"togglebutton\""]), 4, "{snap}");
    // A toggle button that is on reads checked (GTK 4 says so by PRESSED
    // alone): the factory starts with its third and fourth on.
    assert_eq!(count(&["\"togglebutton\" (checked)"]), 1, "{snap}");
    assert_eq!(count(&["\"togglebutton\" (disabled checked)"]), 1, "{snap}");
    assert_eq!(count(&["[link] \"link button\""]), 1, "{snap}");
    assert_eq!(count(&["[textField]", "value=\"entry\""]), 2, "{snap}");
    // The page switcher's tabs read as they show, without "_".
    for page in ["Page 1", "Page 2", "Page 3"] {
        assert_eq!(count(&["[tab]", &format!("\"{page}\"")]), 1, "{snap}");
    }
    // The notebooks' tabs, each named "Tab" by GTK 4.8, read by the
    // caption they hold.
    for caption in ["Sunset", "NYC", "Beach"] {
        assert_eq!(count(&["[tab]", &format!("~\"{caption}\"")]), 1, "{snap}");
    }
    assert_eq!(count(&["[tab]", "\"Tab\""]), 0, "{snap}");
    // Nothing of the hidden pages (page 2's dialog buttons, its notebook's
    // "News" tab) nor of the closed primary menu (Transition Pages).
    for elsewhere in ["Inform", "News", "Transition Pages"] {
        assert_eq!(count(&[elsewhere]), 0, "{elsewhere}:\n{snap}");
    }
    let last = snap.lines().last().unwrap();
    assert!(
        last.contains("controls that do not show left out"),
        "{last}"
    );
    // No class names where a label would be.
    assert_eq!(count(&["\"Gtk"]), 0, "{snap}");
    // The text view's long text is cut, with what was cut counted; --full
    // and the JSON keep it whole.
    let cut = snap
        .lines()
        .find(|l| l.contains("value=\"Lorem ipsum"))
        .unwrap_or_else(|| panic!("the text view:\n{snap}"));
    assert!(cut.contains("…\" (+") && cut.contains(" chars)"), "{cut}");
    assert!(cut.chars().count() < 160, "{cut}");
    let whole = ok(&cache, &["snapshot", "-i", "--full"]);
    assert!(whole.contains("accumsan cursus."), "--full prints it whole");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&cache, &["snapshot", "--json"])).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    assert!(nodes.iter().any(|n| n["value"]
        .as_str()
        .is_some_and(|v| v.starts_with("Lorem ipsum") && v.ends_with("accumsan cursus."))));
    // The JSON keeps the toolkit's name, marked for what it is.
    assert!(nodes
        .iter()
        .any(|n| n["label"] == "GtkToggleButton" && n["labelIsClassName"] == true));
    // Without -i every element is listed, after those that show those
    // that do not.
    let all = ok(&cache, &["snapshot"]);
    let (showing, not_showing) = all.split_once("(not showing: ").unwrap();
    assert!(showing.contains("\"checkbutton\""));
    assert!(!showing.contains("\"Inform\""));
    assert!(not_showing.contains("\"Inform\""));

    // A password is confirmed, not echoed.
    let password = ref_of(&snap, &["[textField]", "(password"]);
    let set = ok(&cache, &["fill", &password, "hunter2"]);
    assert!(set.contains("value=•••• (7 chars)"), "{set}");
    assert!(!set.contains("hunter2"), "{set}");

    // A press turns the first toggle button on, and the answer says so.
    let toggle = ref_of(&snap, &["[button] \"togglebutton\""]);
    let pressed = ok(&cache, &["press", &toggle, "--settle"]);
    assert!(
        pressed
            .lines()
            .any(|l| l.starts_with(&format!("+ {toggle} ")) && l.ends_with(" checked)")),
        "{pressed}"
    );
}

/// gtk4-widget-factory's first page as a person reads it: the header bar
/// (which GTK lists last) first, then each column of the page whole, top to
/// bottom, a row left to right (GTK lists a tree view's headers right to
/// left), a label before the field it names and naming no other.
#[test]
fn snapshot_lists_the_page_as_a_person_reads_it() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "Widget Factory");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let lines: Vec<&str> = snap.lines().collect();
    let first = |parts: &[&str]| {
        lines
            .iter()
            .position(|l| parts.iter().all(|p| l.contains(p)))
            .unwrap_or_else(|| panic!("no line with {parts:?} in:\n{snap}"))
    };
    let last = |part: &str| lines.iter().rposition(|l| l.contains(part)).unwrap();
    assert!(lines[0].contains("[tab] \"Page 1\""), "{snap}");
    assert!(first(&["\"Close\""]) < first(&["value=\"comboboxentry\""]));
    // The first column's last radio button (at the foot of the page) comes
    // before the second column's first toggle button (at its top).
    assert!(
        last("\"radiobutton\"") < first(&["\"togglebutton\""]),
        "{snap}"
    );
    // The bottom row's notebooks come last, after the right-hand column.
    assert!(first(&["[textField]", "Lorem ipsum"]) < first(&["[tab] ~\"Sunset\""]));
    // A label names only the control read just after it, and a value
    // names none: the video's time neither its seek slider nor the volume
    // button, the last line of "Text Styles" not the next column's text
    // view. A button is read by the caption it shows (the font button, the
    // list's column headers).
    let named = |text: &str| lines.iter().filter(|l| l.contains(text)).count();
    assert_eq!(named("~\"0:00\""), 0, "{snap}");
    assert_eq!(named("~\"Heading\""), 0, "{snap}");
    assert_eq!(named("[button] ~\"Sans Regular 12\""), 1, "{snap}");
    assert_eq!(named("[button] ~\"Cool\""), 1, "{snap}");

    let all = ok(&cache, &["snapshot"]);
    let lines: Vec<&str> = all.lines().collect();
    let at = |parts: &[&str]| {
        lines
            .iter()
            .position(|l| parts.iter().all(|p| l.contains(p)))
            .unwrap_or_else(|| panic!("no line with {parts:?} in:\n{all}"))
    };
    // The headers' captions are their buttons' names, said once.
    let headers =
        ["~\"Cool\"", "~\"Icon\"", "~\"Name\"", "~\"Nick\""].map(|h| at(&["[button]", h]));
    assert!(!all.contains("[text] \"Cool\""), "{all}");
    assert!(headers.is_sorted(), "{headers:?}:\n{all}");
    assert!(
        at(&["[text] \"label\""]) < at(&["[stepper] ~\"label\""]),
        "{all}"
    );
}

/// After the page switcher's tab for another page is pressed, `snapshot -i`
/// lists that page's controls and none of the page left, and back again.
/// GTK 4.8 keeps the page left laid out where it was and says the same of
/// every page's states: only which tab is selected tells which page shows.
#[test]
fn switching_pages_lists_only_the_page_that_shows() {
    let wayrig = Wayrig::start_app(&["gtk4-widget-factory"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "Widget Factory");
    // A control of each page: page 1's check buttons, page 2's dialog
    // buttons.
    let (page_1, page_2) = ("[checkBox] \"checkbutton\"", "[button] \"Inform\"");
    let snap = ok(&cache, &["snapshot", "-i"]);
    assert!(snap.contains(page_1) && !snap.contains(page_2), "{snap}");
    // The app animates forever, so no --settle: read until the page shows.
    let switch_to = |tab: &str, shown: &str| {
        let snap = ok(&cache, &["snapshot", "-i"]);
        ok(&cache, &["press", &ref_of(&snap, &["[tab]", tab])]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let snap = ok(&cache, &["snapshot", "-i"]);
            if snap.contains(shown) {
                return snap;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{tab} never showed:\n{snap}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    };
    let snap = switch_to("\"Page 2\"", page_2);
    assert!(snap.contains("[tab] \"Page 2\" (selected"), "{snap}");
    for left in [
        page_1,
        "\"radiobutton\"",
        "\"togglebutton\"",
        "value=\"entry\"",
    ] {
        assert!(!snap.contains(left), "{left} of the page left:\n{snap}");
    }
    // A moment later still: nothing of page 1 comes back.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let later = ok(&cache, &["snapshot", "-i"]);
    assert!(later.contains(page_2) && !later.contains(page_1), "{later}");
    // The whole tree keeps what does not show, after what does.
    let all = ok(&cache, &["snapshot"]);
    let (showing, not_showing) = all.split_once("(not showing: ").unwrap();
    assert!(
        showing.contains(page_2) && !showing.contains(page_1),
        "{all}"
    );
    assert!(not_showing.contains(page_1), "{all}");

    let snap = switch_to("\"Page 1\"", page_1);
    assert!(!snap.contains(page_2), "{snap}");
    assert!(snap.contains("[link] \"link button\""), "{snap}");
}

/// `--settle` prints what changed and nothing else: a popover opening and
/// closing, `(no change)`, neighbours only when asked; errors read once and
/// by ref.
#[test]
fn settle_prints_only_what_changed() {
    let wayrig = Wayrig::start();
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    ok(&cache, &["wait"]);
    let snap = ok(&cache, &["snapshot", "-i"]);
    // The menu button's popover is closed: its items are not listed.
    assert!(!snap.contains("Alpha"), "{snap}");
    let press = ref_of(&snap, &["[button]", "\"Press\""]);
    let diff = ok(&cache, &["press", &press, "--settle"]);
    assert!(
        diff.lines()
            .all(|l| l.starts_with("- ") || l.starts_with("+ ")),
        "{diff}"
    );
    assert!(diff.contains(&format!("+ {press} [button] \"Press\" (focused)")));
    // Nothing changed the second time.
    assert_eq!(
        ok(&cache, &["press", &press, "--settle"]).trim(),
        "(no change)"
    );
    // A diff is the action's own: what changed before it (a fill without
    // --settle) is not in it.
    let second = ref_of(&snap, &["[textField]", "\"Second\""]);
    ok(&cache, &["fill", &second, "Bob"]);
    let own = ok(&cache, &["press", &press, "--settle"]);
    assert!(!own.contains("Bob"), "{own}");
    // With context, the unchanged neighbours of a change.
    let diff = ok(
        &cache,
        &["fill", &second, "Ada", "--settle", "--context", "1"],
    );
    assert!(diff.contains(&format!("+ {second} [textField] \"Second\" value=\"Ada\"")));
    assert!(diff.lines().any(|l| l.starts_with("= ")), "{diff}");
    // A popover that opens is a change; its items show, and go when it closes.
    let menu = ref_of(&snap, &["[button]", "\"Menu\""]);
    let opened = ok(&cache, &["press", &menu, "--settle"]);
    assert!(
        opened
            .lines()
            .any(|l| l.starts_with("+ ") && l.contains("[menuItem] \"Alpha\"")),
        "{opened}"
    );
    let closed = ok(&cache, &["key", "Escape", "--settle"]);
    let alpha = |l: &str| l.contains("[menuItem] \"Alpha\"");
    assert!(
        closed.lines().any(|l| l.starts_with("- ") && alpha(l))
            && !closed.lines().any(|l| l.starts_with("+ ") && alpha(l)),
        "{closed}"
    );
    assert!(!ok(&cache, &["snapshot", "-i"]).contains("Alpha"));

    // Errors name the ref given, and their code once.
    let refused = err(&cache, &["expand", &press]);
    assert!(refused.contains(&format!("element {press} ")), "{refused}");
    let unsupported = err(&cache, &["eval", "1+1"]);
    assert!(
        unsupported.contains("unsupported: window") && unsupported.contains("not a page"),
        "{unsupported}"
    );
    assert!(
        !unsupported.contains("unsupported: unsupported"),
        "{unsupported}"
    );
}

/// A press whose answer is its window closing (a dialog's OK) succeeded: it
/// says so with a diff line for the window, and the session follows the
/// window left in front.
#[test]
fn a_press_that_closes_its_window_is_done() {
    let (_wayrig, cache) = fixture_session();
    let (id, ok_button) = second_window_ok(&cache);
    let answer = ok(&cache, &["--window", &id, "press", &ok_button, "--settle"]);
    assert_eq!(
        answer,
        format!("- window {id} \"wayrig-gtk4-second\"\nwindow closed\n")
    );
    assert!(!ok(&cache, &["windows"]).contains("wayrig-gtk4-second"));
    // The session goes on with the window left in front.
    assert!(ok(&cache, &["snapshot", "-i"]).contains("\"Open window\""));
}

/// A window that closes after the command that acted in it answered (here
/// by another session's press) is told once by the next command, and the
/// session follows the window left in front.
#[test]
fn a_window_that_closed_since_the_last_command_is_told_and_left() {
    let (wayrig, cache) = fixture_session();
    let (id, ok_button) = second_window_ok(&cache);
    ok(&cache, &["--window", &id, "focus", &ok_button]);
    let socket = wayrig.socket.to_str().unwrap();
    ok(&cache, &["--session", "other", "open", "--socket", socket]);
    let other = ok(
        &cache,
        &["--session", "other", "--window", &id, "snapshot", "-i"],
    );
    let other_ok = ref_of(&other, &["\"OK\""]);
    ok(
        &cache,
        &["--session", "other", "--window", &id, "press", &other_ok],
    );
    let next = ok(&cache, &["snapshot", "-i"]);
    assert!(
        next.starts_with(&format!(
            "window {id} closed since the last command; the session follows the focused window\n"
        )),
        "{next}"
    );
    assert!(next.contains("\"Open window\""), "{next}");
    assert!(!ok(&cache, &["snapshot", "-i"]).contains("closed since"));
}

/// Open the fixture's second window: its id and the ref of its OK button.
fn second_window_ok(cache: &Path) -> (String, String) {
    let id = open_second_window(cache);
    let dialog = ok(cache, &["--window", &id, "snapshot", "-i"]);
    let ok_button = ref_of(&dialog, &["\"OK\""]);
    (id, ok_button)
}

/// Press the fixture's "Open window" and answer the id of the window it
/// opens, once listed.
fn open_second_window(cache: &Path) -> String {
    let snap = ok(cache, &["snapshot", "-i"]);
    ok(cache, &["press", &ref_of(&snap, &["\"Open window\""])]);
    wait_for_window(cache, "wayrig-gtk4-second");
    let windows = ok(cache, &["windows"]);
    windows
        .lines()
        .find(|l| l.contains("wayrig-gtk4-second"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string()
}

/// A session on the GTK 4 fixture's settled window; its files under the
/// returned cache directory.
fn fixture_session() -> (Wayrig, std::path::PathBuf) {
    let wayrig = Wayrig::start();
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    ok(&cache, &["wait"]);
    (wayrig, cache)
}

/// An action answered before its window settled (the fixture animates for
/// good; the effect wait is 300 ms) prints `ok` and a note on stderr saying
/// why, so that an agent not using --settle knows to wait.
#[test]
fn a_press_answered_before_the_window_settled_notes_why() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    let wayrig = Wayrig::start_with(
        &["--effect-wait", "300", "--env", "WAYRIG_FIXTURE_ANIMATE=1"],
        &["/usr/bin/python3", fixture.to_str().unwrap()],
    );
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let press = ref_of(&snap, &["\"Press\""]);
    let out = cli(&cache, &["press", &press]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("note: ") && stderr.contains("keeps drawing"),
        "{stderr}"
    );
}

/// `launch` starts another app in the running session, on its display and
/// buses, and tells its window once; the session stays on its own window.
#[test]
fn launch_starts_a_second_app_and_tells_its_window() {
    let (_wayrig, cache) = fixture_session();
    let keypads =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-keypads.py");
    let started = ok(
        &cache,
        &[
            "launch",
            "--",
            "/usr/bin/python3",
            keypads.to_str().unwrap(),
        ],
    );
    assert!(started.starts_with("started pid "), "{started}");
    let told = started
        .lines()
        .find(|l| l.starts_with("+ window ") && l.ends_with("\"wayrig-keypads\""))
        .unwrap_or_else(|| panic!("no window told: {started}"));
    let id = told.split_whitespace().nth(2).unwrap();
    // Told once; the session stays where it was.
    let windows = ok(&cache, &["windows"]);
    assert!(!windows.contains("+ window"), "{windows}");
    let session_line = windows.lines().find(|l| l.contains(" session")).unwrap();
    assert!(session_line.contains("wayrig-gtk4-fixture"), "{windows}");
    // It is an app of the session: its tree reads, under the private buses.
    let keys = ok(&cache, &["--window", id, "snapshot", "-i"]);
    assert!(keys.contains("[button]"), "{keys}");
    assert!(ok(&cache, &["snapshot", "-i"]).contains("\"Press\""));

    // The desktop id form; what cannot start says why.
    let unknown = err(&cache, &["launch", "--desktop", "org.example.Nothing"]);
    assert!(unknown.contains("org.example.Nothing"), "{unknown}");
    let missing = err(&cache, &["launch", "--", "no-such-program-here"]);
    assert!(missing.contains("no-such-program-here"), "{missing}");
    assert!(err(&cache, &["launch"]).contains("launch what?"));
    let ended = ok(&cache, &["launch", "--", "/bin/false"]);
    assert!(ended.contains("it ended without a window"), "{ended}");
}

/// A window's screenshot shows the menu it opened where the menu reaches
/// past the window's edge: the image grows to hold it.
#[test]
fn a_screenshot_holds_the_menu_that_reaches_past_its_window() {
    let (_wayrig, cache) = fixture_session();
    let id = open_second_window(&cache);
    let shot = |name: &str| {
        let file = cache.join(name);
        ok(
            &cache,
            &["--window", &id, "screenshot", file.to_str().unwrap()],
        );
        support::Image::from_png(&std::fs::read(file).unwrap())
    };
    let closed = shot("closed.png");
    let second = ok(&cache, &["--window", &id, "snapshot", "-i"]);
    let more = ref_of(&second, &["\"More\""]);
    let opened = ok(&cache, &["--window", &id, "press", &more, "--settle"]);
    assert!(opened.contains("\"Zeta\""), "{opened}");
    let open = shot("open.png");
    assert_eq!(open.width, closed.width, "the menu fits across");
    assert!(open.height > closed.height + 40, "{} rows", open.height);
    // Below the window's edge, the menu is drawn, not the empty grey.
    let below = open.pixel(open.width / 2, closed.height + 20);
    assert_ne!(below, [46, 46, 46], "nothing drawn below the window");
}

/// `fill` into a spin button that reads its value from text (gtk4-demo's
/// Time and Month) sets the value, as typing and leaving the field does;
/// a number goes in as the value itself.
#[test]
fn fill_sets_a_spin_buttons_value_from_its_text() {
    let wayrig = Wayrig::start_app(&["gtk4-demo", "--run=spinbutton"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "Spin Buttons");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let time = ref_of(&snap, &["[stepper]", "\"Time\""]);
    let month = ref_of(&snap, &["[stepper]", "\"Month\""]);
    let numeric = ref_of(&snap, &["[stepper]", "\"Numeric\""]);
    ok(&cache, &["fill", &time, "01:30"]);
    ok(&cache, &["fill", &month, "March"]);
    ok(&cache, &["fill", &numeric, "42.5"]);
    // Focus moving back to a field keeps what it took.
    ok(&cache, &["focus", &time, "--settle"]);
    let after = ok(&cache, &["snapshot", "-i"]);
    let line = |r: &str| {
        after
            .lines()
            .find(|l| l.starts_with(&format!("{r} ")))
            .unwrap()
    };
    assert!(line(&time).contains("value=\"01:30\" now=90"), "{after}");
    assert!(line(&month).contains("value=\"March\" now=3"), "{after}");
    assert!(line(&numeric).contains("now=42.5"), "{after}");
}

/// gtk4-demo's sidebar rows are list items, each holding a tree expander
/// (a group offering only focus) that holds the demo's label, which names
/// nothing: the agent lists the row by its group, and a press on the group
/// presses the row, which selects it (stock app, not a fixture).
#[test]
fn a_press_on_a_sidebar_rows_content_selects_the_row() {
    let wayrig = Wayrig::start_app(&["gtk4-demo"]);
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "GTK Demo");
    let snap = ok(&cache, &["snapshot", "-i"]);
    let group = ref_of(&snap, &["[group]", "\"Clipboard\""]);
    // The list item that holds the group, and whether it is selected.
    let row_selected = || {
        let tree: serde_json::Value =
            serde_json::from_str(&ok(&cache, &["snapshot", "--json"])).unwrap();
        let nodes = tree["nodes"].as_array().unwrap().clone();
        let group = nodes
            .iter()
            .find(|n| n["role"] == "group" && n["label"] == "Clipboard" && n["parent"].is_string())
            .unwrap_or_else(|| panic!("no Clipboard group in {tree}"));
        let row = nodes
            .iter()
            .find(|n| n["id"] == group["parent"] && n["role"] == "listItem")
            .unwrap_or_else(|| panic!("the Clipboard group is in no list item: {tree}"));
        row["states"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s == "selected"))
    };
    assert!(!row_selected());
    ok(&cache, &["press", &group, "--settle"]);
    assert!(row_selected(), "the press selects the row");
}

/// `menu` with no labels lists the window's menus (its menu bar's and its
/// menu buttons'); the title a line names is the first label to choose by.
#[test]
fn menu_lists_the_menus_and_chooses_from_a_menu_button() {
    let (_wayrig, cache) = fixture_session();
    let listed = ok(&cache, &["menu"]);
    let lines: Vec<&str> = listed.lines().collect();
    let at = |line: &str| {
        lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("no line {line:?} in:\n{listed}"))
    };
    assert!(at("menu \"File\"") < at("  \"New\""), "{listed}");
    assert!(at("  \"Recent\"") < at("    \"one.txt\""), "{listed}");
    assert!(at("button \"Menu\"") < at("  \"Beta\""), "{listed}");
    assert!(listed.contains("\"Disabled Item\" (disabled)"), "{listed}");
    assert_eq!(ok(&cache, &["menu", "Menu", "Beta"]).trim(), "ok");
    assert!(!ok(&cache, &["snapshot", "-i"]).contains("Beta"), "closed");
}

/// In a session paced by steps, `step N` lets the apps draw N frames and
/// they stand still between commands; elsewhere it says how to get one.
#[test]
fn step_advances_a_stepped_session_and_it_stands_still_between() {
    let wayrig = Wayrig::start_with(
        &["--pacing", "step", "--env", "WAYRIG_FIXTURE_ANIMATE=1"],
        &["/usr/bin/python3", &support::gtk4_fixture()],
    );
    let cache = wayrig.dir.join("cache");
    ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    wait_for_window(&cache, "wayrig-gtk4-fixture");
    let shot = |name: &str| {
        let file = wayrig.dir.join(name);
        ok(&cache, &["screenshot", file.to_str().unwrap()]);
        std::fs::read(file).unwrap()
    };
    let still = shot("a.png");
    assert!(shot("b.png") == still, "a frame was drawn between commands");
    // The fixture's ticker flips the window's opacity every frame: an odd
    // number of frames shows a change.
    let stepped = ok(&cache, &["step", "3"]);
    assert!(
        stepped.starts_with("stepped 3 frames, ") && stepped.contains("frame callbacks"),
        "{stepped}"
    );
    let drawn = shot("c.png");
    assert!(drawn != still, "the step drew no frame");
    assert!(shot("d.png") == drawn, "a frame was drawn after the step");
    assert!(err(&cache, &["step", "601"]).contains("1 to 600"));

    let (_realtime, cache) = fixture_session();
    let refused = err(&cache, &["step"]);
    assert!(refused.contains("--pacing step"), "{refused}");
}
