//! How a compositor instance is set up: output, pacing, decorations, backend.
//! Filled from the command line by the `wayrig` binary or directly by tests.

use std::path::PathBuf;
use std::sync::Arc;

use wayrig_record::Recording;

pub use wayrig_host::Pacing;

/// Who draws window decorations; chosen once so every run looks the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decorations {
    /// Toolkits draw their own (GTK always does).
    #[default]
    Client,
    /// Toolkits draw none and Wayrig draws none either: bare content.
    Server,
}

impl std::str::FromStr for Decorations {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "client" => Ok(Decorations::Client),
            "server" => Ok(Decorations::Server),
            other => Err(format!(
                "unknown decoration mode {other:?} (expected client or server)"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// Output size in logical points.
    pub width: i32,
    pub height: i32,
    /// Device pixels per logical point (fractional scales are allowed).
    pub scale: f64,
    /// Refresh rate of the virtual output in millihertz.
    pub refresh_mhz: u32,
    pub pacing: Pacing,
    pub decorations: Decorations,
    /// Minimized and fully covered windows keep receiving frame callbacks.
    pub frames_for_hidden: bool,
    /// A thread of an app found running keeps its window from settling.
    pub settle_threads: bool,
    /// Show the output in a window on the user's desktop.
    pub nested: bool,
    /// Stop the compositor once every launched app has exited.
    pub exit_with_last_app: bool,
    /// Where the session's private runtime directory is made (default: the
    /// user's XDG_RUNTIME_DIR, else the system temporary directory).
    pub runtime_parent: Option<PathBuf>,
    /// Environment given to every launched app, on top of the Wayland set-up.
    pub app_env: Vec<(String, String)>,
    /// The session's recording, when it is recorded (`--record`).
    pub record: Option<Arc<Recording>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            width: 1280,
            height: 800,
            scale: 1.0,
            refresh_mhz: 60_000,
            pacing: Pacing::Realtime,
            decorations: Decorations::Client,
            frames_for_hidden: true,
            settle_threads: true,
            nested: false,
            exit_with_last_app: false,
            runtime_parent: None,
            app_env: Vec::new(),
            record: None,
        }
    }
}

impl Config {
    pub fn frame_interval(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(1_000_000_000_000 / u64::from(self.refresh_mhz.max(1)))
    }
}
