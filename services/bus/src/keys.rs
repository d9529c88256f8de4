//! egui's key names and MixOS's modifier words as the chords the host types
//! (`Ctrl+Shift+A`); `Num0`–`Num9` are the digit row, as in egui.
//!
//! Unknown names are refused with what is accepted, never guessed.

/// The host's key text for an egui key name.
pub fn host_key(egui: &str) -> Option<String> {
    let named = match egui {
        "ArrowDown" => "Down",
        "ArrowLeft" => "Left",
        "ArrowRight" => "Right",
        "ArrowUp" => "Up",
        "Escape" => "Escape",
        "Tab" => "Tab",
        "Backspace" => "Backspace",
        "Enter" => "Enter",
        "Space" => "space",
        "Insert" => "Insert",
        "Delete" => "Delete",
        "Home" => "Home",
        "End" => "End",
        "PageUp" => "PageUp",
        "PageDown" => "PageDown",
        "Copy" => "XF86Copy",
        "Cut" => "XF86Cut",
        "Paste" => "XF86Paste",
        "Colon" => ":",
        "Comma" => ",",
        "Backslash" => "\\",
        "Slash" => "/",
        "Pipe" => "|",
        "Questionmark" => "?",
        "Exclamationmark" => "!",
        "OpenBracket" => "[",
        "CloseBracket" => "]",
        "OpenCurlyBracket" => "{",
        "CloseCurlyBracket" => "}",
        "Backtick" => "`",
        "Minus" => "minus",
        "Period" => ".",
        "Plus" => "plus",
        "Equals" => "=",
        "Semicolon" => ";",
        "Quote" => "'",
        _ => "",
    };
    if !named.is_empty() {
        return Some(named.to_string());
    }
    if let Some(digit) = egui.strip_prefix("Num") {
        return (digit.len() == 1 && digit.chars().all(|c| c.is_ascii_digit()))
            .then(|| digit.to_string());
    }
    if egui.len() == 1 && egui.chars().all(|c| c.is_ascii_uppercase()) {
        return Some(egui.to_string());
    }
    if let Some(n) = function_key(egui) {
        return (1..=12).contains(&n).then(|| egui.to_string());
    }
    None
}

/// The number of a function key's egui name: `F20` is 20.
fn function_key(egui: &str) -> Option<u32> {
    egui.strip_prefix('F')?.parse().ok()
}

/// The chord for a key with MixOS modifiers (`ctrl`, `shift`, `alt`, and
/// `command`, which is Ctrl off macOS).
pub fn chord(key: &str, modifiers: &[String]) -> Result<String, String> {
    if function_key(key).is_some_and(|n| (13..=35).contains(&n)) {
        return Err(format!(
            "{key} is an egui key name, but no key of the session's US keyboard sends it: \
             F1 to F12 are there"
        ));
    }
    let key = host_key(key).ok_or_else(|| {
        format!("unknown key {key:?}: use an egui key name such as Enter, Escape, Tab, ArrowDown, A, Num0 or F1")
    })?;
    let (mut ctrl, mut shift, mut alt) = (false, false, false);
    for m in modifiers {
        match m.as_str() {
            "ctrl" | "command" => ctrl = true,
            "shift" => shift = true,
            "alt" => alt = true,
            other => {
                return Err(format!(
                    "unknown modifier {other:?}: use ctrl, shift, alt or command"
                ))
            }
        }
    }
    let mut out = String::new();
    for (on, word) in [(ctrl, "Ctrl+"), (shift, "Shift+"), (alt, "Alt+")] {
        if on {
            out.push_str(word);
        }
    }
    out.push_str(&key);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_names_are_the_digit_row_not_the_keypad() {
        assert_eq!(host_key("Num0").as_deref(), Some("0"));
        assert_eq!(host_key("Num9").as_deref(), Some("9"));
        assert_eq!(host_key("Num10"), None);
    }

    #[test]
    fn egui_names_become_host_keys() {
        assert_eq!(host_key("ArrowDown").as_deref(), Some("Down"));
        assert_eq!(host_key("Enter").as_deref(), Some("Enter"));
        assert_eq!(host_key("F1").as_deref(), Some("F1"));
        assert_eq!(host_key("A").as_deref(), Some("A"));
        assert_eq!(host_key("Colon").as_deref(), Some(":"));
        assert_eq!(host_key("a"), None);
        assert_eq!(host_key("F0"), None);
        assert_eq!(host_key("Hyper"), None);
    }

    #[test]
    fn command_is_ctrl_and_modifiers_come_in_a_fixed_order() {
        let mods = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(chord("A", &mods(&["command"])).unwrap(), "Ctrl+A");
        assert_eq!(
            chord("Z", &mods(&["shift", "ctrl"])).unwrap(),
            "Ctrl+Shift+Z"
        );
        assert!(chord("A", &mods(&["hyper"])).unwrap_err().contains("hyper"));
        assert!(chord("Nope", &[]).unwrap_err().contains("egui key name"));
        assert_eq!(chord("F12", &[]).unwrap(), "F12");
        assert!(chord("F20", &[]).unwrap_err().contains("F1 to F12"));
    }
}
