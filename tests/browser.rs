//! Browsers under `wayrig run`: Chromium's page read through accessibility
//! with no flag from the user, and driven by the same MyGo calls as any app.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{have, Image, ProtocolClient as Client, Wayrig};
use wayrig_proto::mygo::{Action, Awaited, Call, Code, ElementPick};

/// A page with what a form test needs, served from a file: no network.
const PAGE: &str = r##"<!doctype html>
<html><head><title>Wayrig test page</title></head>
<body>
<h1>Main heading</h1>
<p>Some text with <a href="#one">a first link</a>.</p>
<form>
<label for="name">Name</label> <input id="name" type="text" value="Ada">
<br><label><input type="checkbox" id="cb" checked> Subscribe</label>
<br><button type="button" onclick="document.getElementById('out').textContent='clicked '+(++window.n||(window.n=1))">Press me</button>
<span id="out" role="status">not clicked</span>
<button type="button" onclick="setTimeout(()=>{document.getElementById('out').textContent='shown later'},300)">Later</button>
<button type="button" onclick="Notification.requestPermission().then(p=>{document.getElementById('out').textContent='notifications '+p})">Ask to notify</button>
<input type="file" aria-label="Attachment" onchange="document.getElementById('out').textContent='picked '+this.files[0].name">
<br><label for="colour">Colour</label>
<select id="colour" onchange="document.getElementById('out').textContent='changed '+this.value">
<option>Red</option><option selected>Green</option><option>Blue</option></select>
</form>
<textarea aria-label="Notes">line one</textarea>
<p><a href="next.html">next page</a></p>
</body></html>
"##;

/// Where the page's second link leads.
const NEXT_PAGE: &str = "<!doctype html><title>Next</title><h1>Arrived here</h1>";

/// A directory of the test's own, removed when it ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn the_node(tree: &Value, role: &str, label: &str) -> Value {
    tree["nodes"]
        .as_array()
        .and_then(|nodes| {
            nodes
                .iter()
                .find(|n| n["role"] == role && n["label"] == label)
        })
        .cloned()
        .unwrap_or_else(|| panic!("no {role} {label:?} in {tree}"))
}

fn id_of(node: &Value) -> u64 {
    node["id"].as_str().and_then(|s| s.parse().ok()).unwrap()
}

/// The test's pages in a directory of its own (with a profile directory
/// for the browser), and the address of the first.
fn pages(browser: &str) -> (Scratch, String) {
    let dir = std::env::temp_dir().join(format!("wayrig-browser-{browser}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("profile")).unwrap();
    let scratch = Scratch(dir);
    std::fs::write(scratch.0.join("page.html"), PAGE).unwrap();
    std::fs::write(scratch.0.join("next.html"), NEXT_PAGE).unwrap();
    let url = format!("file://{}", scratch.0.join("page.html").display());
    (scratch, url)
}

/// An option of the closed `<select>` chosen by MyGo `act`: through the
/// option's own action (Chromium gives it the select's box, where a click
/// would only open the list), read back from the page and the tree.
fn choose_blue(c: &mut Client, window: u64) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(the_node(&tree, "popUpButton", "Colour")["value"], "Green");
    c.call(Call::Act {
        window: Some(window),
        element: ElementPick::Id(id_of(&the_node(&tree, "menuItem", "Blue"))),
        action: Action::Press,
    });
    wait_for_text(c, window, "changed Blue");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(the_node(&tree, "popUpButton", "Colour")["value"], "Blue");
}

/// A press whose effect the page's script shows 300 ms later (a timer in
/// the page's own process): the act is answered once it shows, so a tree
/// read at once finds it.
fn a_delayed_effect_is_waited_for(c: &mut Client, window: u64) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(
        c,
        window,
        &the_node(&tree, "button", "Later"),
        Action::Press,
    );
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert!(
        tree.to_string().contains("shown later"),
        "the act was answered before its effect showed"
    );
}

/// Press the page's file input (its label starts "Attachment"), which
/// opens the browser's file dialog.
fn press_the_file_input(c: &mut Client, window: u64) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let attachment = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| {
            n["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("Attachment"))
        })
        .unwrap_or_else(|| panic!("no file input in {tree}"))
        .clone();
    act(c, window, &attachment, Action::Press);
}

/// Chromium's file dialog (GTK's, drawn by the browser itself; none of its
/// controls is in a tree) opens as a window of its own and is driven by
/// keys: the file's path typed as its location, Open by its mnemonic. The
/// page then has the file.
fn a_file_is_chosen_in_the_file_dialog(c: &mut Client, window: u64, file: &std::path::Path) {
    press_the_file_input(c, window);
    let dialog = dialog_titled(c, window, "Open File");
    for event in [
        serde_json::json!({"type": "key", "key": "CmdOrCtrl+L"}),
        serde_json::json!({"type": "text", "text": file.to_str().unwrap()}),
        serde_json::json!({"type": "key", "key": "Alt+O"}),
    ] {
        c.raw_call(
            "input",
            serde_json::json!({"window": dialog, "events": [event]}),
        );
    }
    wait_for_text(c, window, "picked chosen.txt");
}

