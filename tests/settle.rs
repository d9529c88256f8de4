//! Settle sees work an app does off its main thread (a worker computing a
//! result its main loop shows later, a thread that never rests) and a timer
//! its main loop will wake for soon; what an app shows after a longer
//! timer is waited for by its text; a timer hidden behind an app's frame
//! clock is waited for once seen.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{cli, cli_ok, element_id, Load, ProtocolClient as Client, Wayrig};
use wayrig_proto::mygo::{Action, Awaited, Call, Code, Event};

fn worker_fixture() -> String {
    support::fixture_path("gtk4-worker.py")
}

fn node<'a>(tree: &'a Value, role: &str, label: &str) -> &'a Value {
    tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == role && n["label"] == label)
        .unwrap_or_else(|| panic!("no {role} {label:?}"))
}

fn labels(tree: &Value) -> Vec<String> {
    tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["role"] == "text")
        .filter_map(|n| n["label"].as_str().map(str::to_string))
        .collect()
}

/// Presses and reads of each run, and of each of them under load.
const RUNS: u32 = 100;

#[test]
fn idle_waits_for_a_worker_thread_to_show_its_result_with_and_without_load() {
    let wayrig = Wayrig::start_app(&["/usr/bin/python3", &worker_fixture()]);
    let mut c = Client::connect(&wayrig.socket);
    let window = c.first_window();
    let id = window["id"].as_u64();
    c.call(Call::Idle {
        window: id,
        timeout_ms: Some(10_000),
    });
    let tree = c.call(Call::Tree { window: id });
    let compute = element_id(node(&tree, "button", "Compute"));
    let mut load = None;
    for run in 1..=2 * RUNS {
        if run == RUNS + 1 {
            load = Some(Load::start());
        }
        c.call(Call::Act {
            window: id,
            element: compute.clone(),
            action: Action::Press,
        });
        c.call(Call::Idle {
            window: id,
            timeout_ms: Some(10_000),
        });
        let tree = c.call(Call::Tree { window: id });
        let shown = labels(&tree);
        assert!(
            shown.contains(&format!("result {run}")),
            "run {run} (load: {}): idle answered before the worker's result showed: {shown:?}",
            load.is_some()
        );
    }
}

/// A session on the worker fixture: Wayrig, a protocol client, the window's
/// id, and the agent CLI's cache with a session opened on it.
fn worker_session() -> (Wayrig, Client, Option<u64>, PathBuf) {
    let wayrig = Wayrig::start_app(&["/usr/bin/python3", &worker_fixture()]);
    let cache = wayrig.dir.join("cache");
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64();
    cli_ok(
        &cache,
        &["open", "--socket", wayrig.socket.to_str().unwrap()],
    );
    (wayrig, c, id, cache)
}

#[test]
fn wait_text_sees_a_result_a_timer_picks_up_under_load() {
    let (_wayrig, mut c, id, cache) = worker_session();
    c.call(Call::Idle {
        window: id,
        timeout_ms: Some(10_000),
    });
    let tree = c.call(Call::Tree { window: id });
    let poll = element_id(node(&tree, "button", "Poll"));
    let _load = Load::start();
    for run in 1..=RUNS {
        c.call(Call::Act {
            window: id,
            element: poll.clone(),
            action: Action::Press,
        });
        let text = format!("polled {run}");
        let said = cli_ok(&cache, &["wait", "--text", &text, "--timeout", "10000"]);
        assert!(
            said.starts_with("shown @e") && said.contains(&format!("[text] \"{text}\"")),
            "run {run}: {said}"
        );
        // What wait said shows is what a read right after it shows.
        let shown = labels(&c.call(Call::Tree { window: id }));
        assert!(shown.contains(&text), "run {run}: {shown:?}");
    }
}

/// A label a 150 ms timer sets, nothing running meanwhile (as a search
/// entry filters after its delay): the timer its main loop will wake for is
/// work not yet shown, so idle answers once the label shows, idle and under
/// load, with no wait for its text.
#[test]
fn idle_waits_for_a_timer_the_main_loop_will_wake_for() {
    let (_wayrig, mut c, id, _cache) = worker_session();
    let tree = c.call(Call::Tree { window: id });
    let later = element_id(node(&tree, "button", "Later"));
    let mut load = None;
    for run in 1..=40 {
        if run == 21 {
            load = Some(Load::start());
        }
        c.call(Call::Act {
            window: id,
            element: later.clone(),
            action: Action::Press,
        });
        c.call(Call::Idle {
            window: id,
            timeout_ms: Some(10_000),
        });
        let shown = labels(&c.call(Call::Tree { window: id }));
        assert!(
            shown.contains(&format!("later {run}")),
            "run {run} (load: {}): {shown:?}",
            load.is_some()
        );
    }
}

