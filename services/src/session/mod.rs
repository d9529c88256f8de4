//! The session: one host of apps joined with their accessibility, and the only
//! API a face sees. Its methods are split across this folder by concern.
//!
//! windows: the kept window list, selection and window operations; tree:
//! reading a window's elements; seen: what of them shows, and what names an
//! unlabeled control; elements:
//! queries and pre-order reads; snapshots: named reads and staleness; act:
//! actions on elements; click: a pointer click on an element; menus: the
//! app's menus; launch: starting apps and opening files as a desktop does;
//! input: input in steps, one frame each, queued per window and cancellable;
//! clipboard: the clipboard's text; screenshots: displays and windows as
//! images, kept to map their pixels back; waits: waiting for an element to
//! show or go. The session reaches apps only through `Host`, `Accessibility`
//! and `ExportedMenus`; fake_host and fake_access stand in for them in tests.

mod act;
mod button_menus;
mod click;
mod clipboard;
mod drawn_menus;
mod elements;
#[cfg(any(test, feature = "test-support"))]
pub mod fake_access;
#[cfg(any(test, feature = "test-support"))]
pub mod fake_host;
mod gestures;
mod hit;
mod input;
mod launch;
mod menus;
mod modal;
mod pages;
mod placing;
mod recording;
mod screenshots;
mod seen;
mod snapshots;
mod tree;
mod waits;
mod windows;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use wayrig_host::{
    Capabilities, Capability, Capture, Host, InputEvent, InputOptions, WindowHandle,
};

use crate::a11y::A11y;
use crate::access::{Accessibility, AnnouncementsRead, ExportedMenus};
use crate::bus::PrivateBus;
use crate::gtk_menus::GtkMenus;
use crate::model::Error;

pub use act::{ActOptions, ActReport, Action, Delivery, ElementRef, Path};
pub use click::{ElementClick, ElementClicked};
pub use elements::{
    is_hidden, offered, prefer_controls, Element, Offered, Query, ReadOptions, StateFlag,
};
pub use gestures::{verdicts, PassVerdicts, CLICK_DISTANCE};
pub use input::{Step, StepReport, QUEUE_LIMIT};
pub use launch::{AppSpec, Launch, Launched, OpenTarget};
pub use menus::{Menu, MenuPath, MenuRow, OpenMenu};
pub use recording::RequestTrace;
pub use screenshots::{
    display_of, encode_capture, primary_display, ImageFormat, LogicalRect, Screenshot, ShotRequest,
    ShotSource, DEFAULT_JPEG_QUALITY, KEPT_SHOTS,
};
pub use snapshots::Snapshot;
pub use waits::Expect;
pub use wayrig_host::{ClipboardText, CLIPBOARD_TEXT_LIMIT};
pub use wayrig_model::reading::{reading_order, Placement};
pub use windows::{AppIdentity, Area, CloseOutcome, WindowFilter, WindowOp, WindowPick};

/// How long a window operation may take to show in the window's state.
const WINDOW_OP_LIMIT: Duration = Duration::from_secs(5);

/// The buses a session's apps are on: its own private pair, or a desktop's.
pub struct Buses {
    /// The D-Bus session bus (apps export their menus there).
    pub session: String,
    /// The AT-SPI bus.
    pub a11y: String,
    /// Kept alive for the session's life when the buses are its own.
    _private: Option<PrivateBus>,
}

impl Buses {
    /// The buses of a desktop the session attaches to.
    pub fn existing(session: impl Into<String>, a11y: impl Into<String>) -> Self {
        Buses {
            session: session.into(),
            a11y: a11y.into(),
            _private: None,
        }
    }
}

impl Buses {
    /// The buses of the desktop at `session`: its session bus, and the AT-SPI
    /// bus it names through org.a11y.Bus (activating it if need be).
    pub async fn of_desktop(session: &str) -> Result<Self, Error> {
        let a11y = crate::a11y::desktop_bus_address(session).await?;
        Ok(Buses::existing(session, a11y))
    }
}

impl From<PrivateBus> for Buses {
    fn from(bus: PrivateBus) -> Self {
        Buses {
            session: bus.address.clone(),
            a11y: bus.a11y_address.clone(),
            _private: Some(bus),
        }
    }
}

