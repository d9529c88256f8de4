//! Input through /dev/uinput: an absolute pointer mapped onto the outputs and
//! a keyboard, which any compositor reading its devices through libinput takes.
//!
//! Keys are sent as evdev codes on the desktop's own keymap, taken to be US:
//! text holding characters that keymap lacks is refused, naming them.

use std::time::Duration;

use evdev::uinput::VirtualDevice;
use evdev::{
    AbsInfo, AbsoluteAxisCode, AttributeSet, EventType, InputEvent, KeyCode, PropType,
    RelativeAxisCode, UinputAbsSetup,
};
use wayrig_host::{Button, HostError, HostResult, Mods, Rect};
use wayrig_keys::{self as keys, SessionKeymap, SessionKeys};

use crate::input::{InputDevices, WHEEL_CLICK};
use crate::sway::SwayIpc;

/// Where the kernel's uinput device is.
pub const UINPUT_PATH: &str = "/dev/uinput";
/// The devices' names, as the compositor lists them.
const POINTER_NAME: &str = "wayrig-uinput-pointer";
const KEYBOARD_NAME: &str = "wayrig-uinput-keyboard";
/// The absolute axes' range; positions are scaled onto the outputs' union.
const ABS_MAX: i32 = 65_535;
/// How long sway may take to list new devices.
const DEVICES_LIMIT: Duration = Duration::from_secs(5);
/// XKB keycodes are evdev codes plus 8.
const EVDEV_OFFSET: u32 = 8;

/// Why uinput cannot be used here, in words that say what to do; `None` when
/// /dev/uinput can be opened for writing.
pub fn unavailable() -> Option<String> {
    let path = std::ffi::CString::new(UINPUT_PATH).expect("no NUL");
    // SAFETY: access(2) with a valid C string; it only reads the file's mode.
    if unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0 {
        return None;
    }
    let err = std::io::Error::last_os_error();
    Some(match err.raw_os_error() {
        Some(libc::ENOENT) => format!(
            "{UINPUT_PATH} does not exist: load the kernel's uinput module \
             (`modprobe uinput`), or use --input virtual on a wlroots desktop"
        ),
        _ => format!(
            "{UINPUT_PATH} is not writable by this user ({err}): add the user to the group \
             that owns it (often `input`) or run attach as root, or use --input virtual"
        ),
    })
}

/// The portal's uinput pointer and keyboard.
pub struct UinputInput {
    pointer: VirtualDevice,
    keyboard: VirtualDevice,
    session: SessionKeys,
    position: (f64, f64),
    buttons: Vec<Button>,
}

fn build_error(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot make the uinput {what} through {UINPUT_PATH}: {e}")
}

