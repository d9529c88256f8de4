//! cua.env.v1's Key enum and characters as the host's key names (X keysym
//! names on the session's US layout), and modifier lists as chord prefixes.
//!
//! The mapping table of this face; the host knows no cua key.

use tonic::{Code, Status};
use wayrig_cua_proto::v1;

use crate::errors::{invalid, known, status};

/// The keysym names of keys outside the ranges (letters, digits, F-keys,
/// keypad digits), by the enum's number.
const NAMED: &[(i32, &str)] = &[
    (1, "Shift_L"),
    (2, "Shift_L"),
    (3, "Shift_R"),
    (4, "Control_L"),
    (5, "Control_L"),
    (6, "Control_R"),
    (7, "Alt_L"),
    (8, "Alt_L"),
    (9, "Alt_R"),
    (10, "Super_L"),
    (11, "Super_L"),
    (12, "Super_R"),
    (14, "Caps_Lock"),
    (20, "Return"),
    (21, "Tab"),
    (22, "space"),
    (23, "BackSpace"),
    (24, "Delete"),
    (25, "Escape"),
    (26, "Insert"),
    (27, "Home"),
    (28, "End"),
    (29, "Prior"),
    (30, "Next"),
    (31, "Up"),
    (32, "Down"),
    (33, "Left"),
    (34, "Right"),
    (35, "Menu"),
    (36, "Help"),
    (150, "minus"),
    (151, "equal"),
    (152, "bracketleft"),
    (153, "bracketright"),
    (154, "backslash"),
    (155, "semicolon"),
    (156, "apostrophe"),
    (157, "grave"),
    (158, "comma"),
    (159, "period"),
    (160, "slash"),
    (161, "less"),
    (190, "KP_Add"),
    (191, "KP_Subtract"),
    (192, "KP_Multiply"),
    (193, "KP_Divide"),
    (194, "KP_Decimal"),
    (195, "KP_Enter"),
    (196, "KP_Equal"),
    (197, "Num_Lock"),
    (220, "Print"),
    (221, "Scroll_Lock"),
    (222, "Pause"),
    (240, "XF86AudioPlay"),
    (241, "XF86AudioStop"),
    (242, "XF86AudioNext"),
    (243, "XF86AudioPrev"),
    (244, "XF86AudioRaiseVolume"),
    (245, "XF86AudioLowerVolume"),
    (246, "XF86AudioMute"),
    (247, "XF86MonBrightnessUp"),
    (248, "XF86MonBrightnessDown"),
    (249, "XF86Eject"),
    (250, "XF86PowerOff"),
    (251, "XF86Sleep"),
    (270, "XF86Back"),
    (271, "XF86Forward"),
    (272, "XF86Reload"),
    (273, "XF86HomePage"),
    (274, "XF86Search"),
    (275, "XF86Mail"),
    (276, "XF86MyComputer"),
    (277, "XF86Calculator"),
];

/// The host's name for a named key.
pub fn key_name(value: i32) -> Result<String, Status> {
    let key: v1::Key = known(value, "key")?;
    let n = key as i32;
    let name = match n {
        0 => return Err(invalid("KEY_UNSPECIFIED is not a key")),
        13 => {
            return Err(status(
                Code::FailedPrecondition,
                v1::ErrorReason::DeliveryFailed,
                "KEY_FN is handled by the keyboard itself and reaches no Linux app",
            ))
        }
        60..=83 => format!("F{}", n - 59),
        100..=125 => char::from(b'a' + (n - 100) as u8).to_string(),
        130..=139 => char::from(b'0' + (n - 130) as u8).to_string(),
        // The keypad's digits type digits, as with Num Lock on: the session
        // keyboard's Num Lock is off, where they would move the cursor.
        180..=189 => char::from(b'0' + (n - 180) as u8).to_string(),
        _ => NAMED
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, name)| name.to_string())
            .ok_or_else(|| invalid(format!("key {n} has no key on this server")))?,
    };
    Ok(name)
}

/// The chord for one character on the session's US layout; a character no
/// key makes is DELIVERY_FAILED.
pub fn character_chord(text: &str) -> Result<String, Status> {
    let mut chars = text.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(invalid(format!(
            "character must be one character, not {text:?}; use KeyboardType for text"
        )));
    };
    wayrig_keys::chord_for_char(c).ok_or_else(|| {
        status(
            Code::FailedPrecondition,
            v1::ErrorReason::DeliveryFailed,
            format!("no key of the session's US layout makes {c:?}; type it with KeyboardType"),
        )
    })
}

