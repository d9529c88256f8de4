//! Input through zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1: one
//! pointer and one keyboard kept for the portal's life, so no first key is lost.
//!
//! Keys go out on the session's US keymap; text on temporary keymaps holding
//! exactly its characters, as Wayrig's own compositor types it.

use std::os::fd::AsFd;
use std::time::Instant;

use wayland_client::protocol::wl_pointer;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;
use wayrig_host::{Button, HostError, HostResult, Mods, Rect};
use wayrig_keys::{self as keys, SessionKeymap, SessionKeys};

use crate::wayland::{memfd, Wayland};

/// Logical points one wheel click scrolls, as Wayrig's compositor counts them.
pub const WHEEL_CLICK: f64 = 15.0;
/// The evdev codes of the pointer buttons.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;
/// XKB keycodes are evdev codes plus 8.
const EVDEV_OFFSET: u32 = 8;
/// wl_keyboard.keymap_format.xkb_v1.
const KEYMAP_XKB_V1: u32 = 1;

/// A pointer and a keyboard the portal sends input on: the compositor's
/// virtual devices, or uinput's.
pub trait InputDevices: Send {
    /// Move to a global position within `layout` (the outputs' union).
    fn move_to(&mut self, x: f64, y: f64, layout: Rect) -> HostResult<()>;
    fn button(&mut self, button: Button, pressed: bool) -> HostResult<()>;
    fn wheel(&mut self, dx: f64, dy: f64, precise: bool) -> HostResult<()>;
    /// Press (`down`) or release a key named as accelerators write it, with its modifiers.
    fn key(&mut self, name: &str, down: bool) -> HostResult<()>;
    /// Type `text`.
    fn text(&mut self, text: &str) -> HostResult<()>;
    /// The pointer's last position, global logical points.
    fn position(&self) -> (f64, f64);
    /// The buttons held now.
    fn buttons(&self) -> Vec<Button>;
}

/// Which keymap the virtual keyboard holds now.
#[derive(Debug, PartialEq)]
enum Loaded {
    None,
    Session,
    Text(Vec<char>),
}

/// The portal's virtual pointer and keyboard, and what it has sent on them.
pub struct VirtualInput {
    pointer: ZwlrVirtualPointerV1,
    keyboard: ZwpVirtualKeyboardV1,
    session: SessionKeys,
    loaded: Loaded,
    start: Instant,
    position: (f64, f64),
    buttons: Vec<Button>,
}

impl VirtualInput {
    /// Create the devices on the compositor's seat; `Err` says what is missing.
    pub fn create(wayland: &Wayland) -> Result<VirtualInput, String> {
        let g = &wayland.globals;
        let seat = g.seat.as_ref().ok_or("the compositor offers no wl_seat")?;
        let pointers = g
            .virtual_pointer
            .as_ref()
            .ok_or("the compositor offers no zwlr_virtual_pointer_manager_v1")?;
        let keyboards = g
            .virtual_keyboard
            .as_ref()
            .ok_or("the compositor offers no zwp_virtual_keyboard_manager_v1")?;
        let pointer = pointers.create_virtual_pointer(Some(seat), &wayland.queue, ());
        let keyboard = keyboards.create_virtual_keyboard(seat, &wayland.queue, ());
        let session = SessionKeymap::new()?.flatten();
        Ok(VirtualInput {
            pointer,
            keyboard,
            session,
            loaded: Loaded::None,
            start: Instant::now(),
            position: (0.0, 0.0),
            buttons: Vec::new(),
        })
    }

    fn time(&self) -> u32 {
        self.start.elapsed().as_millis() as u32
    }

    fn load(&mut self, wanted: Loaded, text: &str) -> HostResult<()> {
        if self.loaded == wanted {
            return Ok(());
        }
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        let fd = memfd("wayrig-keymap", bytes.len(), &bytes).map_err(HostError::Failed)?;
        self.keyboard
            .keymap(KEYMAP_XKB_V1, fd.as_fd(), bytes.len() as u32);
        self.loaded = wanted;
        Ok(())
    }
}