impl UinputInput {
    /// Create both devices; with sway's IPC, wait until sway lists them, so
    /// that no first event is lost.
    pub async fn create(sway: Option<&std::path::Path>) -> Result<UinputInput, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        // Subscribed before the devices exist, so their arrival is not missed.
        let mut watcher = match sway {
            Some(path) => {
                let mut events = SwayIpc::connect(path).await?;
                events.subscribe_inputs().await?;
                Some((events, SwayIpc::connect(path).await?))
            }
            None => None,
        };
        let axis = |code| UinputAbsSetup::new(code, AbsInfo::new(0, 0, ABS_MAX, 0, 0, 1));
        let buttons: AttributeSet<KeyCode> =
            [KeyCode::BTN_LEFT, KeyCode::BTN_RIGHT, KeyCode::BTN_MIDDLE]
                .into_iter()
                .collect();
        let wheels: AttributeSet<RelativeAxisCode> =
            [RelativeAxisCode::REL_WHEEL, RelativeAxisCode::REL_HWHEEL]
                .into_iter()
                .collect();
        let pointer_props: AttributeSet<PropType> = [PropType::POINTER].into_iter().collect();
        let pointer = VirtualDevice::builder()
            .and_then(|b| b.name(POINTER_NAME).with_keys(&buttons))
            .and_then(|b| b.with_absolute_axis(&axis(AbsoluteAxisCode::ABS_X)))
            .and_then(|b| b.with_absolute_axis(&axis(AbsoluteAxisCode::ABS_Y)))
            .and_then(|b| b.with_relative_axes(&wheels))
            .and_then(|b| b.with_properties(&pointer_props))
            .and_then(|b| b.build())
            .map_err(build_error("pointer"))?;
        // Every key code below the first button (BTN_0): a whole keyboard.
        let all_keys: AttributeSet<KeyCode> =
            (1..KeyCode::BTN_0.code()).map(KeyCode::new).collect();
        let keyboard = VirtualDevice::builder()
            .and_then(|b| b.name(KEYBOARD_NAME).with_keys(&all_keys))
            .and_then(|b| b.build())
            .map_err(build_error("keyboard"))?;
        if let Some((events, query)) = watcher.as_mut() {
            wait_listed(events, query).await?;
        }
        Ok(UinputInput {
            pointer,
            keyboard,
            session: SessionKeymap::new()?.flatten(),
            position: (0.0, 0.0),
            buttons: Vec::new(),
        })
    }

    fn emit(device: &mut VirtualDevice, events: &[InputEvent]) -> HostResult<()> {
        device
            .emit(events)
            .map_err(|e| HostError::Failed(format!("uinput: {e}")))
    }

    fn key_event(code: u16, down: bool) -> InputEvent {
        InputEvent::new(EventType::KEY.0, code, i32::from(down))
    }

    fn modifier_codes(mods: &Mods) -> Vec<u16> {
        let mut codes = Vec::new();
        if mods.shift {
            codes.push(KeyCode::KEY_LEFTSHIFT.code());
        }
        if mods.ctrl {
            codes.push(KeyCode::KEY_LEFTCTRL.code());
        }
        if mods.alt {
            codes.push(KeyCode::KEY_LEFTALT.code());
        }
        if mods.logo {
            codes.push(KeyCode::KEY_LEFTMETA.code());
        }
        codes
    }

    /// Press or release `code` with `mods` held around it.
    fn chord(&mut self, code: u16, mods: &Mods, down: bool) -> HostResult<()> {
        let held = Self::modifier_codes(mods);
        let mut events = Vec::new();
        if down {
            events.extend(held.iter().map(|m| Self::key_event(*m, true)));
            events.push(Self::key_event(code, true));
        } else {
            events.push(Self::key_event(code, false));
            events.extend(held.iter().rev().map(|m| Self::key_event(*m, false)));
        }
        Self::emit(&mut self.keyboard, &events)
    }
}

/// Wait until sway lists both devices: it reads them as udev announces them.
async fn wait_listed(events: &mut SwayIpc, query: &mut SwayIpc) -> Result<(), String> {
    let listed = |names: &[String]| {
        [POINTER_NAME, KEYBOARD_NAME]
            .iter()
            .all(|n| names.iter().any(|m| m == n))
    };
    let waited = tokio::time::timeout(DEVICES_LIMIT, async {
        loop {
            if listed(&query.input_names().await?) {
                return Ok::<(), String>(());
            }
            events.next_event().await?;
        }
    })
    .await;
    match waited {
        Ok(result) => result,
        Err(_) => Err(format!(
            "sway did not take the uinput devices within {DEVICES_LIMIT:?}: it reads \
             devices only through libinput (not under WLR_BACKENDS=headless alone); \
             use --input virtual"
        )),
    }
}

