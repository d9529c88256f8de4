//! What the desktop's compositor offers, and the capabilities and limits the
//! portal host derives from it, each limit a sentence a user can act on.

use wayrig_host::{Capabilities, Capability, Limit};

/// The protocols and sources the portal found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offered {
    pub foreign_toplevels: bool,
    /// zwlr_screencopy_manager_v1 at version 2 or later, which reports damage.
    pub screencopy_damage: bool,
    pub virtual_pointer: bool,
    pub virtual_keyboard: bool,
    pub seat: bool,
    /// sway's IPC answered (window rectangles, pids and focus).
    pub sway_ipc: bool,
    /// ext-image-copy-capture-v1 with ext-foreign-toplevel-image-capture-source.
    pub window_capture: bool,
    /// ext-foreign-toplevel-list-v1.
    pub toplevel_list: bool,
    /// zwlr_data_control_manager_v1, for the seat's clipboard.
    pub data_control: bool,
    /// Input goes through uinput devices rather than the compositor's virtual ones.
    pub uinput: bool,
}

impl Offered {
    pub fn from_interfaces(interfaces: &[(String, u32)], sway_ipc: bool) -> Offered {
        let has = |name: &str| interfaces.iter().any(|(i, _)| i == name);
        let version = |name: &str| {
            interfaces
                .iter()
                .find(|(i, _)| i == name)
                .map_or(0, |(_, v)| *v)
        };
        Offered {
            foreign_toplevels: has("zwlr_foreign_toplevel_manager_v1"),
            screencopy_damage: version("zwlr_screencopy_manager_v1") >= 2,
            virtual_pointer: has("zwlr_virtual_pointer_manager_v1"),
            virtual_keyboard: has("zwp_virtual_keyboard_manager_v1"),
            seat: has("wl_seat"),
            sway_ipc,
            window_capture: has("ext_image_copy_capture_manager_v1")
                && has("ext_foreign_toplevel_image_capture_source_manager_v1"),
            toplevel_list: has("ext_foreign_toplevel_list_v1"),
            data_control: has("zwlr_data_control_manager_v1"),
            uinput: false,
        }
    }

