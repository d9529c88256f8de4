//! Keys as menu accelerators write them (`CmdOrCtrl+Shift+Z`), the session's
//! US keymap they are found in, and the temporary keymaps arbitrary text is typed with.
//!
//! Pure xkbcommon logic: no seat, no client; both hosts send what this computes.

use wayrig_host::Mods;
pub use xkbcommon::xkb;
use xkbcommon::xkb::{Keycode, Keysym};

/// The session keyboard's XKB names: a US layout, the same on every machine.
pub const SESSION_RULES: &str = "evdev";
pub const SESSION_MODEL: &str = "pc105";
pub const SESSION_LAYOUT: &str = "us";

/// A key and the modifiers written with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub mods: Mods,
    pub keysym: Keysym,
}

/// Named keys (lower case) and their keysyms; single characters and X keysym
/// names are accepted too.
const NAMED_KEYS: &[(&str, u32)] = &[
    ("enter", xkb::keysyms::KEY_Return),
    ("return", xkb::keysyms::KEY_Return),
    ("tab", xkb::keysyms::KEY_Tab),
    ("space", xkb::keysyms::KEY_space),
    ("backspace", xkb::keysyms::KEY_BackSpace),
    ("delete", xkb::keysyms::KEY_Delete),
    ("del", xkb::keysyms::KEY_Delete),
    ("insert", xkb::keysyms::KEY_Insert),
    ("ins", xkb::keysyms::KEY_Insert),
    ("escape", xkb::keysyms::KEY_Escape),
    ("esc", xkb::keysyms::KEY_Escape),
    ("home", xkb::keysyms::KEY_Home),
    ("end", xkb::keysyms::KEY_End),
    ("pageup", xkb::keysyms::KEY_Page_Up),
    ("pgup", xkb::keysyms::KEY_Page_Up),
    ("pagedown", xkb::keysyms::KEY_Page_Down),
    ("pgdn", xkb::keysyms::KEY_Page_Down),
    ("up", xkb::keysyms::KEY_Up),
    ("arrowup", xkb::keysyms::KEY_Up),
    ("down", xkb::keysyms::KEY_Down),
    ("arrowdown", xkb::keysyms::KEY_Down),
    ("left", xkb::keysyms::KEY_Left),
    ("arrowleft", xkb::keysyms::KEY_Left),
    ("right", xkb::keysyms::KEY_Right),
    ("arrowright", xkb::keysyms::KEY_Right),
    ("plus", xkb::keysyms::KEY_plus),
    ("minus", xkb::keysyms::KEY_minus),
    ("capslock", xkb::keysyms::KEY_Caps_Lock),
    ("numlock", xkb::keysyms::KEY_Num_Lock),
    ("scrolllock", xkb::keysyms::KEY_Scroll_Lock),
    ("printscreen", xkb::keysyms::KEY_Print),
    ("print", xkb::keysyms::KEY_Print),
    ("pause", xkb::keysyms::KEY_Pause),
    ("menu", xkb::keysyms::KEY_Menu),
    ("contextmenu", xkb::keysyms::KEY_Menu),
    ("num0", xkb::keysyms::KEY_KP_0),
    ("num1", xkb::keysyms::KEY_KP_1),
    ("num2", xkb::keysyms::KEY_KP_2),
    ("num3", xkb::keysyms::KEY_KP_3),
    ("num4", xkb::keysyms::KEY_KP_4),
    ("num5", xkb::keysyms::KEY_KP_5),
    ("num6", xkb::keysyms::KEY_KP_6),
    ("num7", xkb::keysyms::KEY_KP_7),
    ("num8", xkb::keysyms::KEY_KP_8),
    ("num9", xkb::keysyms::KEY_KP_9),
    ("numadd", xkb::keysyms::KEY_KP_Add),
    ("numsub", xkb::keysyms::KEY_KP_Subtract),
    ("nummult", xkb::keysyms::KEY_KP_Multiply),
    ("numdiv", xkb::keysyms::KEY_KP_Divide),
    ("numdec", xkb::keysyms::KEY_KP_Decimal),
    ("volumeup", xkb::keysyms::KEY_XF86AudioRaiseVolume),
    ("volumedown", xkb::keysyms::KEY_XF86AudioLowerVolume),
    ("volumemute", xkb::keysyms::KEY_XF86AudioMute),
    ("medianexttrack", xkb::keysyms::KEY_XF86AudioNext),
    ("mediaprevioustrack", xkb::keysyms::KEY_XF86AudioPrev),
    ("mediastop", xkb::keysyms::KEY_XF86AudioStop),
    ("mediaplaypause", xkb::keysyms::KEY_XF86AudioPlay),
];