impl InputDevices for UinputInput {
    fn move_to(&mut self, x: f64, y: f64, layout: Rect) -> HostResult<()> {
        if !layout.contains_point(x, y) || layout.width <= 0 || layout.height <= 0 {
            return Err(HostError::InvalidRequest(format!(
                "({x}, {y}) lies outside the desktop's outputs {layout:?}"
            )));
        }
        let scale = |v: f64, origin: i32, size: i32| {
            ((v - origin as f64) / size as f64 * ABS_MAX as f64).round() as i32
        };
        let events = [
            InputEvent::new(
                EventType::ABSOLUTE.0,
                AbsoluteAxisCode::ABS_X.0,
                scale(x, layout.x, layout.width),
            ),
            InputEvent::new(
                EventType::ABSOLUTE.0,
                AbsoluteAxisCode::ABS_Y.0,
                scale(y, layout.y, layout.height),
            ),
        ];
        Self::emit(&mut self.pointer, &events)?;
        self.position = (x, y);
        Ok(())
    }

    fn button(&mut self, button: Button, pressed: bool) -> HostResult<()> {
        let code = match button {
            Button::Left => KeyCode::BTN_LEFT,
            Button::Right => KeyCode::BTN_RIGHT,
            Button::Middle => KeyCode::BTN_MIDDLE,
        };
        Self::emit(&mut self.pointer, &[Self::key_event(code.code(), pressed)])?;
        self.buttons.retain(|b| *b != button);
        if pressed {
            self.buttons.push(button);
        }
        Ok(())
    }

    fn wheel(&mut self, dx: f64, dy: f64, _precise: bool) -> HostResult<()> {
        // Whole clicks only: a wheel device has no finer steps.
        let clicks = |v: f64| {
            let n = (v / WHEEL_CLICK).round() as i32;
            if n == 0 && v != 0.0 {
                v.signum() as i32
            } else {
                n
            }
        };
        let events = [
            InputEvent::new(
                EventType::RELATIVE.0,
                RelativeAxisCode::REL_HWHEEL.0,
                clicks(dx),
            ),
            // Positive dy scrolls down; the wheel counts up as positive.
            InputEvent::new(
                EventType::RELATIVE.0,
                RelativeAxisCode::REL_WHEEL.0,
                -clicks(dy),
            ),
        ];
        Self::emit(&mut self.pointer, &events)
    }

    fn key(&mut self, name: &str, down: bool) -> HostResult<()> {
        let chord = keys::parse_chord(name).map_err(HostError::InvalidRequest)?;
        let position = self.session.find(chord.keysym).ok_or_else(|| {
            HostError::InvalidRequest(format!(
                "key {name:?} is not on the US keymap; type it as text instead"
            ))
        })?;
        let mods = Mods {
            shift: chord.mods.shift || position.shifted,
            ..chord.mods
        };
        let code = (position.keycode.raw() - EVDEV_OFFSET) as u16;
        self.chord(code, &mods, down)
    }

    fn text(&mut self, text: &str) -> HostResult<()> {
        keys::check_text(text).map_err(HostError::InvalidRequest)?;
        let mut strokes = Vec::new();
        let mut missing = String::new();
        for c in text.chars() {
            match keys::char_keysym(c).and_then(|k| self.session.find(k)) {
                Some(p) => strokes.push(p),
                None if !missing.contains(c) => missing.push(c),
                None => {}
            }
        }
        if !missing.is_empty() {
            return Err(HostError::Unsupported(format!(
                "typing {missing:?} through uinput: a uinput keyboard sends keys on the \
                 desktop's keymap (taken to be US), which lacks these characters; attach \
                 with --input virtual on a wlroots desktop to type any script"
            )));
        }
        for p in strokes {
            let mods = Mods {
                shift: p.shifted,
                ..Mods::default()
            };
            let code = (p.keycode.raw() - EVDEV_OFFSET) as u16;
            self.chord(code, &mods, true)?;
            self.chord(code, &mods, false)?;
        }
        Ok(())
    }

    fn position(&self) -> (f64, f64) {
        self.position
    }

    fn buttons(&self) -> Vec<Button> {
        self.buttons.clone()
    }
}
