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
</form>
<textarea aria-label="Notes">line one</textarea>
</body></html>
"##;

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
    let dir = std::env::temp_dir().join(format!("wayrig-browser-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("profile")).unwrap();
    let scratch = Scratch(dir);
    let page = scratch.0.join("page.html");
    std::fs::write(&page, PAGE).unwrap();
    let profile = format!("--user-data-dir={}", scratch.0.join("profile").display());
    let url = format!("file://{}", page.display());
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
    let act = |c: &mut Client, node: &Value, action: Action| {
        c.call(Call::Act {
            window: Some(window),
            element: ElementPick::Id(id_of(node)),
            action,
        })
    };
    act(
        &mut c,
        &the_node(&tree, "button", "Press me"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "clicked 1");
    let grace = Action::SetValue {
        text: "Grace Hopper".into(),
    };
    act(&mut c, &name, grace);
    let tree = c.call(Call::Tree {
        window: Some(window),
    });
    assert_eq!(
        the_node(&tree, "textField", "Name")["value"],
        "Grace Hopper"
    );

    // Scripts run in the page (through the DevTools pipe Wayrig started
    // the browser with): values as JSON, promises awaited, throws refused.
    let eval = |c: &mut Client, script: &str| {
        c.answer(Call::Eval {
            window: Some(window),
            script: script.into(),
        })
    };
    assert_eq!(
        eval(&mut c, "document.getElementById('name').value").unwrap()["value"],
        "Grace Hopper"
    );
    assert_eq!(
        eval(
            &mut c,
            "await new Promise(r => setTimeout(() => r({n: [1, 2]}), 50))"
        )
        .unwrap()["value"],
        serde_json::json!({"n": [1, 2]})
    );
    let thrown = eval(&mut c, "null.x").unwrap_err();
    assert_eq!(thrown.code, Code::Failed, "{thrown:?}");
    assert!(thrown.message.contains("TypeError"), "{thrown:?}");
    act(
        &mut c,
        &the_node(&tree, "link", "a first link"),
        Action::Press,
    );
    wait_for_text(&mut c, window, "page.html#one");

    // The page is drawn, not black: its white background fills most of it.
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
