//! Hostile input on MyGo's calls: a request of every method, as the spec
//! writes them, mutated at random and to the edges of JSON, answered by the
//! face's translation over the in-memory host and app (`test-support`).
//!
//! Each request that parses is answered within what it asked to wait (and a
//! margin) with a result or an error in MyGo's codes, and input reaches the
//! app only from `input` and `act`.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};
use wayrig_proto::mygo::Request;
use wayrig_services::session::fake_access::{a_form, id, paused_runtime};
use wayrig_services::AnnouncementsRead;

/// The methods that send input to the app.
const SENDING_INPUT: [&str; 2] = ["input", "act"];

/// A request of every method; `element` is an id the session gives out.
fn seeds(element: &str) -> Vec<Value> {
    let events = json!([
        {"type": "click", "x": 200, "y": 99, "button": "right", "clicks": 2, "mods": ["shift"]},
        {"type": "pointerMove", "x": 20, "y": 20},
        {"type": "pointerDown", "x": 20, "y": 20},
        {"type": "pointerUp", "x": 20, "y": 20, "button": "middle"},
        {"type": "wheel", "x": 20, "y": 20, "dx": 0, "dy": -3, "precise": true},
        {"type": "text", "text": "Grace"},
        {"type": "key", "key": "CmdOrCtrl+A"},
        {"type": "keyDown", "key": "Shift"},
        {"type": "keyUp", "key": "Shift"}
    ]);
    let act = |action: &str| {
        let params = json!({"window": 1, "id": element, "action": action});
        json!({"method": "act", "params": params})
    };
    vec![
        json!({"method": "windows"}),
        json!({"method": "tree", "params": {"window": 1}}),
        act("press"),
        act("focus"),
        act("increment"),
        act("decrement"),
        act("scrollIntoView"),
        act("expand"),
        act("collapse"),
        json!({"method": "act", "params": {"key": "add", "action": "press"}}),
        json!({"method": "act", "params": {"id": element, "action": "setValue", "text": "Grace"}}),
        json!({"method": "act", "params": {"id": element, "action": "insertText", "text": "Ada"}}),
        json!({"method": "act", "params": {
            "id": element, "action": "selectText", "from": 1, "to": 3
        }}),
        json!({"method": "input", "params": {"window": 1, "events": events}}),
        json!({"method": "menu", "params": {"path": ["File", "New Window"]}}),
        json!({"method": "capture", "params": {"window": 1}}),
        json!({"method": "eval", "params": {"window": 1, "script": "document.title"}}),
        json!({"method": "idle", "params": {"window": 1, "timeout": 5000}}),
        json!({"method": "wayrig.waitFor", "params": {
            "window": 1, "text": "Save", "gone": true, "timeout": 1000
        }}),
        json!({"method": "wayrig.waitFor", "params": {"id": element, "timeout": 1000}}),
        json!({"method": "wayrig.launch", "params": {"command": ["true"], "timeout": 1000}}),
        json!({"method": "wayrig.launch", "params": {"desktopId": "org.example.App"}}),
        json!({"method": "wayrig.menus", "params": {"window": 1}}),
        json!({"method": "wayrig.step", "params": {"frames": 2}}),
    ]
}

/// What a mutation does to the place it picks.
#[derive(Debug, Clone)]
enum Mutation {
    /// Put this value there.
    Replace(Value),
    /// Take the member or item away.
    Drop,
    /// Give the object a member no method takes.
    Stray,
    /// Make the array long: its first item 300 times.
    Repeat,
}

/// Values at the edges of JSON and of what the methods take.
fn edge() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(18446744073709551616.0)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has finite numbers", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        Just(json!("")),
        Just(json!("\u{0}")),
        Just(json!("x".repeat(1 << 20))),
        Just(json!("é😀\u{202e}")),
        Just(json!(id(3).to_string())),
        Just(json!(id(7).to_string())),
        any::<String>().prop_map(Value::String),
        Just(json!([])),
        Just(json!({})),
    ]
}

fn mutation() -> impl Strategy<Value = (usize, Mutation)> {
    let what = prop_oneof![
        4 => edge().prop_map(Mutation::Replace),
        1 => Just(Mutation::Drop),
        1 => Just(Mutation::Stray),
        1 => Just(Mutation::Repeat),
    ];
    (any::<usize>(), what)
}

/// Every place in `v`, as JSON pointers, the root first.
fn places(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, inner) in m {
                places(
                    inner,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                places(inner, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn mutate(request: &mut Value, (pick, mutation): &(usize, Mutation)) {
    let mut all = Vec::new();
    places(request, String::new(), &mut all);
    let place = &all[pick % all.len()];
    match mutation {
        Mutation::Replace(value) => {
            if let Some(there) = request.pointer_mut(place) {
                *there = value.clone();
            }
        }
        Mutation::Drop => {
            let Some((parent, last)) = place.rsplit_once('/') else {
                return;
            };
            match request.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.remove(&last.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(items)) => {
                    if let Ok(i) = last.parse::<usize>() {
                        if i < items.len() {
                            items.remove(i);
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::Stray => {
            if let Some(Value::Object(m)) = request.pointer_mut(place) {
                m.insert("nonsense".into(), json!(1));
            }
        }
        Mutation::Repeat => {
            if let Some(Value::Array(items)) = request.pointer_mut(place) {
                if let Some(first) = items.first().cloned() {
                    items.resize(300, first);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A request of every method, mutated, is refused as it parses or
    /// answered in MyGo's terms by the face over a session, sending input
    /// only where it asks to.
    #[test]
    fn every_method_mutated_is_answered_in_mygos_terms(
        seed in 0usize..64,
        mutations in proptest::collection::vec(mutation(), 0..5),
    ) {
        let element = id(2).to_string();
        let seeds = seeds(&element);
        let mut request = seeds[seed % seeds.len()].clone();
        for m in &mutations {
            mutate(&mut request, m);
        }
        let method = request["method"].as_str().unwrap_or_default().to_string();
        // A wait asked for (or a method's own, a day at most) is no hang.
        let asked_wait = match request["params"]["timeout"].as_u64() {
            Some(ms) => Duration::from_millis(ms),
            None => Duration::from_secs(24 * 3600),
        };
        let (_, call) = Request::parse(request.to_string().as_bytes());
        let Ok(call) = call else {
            return Ok(());
        };
        let runtime = paused_runtime();
        runtime.block_on(async {
            let (session, host) = a_form().await;
            // A client reads the tree first: the ids it names are given out.
            let mut announced = AnnouncementsRead::default();
            let tree = Request::parse(br#"{"method": "tree", "params": {"window": 1}}"#).1.unwrap();
            prop_assert!(crate::translate::answer(&session, &mut announced, tree).await.is_ok());
            let sent = host.sent().len();
            let bound = asked_wait.saturating_add(Duration::from_secs(600));
            let answer = tokio::time::timeout(
                bound,
                crate::translate::answer(&session, &mut announced, call),
            )
            .await;
            let Ok(answer) = answer else {
                return Err(TestCaseError::fail(format!("no answer to {request}")));
            };
            if let Err(e) = &answer {
                prop_assert!(!e.message.is_empty(), "{:?} to {}", e, request);
            }
            prop_assert!(
                host.sent().len() == sent || SENDING_INPUT.contains(&method.as_str()),
                "{} sent input: {}",
                method,
                request
            );
            Ok(())
        })?;
    }
}