fn modifier(token: &str, mods: &mut Mods) -> bool {
    match token.to_ascii_lowercase().as_str() {
        "shift" => mods.shift = true,
        "ctrl" | "control" | "cmdorctrl" | "commandorcontrol" => mods.ctrl = true,
        "alt" | "option" | "altgr" => mods.alt = true,
        "super" | "meta" | "cmd" | "command" | "logo" | "win" => mods.logo = true,
        _ => return false,
    }
    true
}

/// The keysym a key name stands for.
fn key_keysym(name: &str) -> Option<Keysym> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        // Accelerators name letter keys in either case: "Ctrl+Z" is Ctrl and the Z key.
        let c = c.to_ascii_lowercase();
        let sym = xkb::utf32_to_keysym(c as u32);
        return (sym.raw() != xkb::keysyms::KEY_NoSymbol).then_some(sym);
    }
    let lower = name.to_ascii_lowercase();
    if let Some((_, sym)) = NAMED_KEYS.iter().find(|(n, _)| *n == lower) {
        return Some(Keysym::new(*sym));
    }
    if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u32>().ok()) {
        if (1..=24).contains(&n) {
            return Some(Keysym::new(xkb::keysyms::KEY_F1 + n - 1));
        }
    }
    let sym = xkb::keysym_from_name(name, xkb::KEYSYM_NO_FLAGS);
    (sym.raw() != xkb::keysyms::KEY_NoSymbol).then_some(sym)
}

/// Parse `Ctrl+Shift+Z`, `Enter`, `CmdOrCtrl++`, `=`: modifiers, then one key.
pub fn parse_chord(text: &str) -> Result<Chord, String> {
    if text.is_empty() {
        return Err("empty key name".into());
    }
    // A trailing "+" after a separator is the plus key itself.
    let (prefix, key) = if text == "+" {
        ("", "+")
    } else if let Some(prefix) = text.strip_suffix("++") {
        (prefix, "+")
    } else {
        match text.rsplit_once('+') {
            Some((prefix, key)) => (prefix, key),
            None => ("", text),
        }
    };
    let mut mods = Mods::default();
    if !prefix.is_empty() {
        for token in prefix.split('+') {
            if !modifier(token, &mut mods) {
                return Err(format!("unknown modifier {token:?} in key {text:?}"));
            }
        }
    }
    if key.is_empty() {
        return Err(format!("key {text:?} names no key after its modifiers"));
    }
    // A modifier alone ("Shift") is a key too.
    let keysym = match key_keysym(key) {
        Some(sym) => sym,
        None => {
            let mut alone = Mods::default();
            if modifier(key, &mut alone) {
                modifier_keysym(&alone)
            } else {
                return Err(format!("unknown key {key:?} in {text:?}"));
            }
        }
    };
    Ok(Chord { mods, keysym })
}

fn modifier_keysym(m: &Mods) -> Keysym {
    Keysym::new(if m.shift {
        xkb::keysyms::KEY_Shift_L
    } else if m.ctrl {
        xkb::keysyms::KEY_Control_L
    } else if m.alt {
        xkb::keysyms::KEY_Alt_L
    } else {
        xkb::keysyms::KEY_Super_L
    })
}

/// The keysyms of held modifiers, in the order they are pressed.
pub fn modifier_keysyms(mods: &Mods) -> Vec<Keysym> {
    let mut syms = Vec::new();
    if mods.shift {
        syms.push(Keysym::new(xkb::keysyms::KEY_Shift_L));
    }
    if mods.ctrl {
        syms.push(Keysym::new(xkb::keysyms::KEY_Control_L));
    }
    if mods.alt {
        syms.push(Keysym::new(xkb::keysyms::KEY_Alt_L));
    }
    if mods.logo {
        syms.push(Keysym::new(xkb::keysyms::KEY_Super_L));
    }
    syms
}

/// Where a keysym sits on the session keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPosition {
    pub keycode: Keycode,
    /// The keysym is on the shifted level.
    pub shifted: bool,
}

/// The session keymap, compiled on our side for lookups.
pub struct SessionKeymap {
    keymap: xkb::Keymap,
}