/// The host's chord for a KeyInput.
pub fn key_input(k: Option<&v1::KeyInput>) -> Result<String, Status> {
    match k.and_then(|k| k.key.as_ref()) {
        Some(v1::key_input::Key::Named(n)) => key_name(*n),
        Some(v1::key_input::Key::Character(c)) => character_chord(c),
        None => Err(invalid("key is required: set KeyInput.named or character")),
    }
}

/// The modifier each key is, in the host's chord words; keys that modify
/// nothing are INVALID_ARGUMENT.
fn modifier_words(keys: &[i32]) -> Result<Vec<&'static str>, Status> {
    keys.iter()
        .map(|&k| {
            let key: v1::Key = known(k, "modifier")?;
            match key as i32 {
                1..=3 => Ok("Shift"),
                4..=6 => Ok("Ctrl"),
                7..=9 => Ok("Alt"),
                10..=12 => Ok("Super"),
                n => Err(invalid(format!(
                    "modifier {n} is not a modifier key; use SHIFT, CONTROL, ALT or META"
                ))),
            }
        })
        .collect()
}

/// A chord prefix for modifier keys (`Shift+Ctrl+`).
pub fn modifiers(keys: &[i32]) -> Result<String, Status> {
    Ok(modifier_words(keys)?
        .iter()
        .map(|w| format!("{w}+"))
        .collect())
}

/// The host's modifier state for a list of modifier keys.
pub fn mods(keys: &[i32]) -> Result<wayrig_host::Mods, Status> {
    let words = modifier_words(keys)?;
    Ok(wayrig_host::Mods {
        shift: words.contains(&"Shift"),
        ctrl: words.contains(&"Ctrl"),
        alt: words.contains(&"Alt"),
        logo: words.contains(&"Super"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_by_range_and_table() {
        assert_eq!(key_name(v1::Key::F1 as i32).unwrap(), "F1");
        assert_eq!(key_name(v1::Key::F24 as i32).unwrap(), "F24");
        assert_eq!(key_name(v1::Key::A as i32).unwrap(), "a");
        assert_eq!(key_name(v1::Key::Z as i32).unwrap(), "z");
        assert_eq!(key_name(v1::Key::Digit9 as i32).unwrap(), "9");
        assert_eq!(key_name(v1::Key::Numpad0 as i32).unwrap(), "0");
        assert_eq!(key_name(v1::Key::Numpad9 as i32).unwrap(), "9");
        assert_eq!(key_name(v1::Key::Enter as i32).unwrap(), "Return");
        assert_eq!(
            key_name(v1::Key::LaunchApp2 as i32).unwrap(),
            "XF86Calculator"
        );
        assert_eq!(key_name(0).unwrap_err().code(), Code::InvalidArgument);
        assert_eq!(key_name(99).unwrap_err().code(), Code::InvalidArgument);
    }

    #[test]
    fn every_key_of_the_enum_has_a_name_or_says_why_not() {
        for n in 1..=300 {
            if v1::Key::try_from(n).is_ok() {
                let named = key_name(n);
                assert!(named.is_ok() || n == v1::Key::Fn as i32, "{n}: {named:?}");
            }
        }
    }

    #[test]
    fn characters_take_shift_where_the_layout_does_and_others_fail_delivery() {
        assert_eq!(character_chord("a").unwrap(), "a");
        assert_eq!(character_chord("A").unwrap(), "Shift+a");
        assert_eq!(character_chord("!").unwrap(), "!");
        let e = character_chord("é").unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition);
        assert_eq!(
            wayrig_cua_proto::error_info(&e).unwrap().reason,
            v1::ErrorReason::DeliveryFailed as i32
        );
        assert_eq!(
            character_chord("ab").unwrap_err().code(),
            Code::InvalidArgument
        );
    }

    #[test]
    fn modifiers_are_only_modifier_keys() {
        assert_eq!(
            modifiers(&[v1::Key::Control as i32, v1::Key::ShiftRight as i32]).unwrap(),
            "Ctrl+Shift+"
        );
        assert!(modifiers(&[v1::Key::A as i32]).is_err());
    }
}
