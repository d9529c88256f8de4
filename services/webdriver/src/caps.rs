//! New Session's capabilities, processed by the W3C rules (`alwaysMatch`
//! merged into each `firstMatch`, the first that matches wins) into what
//! Wayrig makes: a session's output and environment, and the app it starts.
//!
//! Wayrig's own capabilities are `wayrig:app` (an argument vector),
//! `wayrig:size` ("WIDTHxHEIGHT"), `wayrig:scale` and `wayrig:env`;
//! `appium:app` and `app` name a desktop id, a program or a path.

use serde_json::{Map, Value};
use wayrig_services::AppSpec;

use crate::error::WdError;

/// What a matched set of capabilities asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The app and its arguments; none starts no app.
    pub app: Option<(AppSpec, Vec<String>)>,
    pub size: Option<(i32, i32)>,
    pub scale: Option<f64>,
    pub env: Vec<(String, String)>,
    /// The implicit wait, from `timeouts.implicit`, in ms.
    pub implicit_ms: Option<u64>,
    /// The capabilities as matched, answered back to the client.
    pub matched: Map<String, Value>,
}

/// W3C capability names Wayrig takes and ignores (it has no pages, proxies
/// or prompts), besides those it uses.
const STANDARD: [&str; 11] = [
    "browserName",
    "browserVersion",
    "platformName",
    "acceptInsecureCerts",
    "pageLoadStrategy",
    "proxy",
    "setWindowRect",
    "timeouts",
    "strictFileInteractability",
    "unhandledPromptBehavior",
    "webSocketUrl",
];

/// Process a New Session body's capabilities.
pub fn process(body: &Value) -> Result<Asked, WdError> {
    let caps = match body.get("capabilities") {
        Some(Value::Object(caps)) => caps.clone(),
        Some(_) => return Err(WdError::invalid("capabilities must be a JSON object")),
        // Clients of the old protocol send only desiredCapabilities.
        None => match body.get("desiredCapabilities") {
            Some(Value::Object(d)) => {
                let mut caps = Map::new();
                caps.insert("alwaysMatch".into(), Value::Object(d.clone()));
                caps
            }
            _ => Map::new(),
        },
    };
    let always = match caps.get("alwaysMatch") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => validate(m)?,
        Some(_) => return Err(WdError::invalid("alwaysMatch must be a JSON object")),
    };
    let first: Vec<Map<String, Value>> = match caps.get("firstMatch") {
        None | Some(Value::Null) => vec![Map::new()],
        Some(Value::Array(list)) if list.is_empty() => {
            return Err(WdError::invalid("firstMatch must hold at least one object"))
        }
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| match v {
                Value::Object(m) => validate(m),
                _ => Err(WdError::invalid(
                    "each firstMatch entry must be a JSON object",
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(WdError::invalid("firstMatch must be a JSON array")),
    };
    let mut why_not = Vec::new();
    for each in first {
        let mut merged = always.clone();
        for (k, v) in each {
            if merged.contains_key(&k) {
                return Err(WdError::invalid(format!(
                    "capability {k} is in both alwaysMatch and firstMatch"
                )));
            }
            merged.insert(k, v);
        }
        match matches(&merged) {
            Ok(()) => return asked(merged),
            Err(why) => why_not.push(why),
        }
    }
    Err(WdError::new(
        "session not created",
        format!("no capabilities matched: {}", why_not.join("; ")),
    ))
}

/// Keep a capability object's names to the standard ones and extensions.
fn validate(m: &Map<String, Value>) -> Result<Map<String, Value>, WdError> {
    for (k, v) in m {
        if !STANDARD.contains(&k.as_str()) && !k.contains(':') {
            return Err(WdError::invalid(format!(
                "unknown capability {k:?}; extensions are named with a prefix, as wayrig:app"
            )));
        }
        if v.is_null() {
            continue;
        }
        let string = matches!(
            k.as_str(),
            "browserName" | "browserVersion" | "platformName" | "pageLoadStrategy"
        );
        if string && !v.is_string() {
            return Err(WdError::invalid(format!("capability {k} must be a string")));
        }
    }
    Ok(m.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect())
}

/// Whether Wayrig can be what these capabilities ask for; the reason when not.
fn matches(caps: &Map<String, Value>) -> Result<(), String> {
    if let Some(p) = caps.get("platformName").and_then(Value::as_str) {
        if !p.eq_ignore_ascii_case("linux") && !p.eq_ignore_ascii_case("any") {
            return Err(format!("platformName {p:?} (Wayrig runs on linux)"));
        }
    }
    if let Some(b) = caps.get("browserName").and_then(Value::as_str) {
        if !b.is_empty() && !b.eq_ignore_ascii_case("wayrig") {
            return Err(format!(
                "browserName {b:?} (Wayrig drives desktop apps: leave browserName out, \
                 and name the app in wayrig:app)"
            ));
        }
    }
    Ok(())
}

/// What the matched capabilities ask Wayrig to make.
fn asked(matched: Map<String, Value>) -> Result<Asked, WdError> {
    let app = match (
        matched.get("wayrig:app"),
        matched.get("appium:app").or_else(|| matched.get("app")),
    ) {
        (Some(argv), _) => Some(argv_of(argv)?),
        (None, Some(Value::String(app))) if !app.is_empty() => Some((app_spec(app), Vec::new())),
        (None, Some(_)) => return Err(WdError::invalid("appium:app must be a non-empty string")),
        (None, None) => None,
    };
    let size = match matched.get("wayrig:size") {
        None => None,
        Some(Value::String(s)) => Some(size_of(s)?),
        Some(_) => return Err(WdError::invalid("wayrig:size is a string, as \"1280x800\"")),
    };
    let scale = match matched.get("wayrig:scale") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(s) if s > 0.0 && s <= 8.0 => Some(s),
            _ => return Err(WdError::invalid("wayrig:scale is a number in (0, 8]")),
        },
    };
    let env = match matched.get("wayrig:env") {
        None => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(v) if !k.is_empty() && !k.contains(['=', '\0']) && !v.contains('\0') => {
                    Ok((k.clone(), v.to_string()))
                }
                _ => Err(WdError::invalid(format!(
                    "wayrig:env maps names to strings; {k:?} is not one"
                ))),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(WdError::invalid("wayrig:env is an object of strings")),
    };
    let implicit_ms = match matched.get("timeouts").and_then(|t| t.get("implicit")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| WdError::invalid("timeouts.implicit is whole milliseconds"))?,
        ),
    };
    Ok(Asked {
        app,
        size,
        scale,
        env,
        implicit_ms,
        matched,
    })
}