/// The id of the dialog whose title starts with `title` that `window`'s
/// browser opens (its file dialog lists a moment after the press that
/// opened it is answered), waiting on `window`'s frames for it up to 20 s.
fn dialog_titled(c: &mut Client, window: u64, title: &str) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let windows = c.call(Call::Windows);
        let dialog = windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["title"].as_str().is_some_and(|t| t.starts_with(title)))
            .and_then(|w| w["id"].as_u64());
        if let Some(dialog) = dialog {
            return dialog;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no dialog {title:?}: {windows}"
        );
        let _ = c.answer(Call::Idle {
            window: Some(window),
            timeout_ms: Some(200),
        });
    }
}

/// Chromium's permission prompt is an alert of its own beside the window's
/// frame, drawn over the window: read into the window's tree, its Allow is
/// pressed where it shows, and the page is granted what it asked.
fn a_permission_prompt_is_answered_from_the_tree(c: &mut Client, window: u64) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(
        c,
        window,
        &the_node(&tree, "button", "Ask to notify"),
        Action::Press,
    );
    wait_for_text(c, window, "Allow");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    the_node(
        &tree,
        "alertDialog",
        "This file wants to: Show notifications",
    );
    act(
        c,
        window,
        &the_node(&tree, "button", "Allow"),
        Action::Press,
    );
    wait_for_text(c, window, "notifications granted");
}

/// Chromium's print preview is a frame inside the window that Chromium
/// measures from its own corner: its Save button, pressed where the tree
/// places it, opens the Save File dialog. (Placed by the preview's own
/// measure, the press landed on blank space in its side panel and was
/// answered as done.)
fn the_print_preview_is_pressed_where_it_shows(c: &mut Client, window: u64) {
    c.raw_call(
        "input",
        serde_json::json!({"window": window, "events": [{"type": "key", "key": "CmdOrCtrl+P"}]}),
    );
    wait_for_text(c, window, "1 page");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(c, window, &the_node(&tree, "button", "Save"), Action::Press);
    let dialog = dialog_titled(c, window, "Save File");
    c.raw_call(
        "input",
        serde_json::json!({"window": dialog, "events": [{"type": "key", "key": "Escape"}]}),
    );
}

/// Firefox's file dialog (GTK 3's, drawn by the browser) opens as a window
/// of its own whose controls are in its tree: the file's path typed as its
/// location, then its Open button pressed by MyGo `act`. The page then has
/// the file.
fn a_file_is_chosen_in_firefoxs_file_dialog(c: &mut Client, window: u64, file: &std::path::Path) {
    let pressed = std::time::Instant::now();
    press_the_file_input(c, window);
    let answered = pressed.elapsed();
    let windows = c.call(Call::Windows);
    let listed = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("File Upload"))
        })
        .and_then(|w| w["id"].as_u64());
    // The press is answered once Firefox settles, the dialog shown, or at
    // the effect wait's limit: a starved Firefox (its portal call failing
    // first) may take longer to open it, and is then waited for here.
    let dialog = match listed {
        Some(dialog) => dialog,
        None => {
            assert!(
                answered >= wayrig_services::session::EFFECT_WAIT,
                "the press answered in {answered:?}, before the dialog showed: {windows}"
            );
            dialog_titled(c, window, "File Upload")
        }
    };
    for event in [
        serde_json::json!({"type": "key", "key": "CmdOrCtrl+L"}),
        serde_json::json!({"type": "text", "text": file.to_str().unwrap()}),
    ] {
        c.raw_call(
            "input",
            serde_json::json!({"window": dialog, "events": [event]}),
        );
    }
    let tree = c.call(Call::Tree {
        window: Some(dialog),
    });
    let typed = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["value"] == file.to_str().unwrap());
    assert!(typed, "the location does not read back: {tree}");
    act(c, dialog, &the_node(&tree, "button", "Open"), Action::Press);
    wait_for_text(c, window, "picked chosen.txt");
}

/// Fill the Name field with a new name, read back from the tree.
fn fill_name(c: &mut Client, window: u64, name: &Value) {
    let grace = Action::SetValue {
        text: "Grace Hopper".into(),
    };
    act(c, window, name, grace);
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(
        the_node(&tree, "textField", "Name")["value"],
        "Grace Hopper"
    );
}