impl InputDevices for VirtualInput {
    fn move_to(&mut self, x: f64, y: f64, layout: Rect) -> HostResult<()> {
        if !layout.contains_point(x, y) {
            return Err(HostError::InvalidRequest(format!(
                "({x}, {y}) lies outside the desktop's outputs {layout:?}"
            )));
        }
        let t = self.time();
        self.pointer.motion_absolute(
            t,
            (x - layout.x as f64).round() as u32,
            (y - layout.y as f64).round() as u32,
            layout.width as u32,
            layout.height as u32,
        );
        self.pointer.frame();
        self.position = (x, y);
        Ok(())
    }

    fn button(&mut self, button: Button, pressed: bool) -> HostResult<()> {
        let code = match button {
            Button::Left => BTN_LEFT,
            Button::Right => BTN_RIGHT,
            Button::Middle => BTN_MIDDLE,
        };
        let state = if pressed {
            wl_pointer::ButtonState::Pressed
        } else {
            wl_pointer::ButtonState::Released
        };
        let t = self.time();
        self.pointer.button(t, code, state);
        self.pointer.frame();
        self.buttons.retain(|b| *b != button);
        if pressed {
            self.buttons.push(button);
        }
        Ok(())
    }

    fn wheel(&mut self, dx: f64, dy: f64, precise: bool) -> HostResult<()> {
        let t = self.time();
        self.pointer.axis_source(if precise {
            wl_pointer::AxisSource::Finger
        } else {
            wl_pointer::AxisSource::Wheel
        });
        for (axis, value) in [
            (wl_pointer::Axis::HorizontalScroll, dx),
            (wl_pointer::Axis::VerticalScroll, dy),
        ] {
            if value == 0.0 {
                continue;
            }
            if precise {
                self.pointer.axis(t, axis, value);
            } else {
                let clicks = (value / WHEEL_CLICK).round() as i32;
                self.pointer.axis_discrete(t, axis, value, clicks);
            }
        }
        self.pointer.frame();
        if precise {
            for axis in [
                wl_pointer::Axis::HorizontalScroll,
                wl_pointer::Axis::VerticalScroll,
            ] {
                self.pointer.axis_stop(t, axis);
            }
            self.pointer.frame();
        }
        Ok(())
    }

    fn key(&mut self, name: &str, down: bool) -> HostResult<()> {
        let chord = keys::parse_chord(name).map_err(HostError::InvalidRequest)?;
        let position = self.session.find(chord.keysym).ok_or_else(|| {
            HostError::InvalidRequest(format!(
                "key {name:?} is not on the US keymap; type it as text instead"
            ))
        })?;
        let session = self.session.text.clone();
        self.load(Loaded::Session, &session)?;
        let mods = Mods {
            shift: chord.mods.shift || position.shifted,
            ..chord.mods
        };
        let mask = self.session.mod_mask(&mods);
        let code = position.keycode.raw() - EVDEV_OFFSET;
        let t = self.time();
        if down {
            self.keyboard.modifiers(mask, 0, 0, 0);
            self.keyboard.key(t, code, 1);
        } else {
            self.keyboard.key(t, code, 0);
            self.keyboard.modifiers(0, 0, 0, 0);
        }
        Ok(())
    }

    /// Any Unicode text, on keymaps holding its characters.
    fn text(&mut self, text: &str) -> HostResult<()> {
        keys::check_text(text).map_err(HostError::InvalidRequest)?;
        for (chars, run) in keys::text_runs(text) {
            let (keymap, codes) = keys::text_keymap(&chars).map_err(HostError::Failed)?;
            self.load(Loaded::Text(chars.clone()), &keymap)?;
            self.keyboard.modifiers(0, 0, 0, 0);
            for c in run.chars() {
                let index = chars.iter().position(|k| *k == c).expect("in its run");
                let code = codes[index].raw() - EVDEV_OFFSET;
                let t = self.time();
                self.keyboard.key(t, code, 1);
                self.keyboard.key(t, code, 0);
            }
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
