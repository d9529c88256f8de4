//! A session: one host of apps joined with their accessibility, serving the one
//! model. Windows come from the host; elements from AT-SPI, matched by pid and title.

use std::sync::Arc;

use wayrig_host::{Host, WindowHandle, WindowInfo};

use crate::a11y::{A11y, Frame};
use crate::bus::PrivateBus;
use crate::model::{Error, Tree};

/// How long a newly shown window's app may take to register with accessibility.
const APP_REGISTRATION: std::time::Duration = std::time::Duration::from_secs(5);

pub struct Session {
    host: Arc<dyn Host>,
    a11y: A11y,
    _bus: PrivateBus,
}

impl Session {
    /// Join a host whose apps were given `bus.app_env()` with that bus's accessibility.
    pub async fn new(host: Arc<dyn Host>, bus: PrivateBus) -> Result<Self, Error> {
        let a11y = A11y::connect(&bus.a11y_address).await?;
        Ok(Session {
            host,
            a11y,
            _bus: bus,
        })
    }

    pub fn host(&self) -> &Arc<dyn Host> {
        &self.host
    }

    pub(crate) fn a11y(&self) -> &A11y {
        &self.a11y
    }

    /// A window with its elements; bounds relative to the window's content.
    pub async fn tree(&self, handle: WindowHandle) -> Result<Tree, Error> {
        let windows = self.host.windows().await?;
        let window = windows
            .iter()
            .find(|w| w.handle == handle)
            .cloned()
            .ok_or_else(|| Error::NoWindow(handle.to_string()))?;
        let pid = window.pid.ok_or_else(|| {
            Error::Unsupported(format!(
                "window {handle} has no known process, so no accessibility"
            ))
        })?;
        let mut frames = Vec::new();
        for app in self.a11y.wait_for_app(pid, APP_REGISTRATION).await? {
            frames.extend(self.a11y.read_app(&app).await?);
        }
        // The same app's other windows, in stacking order, for matching by order.
        let siblings: Vec<&WindowInfo> = windows.iter().filter(|w| w.pid == Some(pid)).collect();
        let frame = pick_frame(frames, &window, &siblings).ok_or_else(|| {
            Error::Unsupported(format!(
                "window {handle} (pid {pid}) exposes no accessibility tree; is its toolkit's accessibility on?"
            ))
        })?;
        // GTK 4 reports window coordinates relative to the window's content (its
        // xdg geometry, inside the client-side shadow): exactly the model's frame.
        Ok(Tree {
            window,
            nodes: frame.nodes,
        })
    }
}

/// The frame that is this window: same title, else the same place among the app's frames.
fn pick_frame(
    mut frames: Vec<Frame>,
    window: &WindowInfo,
    siblings: &[&WindowInfo],
) -> Option<Frame> {
    if let Some(i) = frames
        .iter()
        .position(|f| !f.name.is_empty() && f.name == window.title)
    {
        return Some(frames.swap_remove(i));
    }
    let place = siblings
        .iter()
        .position(|w| w.handle == window.handle)
        .unwrap_or(0);
    (place < frames.len()).then(|| frames.swap_remove(place))
}