    fn input(&self) -> bool {
        let devices = self.uinput || (self.virtual_pointer && self.virtual_keyboard && self.seat);
        devices && self.sway_ipc
    }

    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            launch: true,
            // Per-window capture (ext-image-copy-capture) is not used yet.
            capture_covered: false,
            frame_pacing: self.screencopy_damage,
            window_commands: self.foreign_toplevels,
            input: self.input(),
            // The desktop's one pointer and keyboard go where its focus is.
            background_input: false,
            // Read from /proc, whatever the desktop; `--settle-threads`
            // may turn it off (`PortalHost::capabilities`).
            settle_threads: true,
            clipboard: self.data_control && self.seat,
            settle_approximate: true,
        }
    }

    /// One sentence per capability this desktop lacks.
    pub fn limits(&self) -> Vec<Limit> {
        let mut limits = Vec::new();
        let mut limit = |capability, reason: String| limits.push(Limit { capability, reason });
        let covered = if self.window_capture {
            "the compositor offers ext-image-copy-capture-v1 for single windows, which \
             `wayrig attach` does not use yet; captures come from the output, so bring the \
             window to the front first"
        } else {
            "the compositor offers no ext-image-copy-capture-v1 for single windows, so a \
             window is captured from what the output shows; bring it to the front first"
        };
        limit(Capability::CaptureCovered, covered.into());
        limit(
            Capability::BackgroundInput,
            "the desktop's one pointer and keyboard reach only the focused window, and \
             the pointer moves to each click; deliver in the foreground (Wayrig activates \
             the window first), or host the apps under `wayrig run`"
                .into(),
        );
        if !self.screencopy_damage {
            limit(
                Capability::FramePacing,
                "the compositor offers no zwlr_screencopy_manager_v1 (version 2 or later), \
                 so `wayrig attach` cannot see the screen go quiet; wait on the app's own \
                 signals, or run the app under `wayrig run`"
                    .into(),
            );
        }
        if !self.foreign_toplevels {
            let reason = if self.toplevel_list {
                "the compositor lists its windows (ext-foreign-toplevel-list-v1) but offers \
                 no zwlr_foreign_toplevel_manager_v1 to act on them, and `wayrig attach` \
                 does not read the list alone yet"
            } else {
                "the compositor offers no zwlr_foreign_toplevel_manager_v1, so windows can \
                 be neither listed nor activated, minimized or closed; GNOME and KDE need \
                 their portals (see docs/attach-gnome-kde.md)"
            };
            limit(Capability::WindowCommands, reason.into());
        }
        if !self.input() {
            let mut missing = Vec::new();
            if self.uinput {
                // The devices are there; only the places are missing.
            } else if !self.virtual_pointer {
                missing.push("zwlr_virtual_pointer_manager_v1");
            }
            if !self.uinput && !self.virtual_keyboard {
                missing.push("zwp_virtual_keyboard_manager_v1");
            }
            if !self.uinput && !self.seat {
                missing.push("wl_seat");
            }
            let reason = if missing.is_empty() {
                "window positions are unknown without sway's IPC ($SWAYSOCK), and Wayland \
                 tells clients no window positions; attach to sway, or run the app under \
                 `wayrig run`"
                    .to_string()
            } else {
                format!(
                    "the compositor offers no {}; attach with --input uinput where \
                     /dev/uinput is writable, or on GNOME or KDE use the RemoteDesktop \
                     portal (see docs/attach-gnome-kde.md)",
                    missing.join(" or ")
                )
            };
            limit(Capability::Input, reason);
        }
        if !(self.data_control && self.seat) {
            let missing = if self.data_control {
                "wl_seat"
            } else {
                "zwlr_data_control_manager_v1"
            };
            limit(
                Capability::Clipboard,
                format!(
                    "the compositor offers no {missing}, so `wayrig attach` can neither \
                     read nor set the desktop's clipboard; copy and paste inside the app, \
                     or run the app under `wayrig run`"
                ),
            );
        }
        limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sway_1_7() -> Vec<(String, u32)> {
        [
            ("wl_seat", 7),
            ("wl_shm", 1),
            ("zwlr_foreign_toplevel_manager_v1", 3),
            ("zwlr_screencopy_manager_v1", 3),
            ("zwlr_virtual_pointer_manager_v1", 2),
            ("zwp_virtual_keyboard_manager_v1", 1),
            ("zwlr_data_control_manager_v1", 2),
        ]
        .into_iter()
        .map(|(i, v)| (i.to_string(), v))
        .collect()
    }

    #[test]
    fn sway_lacks_covered_capture_and_background_input() {
        let offered = Offered::from_interfaces(&sway_1_7(), true);
        let caps = offered.capabilities();
        assert!(caps.window_commands && caps.input && caps.frame_pacing && caps.launch);
        assert!(caps.clipboard);
        assert!(!caps.capture_covered && caps.settle_approximate);
        let lacking: Vec<Capability> = offered.limits().iter().map(|l| l.capability).collect();
        assert_eq!(
            lacking,
            vec![Capability::CaptureCovered, Capability::BackgroundInput]
        );
    }

    #[test]
    fn a_desktop_without_wlr_protocols_names_each_missing_one() {
        let offered = Offered::from_interfaces(&[("wl_seat".to_string(), 7)], false);
        let caps = offered.capabilities();
        assert!(!caps.window_commands && !caps.input && !caps.frame_pacing);
        let input = offered
            .limits()
            .into_iter()
            .find(|l| l.capability == Capability::Input)
            .unwrap();
        assert!(input.reason.contains("zwlr_virtual_pointer_manager_v1"));
        assert!(input.reason.contains("zwp_virtual_keyboard_manager_v1"));
        assert!(input.reason.contains("RemoteDesktop portal"));
        let clipboard = offered
            .limits()
            .into_iter()
            .find(|l| l.capability == Capability::Clipboard)
            .unwrap();
        assert!(!caps.clipboard);
        assert!(clipboard.reason.contains("zwlr_data_control_manager_v1"));
    }

    #[test]
    fn without_sway_ipc_input_says_positions_are_unknown() {
        let offered = Offered::from_interfaces(&sway_1_7(), false);
        let input = offered
            .limits()
            .into_iter()
            .find(|l| l.capability == Capability::Input)
            .unwrap();
        assert!(input.reason.contains("window positions are unknown"));
    }
}
