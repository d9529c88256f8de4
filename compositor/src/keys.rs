//! The shared key logic (`wayrig-keys`), plus the session keyboard as Smithay's
//! seat is configured with it.

use smithay::input::keyboard::XkbConfig;
pub use wayrig_keys::*;

/// The session keyboard: a US layout, the same on every machine.
pub fn session_xkb_config() -> XkbConfig<'static> {
    XkbConfig {
        rules: SESSION_RULES,
        model: SESSION_MODEL,
        layout: SESSION_LAYOUT,
        variant: "",
        options: None,
    }
}