pub struct Session {
    host: Arc<dyn Host>,
    /// `None` for a session without accessibility: windows, input, capture
    /// and settle work, elements answer `Unsupported`.
    a11y: Option<Arc<dyn Accessibility>>,
    windows: windows::WindowBook,
    /// The last tree of each window, with what it was read at.
    mirror: std::sync::Mutex<HashMap<WindowHandle, tree::Mirrored>>,
    /// One read of a window at a time: a read asked while another is under
    /// way waits for it and starts from what it mirrored.
    reading: std::sync::Mutex<HashMap<WindowHandle, Arc<tokio::sync::Mutex<()>>>>,
    /// How often the session acted on an app (input, accessibility
    /// actions): the first read after an act asks the apps' caches anew.
    acts: std::sync::atomic::AtomicU64,
    snapshots: std::sync::Mutex<snapshots::History>,
    shots: std::sync::Mutex<screenshots::ShotHistory>,
    input_queues: input::InputQueues,
    /// Installed applications, for the names people know apps by.
    installed: std::sync::OnceLock<wayrig_desktop::Applications>,
    /// Where installed applications are found.
    desktop_dirs: std::sync::OnceLock<wayrig_desktop::XdgDirs>,
    /// The menus the apps export on their session bus.
    exported_menus: Option<Arc<dyn ExportedMenus>>,
    _buses: Option<Buses>,
    /// When the session began: the zero of the times its reports give.
    started: std::time::Instant,
    /// How long (ms) an input or action's answer waits for the window to
    /// settle, so that it shows the effect: `EFFECT_WAIT` unless set.
    effect_wait_ms: std::sync::atomic::AtomicU64,
    /// The session's recording, when it is recorded.
    recording: std::sync::Mutex<Option<Arc<wayrig_record::Recording>>>,
    /// Each window's tree before the first act a recorded request made on
    /// it, for the diff its answer writes.
    trees_before_acts: std::sync::Mutex<HashMap<WindowHandle, Vec<wayrig_model::Node>>>,
}

