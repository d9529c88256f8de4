//! Hostile input on the WebDriver wire: every parser of a request's body
//! (capabilities, selectors, keys, actions) fed random and edge JSON.
//!
//! Each answers a value or a W3C error, never a panic.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::error::WdError;

/// The error codes a parser may answer.
const CODES: [&str; 5] = [
    "invalid argument",
    "session not created",
    "invalid selector",
    "unsupported operation",
    "no such element",
];

/// The names the parsers look for, so that random bodies reach past their
/// first check.
static KEYS: [&str; 24] = [
    "capabilities",
    "alwaysMatch",
    "firstMatch",
    "desiredCapabilities",
    "platformName",
    "browserName",
    "wayrig:app",
    "appium:app",
    "wayrig:size",
    "wayrig:scale",
    "wayrig:env",
    "timeouts",
    "implicit",
    "actions",
    "type",
    "id",
    "parameters",
    "pointerType",
    "origin",
    "x",
    "y",
    "duration",
    "button",
    "value",
];

/// JSON at its edges: huge, negative and fractional numbers, u64s past
/// 2^53, odd strings, nesting, wrong types, under the names parsers read.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has finite numbers", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
        prop::sample::select(
            &[
                "pointer",
                "key",
                "wheel",
                "none",
                "pointerMove",
                "keyDown",
                "pointerDown",
                "pause",
                "scroll",
                "viewport",
                "linux",
                "wayrig",
                "1x1",
                "\u{E008}",
                "\u{E000}",
                ""
            ][..]
        )
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(&KEYS[..]), inner), 0..5).prop_map(
                |pairs| {
                    Value::Object(
                        pairs
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect::<Map<_, _>>(),
                    )
                }
            ),
        ]
    })
}

fn known(e: &WdError) -> bool {
    CODES.contains(&e.code) && !e.message.is_empty()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn new_session_bodies_are_matched_or_refused(body in value()) {
        if let Err(e) = crate::caps::process(&body) {
            prop_assert!(known(&e), "{e:?}");
        }
    }

    #[test]
    fn selectors_are_read_or_refused(using in any::<String>(), text in any::<String>()) {
        for strategy in [using.as_str(), "xpath", "css selector", "accessibility id",
            "tag name", "link text", "partial link text", "id", "name"] {
            if let Err(e) = crate::locate::query(strategy, &text) {
                prop_assert!(known(&e), "{strategy}: {e:?}");
            }
        }
    }

    #[test]
    fn keys_of_any_text_are_events_or_refused(text in any::<String>()) {
        if let Err(e) = crate::keys::events(&text) {
            prop_assert!(known(&e), "{e:?}");
        }
    }

    #[test]
    fn action_bodies_are_ticks_or_refused(body in value()) {
        let Value::Object(p) = json!({ "actions": body }) else { unreachable!() };
        if let Err(e) = crate::actions::ticks(&p) {
            prop_assert!(known(&e), "{e:?}");
        }
    }
}