/// Do `action` to `node` of the window.
fn act(c: &mut Client, window: u64, node: &Value, action: Action) -> Value {
    c.call(Call::Act {
        window: Some(window),
        element: ElementPick::Id(id_of(node)),
        action,
    })
}

/// The page is drawn, not black: its white background fills most of it.
fn assert_page_drawn(c: &mut Client, window: u64) {
    let shot = c.call(Call::Capture {
        window: Some(window),
    });
    let image = Image::from_png(&decoded(&shot["png"]));
    let light = image
        .rgba
        .chunks(4)
        .filter(|p| p[0] > 200 && p[1] > 200 && p[2] > 200)
        .count();
    let all = (image.width * image.height) as usize;
    assert!(light > all / 2, "{light} light pixels of {all}");
}

fn wait_for_text(c: &mut Client, window: u64, text: &str) {
    c.call(Call::WaitFor {
        window: Some(window),
        awaited: Awaited::Text(text.into()),
        gone: false,
        timeout_ms: Some(20_000),
    });
}

#[test]
fn a_chromium_page_is_read_and_driven_with_no_flag_from_the_user() {
    assert!(
        have("chromium"),
        "chromium is not installed (apt-get install chromium)"
    );
    let (scratch, url) = pages("chromium");
    let profile = format!("--user-data-dir={}", scratch.0.join("profile").display());
    // As root Chromium needs --no-sandbox; --test-type drops the bar that
    // says so. Nothing asks for accessibility: Wayrig turns it on.
    let reports_before = crash_reports();
    let wayrig = Wayrig::start_app(&["chromium", "--no-sandbox", "--test-type", &profile, &url]);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();

    // The page's elements, with their roles, labels and values.
    wait_for_text(&mut c, window, "Press me");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    the_node(&tree, "link", "a first link");
    the_node(&tree, "checkBox", "Subscribe");
    let name = the_node(&tree, "textField", "Name");
    assert_eq!(name["value"], "Ada", "{name}");
    let notes = the_node(&tree, "textField", "Notes");
    assert_eq!(notes["value"], "line one", "{notes}");

    // A press lands on the button (the page's script says so), a fill
    // replaces the field's text, and a link followed shows in the address.
    act(
        &mut c,
        window,
        &the_node(&tree, "button", "Press me"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "clicked 1");
    a_delayed_effect_is_waited_for(&mut c, window);
    let chosen = scratch.0.join("chosen.txt");
    std::fs::write(&chosen, "a file to attach").unwrap();
    a_file_is_chosen_in_the_file_dialog(&mut c, window, &chosen);
    fill_name(&mut c, window, &name);

    // Scripts run in the page, through the DevTools pipe Wayrig started
    // the browser with.
    scripts_run_in_the_page(&mut c, window);
    choose_blue(&mut c, window);
    // With the list open, a press on the page closes it and lands (the
    // list takes a click outside it to close itself).
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(
        &mut c,
        window,
        &the_node(&tree, "popUpButton", "Colour"),
        Action::Press,
    );
    act(
        &mut c,
        window,
        &the_node(&tree, "button", "Press me"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "clicked 2");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let colour = the_node(&tree, "popUpButton", "Colour");
    assert!(!colour.to_string().contains("expanded"), "{colour}");
    act(
        &mut c,
        window,
        &the_node(&tree, "link", "a first link"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "page.html#one");

    assert_page_drawn(&mut c, window);
    a_permission_prompt_is_answered_from_the_tree(&mut c, window);
    the_print_preview_is_pressed_where_it_shows(&mut c, window);

    // Stopped as a browser should be: the browser first, then its helpers,
    // so that it does not abort on a helper it lost (and leave a crash
    // report behind, where Chromium keeps them whatever its profile).
    drop(c);
    drop(wayrig);
    assert_eq!(
        crash_reports(),
        reports_before,
        "Chromium aborted as Wayrig stopped"
    );
}

/// The crash reports Chromium has left for this user.
fn crash_reports() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let pending = home.join(".config/chromium/Crash Reports/pending");
    let mut found: Vec<PathBuf> = std::fs::read_dir(pending)
        .map(|dir| dir.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

/// A capture's base64 text as its bytes.
fn decoded(data: &Value) -> Vec<u8> {
    use base64::Engine;
    let text = data.as_str().expect("a capture's base64");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64")
}

/// MyGo `eval` in the form page a browser window shows, after the Name
/// field was filled: values as JSON, promises awaited, statements' last
/// value answered, a throw refused.
fn scripts_run_in_the_page(c: &mut Client, window: u64) {
    let mut eval = |script: &str| {
        c.answer(Call::Eval {
            window: Some(window),
            script: script.into(),
        })
    };
    assert_eq!(
        eval("document.getElementById('name').value").unwrap()["value"],
        "Grace Hopper"
    );
    assert_eq!(
        eval("await new Promise(r => setTimeout(() => r({n: [1, 2]}), 50))").unwrap()["value"],
        serde_json::json!({"n": [1, 2]})
    );
    assert_eq!(
        eval("const s = document.querySelectorAll('select').length; s * 2;").unwrap()["value"],
        serde_json::json!(2)
    );
    let thrown = eval("null.x").unwrap_err();
    assert_eq!(thrown.code, Code::Failed, "{thrown:?}");
    assert!(thrown.message.contains("TypeError"), "{thrown:?}");
}

/// Firefox's preferences for a test: no data-reporting tab or bar on a
/// first start (they would push the page down as it is driven), no hidden
/// preloaded new tab page in the tree.
const FIREFOX_PREFS: &str = "\
user_pref(\"datareporting.policy.dataSubmissionPolicyBypassNotification\", true);
user_pref(\"browser.newtab.preload\", false);
";

#[test]
fn a_firefox_page_is_read_and_driven_with_no_flag_from_the_user() {
    assert!(
        have("firefox-esr"),
        "firefox-esr is not installed (apt-get install firefox-esr)"
    );
    let (scratch, url) = pages("firefox");
    let profile = scratch.0.join("profile");
    std::fs::write(profile.join("user.js"), FIREFOX_PREFS).unwrap();
    let wayrig = Wayrig::start_app(&[
        "firefox-esr",
        "--no-remote",
        "--profile",
        profile.to_str().unwrap(),
        &url,
    ]);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();

    // Read as it shows: fields with their values, the status by its text.
    // Firefox gives a text area's text a moment after the page's controls.
    wait_for_text(&mut c, window, "Press me");
    wait_for_text(&mut c, window, "line one");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(the_node(&tree, "textField", "Name")["value"], "Ada");
    assert_eq!(the_node(&tree, "textField", "Notes")["value"], "line one");
    the_node(&tree, "checkBox", "Subscribe");

    // A press lands on the button: Firefox's places are measured from its
    // surface, shadow included, and a miss would click beside it.
    act(
        &mut c,
        window,
        &the_node(&tree, "button", "Press me"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "clicked 1");
    a_delayed_effect_is_waited_for(&mut c, window);
    let chosen = scratch.0.join("chosen.txt");
    std::fs::write(&chosen, "a file to attach").unwrap();
    a_file_is_chosen_in_firefoxs_file_dialog(&mut c, window, &chosen);

    // Firefox says it set a field's text and does not: the fill is typed.
    let name = the_node(&tree, "textField", "Name");
    fill_name(&mut c, window, &name);
    // Firefox chooses nothing through a closed list's option: said so,
    // and chosen from the list opened, as a person does.
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let refused = c
        .answer(Call::Act {
            window: Some(window),
            element: ElementPick::Id(id_of(&the_node(&tree, "menuItem", "Blue"))),
            action: Action::Press,
        })
        .unwrap_err();
    assert_eq!(refused.code, Code::Failed, "{refused:?}");
    act(
        &mut c,
        window,
        &the_node(&tree, "popUpButton", "Colour"),
        Action::Press,
    );
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let shown_blue = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| {
            n["role"] == "menuItem"
                && n["label"] == "Blue"
                && !n["states"].to_string().contains("offscreen")
        })
        .cloned()
        .unwrap_or_else(|| panic!("no Blue in the open list: {tree}"));
    act(&mut c, window, &shown_blue, Action::Press);
    wait_for_text(&mut c, window, "changed Blue");

    // Scripts run in the page, through the debugger server Wayrig opened
    // on a private socket (its profile given).
    scripts_run_in_the_page(&mut c, window);

    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(
        &mut c,
        window,
        &the_node(&tree, "link", "next page"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "Arrived here");
    // The page navigated to is the one a script runs in, not the one left.
    let title = c.call(Call::Eval {
        window: Some(window),
        script: "document.title".into(),
    });
    assert_eq!(title["value"], "Next");
    assert_page_drawn(&mut c, window);
    firefoxs_print_preview_saves_through_a_dialog(&mut c, window);
}

/// Firefox's print preview: Save, pressed where the tree places it, opens
/// the Save As dialog. (The preview draws the same frame at every tick, so
/// the window never settles and the press is answered at the effect wait's
/// limit, before the dialog lists.)
fn firefoxs_print_preview_saves_through_a_dialog(c: &mut Client, window: u64) {
    c.raw_call(
        "input",
        serde_json::json!({"window": window, "events": [{"type": "key", "key": "CmdOrCtrl+P"}]}),
    );
    wait_for_text(c, window, "Save to PDF");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    act(c, window, &the_node(&tree, "button", "Save"), Action::Press);
    let dialog = dialog_titled(c, window, "Save As");
    c.raw_call(
        "input",
        serde_json::json!({"window": dialog, "events": [{"type": "key", "key": "Escape"}]}),
    );
}

/// The page filled over the Bus (a click, a key and typed text) and over
/// cua (focus through accessibility, then the keyboard), read back from
/// the tree over MyGo. `wayrig` hosts the browser with all three faces.
fn fill_over_the_bus_and_cua(wayrig: &Wayrig) -> (Client, u64) {
    use wayrig_cua_proto::v1;
    use wayrig_cua_proto::v1::accessibility_service_client::AccessibilityServiceClient;

    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();
    wait_for_text(&mut c, window, "Press me");

    // The Bus: a click into the field, then text typed, mixed scripts too.
    let (bus, app) = wayrig.bus_and_app();
    let cua = wayrig.cua_address.clone().expect("the cua face listens");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut b = support::abp::Client::connect(&bus, "browser-test").await;
        b.ok(&app, "ui.click", serde_json::json!({"label": "Name"}))
            .await;
        b.ok(&app, "ui.key", serde_json::json!({"key": "End"}))
            .await;
        b.ok(
            &app,
            "ui.type",
            serde_json::json!({"text": " Lovelace, Zürich"}),
        )
        .await;
    });
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(
        the_node(&tree, "textField", "Name")["value"],
        "Ada Lovelace, Zürich"
    );

    // cua: the text area focused through accessibility, then typed into.
    runtime.block_on(async {
        let (channel, window_ref) = support::cua_first_window(&cua).await;
        let mut a = AccessibilityServiceClient::new(channel.clone());
        let found = a
            .find(v1::FindRequest {
                window: Some(window_ref.clone()),
                query: Some(v1::AccessibilityQuery {
                    role: "text_area".into(),
                    name: "Notes".into(),
                    ..Default::default()
                }),
                max_results: 1,
            })
            .await
            .unwrap()
            .into_inner();
        let notes = found.nodes.first().expect("the Notes field over cua");
        a.act(v1::ActRequest {
            element: Some(v1::ElementRef {
                snapshot_id: found.snapshot_id.clone(),
                element_id: notes.element_id.clone(),
            }),
            action: v1::AccessibilityAction::Focus as i32,
            ..Default::default()
        })
        .await
        .unwrap();
        support::cua_type(channel, window_ref, "typed over cua ").await;
    });
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let notes = the_node(&tree, "textField", "Notes");
    assert!(
        notes["value"]
            .as_str()
            .is_some_and(|t| t.contains("typed over cua")),
        "{notes}"
    );
    clipboard_both_ways(&runtime, &cua);
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let notes = the_node(&tree, "textField", "Notes");
    assert_eq!(notes["value"], "pasted over cua ✓", "{notes}");
    (c, window)
}

/// Over cua, into the page's focused field: text set on the clipboard is
/// pasted (Ctrl+A, Ctrl+V), then copied back out of the page (Ctrl+A,
/// Ctrl+C) onto the clipboard, emptied in between.
fn clipboard_both_ways(runtime: &tokio::runtime::Runtime, cua: &str) {
    use wayrig_cua_proto::v1;
    use wayrig_cua_proto::v1::computer_service_client::ComputerServiceClient;
    runtime.block_on(async {
        let (channel, window) = support::cua_first_window(cua).await;
        let mut computer = ComputerServiceClient::new(channel);
        let text = |t: &str| v1::ClipboardContent {
            text: Some(t.into()),
            ..Default::default()
        };
        computer
            .set_clipboard(v1::SetClipboardRequest {
                content: Some(text("pasted over cua ✓")),
            })
            .await
            .unwrap();
        let named = |k: v1::Key| v1::KeyInput {
            key: Some(v1::key_input::Key::Named(k as i32)),
        };
        for key in [v1::Key::A, v1::Key::V, v1::Key::A, v1::Key::C] {
            computer
                .keyboard(v1::KeyboardRequest {
                    target: Some(v1::InputTarget {
                        window: Some(window.clone()),
                        ..Default::default()
                    }),
                    action: Some(v1::keyboard_request::Action::Hotkey(v1::KeyboardHotkey {
                        keys: vec![named(v1::Key::Control), named(key)],
                    })),
                })
                .await
                .unwrap();
            if key == v1::Key::V {
                // Emptied, so that only the page's copy can fill it again.
                computer
                    .set_clipboard(v1::SetClipboardRequest {
                        content: Some(text("")),
                    })
                    .await
                    .unwrap();
            }
        }
        let copied = computer
            .get_clipboard(v1::GetClipboardRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            copied.content.and_then(|c| c.text).as_deref(),
            Some("pasted over cua ✓"),
            "the page's copy on the clipboard"
        );
    });
}

/// The faces a test of every face starts.
const EVERY_FACE: [&str; 4] = ["--bus-listen", "127.0.0.1:0", "--cua-listen", "127.0.0.1:0"];

#[test]
fn a_chromium_form_is_filled_over_the_bus_and_cua() {
    assert!(
        have("chromium"),
        "chromium is not installed (apt-get install chromium)"
    );
    let (scratch, url) = pages("chromium-faces");
    let profile = format!("--user-data-dir={}", scratch.0.join("profile").display());
    let wayrig = Wayrig::start_with(
        &EVERY_FACE,
        &["chromium", "--no-sandbox", "--test-type", &profile, &url],
    );
    let (mut c, window) = fill_over_the_bus_and_cua(&wayrig);
    // The page's own script agrees with the tree.
    let name = c.call(Call::Eval {
        window: Some(window),
        script: "document.getElementById('name').value".into(),
    });
    assert_eq!(name["value"], "Ada Lovelace, Zürich");
}

#[test]
fn a_firefox_form_is_filled_over_the_bus_and_cua() {
    assert!(
        have("firefox-esr"),
        "firefox-esr is not installed (apt-get install firefox-esr)"
    );
    let (scratch, url) = pages("firefox-faces");
    let profile = scratch.0.join("profile");
    std::fs::write(profile.join("user.js"), FIREFOX_PREFS).unwrap();
    let wayrig = Wayrig::start_with(
        &EVERY_FACE,
        &[
            "firefox-esr",
            "--no-remote",
            "--profile",
            profile.to_str().unwrap(),
            &url,
        ],
    );
    fill_over_the_bus_and_cua(&wayrig);
}

/// A page whose script reshapes it: text replaced, a link moved to another
/// cell, a row hidden and shown, a row added and one removed.
const CHANGING_PAGE: &str = r##"<!doctype html><title>Changing page</title>
<button onclick="document.getElementById('c0').textContent='CHANGED'">Replace</button>
<button onclick="document.getElementById('c2').appendChild(document.getElementById('lk'))">Move</button>
<button onclick="document.getElementById('r2').style.display='none'">Hide</button>
<button onclick="document.getElementById('r2').style.display=''">Show</button>
<button onclick="var r=document.createElement('tr');r.innerHTML='<td>new row</td>';document.getElementById('t').appendChild(r)">Add</button>
<button onclick="document.getElementById('r1').remove()">Remove</button>
<table id=t><tr><td id=c0>first</td></tr>
<tr id=r1><td>row one</td><td><a id=lk href="#x">the link</a></td></tr>
<tr id=r2><td>row two</td><td id=c2>cell two</td></tr></table>"##;

/// The texts of the changing page's table, in tree order, each where it
/// is: Chromium's text objects, or (Firefox makes none) the cells and
/// links that show it.
fn page_texts(c: &mut Client, window: u64) -> Vec<String> {
    const TEXTS: [&str; 6] = [
        "first", "CHANGED", "row one", "the link", "row two", "new row",
    ];
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let nodes = tree["nodes"].as_array().unwrap();
    nodes
        .iter()
        .filter(|n| ["text", "cell", "link"].contains(&n["role"].as_str().unwrap_or("")))
        .filter_map(|n| Some((n, n["label"].as_str()?)))
        .filter(|(_, label)| TEXTS.contains(label))
        // Once, where the text is: not again in what holds it.
        .filter(|(n, label)| {
            !nodes
                .iter()
                .any(|d| d["parent"] == n["id"] && d["label"].as_str() == Some(label))
        })
        .map(|(_, label)| label.to_string())
        .collect()
}

/// Each read of a page after a press that reshaped it shows the page as it
/// now is: text replaced, a link under its new cell, a row gone while
/// hidden and back when shown, a row added, one removed. (Any read that
/// keeps part of an earlier one must pass this.)
#[test]
fn a_chromium_page_that_reshapes_is_read_as_it_now_is() {
    a_page_that_reshapes_is_read_as_it_now_is("chromium");
}

#[test]
fn a_firefox_page_that_reshapes_is_read_as_it_now_is() {
    a_page_that_reshapes_is_read_as_it_now_is("firefox-esr");
}

fn a_page_that_reshapes_is_read_as_it_now_is(browser: &str) {
    assert!(
        have(browser),
        "{browser} is not installed (apt-get install {browser})"
    );
    let (scratch, _) = pages(&format!("{browser}-changing"));
    std::fs::write(scratch.0.join("changing.html"), CHANGING_PAGE).unwrap();
    let url = format!("file://{}", scratch.0.join("changing.html").display());
    let profile = scratch.0.join("profile");
    let wayrig = if browser == "chromium" {
        let profile = format!("--user-data-dir={}", profile.display());
        Wayrig::start_app(&["chromium", "--no-sandbox", "--test-type", &profile, &url])
    } else {
        std::fs::write(profile.join("user.js"), FIREFOX_PREFS).unwrap();
        let profile = profile.to_str().unwrap();
        Wayrig::start_app(&[browser, "--no-remote", "--profile", profile, &url])
    };
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();
    wait_for_text(&mut c, window, "cell two");
    assert_eq!(
        page_texts(&mut c, window),
        ["first", "row one", "the link", "row two"]
    );
    let press = |c: &mut Client, button: &str| {
        let tree = c.call(Call::Tree {
            window: Some(window),
        });
        act(c, window, &the_node(&tree, "button", button), Action::Press);
        page_texts(c, window)
    };
    assert_eq!(
        press(&mut c, "Replace"),
        ["CHANGED", "row one", "the link", "row two"]
    );
    assert_eq!(
        press(&mut c, "Move"),
        ["CHANGED", "row one", "row two", "the link"]
    );
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let link = the_node(&tree, "link", "the link");
    let cell = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == link["parent"])
        .unwrap();
    // Chromium names it "cell twothe link", Firefox "cell two the link".
    let label = cell["label"].as_str().unwrap_or_default();
    assert!(
        label.starts_with("cell two") && label.ends_with("the link"),
        "the link's new parent: {cell}"
    );
    assert_eq!(press(&mut c, "Hide"), ["CHANGED", "row one"]);
    assert_eq!(
        press(&mut c, "Show"),
        ["CHANGED", "row one", "row two", "the link"]
    );
    assert_eq!(
        press(&mut c, "Add"),
        ["CHANGED", "row one", "row two", "the link", "new row"]
    );
    assert_eq!(
        press(&mut c, "Remove"),
        ["CHANGED", "row two", "the link", "new row"]
    );
}

/// A browser hosted at 1.5 device pixels a point: its window's capture
/// counts device pixels, and clicks at the middle of the bounds its tree
/// gives (in points) land on what they name: the check box is unchecked
/// and the button's script runs. A bound or a click scaled wrong misses
/// the small box.
fn a_page_at_fractional_scale_is_clicked_where_its_tree_says(argv: &[&str]) {
    let wayrig = Wayrig::start_with(&["--scale", "1.5"], argv);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window();
    let id = window["id"].as_u64().unwrap();
    wait_for_text(&mut c, id, "Press me");

    let windows = c.call(Call::Windows);
    let content = &windows["windows"][0]["contentBounds"];
    let shot = c.call(Call::Capture { window: Some(id) });
    let image = Image::from_png(&decoded(&shot["png"]));
    let points = content["width"].as_f64().unwrap();
    assert!(
        (f64::from(image.width) - points * 1.5).abs() <= 2.0,
        "a capture {} wide of a window {points} points wide at scale 1.5",
        image.width
    );

    let click_middle = |c: &mut Client, node: &Value| {
        let b = &node["bounds"];
        let x = b["x"].as_f64().unwrap() + b["width"].as_f64().unwrap() / 2.0;
        let y = b["y"].as_f64().unwrap() + b["height"].as_f64().unwrap() / 2.0;
        c.raw_call(
            "input",
            serde_json::json!({"window": id, "events": [{"type": "click", "x": x, "y": y}]}),
        );
    };
    let tree = c.call(Call::Tree { window: Some(id) });
    let subscribe = the_node(&tree, "checkBox", "Subscribe");
    assert!(
        subscribe["states"].to_string().contains("checked"),
        "{subscribe}"
    );
    click_middle(&mut c, &subscribe);
    click_middle(&mut c, &the_node(&tree, "button", "Press me"));
    wait_for_text(&mut c, id, "clicked 1");
    let tree = c.call(Call::Tree { window: Some(id) });
    let subscribe = the_node(&tree, "checkBox", "Subscribe");
    assert!(
        !subscribe["states"].to_string().contains("checked"),
        "the click at the box's middle missed it: {subscribe}"
    );
    assert_page_drawn(&mut c, id);
}

#[test]
fn a_chromium_page_at_fractional_scale_is_clicked_where_its_tree_says() {
    assert!(have("chromium"), "chromium is not installed");
    let (scratch, url) = pages("chromium-scaled");
    let profile = format!("--user-data-dir={}", scratch.0.join("profile").display());
    a_page_at_fractional_scale_is_clicked_where_its_tree_says(&[
        "chromium",
        "--no-sandbox",
        "--test-type",
        &profile,
        &url,
    ]);
}

#[test]
fn a_firefox_page_at_fractional_scale_is_clicked_where_its_tree_says() {
    assert!(have("firefox-esr"), "firefox-esr is not installed");
    let (scratch, url) = pages("firefox-scaled");
    let profile = scratch.0.join("profile");
    std::fs::write(profile.join("user.js"), FIREFOX_PREFS).unwrap();
    a_page_at_fractional_scale_is_clicked_where_its_tree_says(&[
        "firefox-esr",
        "--no-remote",
        "--profile",
        profile.to_str().unwrap(),
        &url,
    ]);
}

/// A page longer than its window: 400 rows, each with a link to itself.
fn long_page() -> String {
    let rows: String = (1..=400)
        .map(|n| {
            format!("<tr id=r{n}><td>row {n}</td><td><a href=\"#r{n}\">link {n}</a></td></tr>\n")
        })
        .collect();
    format!("<!doctype html><title>Long page</title><h1>Rows</h1><table>{rows}</table>")
}

/// Where the tree places an element: its bounds, if it has a place.
fn place_of(node: &Value) -> Option<(f64, f64)> {
    let b = &node["bounds"];
    Some((b["x"].as_f64()?, b["y"].as_f64()?))
}

/// A right click on a link opens Chromium's context menu, a frame of its
/// own beside the window's: its items are in the window's tree where the
/// menu shows them, and a press on one clicks it there (checked to land):
/// "Open link in new tab" opens a second tab.
fn a_context_menu_is_read_and_pressed(c: &mut Client, window: u64, link: &str) {
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let (x, y) = place_of(&the_node(&tree, "link", link)).expect("the link shows");
    c.raw_call(
        "input",
        serde_json::json!({"window": window, "events": [
            {"type": "click", "x": x + 4.0, "y": y + 4.0, "button": "right"}]}),
    );
    wait_for_text(c, window, "Open link in new tab");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let tabs = |tree: &Value| {
        tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["role"] == "tab")
            .count()
    };
    assert_eq!(tabs(&tree), 1, "{tree}");
    act(
        c,
        window,
        &the_node(&tree, "menuItem", "Open link in new tab"),
        Action::Press,
    );
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(tabs(&tree), 2, "{tree}");
    assert!(
        !tree.to_string().contains("Open link in new tab"),
        "the menu stayed open: {tree}"
    );
}

/// On a page longer than its window, what the browser says does not show
/// has no place in the tree (it is read without asking each row where it
/// is), and is reached all the same: pressed through its own action, and
/// clicked over the Bus once its browser scrolled to it. Its context menu
/// is read and pressed too.
#[test]
fn a_long_chromium_page_places_what_shows_and_reaches_the_rest() {
    assert!(
        have("chromium"),
        "chromium is not installed (apt-get install chromium)"
    );
    let (scratch, _) = pages("chromium-long");
    std::fs::write(scratch.0.join("long.html"), long_page()).unwrap();
    let url = format!("file://{}", scratch.0.join("long.html").display());
    let profile = format!("--user-data-dir={}", scratch.0.join("profile").display());
    let wayrig = Wayrig::start_with(
        &EVERY_FACE,
        &["chromium", "--no-sandbox", "--test-type", &profile, &url],
    );
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window()["id"].as_u64().unwrap();
    // What is waited for shows; the last rows do not.
    wait_for_text(&mut c, window, "link 1");
    let windows = c.call(Call::Windows);
    let height = windows["windows"][0]["contentBounds"]["height"]
        .as_f64()
        .unwrap();

    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let (_, y) = place_of(&the_node(&tree, "link", "link 1")).expect("link 1 shows");
    assert!(y < height, "link 1 at y {y} in a window {height} high");
    let last = the_node(&tree, "link", "link 400");
    assert_eq!(place_of(&last), None, "{last}");
    assert!(last["states"].to_string().contains("offscreen"), "{last}");

    // A press on a link out of view follows it (its own action).
    act(&mut c, window, &last, Action::Press);
    wait_for_text(&mut c, window, "long.html#r400");
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    let (_, y) = place_of(&the_node(&tree, "link", "link 400")).expect("link 400 shows");
    assert!((0.0..height).contains(&y), "link 400 at y {y}");
    assert_eq!(place_of(&the_node(&tree, "link", "link 1")), None);

    // A click over the Bus, on the link by its id (a label names only
    // what shows), scrolls back up to it first.
    let link = the_node(&tree, "link", "link 20");
    let (bus, app) = wayrig.bus_and_app();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut b = support::abp::Client::connect(&bus, "browser-test").await;
        b.ok(&app, "ui.click", serde_json::json!({"id": link["id"]}))
            .await;
    });
    wait_for_text(&mut c, window, "long.html#r20");
    a_context_menu_is_read_and_pressed(&mut c, window, "link 20");
}