/// `wayrig:app`: the program and its arguments, run without a shell.
fn argv_of(v: &Value) -> Result<(AppSpec, Vec<String>), WdError> {
    let argv: Option<Vec<String>> = v.as_array().and_then(|a| {
        a.iter()
            .map(|s| s.as_str().filter(|s| !s.contains('\0')).map(str::to_string))
            .collect()
    });
    match argv {
        Some(argv) if !argv.is_empty() && !argv[0].is_empty() => {
            Ok((AppSpec::Executable(argv[0].clone()), argv[1..].to_vec()))
        }
        _ => Err(WdError::invalid(
            "wayrig:app is the app's argument vector, program first, as [\"gnome-calculator\"]",
        )),
    }
}

/// `appium:app`: a path, a desktop id, or an app's name.
fn app_spec(app: &str) -> AppSpec {
    if app.starts_with('/') {
        AppSpec::Executable(app.to_string())
    } else if app.ends_with(".desktop") {
        AppSpec::DesktopId(app.to_string())
    } else {
        AppSpec::Name(app.to_string())
    }
}

fn size_of(s: &str) -> Result<(i32, i32), WdError> {
    let bad = || WdError::invalid(format!("wayrig:size {s:?} is not WIDTHxHEIGHT, 1 to 16384"));
    let (w, h) = s.split_once('x').ok_or_else(bad)?;
    let (w, h): (i32, i32) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
    if !(1..=16384).contains(&w) || !(1..=16384).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn always_match_merges_into_the_first_first_match_that_fits() {
        let asked = process(&json!({"capabilities": {
            "alwaysMatch": {"wayrig:app": ["gtk4-demo", "--run=x"], "platformName": "linux"},
            "firstMatch": [{"browserName": "chrome"}, {"wayrig:size": "800x600"}],
        }}))
        .unwrap();
        assert_eq!(
            asked.app,
            Some((
                AppSpec::Executable("gtk4-demo".into()),
                vec!["--run=x".into()]
            ))
        );
        assert_eq!(asked.size, Some((800, 600)));
        assert!(!asked.matched.contains_key("browserName"));
    }

    #[test]
    fn a_capability_in_both_lists_an_unknown_one_and_bad_values_are_invalid_arguments() {
        for body in [
            json!({"capabilities": {"alwaysMatch": {"wayrig:size": "1x1"}, "firstMatch": [{"wayrig:size": "2x2"}]}}),
            json!({"capabilities": {"alwaysMatch": {"colour": "red"}}}),
            json!({"capabilities": {"alwaysMatch": {"wayrig:app": []}}}),
            json!({"capabilities": {"alwaysMatch": {"wayrig:app": ["a\u{0}b"]}}}),
            json!({"capabilities": {"alwaysMatch": {"wayrig:size": "0x10"}}}),
            json!({"capabilities": {"alwaysMatch": {"wayrig:scale": -1}}}),
            json!({"capabilities": {"alwaysMatch": {"wayrig:env": {"A": 1}}}}),
            json!({"capabilities": {"firstMatch": []}}),
            json!({"capabilities": 3}),
        ] {
            let e = process(&body).unwrap_err();
            assert_eq!(e.code, "invalid argument", "{body}: {e:?}");
        }
    }

    #[test]
    fn a_browser_or_another_platform_is_no_match() {
        let e = process(&json!({"capabilities": {"alwaysMatch": {"browserName": "firefox"}}}))
            .unwrap_err();
        assert_eq!(e.code, "session not created");
        assert!(e.message.contains("wayrig:app"), "{}", e.message);
        let e = process(&json!({"capabilities": {"alwaysMatch": {"platformName": "windows"}}}))
            .unwrap_err();
        assert_eq!(e.code, "session not created");
    }

    #[test]
    fn appium_app_names_a_path_a_desktop_id_or_an_app() {
        let app = |a: &str| {
            process(&json!({"capabilities": {"alwaysMatch": {"appium:app": a}}}))
                .unwrap()
                .app
                .unwrap()
                .0
        };
        assert_eq!(
            app("/usr/bin/foot"),
            AppSpec::Executable("/usr/bin/foot".into())
        );
        assert_eq!(
            app("org.gtk.Demo4.desktop"),
            AppSpec::DesktopId("org.gtk.Demo4.desktop".into())
        );
        assert_eq!(app("Calculator"), AppSpec::Name("Calculator".into()));
    }
}