impl SessionKeymap {
    pub fn new() -> Result<Self, String> {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let keymap = xkb::Keymap::new_from_names(
            &context,
            SESSION_RULES,
            SESSION_MODEL,
            SESSION_LAYOUT,
            "",
            None,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or("cannot compile the US keymap (is xkb-data installed?)")?;
        Ok(SessionKeymap { keymap })
    }

    /// The keymap as plain data: its XKB text, where each keysym sits, and
    /// the modifier masks (a compiled keymap cannot cross threads; this can).
    pub fn flatten(&self) -> SessionKeys {
        let mut positions = std::collections::HashMap::new();
        self.keymap.key_for_each(|keymap, keycode| {
            for level in 0..keymap.num_levels_for_key(keycode, 0).min(2) {
                for sym in keymap.key_get_syms_by_level(keycode, 0, level) {
                    positions.entry(sym.raw()).or_insert(KeyPosition {
                        keycode,
                        shifted: level == 1,
                    });
                }
            }
        });
        let bit = |name: &str| {
            let index = self.keymap.mod_get_index(name);
            if index == xkb::MOD_INVALID {
                0
            } else {
                1u32 << index
            }
        };
        SessionKeys {
            text: self.keymap.get_as_string(xkb::KEYMAP_FORMAT_TEXT_V1),
            positions,
            masks: [
                bit(xkb::MOD_NAME_SHIFT),
                bit(xkb::MOD_NAME_CTRL),
                bit(xkb::MOD_NAME_ALT),
                bit(xkb::MOD_NAME_LOGO),
            ],
        }
    }

    /// The first key producing `keysym` on level 1 or 2 of the first layout.
    pub fn find(&self, keysym: Keysym) -> Option<KeyPosition> {
        let mut found = None;
        self.keymap.key_for_each(|keymap, keycode| {
            if found.is_some() {
                return;
            }
            for level in 0..keymap.num_levels_for_key(keycode, 0).min(2) {
                if keymap
                    .key_get_syms_by_level(keycode, 0, level)
                    .contains(&keysym)
                {
                    found = Some(KeyPosition {
                        keycode,
                        shifted: level == 1,
                    });
                    return;
                }
            }
        });
        found
    }
}

/// The session keymap flattened: what a client sending keys on it needs.
#[derive(Debug, Clone)]
pub struct SessionKeys {
    /// The keymap as XKB text, to hand to a compositor.
    pub text: String,
    positions: std::collections::HashMap<u32, KeyPosition>,
    /// Shift, Control, Alt and Logo's bits in the depressed-modifiers mask.
    masks: [u32; 4],
}

impl SessionKeys {
    /// Where `keysym` sits, as `SessionKeymap::find` answers.
    pub fn find(&self, keysym: Keysym) -> Option<KeyPosition> {
        self.positions.get(&keysym.raw()).copied()
    }