/// Typing into gtk4-demo's search entry: its list filters 150 ms after the
/// last key, while the entry's caret keeps the app's frame clock waking
/// every frame, which hides that delay from all but the first look. The
/// input's answer, and an `idle` after it, come once the list is filtered.
#[test]
fn typed_search_text_is_answered_once_the_list_is_filtered() {
    let wayrig = Wayrig::start_app(&["gtk4-demo"]);
    let mut c = Client::connect(&wayrig.socket);
    let id = c.first_window()["id"].as_u64();
    c.call(Call::Idle {
        window: id,
        timeout_ms: Some(10_000),
    });
    let tree = c.call(Call::Tree { window: id });
    let search = element_id(node(&tree, "button", "Search"));
    c.call(Call::Act {
        window: id,
        element: search,
        action: Action::Press,
    });
    let listed = |tree: &Value| -> Vec<String> {
        tree["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n["label"].as_str().map(str::to_string))
            .collect()
    };
    c.call(Call::Input {
        window: id,
        events: vec![Event::Text {
            text: "spin".into(),
        }],
    });
    let shown = listed(&c.call(Call::Tree { window: id }));
    assert!(
        shown.iter().any(|l| l == "Spin Buttons")
            && !shown.iter().any(|l| l == "Application Class"),
        "answered before \"spin\" filtered the list: {shown:?}"
    );
}

#[test]
fn waits_for_what_never_shows_end_in_a_clean_timeout() {
    let (_wayrig, mut c, id, cache) = worker_session();
    // Through the CLI: a timeout error, said in the protocol's terms.
    let out = cli(&cache, &["wait", "--text", "polled 99", "--timeout", "500"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(": timeout: window "), "{said}");
    assert!(said.contains("\"polled 99\""), "{said}");
    // Through the protocol: the extension's timeout, and the connection
    // still answers afterwards.
    let err = c
        .answer(Call::WaitFor {
            window: id,
            awaited: Awaited::Text("polled 99".into()),
            gone: false,
            timeout_ms: Some(300),
        })
        .unwrap_err();
    assert_eq!(err.code, Code::Timeout, "{err:?}");
    assert!(c.call(Call::Tree { window: id })["nodes"].is_array());

    // What shows already answers at once, and --gone waits for it to go.
    let snapshot = cli_ok(&cache, &["snapshot"]);
    let label = snapshot
        .lines()
        .find(|l| l.contains("\"polled 0\""))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no polled label in {snapshot}"))
        .to_string();
    let said = cli_ok(&cache, &["wait", "--ref", &label, "--shown"]);
    assert!(said.starts_with(&format!("shown {label} ")), "{said}");
    let tree = c.call(Call::Tree { window: id });
    c.call(Call::Act {
        window: id,
        element: element_id(node(&tree, "button", "Poll")),
        action: Action::Press,
    });
    assert_eq!(
        cli_ok(&cache, &["wait", "--text", "polled 0", "--gone"]).trim(),
        "gone"
    );
    assert!(labels(&c.call(Call::Tree { window: id })).contains(&"polled 1".to_string()));
    // A ref that never was is refused, not waited on.
    let out = cli(&cache, &["wait", "--ref", "@e999", "--gone"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(": no_element: unknown ref @e999"), "{said}");
}

#[test]
fn a_thread_that_never_rests_is_named_and_can_be_left_out() {
    for flags in [&[][..], &["--settle-threads", "off"][..]] {
        let wayrig = Wayrig::start_with(flags, &["/usr/bin/python3", &worker_fixture()]);
        let mut c = Client::connect(&wayrig.socket);
        let window = c.first_window();
        let id = window["id"].as_u64();
        let tree = c.call(Call::Tree { window: id });
        c.call(Call::Act {
            window: id,
            element: element_id(node(&tree, "button", "Spin")),
            action: Action::Press,
        });
        let idle = Call::Idle {
            window: id,
            timeout_ms: Some(1_500),
        };
        if flags.is_empty() {
            let err = c.answer(idle).unwrap_err();
            assert_eq!(err.code, Code::Timeout, "{err:?}");
            assert!(err.message.contains("thread"), "{}", err.message);
            assert!(err.message.contains("tid"), "{}", err.message);
        } else {
            c.call(idle);
        }
    }
}
