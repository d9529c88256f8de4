//! The W3C WebDriver face end to end: `wayrig serve` driven by the official
//! Python Selenium client, each WebDriver session a Wayrig session of its own.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::grid::serve;
use support::run_client;

/// How long the client's whole script may take on a loaded 2-core machine.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_selenium_test_drives_a_desktop_app_through_wayrig_serve() {
    let (_served, url) = serve(&support::shipped("wayrig"), 2);
    let mut client = Command::new("/usr/bin/python3");
    client.args([
        fixture("webdriver-client.py"),
        url,
        fixture("gtk4-fixture.py"),
    ]);
    run_client(client, SCRIPT_LIMIT);
}

/// WebdriverIO: its own finders, and the visibility scripts it runs where a
/// browser would, answered from the element.
#[test]
fn a_webdriverio_test_drives_a_desktop_app_unchanged() {
    const TEST: &str = "a_webdriverio_test_drives_a_desktop_app_unchanged";
    let wdio = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/wdio-9.33.1");
    if !wdio.join("node_modules/webdriverio").is_dir() || !support::have("node") {
        support::skip(TEST, "no Node.js or WebdriverIO; run scripts/install-deps");
        return;
    }
    // ES modules find their packages beside them.
    let script = wdio.join("wdio-client.mjs");
    std::fs::copy(fixture("wdio-client.mjs"), &script).unwrap();
    let (_served, url) = serve(&support::shipped("wayrig"), 1);
    let mut client = Command::new("node");
    client.arg(&script).args([url, fixture("gtk4-fixture.py")]);
    run_client(client, SCRIPT_LIMIT);
}

/// One HTTP/1.1 request to `url` (`http://HOST:PORT`) and its answer's
/// status and JSON body, as any WebDriver client sends it.
fn http(
    url: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let (status, _, json) = exchange(url, method, path, body);
    (status, json)
}

/// `http`, with the answer's head (its status line and headers) too.
fn exchange(
    url: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, String, serde_json::Value) {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://");
    let mut stream =
        std::net::TcpStream::connect(host).expect("the WebDriver face takes a connection");
    stream.set_read_timeout(Some(SCRIPT_LIMIT)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let (head, json) = match answer.split_once("\r\n\r\n") {
        Some((head, b)) => (
            head.to_string(),
            serde_json::from_str(b).unwrap_or_default(),
        ),
        None => (answer.clone(), serde_json::Value::default()),
    };
    (status, head, json)
}

/// A click answered before its window settled (the fixture redraws all of
/// itself for good, past the 1 s effect wait) says why in the
/// `Wayrig-Unsettled` header; its `value` is the standard's `null`.
#[test]
fn a_click_answered_before_the_window_settled_says_why_in_a_header() {
    let (_served, url) = serve(&support::shipped("wayrig"), 1);
    let caps = serde_json::json!({"capabilities": {"alwaysMatch": {
        "platformName": "linux",
        "wayrig:app": ["/usr/bin/python3", fixture("gtk4-fixture.py")],
        "wayrig:env": {"GSK_RENDERER": "cairo", "WAYRIG_FIXTURE_ANIMATE": "1"},
    }}});
    let (status, made) = http(&url, "POST", "/session", Some(caps));
    assert_eq!(status, 200, "{made}");
    let id = made["value"]["sessionId"].as_str().unwrap().to_string();
    let find = serde_json::json!({"using": "xpath", "value": "//button[@name='Press']"});
    let (status, found) = http(&url, "POST", &format!("/session/{id}/element"), Some(find));
    assert_eq!(status, 200, "{found}");
    let element = found["value"]
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(|v| v.as_str())
        .unwrap()
        .to_string();
    let click = format!("/session/{id}/element/{element}/click");
    let (status, head, clicked) = exchange(&url, "POST", &click, Some(serde_json::json!({})));
    assert_eq!(status, 200, "{clicked}");
    assert_eq!(clicked["value"], serde_json::Value::Null, "{clicked}");
    let why = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("wayrig-unsettled")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no Wayrig-Unsettled in:\n{head}"));
    assert!(why.contains("keeps drawing"), "{why}");
    let (status, _) = http(&url, "DELETE", &format!("/session/{id}"), None);
    assert_eq!(status, 200);
}

/// `wayrig serve --record`: each WebDriver session records into a folder
/// named by its id, with its commands, their answers and the screens.
#[test]
fn a_recorded_webdriver_session_keeps_its_commands_and_screens() {
    let root = std::env::temp_dir().join(format!("wayrig-wd-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let record = root.display().to_string();
    let (served, url) =
        support::grid::serve_with(&support::shipped("wayrig"), 1, &["--record", &record]);
    let caps = serde_json::json!({"capabilities": {"alwaysMatch": {
        "platformName": "linux",
        "wayrig:app": ["/usr/bin/python3", fixture("gtk4-fixture.py")],
        "wayrig:env": {"GSK_RENDERER": "cairo"},
    }}});
    let (status, made) = http(&url, "POST", "/session", Some(caps));
    assert_eq!(status, 200, "{made}");
    let id = made["value"]["sessionId"].as_str().unwrap().to_string();
    let find = serde_json::json!({"using": "xpath", "value": "//button[@name='Press']"});
    let (status, found) = http(&url, "POST", &format!("/session/{id}/element"), Some(find));
    assert_eq!(status, 200, "{found}");
    let element = found["value"]
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(|v| v.as_str())
        .unwrap()
        .to_string();
    let click = format!("/session/{id}/element/{element}/click");
    let (status, clicked) = http(&url, "POST", &click, Some(serde_json::json!({})));
    assert_eq!(status, 200, "{clicked}");
    let (status, _) = http(&url, "DELETE", &format!("/session/{id}"), None);
    assert_eq!(status, 200);
    drop(served);

    let dir = root.join(&id);
    let trace: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("trace.jsonl"))
        .expect("the session's recording is named by its id")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let clicked = trace
        .iter()
        .find(|e| e["kind"] == "request" && e["method"] == format!("POST {click}"))
        .expect("the click is in the trace");
    assert_eq!(clicked["face"], "webdriver");
    assert_eq!(clicked["ok"], true, "{clicked}");
    assert_eq!(clicked["acted"], true, "{clicked}");
    assert!(dir.join(clicked["shot"].as_str().unwrap()).exists());
    let found = trace
        .iter()
        .find(|e| e["kind"] == "request" && e["method"] == format!("POST /session/{id}/element"))
        .expect("the find is in the trace");
    assert_eq!(found["request"]["value"], "//button[@name='Press']");
    assert_eq!(
        trace.last().unwrap()["kind"],
        "end",
        "ending the session ends its recording"
    );
    assert!(std::fs::metadata(dir.join("video.webm")).unwrap().len() > 0);
    std::fs::remove_dir_all(&root).unwrap();
}