/// How long an input or action's answer waits for its window to settle by
/// default: long enough for a worker's result or a switch's slide, short
/// enough that an app that never settles still answers promptly.
pub const EFFECT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Why an answer came before its window settled, in the visible ASCII a
/// response header or gRPC metadata carries (other characters as `?`).
pub fn unsettled_in_ascii(why: &str) -> String {
    why.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// How long a request in flight when its session stops may go on; then its
/// face answers that Wayrig is stopping (a wait with no end, a client that
/// reads nothing), so that stopping never hangs on a client.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

impl Session {
    /// Join a host whose apps are on `buses` with their accessibility.
    pub async fn new(host: Arc<dyn Host>, buses: impl Into<Buses>) -> Result<Self, Error> {
        let buses = buses.into();
        let a11y = Arc::new(A11y::connect(&buses.a11y).await?);
        let menus = Arc::new(GtkMenus::connect(&buses.session).await?);
        let mut session = Session::with_accessibility(host, a11y).await?;
        session.exported_menus = Some(menus);
        session._buses = Some(buses);
        Ok(session)
    }

    /// Join a host with its apps' accessibility as `a11y` gives it.
    pub async fn with_accessibility(
        host: Arc<dyn Host>,
        a11y: Arc<dyn Accessibility>,
    ) -> Result<Self, Error> {
        let mut session = Session::without_accessibility(host).await?;
        session.a11y = Some(a11y);
        Ok(session)
    }

    /// A session over a host alone, without accessibility buses: what a host
    /// knows (windows, input, capture, settle) and nothing of elements.
    pub async fn without_accessibility(host: Arc<dyn Host>) -> Result<Self, Error> {
        let windows = windows::WindowBook::start(host.clone()).await?;
        Ok(Session {
            host,
            a11y: None,
            windows,
            mirror: Default::default(),
            reading: Default::default(),
            acts: Default::default(),
            snapshots: Default::default(),
            shots: Default::default(),
            input_queues: Default::default(),
            installed: Default::default(),
            desktop_dirs: Default::default(),
            exported_menus: None,
            _buses: None,
            started: std::time::Instant::now(),
            effect_wait_ms: (EFFECT_WAIT.as_millis() as u64).into(),
            recording: Default::default(),
            trees_before_acts: Default::default(),
        })
    }

    /// What the host can do.
    pub fn capabilities(&self) -> Capabilities {
        self.host.capabilities()
    }

    /// The session reads its apps' accessibility (elements can be read and acted on).
    pub fn has_accessibility(&self) -> bool {
        self.a11y.is_some()
    }

    /// Why the host lacks `capability`, as it says it.
    pub fn limit(&self, capability: Capability) -> Option<String> {
        self.host
            .limits()
            .into_iter()
            .find(|l| l.capability == capability)
            .map(|l| l.reason)
    }

    fn require(&self, capability: Capability, feature: &str) -> Result<(), Error> {
        if self.capabilities().has(capability) {
            return Ok(());
        }
        let why = self
            .limit(capability)
            .unwrap_or_else(|| "the host this session runs on cannot do it".into());
        Err(Error::Unsupported(format!("{feature}: {why}")))
    }

    /// Wait until the window has settled (frames, configures, input read) and
    /// every accessibility event its app sent before then has arrived.
    pub async fn settle(&self, handle: WindowHandle, timeout: Duration) -> Result<(), Error> {
        self.require(Capability::FramePacing, "settle")?;
        self.host.settle(handle, timeout).await?;
        self.sync_apps(handle).await
    }

    /// Wait until every accessibility event the window's app sent before now
    /// has arrived.
    pub async fn sync_apps(&self, handle: WindowHandle) -> Result<(), Error> {
        let Some(a11y) = &self.a11y else {
            return Ok(());
        };
        if let Some(pid) = self.pid_of(handle) {
            for app in a11y
                .apps()
                .await?
                .into_iter()
                .filter(|a| a.pid == Some(pid))
            {
                a11y.sync(&app).await?;
            }
        }
        Ok(())
    }

    /// What the window's app announced to assistive technology (AT-SPI
    /// announcement events) that this reader has not had yet, oldest first.
    /// Each reader keeps its own place: one client's read takes nothing
    /// from another's.
    pub async fn announcements(
        &self,
        handle: WindowHandle,
        read: &mut AnnouncementsRead,
    ) -> Result<Vec<String>, Error> {
        let (Some(a11y), Some(pid)) = (&self.a11y, self.pid_of(handle)) else {
            return Ok(Vec::new());
        };
        Ok(a11y
            .apps()
            .await?
            .iter()
            .filter(|a| a.pid == Some(pid))
            .flat_map(|a| a11y.unread_announcements(a, read))
            .collect())
    }

    /// Deliver input events to a window, in order, as one batch.
    pub async fn input(
        &self,
        handle: WindowHandle,
        events: Vec<InputEvent>,
        options: InputOptions,
    ) -> Result<wayrig_host::InputReport, Error> {
        self.require(Capability::Input, "input")?;
        if options.leave_focus && !self.capabilities().has(Capability::BackgroundInput) {
            let why = self.limit(Capability::BackgroundInput).unwrap_or_else(|| {
                "this host cannot deliver input without activating the window".into()
            });
            return Err(Error::WouldActivate(format!(
                "input to window {handle}: {why}"
            )));
        }
        self.refuse_if_blocked(handle).await?;
        let cancels = self.input_queues.cancels_of(handle);
        self.in_turn(
            handle,
            Box::pin(async move {
                // A cancel while it waited for its turn: it is never sent.
                if cancels.has_changed().unwrap_or(true) {
                    return Err(Error::Cancelled(format!(
                        "input to window {handle} was cancelled before it was sent"
                    )));
                }
                self.record_input(handle, &events).await;
                self.count_act();
                Ok(self.host.input(handle, events, options).await?)
            }),
        )
        .await
    }

    /// Note an act on an app: what it changes may show in the apps' caches
    /// before their events say so.
    fn count_act(&self) {
        self.acts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The window's surfaces as rendered now, covered or not, with the
    /// popups it shows (see `capture_with_popups`).
    pub async fn capture(&self, handle: WindowHandle) -> Result<Capture, Error> {
        Ok(self.capture_with_popups(handle).await?.0)
    }

    /// The pointer as the seat has it now.
    pub async fn pointer(&self) -> Result<wayrig_host::PointerState, Error> {
        Ok(self.host.pointer().await?)
    }

    pub(crate) fn exported_menus(&self) -> Option<&dyn ExportedMenus> {
        self.exported_menus.as_deref()
    }

    pub(crate) fn pid_of(&self, handle: WindowHandle) -> Option<u32> {
        self.windows
            .now()
            .iter()
            .find(|w| w.handle == handle)
            .and_then(|w| w.pid)
    }

    pub(crate) fn a11y(&self) -> Result<&dyn Accessibility, Error> {
        self.a11y.as_deref().ok_or_else(|| {
            Error::Unsupported(
                "elements: this session was started without accessibility buses".into(),
            )
        })
    }
}
