//! Settle sees work an app does off its main thread: a worker computing a
//! result its main loop shows later, and a thread that never rests.

mod support;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};

use serde_json::Value;
use support::{element_id, ProtocolClient as Client, Wayrig};
use wayrig_proto::mygo::{Action, Call, Code};

fn worker_fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gtk4-worker.py")
        .to_string_lossy()
        .into_owned()
}

/// Two busy loops beside the app, as a loaded CI machine has; ended with
/// their process group when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Load {
        Load(
            (0..2)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .process_group(0)
                        .spawn()
                        .expect("a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            support::end_group(child, std::time::Duration::from_secs(1));
        }
    }
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

#[test]
fn idle_waits_for_a_worker_thread_to_show_its_result_even_under_load() {
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
    let _load = Load::start();
    for run in 1..=40 {
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
            "run {run}: idle answered before the worker's result showed: {shown:?}"
        );
    }
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