    /// The depressed-modifiers mask for `mods`.
    pub fn mod_mask(&self, mods: &Mods) -> u32 {
        [mods.shift, mods.ctrl, mods.alt, mods.logo]
            .iter()
            .zip(self.masks)
            .filter(|(held, _)| **held)
            .fold(0, |mask, (_, bit)| mask | bit)
    }
}

/// First keycode of a temporary keymap; the rest follow, one per character.
const TEXT_KEYCODE_BASE: u32 = 9;
/// How many distinct characters one temporary keymap holds.
pub const TEXT_KEYMAP_CAPACITY: usize = 247;

/// The keysym name a character is typed with.
fn char_keysym_name(c: char) -> Result<String, String> {
    match c {
        '\n' => Ok("Return".into()),
        '\t' => Ok("Tab".into()),
        c if c.is_control() => Err(format!(
            "cannot type the control character U+{:04X}",
            c as u32
        )),
        c => Ok(format!("U{:04X}", c as u32)),
    }
}

/// The keysym a character is typed with on a keymap that has it (Return for
/// a newline, Tab for a tab); `None` for other control characters.
pub fn char_keysym(c: char) -> Option<Keysym> {
    match c {
        '\n' => Some(Keysym::new(xkb::keysyms::KEY_Return)),
        '\t' => Some(Keysym::new(xkb::keysyms::KEY_Tab)),
        c if c.is_control() => None,
        c => Some(xkb::utf32_to_keysym(c as u32)),
    }
}

/// The chord that makes the character `c` on the session's US layout, as
/// `parse_chord` reads it: a printable ASCII character names its key (the
/// shifted ones found shifted), an uppercase letter is Shift and its key
/// (a bare letter names the key, in either case); `None` for a character
/// no key of the layout makes (type it as text).
pub fn chord_for_char(c: char) -> Option<String> {
    match c {
        ' ' => Some("space".into()),
        'A'..='Z' => Some(format!("Shift+{}", c.to_ascii_lowercase())),
        '!'..='~' => Some(c.to_string()),
        _ => None,
    }
}

/// Check that every character of `text` can be typed.
pub fn check_text(text: &str) -> Result<(), String> {
    text.chars().try_for_each(|c| char_keysym_name(c).map(drop))
}

/// A keymap holding exactly `chars` (distinct, at most `TEXT_KEYMAP_CAPACITY`)
/// and the keycode of each, in order.
pub fn text_keymap(chars: &[char]) -> Result<(String, Vec<Keycode>), String> {
    if chars.len() > TEXT_KEYMAP_CAPACITY {
        return Err(format!("{} characters do not fit one keymap", chars.len()));
    }
    let mut keycodes = String::new();
    let mut symbols = String::new();
    let mut codes = Vec::new();
    for (i, c) in chars.iter().enumerate() {
        let code = TEXT_KEYCODE_BASE + i as u32;
        keycodes.push_str(&format!("    <T{i}> = {code};\n"));
        symbols.push_str(&format!(
            "    key <T{i}> {{ [ {} ] }};\n",
            char_keysym_name(*c)?
        ));
        codes.push(Keycode::new(code));
    }
    let max = (TEXT_KEYCODE_BASE + chars.len() as u32).max(TEXT_KEYCODE_BASE + 1);
    let keymap = format!(
        "xkb_keymap {{\n  xkb_keycodes \"wayrig-text\" {{\n    minimum = 8;\n    maximum = {max};\n{keycodes}  }};\n  \
         xkb_types \"wayrig-text\" {{ include \"complete\" }};\n  \
         xkb_compat \"wayrig-text\" {{ include \"complete\" }};\n  \
         xkb_symbols \"wayrig-text\" {{\n{symbols}  }};\n}};\n"
    );
    Ok((keymap, codes))
}

/// Split text into runs whose distinct characters fit one keymap each.
pub fn text_runs(text: &str) -> Vec<(Vec<char>, String)> {
    let mut runs: Vec<(Vec<char>, String)> = Vec::new();
    for c in text.chars() {
        let fits = runs
            .last()
            .is_some_and(|(set, _)| set.contains(&c) || set.len() < TEXT_KEYMAP_CAPACITY);
        if !fits {
            runs.push((Vec::new(), String::new()));
        }
        let (set, run) = runs.last_mut().expect("a run");
        if !set.contains(&c) {
            set.push(c);
        }
        run.push(c);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(s: &str) -> Chord {
        parse_chord(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn every_character_a_chord_names_is_on_the_session_keyboard() {
        let keymap = SessionKeymap::new().unwrap();
        for c in (' '..='~').chain(['é', '世']) {
            match chord_for_char(c) {
                Some(name) => {
                    let chord = parse_chord(&name).unwrap_or_else(|e| panic!("{c:?}: {e}"));
                    assert!(
                        keymap.find(chord.keysym).is_some(),
                        "{c:?} is on the keyboard"
                    );
                    assert_eq!(chord.mods.shift, c.is_ascii_uppercase(), "{c:?}");
                }
                None => assert!(!c.is_ascii(), "{c:?} has a key"),
            }
        }
    }

    #[test]
    fn accelerators_parse() {
        let c = chord("CmdOrCtrl+Z");
        assert!(c.mods.ctrl && !c.mods.shift);
        assert_eq!(c.keysym.raw(), xkb::keysyms::KEY_z);
        let c = chord("Ctrl+Alt+Delete");
        assert!(c.mods.ctrl && c.mods.alt);
        assert_eq!(c.keysym.raw(), xkb::keysyms::KEY_Delete);
        assert!(chord("Shift+Tab").mods.shift);
        assert_eq!(chord("Enter").keysym.raw(), xkb::keysyms::KEY_Return);
        assert_eq!(chord("F5").keysym.raw(), xkb::keysyms::KEY_F5);
        assert_eq!(chord("ArrowDown").keysym, chord("Down").keysym);
        assert_eq!(chord("PageUp").keysym.raw(), xkb::keysyms::KEY_Page_Up);
        assert_eq!(chord("Space").keysym.raw(), xkb::keysyms::KEY_space);
        assert_eq!(chord("=").keysym.raw(), xkb::keysyms::KEY_equal);
        assert_eq!(chord("-").keysym.raw(), xkb::keysyms::KEY_minus);
        assert_eq!(chord("/").keysym.raw(), xkb::keysyms::KEY_slash);
        assert_eq!(chord("a").keysym.raw(), xkb::keysyms::KEY_a);
        assert_eq!(chord("A").keysym.raw(), xkb::keysyms::KEY_a);
        assert!(!chord("A").mods.shift);
        assert_eq!(chord("Ctrl++").keysym.raw(), xkb::keysyms::KEY_plus);
        assert_eq!(chord("+").keysym.raw(), xkb::keysyms::KEY_plus);
        assert_eq!(chord("Shift").keysym.raw(), xkb::keysyms::KEY_Shift_L);
        assert_eq!(
            chord("XF86AudioPlay").keysym.raw(),
            xkb::keysyms::KEY_XF86AudioPlay
        );
    }

    #[test]
    fn unknown_names_are_named_in_the_error() {
        let e = parse_chord("Ctrl+Frobnicate").unwrap_err();
        assert!(e.contains("Frobnicate"), "{e}");
        let e = parse_chord("Hyperish+A").unwrap_err();
        assert!(e.contains("Hyperish"), "{e}");
        assert!(parse_chord("").is_err());
        assert!(parse_chord("Ctrl+").is_err());
    }

    #[test]
    fn session_keymap_finds_keys_and_levels() {
        let km = SessionKeymap::new().unwrap();
        let a = km.find(Keysym::new(xkb::keysyms::KEY_a)).unwrap();
        assert_eq!((a.keycode.raw(), a.shifted), (38, false)); // evdev KEY_A (30) + 8
        let big_a = km.find(Keysym::new(xkb::keysyms::KEY_A)).unwrap();
        assert_eq!((big_a.keycode, big_a.shifted), (a.keycode, true));
        let bang = km.find(Keysym::new(xkb::keysyms::KEY_exclam)).unwrap();
        assert!(bang.shifted);
        assert!(km.find(Keysym::new(xkb::keysyms::KEY_Return)).is_some());
        assert!(
            km.find(Keysym::new(0x0100_1F600)).is_none(),
            "no emoji on a US keyboard"
        );
    }

    #[test]
    fn the_flattened_keymap_finds_what_the_compiled_one_does() {
        let keymap = SessionKeymap::new().unwrap();
        let keys = keymap.flatten();
        for name in ["a", "A", "Return", "F5", "question", "Control_L"] {
            let sym = xkb::keysym_from_name(name, xkb::KEYSYM_NO_FLAGS);
            assert_eq!(keys.find(sym), keymap.find(sym), "{name}");
        }
        let shift = keys.mod_mask(&Mods {
            shift: true,
            ..Mods::default()
        });
        let both = keys.mod_mask(&Mods {
            shift: true,
            ctrl: true,
            ..Mods::default()
        });
        assert!(shift != 0 && both & shift == shift && both != shift);
        assert!(keys.text.contains("xkb_keymap"));
    }

    #[test]
    fn text_keymaps_compile_and_hold_the_characters() {
        let chars: Vec<char> = "é中😀\u{200d}\u{0301}\nا".chars().collect();
        let (text, codes) = text_keymap(&chars).unwrap();
        let ctx = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let km = xkb::Keymap::new_from_string(
            &ctx,
            text,
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .expect("compiles");
        for (c, code) in chars.iter().zip(&codes) {
            let syms = km.key_get_syms_by_level(*code, 0, 0);
            assert_eq!(syms.len(), 1, "{c:?}");
            if *c == '\n' {
                assert_eq!(syms[0].raw(), xkb::keysyms::KEY_Return);
            } else {
                assert_eq!(xkb::keysym_to_utf32(syms[0]), *c as u32, "{c:?}");
            }
        }
    }

    #[test]
    fn control_characters_are_refused() {
        assert!(check_text("ok\ttab\nline").is_ok());
        let e = check_text("bell\u{7}").unwrap_err();
        assert!(e.contains("U+0007"), "{e}");
    }

    #[test]
    fn long_texts_split_into_runs_that_fit() {
        let text: String = (0..600u32)
            .map(|i| char::from_u32(0x4e00 + i % 500).unwrap())
            .collect();
        let runs = text_runs(&text);
        assert!(runs.len() >= 3);
        assert!(runs
            .iter()
            .all(|(set, _)| set.len() <= TEXT_KEYMAP_CAPACITY));
        assert_eq!(
            runs.iter().map(|(_, r)| r.as_str()).collect::<String>(),
            text
        );
        assert_eq!(text_runs("aaa").len(), 1);
        assert!(text_runs("").is_empty());
    }
}
