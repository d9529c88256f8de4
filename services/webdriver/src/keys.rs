//! Send Keys text as input: WebDriver's keys in the private-use range
//! (U+E000 to U+E05D) become key presses, modifiers held until the null key
//! or the end; everything else is typed as text, in any script.

use wayrig_host::InputEvent;

use crate::error::WdError;

/// The keysym of a WebDriver key, and whether it is a modifier held down.
pub(crate) fn key_of(c: char) -> Option<(&'static str, bool)> {
    Some(match c as u32 {
        0xE002 => ("Help", false),
        0xE003 => ("BackSpace", false),
        0xE004 => ("Tab", false),
        0xE005 => ("Clear", false),
        0xE006 | 0xE007 => ("Return", false),
        0xE008 | 0xE050 => ("Shift_L", true),
        0xE009 | 0xE051 => ("Control_L", true),
        0xE00A | 0xE052 => ("Alt_L", true),
        0xE00B => ("Pause", false),
        0xE00C => ("Escape", false),
        0xE00D => ("space", false),
        0xE00E | 0xE054 => ("Page_Up", false),
        0xE00F | 0xE055 => ("Page_Down", false),
        0xE010 | 0xE056 => ("End", false),
        0xE011 | 0xE057 => ("Home", false),
        0xE012 | 0xE058 => ("Left", false),
        0xE013 | 0xE059 => ("Up", false),
        0xE014 | 0xE05A => ("Right", false),
        0xE015 | 0xE05B => ("Down", false),
        0xE016 | 0xE05C => ("Insert", false),
        0xE017 | 0xE05D => ("Delete", false),
        0xE018 => ("semicolon", false),
        0xE019 => ("equal", false),
        0xE01A => ("KP_0", false),
        0xE01B => ("KP_1", false),
        0xE01C => ("KP_2", false),
        0xE01D => ("KP_3", false),
        0xE01E => ("KP_4", false),
        0xE01F => ("KP_5", false),
        0xE020 => ("KP_6", false),
        0xE021 => ("KP_7", false),
        0xE022 => ("KP_8", false),
        0xE023 => ("KP_9", false),
        0xE024 => ("KP_Multiply", false),
        0xE025 => ("KP_Add", false),
        0xE026 => ("KP_Separator", false),
        0xE027 => ("KP_Subtract", false),
        0xE028 => ("KP_Decimal", false),
        0xE029 => ("KP_Divide", false),
        0xE031 => ("F1", false),
        0xE032 => ("F2", false),
        0xE033 => ("F3", false),
        0xE034 => ("F4", false),
        0xE035 => ("F5", false),
        0xE036 => ("F6", false),
        0xE037 => ("F7", false),
        0xE038 => ("F8", false),
        0xE039 => ("F9", false),
        0xE03A => ("F10", false),
        0xE03B => ("F11", false),
        0xE03C => ("F12", false),
        0xE03D | 0xE053 => ("Super_L", true),
        _ => return None,
    })
}

/// The input events that type `text` as Send Keys means it.
pub fn events(text: &str) -> Result<Vec<InputEvent>, WdError> {
    let mut out = Vec::new();
    let mut typed = String::new();
    let mut held: Vec<&'static str> = Vec::new();
    let flush = |typed: &mut String, out: &mut Vec<InputEvent>| {
        if !typed.is_empty() {
            out.push(InputEvent::Text {
                text: std::mem::take(typed),
            });
        }
    };
    let release = |held: &mut Vec<&'static str>, out: &mut Vec<InputEvent>| {
        for key in held.drain(..).rev() {
            out.push(InputEvent::KeyUp { key: key.into() });
        }
    };
    for c in text.chars() {
        if c == '\u{E000}' {
            flush(&mut typed, &mut out);
            release(&mut held, &mut out);
            continue;
        }
        match key_of(c) {
            Some((key, true)) => {
                flush(&mut typed, &mut out);
                if !held.contains(&key) {
                    held.push(key);
                    out.push(InputEvent::KeyDown { key: key.into() });
                }
            }
            Some((key, false)) => {
                flush(&mut typed, &mut out);
                out.push(InputEvent::Key { key: key.into() });
            }
            None if ('\u{E000}'..='\u{F8FF}').contains(&c) && (c as u32) <= 0xE05D => {
                return Err(WdError::invalid(format!(
                    "WebDriver key U+{:04X} has no key on Linux",
                    c as u32
                )))
            }
            // With a modifier held, a character is a key of its own (Ctrl+A).
            None if !held.is_empty() && c.is_ascii_alphanumeric() => {
                out.push(InputEvent::Key {
                    key: c.to_ascii_lowercase().to_string(),
                });
            }
            None => typed.push(c),
        }
    }
    flush(&mut typed, &mut out);
    release(&mut held, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keys_and_held_modifiers_come_out_in_order() {
        let got = events("héllo\u{E007}\u{E009}a\u{E000}x").unwrap();
        assert_eq!(
            got,
            vec![
                InputEvent::Text {
                    text: "héllo".into()
                },
                InputEvent::Key {
                    key: "Return".into()
                },
                InputEvent::KeyDown {
                    key: "Control_L".into()
                },
                InputEvent::Key { key: "a".into() },
                InputEvent::KeyUp {
                    key: "Control_L".into()
                },
                InputEvent::Text { text: "x".into() },
            ]
        );
    }

    #[test]
    fn modifiers_still_held_at_the_end_are_released() {
        let got = events("\u{E008}\u{E00A}").unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(
            got[3],
            InputEvent::KeyUp {
                key: "Shift_L".into()
            }
        );
    }
}
