//! The portal host: Wayrig's `Host` over a desktop's own running compositor,
//! as a Wayland client of its wlr protocols, with sway's IPC for window places.
//!
//! Windows come from zwlr_foreign_toplevel_manager_v1 joined with sway's tree;
//! capture and settle from zwlr_screencopy; input from virtual devices; the
//! clipboard from zwlr_data_control_manager_v1.

mod capture;
mod clipboard;
mod damage;
mod input;
mod probe;
mod sway;
mod uinput;
mod wayland;
mod windows;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wayrig_host::launch::{self, Apps};
use wayrig_host::threads::{self, BusyThread};

use tokio::sync::{broadcast, watch};
use wayrig_host::{
    AppInfo, Capabilities, Capture, ClipboardText, DisplayInfo, FrameWait, Host, HostError,
    HostResult, InputEvent, InputOptions, InputReport, LaunchSpec, Limit, PointerState, Rect,
    Settled, Stepped, WindowCommand, WindowEvent, WindowHandle, WindowInfo, WindowWatch,
};

pub use probe::Offered;

use damage::DamageHub;
use input::{InputDevices, VirtualInput};
use sway::SwayIpc;
use uinput::UinputInput;
use wayland::{Output, Wayland};
use windows::{join, Joined, ToplevelFacts};

/// How long a window command may take to show (focus after activate).
const COMMAND_LIMIT: Duration = Duration::from_secs(3);
/// How long launched apps get to end on SIGTERM when the host shuts down.
const APP_GRACE: Duration = Duration::from_secs(2);
/// How many refresh intervals without damage count as quiet.
const QUIET_FRAMES: u32 = 2;
/// The longest quiet a window's own pace may ask for.
const QUIET_LIMIT: Duration = Duration::from_millis(250);
/// How long a window that keeps drawing is watched, from its first change,
/// for an input's answer (`FrameWait::Drawn`).
const DRAWN_LIMIT: Duration = Duration::from_millis(250);
/// How long the window list follows a layout after a window event.
const LAYOUT_LIMIT: Duration = Duration::from_secs(2);

/// The portal host; cheap to share, every method is safe from any task.
pub struct PortalHost {
    inner: Arc<Inner>,
}

struct Inner {
    wayland: Arc<Wayland>,
    /// The output's changes, one stream shared by every watcher.
    damage: Arc<DamageHub>,
    offered: Offered,
    /// Requests to sway's IPC, when the desktop is sway.
    sway: Option<tokio::sync::Mutex<SwayIpc>>,
    windows: Mutex<Vec<Joined>>,
    refreshing: tokio::sync::Mutex<()>,
    events: broadcast::Sender<WindowEvent>,
    /// Bumped whenever the window list changed.
    generation: watch::Sender<u64>,
    input: tokio::sync::Mutex<Option<Box<dyn InputDevices>>>,
    /// Which devices carry the input, as a user would name them.
    input_source: String,
    /// Why the virtual devices could not be made, if they could not.
    input_missing: Option<String>,
    commits: AtomicU64,
    setting_clipboard: tokio::sync::Mutex<()>,
    /// The apps this host started on the desktop, ended when it shuts down.
    apps: Arc<Mutex<Apps>>,
    /// Whether a running thread of a window's app keeps it from settling.
    settle_threads: AtomicBool,
}

/// Which devices the portal sends input on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputChoice {
    /// uinput where /dev/uinput is writable, else the virtual devices.
    #[default]
    Auto,
    /// A uinput pointer and keyboard: any compositor reading libinput takes them.
    Uinput,
    /// zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1 (wlroots desktops).
    Virtual,
}

impl PortalHost {
    /// Attach to the compositor at $WAYLAND_DISPLAY, and to sway's IPC at
    /// `swaysock` when given (`$SWAYSOCK` is where sway says it is), sending
    /// input on the devices `choice` picks.
    pub async fn attach(
        swaysock: Option<PathBuf>,
        choice: InputChoice,
    ) -> Result<PortalHost, String> {
        let wayland = Wayland::connect()?;
        let sway = match &swaysock {
            Some(path) => Some(SwayIpc::connect(path).await?),
            None => None,
        };
        let sway_events = match &swaysock {
            Some(path) => {
                let mut events = SwayIpc::connect(path).await?;
                events.subscribe_windows().await?;
                Some(events)
            }
            None => None,
        };
        let mut offered = Offered::from_interfaces(&wayland.globals.advertised, sway.is_some());
        let use_uinput = match choice {
            InputChoice::Uinput => true,
            InputChoice::Virtual => false,
            InputChoice::Auto => uinput::unavailable().is_none(),
        };
        let (input, input_missing, input_source): (Option<Box<dyn InputDevices>>, _, _) =
            if use_uinput {
                let devices = UinputInput::create(swaysock.as_deref())
                    .await
                    .map_err(|why| format!("--input uinput: {why}"))?;
                offered.uinput = true;
                (
                    Some(Box::new(devices)),
                    None,
                    "a uinput pointer and keyboard".to_string(),
                )
            } else {
                let source = match (choice, uinput::unavailable()) {
                    (InputChoice::Auto, Some(why)) => {
                        format!("the compositor's virtual pointer and keyboard (no uinput: {why})")
                    }
                    _ => "the compositor's virtual pointer and keyboard".to_string(),
                };
                match VirtualInput::create(&wayland) {
                    Ok(devices) => (
                        Some(Box::new(devices) as Box<dyn InputDevices>),
                        None,
                        source,
                    ),
                    Err(why) => (None, Some(why), "no devices".to_string()),
                }
            };
        wayland.flush()?;
        let changed = wayland.changed.clone();
        let inner = Arc::new(Inner {
            wayland: Arc::new(wayland),
            damage: Arc::default(),
            offered,
            sway: sway.map(tokio::sync::Mutex::new),
            windows: Mutex::new(Vec::new()),
            refreshing: tokio::sync::Mutex::new(()),
            events: broadcast::channel(256).0,
            generation: watch::channel(0).0,
            input: tokio::sync::Mutex::new(input),
            input_missing,
            input_source,
            commits: AtomicU64::new(0),
            setting_clipboard: tokio::sync::Mutex::new(()),
            // The desktop's own environment: its display and buses.
            apps: Arc::new(Mutex::new(Apps::new(Vec::new()))),
            settle_threads: AtomicBool::new(true),
        });
        inner.refresh().await?;
        tokio::spawn(follow(Arc::downgrade(&inner), changed, sway_events));
        Ok(PortalHost { inner })
    }

    /// Whether a running thread of a window's app keeps the window from
    /// settling (on at first): off for apps whose workers never rest.
    pub fn set_settle_threads(&self, on: bool) {
        self.inner.settle_threads.store(on, Ordering::Relaxed);
    }

    /// Which devices carry the input, in words for the user.
    pub fn input_source(&self) -> &str {
        &self.inner.input_source
    }

    /// Until the desktop's compositor closes the connection (it ended).
    pub async fn disconnected(&self) {
        let mut changed = self.inner.wayland.changed.clone();
        while changed.changed().await.is_ok() {}
    }
}

/// Keep the window list current from toplevel changes and sway's window events.
async fn follow(
    inner: std::sync::Weak<Inner>,
    mut changed: watch::Receiver<u64>,
    mut sway_events: Option<SwayIpc>,
) {
    loop {
        let sway_event = async {
            match sway_events.as_mut() {
                Some(events) => events.next_event().await.map(drop),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = changed.changed() => if result.is_err() { return },
            result = sway_event => if let Err(e) = result {
                tracing::warn!("portal: sway's window events ended: {e}");
                sway_events = None;
            },
        }
        let Some(inner) = inner.upgrade() else { return };
        if let Err(e) = inner.refresh().await {
            tracing::warn!("portal: cannot read the windows: {e}");
        }
        inner.follow_layout().await;
    }
}

impl Inner {
    /// Read the toplevels and sway's views again, and announce what changed.
    async fn refresh(&self) -> Result<(), String> {
        // One at a time: an older read must not land after a newer one.
        let _turn = self.refreshing.lock().await;
        let toplevels: Vec<ToplevelFacts> = self
            .wayland
            .shared
            .toplevels
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, t)| t.ready)
            .map(|(&id, t)| ToplevelFacts {
                id,
                title: t.title.clone(),
                app_id: t.app_id.clone(),
                maximized: t.maximized,
                minimized: t.minimized,
                activated: t.activated,
                fullscreen: t.fullscreen,
            })
            .collect();
        let views = match &self.sway {
            Some(sway) => sway.lock().await.views().await?,
            None => Vec::new(),
        };
        let scale = self.primary_output().map_or(1.0, |o| o.scale.max(1) as f64);
        let now = join(&toplevels, &views, scale);
        let mut kept = self.windows.lock().unwrap();
        let mut changes = Vec::new();
        for j in &now {
            match kept.iter().find(|k| k.info.handle == j.info.handle) {
                None => changes.push(WindowEvent::Created(j.info.clone())),
                Some(k) if k.info != j.info => changes.push(WindowEvent::Updated(j.info.clone())),
                Some(_) => {}
            }
        }
        for k in kept.iter() {
            if !now.iter().any(|j| j.info.handle == k.info.handle) {
                changes.push(WindowEvent::Closed(k.info.handle));
            }
        }
        *kept = now;
        if !changes.is_empty() {
            for change in changes {
                let _ = self.events.send(change);
            }
            self.generation.send_modify(|n| *n += 1);
        }
        Ok(())
    }

    /// Sway announces a window before it lays the windows out again (and
    /// decides their borders), and says nothing when it does: read its tree
    /// again at each frame the output shows for `LAYOUT_LIMIT` after an event.
    async fn follow_layout(&self) {
        let Some(output) = self.primary_output() else {
            return;
        };
        if self.sway.is_none() || !self.offered.screencopy_damage {
            return;
        }
        let mut changes = match self.damage.listen(&self.wayland, &output) {
            Ok((changes, _)) => changes,
            Err(e) => {
                tracing::warn!("portal: cannot follow the layout: {e}");
                return;
            }
        };
        let deadline = tokio::time::Instant::now() + LAYOUT_LIMIT;
        loop {
            match tokio::time::timeout_at(deadline, changes.recv()).await {
                Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => return,
                Ok(Ok(_) | Err(broadcast::error::RecvError::Lagged(_))) => {
                    if let Err(e) = self.refresh().await {
                        tracing::warn!("portal: cannot read the windows: {e}");
                        return;
                    }
                }
            }
        }
    }

    fn joined(&self, handle: WindowHandle) -> HostResult<Joined> {
        self.windows
            .lock()
            .unwrap()
            .iter()
            .find(|j| j.info.handle.id == handle.id)
            .cloned()
            .ok_or(HostError::NoWindow(handle))
    }

    fn primary_output(&self) -> Option<Output> {
        self.wayland.shared.outputs.lock().unwrap().first().cloned()
    }

    /// The output showing most of `rect`, else the first.
    fn output_for(&self, rect: Rect) -> HostResult<Output> {
        let outputs = self.wayland.shared.outputs.lock().unwrap();
        outputs
            .iter()
            .find(|o| {
                o.bounds().contains_point(
                    rect.x as f64 + rect.width as f64 / 2.0,
                    rect.y as f64 + rect.height as f64 / 2.0,
                )
            })
            .or_else(|| outputs.first())
            .cloned()
            .ok_or_else(|| HostError::Failed("the desktop has no output".into()))
    }

    /// The union of the outputs, where absolute pointer positions are mapped.
    fn layout(&self) -> Rect {
        let outputs = self.wayland.shared.outputs.lock().unwrap();
        let mut bounds = outputs.iter().map(Output::bounds);
        let Some(first) = bounds.next() else {
            return Rect::default();
        };
        bounds.fold(first, |a, b| {
            let x = a.x.min(b.x);
            let y = a.y.min(b.y);
            let right = (a.x + a.width).max(b.x + b.width);
            let bottom = (a.y + a.height).max(b.y + b.height);
            Rect::new(x, y, right - x, bottom - y)
        })
    }

    /// Wait until `done` holds for the window list, or `limit` passes.
    async fn wait_windows(
        &self,
        limit: Duration,
        done: impl Fn(&[Joined]) -> bool,
    ) -> HostResult<()> {
        let mut generation = self.generation.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if done(&self.windows.lock().unwrap()) {
                return Ok(());
            }
            match tokio::time::timeout_at(deadline, generation.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => return Err(HostError::Gone),
                Err(_) => {
                    return Err(HostError::Timeout(
                        limit,
                        "the desktop did not show the change".into(),
                    ))
                }
            }
        }
    }

    async fn sway_run(&self, command: String) -> HostResult<()> {
        let sway = self
            .sway
            .as_ref()
            .ok_or_else(|| HostError::Unsupported("this needs sway's IPC".into()))?;
        sway.lock()
            .await
            .run(&command)
            .await
            .map_err(HostError::Failed)?;
        // What the command changed shows in the list at once.
        self.refresh().await.map_err(HostError::Failed)
    }

    async fn activate(&self, joined: &Joined) -> HostResult<()> {
        let handle = joined.info.handle;
        match (&self.sway, joined.con_id) {
            (Some(_), Some(con)) => self.sway_run(format!("[con_id={con}] focus")).await?,
            _ => {
                let seat = self.wayland.globals.seat.as_ref().ok_or_else(|| {
                    HostError::Unsupported("activate: the compositor offers no wl_seat".into())
                })?;
                self.toplevel_proxy(handle)?.activate(seat);
                self.wayland.flush().map_err(HostError::Failed)?;
            }
        }
        self.wait_windows(COMMAND_LIMIT, |all| {
            all.iter()
                .any(|j| j.info.handle.id == handle.id && j.info.focused)
        })
        .await
    }

    fn toplevel_proxy(
        &self,
        handle: WindowHandle,
    ) -> HostResult<wayland_protocols_wlr::foreign_toplevel::v1::client::zwlr_foreign_toplevel_handle_v1::ZwlrForeignToplevelHandleV1>{
        self.wayland
            .shared
            .toplevels
            .lock()
            .unwrap()
            .get(&handle.id)
            .map(|t| t.handle.clone())
            .ok_or(HostError::NoWindow(handle))
    }

    /// Copy frames until the window's part of the output has been quiet for
    /// two refresh intervals, or two of the window's own frame gaps, with no
    /// thread of its app found running at the end (or `until` is met;
    /// `Drawn` also ends `DRAWN_LIMIT` after the window's first change when
    /// it keeps drawing); answer how many changed it.
    /// Damage elsewhere on the output (another app's spinner) is not the
    /// window's: it neither counts nor breaks the quiet.
    async fn watch_damage(
        &self,
        handle: WindowHandle,
        until: FrameWait,
        timeout: Duration,
    ) -> HostResult<Settled> {
        let started = Instant::now();
        let window = self.joined(handle)?.info;
        let output = self.output_for(window.content)?;
        let quiet = quiet_interval(&output);
        let scale = output.scale.max(1);
        let area = if window.content.is_empty() {
            output.bounds()
        } else {
            window.content
        };
        let settled = |commits| Settled {
            window: handle,
            commits,
            waited: started.elapsed(),
        };
        let (mut changes, recent) = self.damage.listen(&self.wayland, &output)?;
        let mut commits = 0u64;
        // The window's part of the output last changed then (or never since the start).
        let mut changed = Instant::now();
        // The quiet asked for: two refresh intervals, or two of the longest gaps
        // between the window's own changes, for an app that draws at its own
        // slower pace (a spinner on a busy machine) is not quiet between frames.
        let touches = |damage: &[Rect]| {
            damage.iter().any(|d| {
                let logical = Rect::new(
                    output.x + d.x / scale,
                    output.y + d.y / scale,
                    d.width / scale + 1,
                    d.height / scale + 1,
                );
                logical.intersects(&area)
            })
        };
        // The window's pace just before the wait, where the stream was running.
        let mut needed = recent
            .iter()
            .filter(|(_, damage)| touches(damage))
            .map(|(at, _)| *at)
            .collect::<Vec<_>>()
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .fold(quiet, paced);
        let mut first_change: Option<Instant> = None;
        // The app's process, unless it is ours (a test attached in-process)
        // or threads are left out.
        let app = window
            .pid
            .filter(|pid| *pid != std::process::id())
            .filter(|_| self.settle_threads.load(Ordering::Relaxed));
        let mut busy: Option<BusyThread> = None;
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                let why = match until {
                    FrameWait::Frames(n) => format!("did not change {n} times on screen"),
                    // The desktop's frames are not counted: past a baseline
                    // is the next change on screen.
                    FrameWait::Past(_) => "did not change on screen".into(),
                    FrameWait::Settled | FrameWait::Effect | FrameWait::Drawn => match &busy {
                        Some(t) => format!(
                            "did not settle: its thread {:?} (tid {}) keeps running",
                            t.name, t.tid
                        ),
                        None => "did not settle: it keeps drawing frames".into(),
                    },
                };
                return Err(HostError::Timeout(
                    timeout,
                    format!(
                        "window {handle} {why} ({commits} frames changed its part of the \
                         output meanwhile; settle on an attached desktop is approximate)"
                    ),
                ));
            }
            let wait = match until {
                FrameWait::Frames(_) | FrameWait::Past(_) => left,
                FrameWait::Settled | FrameWait::Effect | FrameWait::Drawn => {
                    let quiet_left = (changed + needed).saturating_duration_since(Instant::now());
                    if quiet_left.is_zero() {
                        // A thread of its app running (or starved of the
                        // CPU, waiting to run) is work not yet shown: an app
                        // that animates, late for its next frame, is not
                        // quiet. The quiet is counted again from now.
                        busy = app.and_then(threads::busy_thread);
                        if busy.is_none() {
                            return Ok(settled(commits));
                        }
                        changed = Instant::now();
                        continue;
                    }
                    quiet_left.min(left)
                }
            };
            let damage = match tokio::time::timeout(wait, changes.recv()).await {
                // Quiet for `wait`.
                Err(_) => continue,
                Ok(Ok(damage)) => damage,
                // Changes missed: anything may have changed.
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                    Arc::new(vec![Rect::new(0, 0, i32::MAX / 2, i32::MAX / 2)])
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    return Err(HostError::Failed(
                        "the compositor stopped copying the output, so the screen cannot be \
                         watched go quiet (attach's log says why)"
                            .into(),
                    ))
                }
            };
            if touches(&damage) {
                if commits > 0 {
                    needed = paced(needed, changed.elapsed());
                }
                commits += 1;
                changed = Instant::now();
                let first = *first_change.get_or_insert(changed);
                match until {
                    FrameWait::Frames(n) if commits >= n as u64 => return Ok(settled(commits)),
                    FrameWait::Past(_) => return Ok(settled(commits)),
                    // A window that keeps drawing drew its answer among its
                    // frames: it is not waited for to go quiet.
                    FrameWait::Drawn if changed - first >= DRAWN_LIMIT => {
                        return Ok(settled(commits))
                    }
                    _ => {}
                }
            }
        }
    }

    async fn send_input(&self, window: &WindowInfo, events: &[InputEvent]) -> HostResult<()> {
        let layout = self.layout();
        let mut guard = self.input.lock().await;
        let devices = guard.as_mut().ok_or_else(|| {
            HostError::Unsupported(format!(
                "input: {}",
                self.input_missing
                    .as_deref()
                    .unwrap_or("no virtual devices")
            ))
        })?;
        let origin = (window.content.x as f64, window.content.y as f64);
        let at = |x: f64, y: f64| (origin.0 + x, origin.1 + y);
        for event in events {
            match event {
                InputEvent::PointerMove { x, y, .. } => {
                    let (gx, gy) = at(*x, *y);
                    devices.move_to(gx, gy, layout)?;
                }
                InputEvent::PointerDown {
                    x,
                    y,
                    button,
                    clicks,
                    ..
                } => {
                    let (gx, gy) = at(*x, *y);
                    devices.move_to(gx, gy, layout)?;
                    for _ in 1..*clicks {
                        devices.button(*button, true)?;
                        devices.button(*button, false)?;
                    }
                    devices.button(*button, true)?;
                }
                InputEvent::PointerUp { x, y, button, .. } => {
                    let (gx, gy) = at(*x, *y);
                    devices.move_to(gx, gy, layout)?;
                    devices.button(*button, false)?;
                }
                InputEvent::Click {
                    x,
                    y,
                    button,
                    clicks,
                    ..
                } => {
                    let (gx, gy) = at(*x, *y);
                    devices.move_to(gx, gy, layout)?;
                    for _ in 0..*clicks {
                        devices.button(*button, true)?;
                        devices.button(*button, false)?;
                    }
                }
                InputEvent::Wheel {
                    x,
                    y,
                    dx,
                    dy,
                    precise,
                    ..
                } => {
                    let (gx, gy) = at(*x, *y);
                    devices.move_to(gx, gy, layout)?;
                    devices.wheel(*dx, *dy, *precise)?;
                }
                InputEvent::KeyDown { key } => devices.key(key, true)?,
                InputEvent::KeyUp { key } => devices.key(key, false)?,
                InputEvent::Key { key } => {
                    devices.key(key, true)?;
                    devices.key(key, false)?;
                }
                InputEvent::Text { text } => devices.text(text)?,
            }
        }
        self.wayland.flush().map_err(HostError::Failed)
    }
}

/// The quiet to ask for once the window changed again `gap` after its last
/// change: two of its longest gap, at most `QUIET_LIMIT`.
fn paced(needed: Duration, gap: Duration) -> Duration {
    needed.max(gap * 2).min(QUIET_LIMIT.max(needed))
}

/// Two refresh intervals of `output` (60 Hz when it does not say).
fn quiet_interval(output: &Output) -> Duration {
    let refresh_mhz = if output.refresh_mhz == 0 {
        60_000
    } else {
        output.refresh_mhz
    };
    Duration::from_micros(1_000_000_000 / refresh_mhz as u64) * QUIET_FRAMES
}

fn needs_keyboard(events: &[InputEvent]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            InputEvent::Key { .. }
                | InputEvent::KeyDown { .. }
                | InputEvent::KeyUp { .. }
                | InputEvent::Text { .. }
        )
    })
}

#[async_trait::async_trait]
impl Host for PortalHost {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            settle_threads: self.inner.settle_threads.load(Ordering::Relaxed),
            ..self.inner.offered.capabilities()
        }
    }

    fn limits(&self) -> Vec<Limit> {
        self.inner.offered.limits()
    }

    async fn windows(&self) -> HostResult<Vec<WindowInfo>> {
        Ok(self
            .inner
            .windows
            .lock()
            .unwrap()
            .iter()
            .map(|j| j.info.clone())
            .collect())
    }

    async fn watch_windows(&self) -> HostResult<WindowWatch> {
        // Subscribed under the list's lock, so no change falls between the two.
        let kept = self.inner.windows.lock().unwrap();
        let events = self.inner.events.subscribe();
        Ok(WindowWatch {
            windows: kept.iter().map(|j| j.info.clone()).collect(),
            events,
        })
    }

    async fn launch(&self, spec: LaunchSpec) -> HostResult<AppInfo> {
        let pid = self.inner.apps.lock().unwrap().launch(&spec, |_, _| {})?;
        Ok(AppInfo { pid })
    }

    async fn window_command(
        &self,
        window: WindowHandle,
        command: WindowCommand,
    ) -> HostResult<Option<WindowInfo>> {
        let inner = &self.inner;
        let joined = inner.joined(window)?;
        let con = match (&inner.sway, joined.con_id) {
            (Some(_), Some(con)) => Some(con),
            _ => None,
        };
        let toplevel = inner.toplevel_proxy(window)?;
        match (command, con) {
            (WindowCommand::Activate, _) => inner.activate(&joined).await?,
            (WindowCommand::Close, _) => {
                toplevel.close();
                inner.wayland.flush().map_err(HostError::Failed)?;
            }
            (WindowCommand::ForceClose, _) => {
                let pid = joined.info.pid.ok_or_else(|| {
                    HostError::Unsupported(
                        "force close: the window's process is unknown without sway's IPC".into(),
                    )
                })?;
                // An app this host started ends with its process group.
                let group = self.inner.apps.lock().unwrap().launched_group_of(pid);
                match group {
                    Some(group) => launch::signal_group(group, libc::SIGKILL),
                    None => launch::signal_process(pid, libc::SIGKILL),
                }
            }
            (WindowCommand::Minimize, Some(con)) => {
                inner
                    .sway_run(format!("[con_id={con}] move scratchpad"))
                    .await?
            }
            (WindowCommand::Minimize, None) => {
                toplevel.set_minimized();
                inner.wayland.flush().map_err(HostError::Failed)?;
            }
            (WindowCommand::Restore, Some(con)) => {
                if joined.info.minimized {
                    inner
                        .sway_run(format!(
                            "[con_id={con}] scratchpad show; [con_id={con}] floating disable"
                        ))
                        .await?;
                }
                if joined.info.fullscreen {
                    inner
                        .sway_run(format!("[con_id={con}] fullscreen disable"))
                        .await?;
                }
            }
            (WindowCommand::Restore, None) => {
                toplevel.unset_minimized();
                toplevel.unset_maximized();
                toplevel.unset_fullscreen();
                inner.wayland.flush().map_err(HostError::Failed)?;
            }
            (WindowCommand::Fullscreen, Some(con)) => {
                inner
                    .sway_run(format!("[con_id={con}] fullscreen enable"))
                    .await?
            }
            (WindowCommand::Fullscreen, None) => {
                toplevel.set_fullscreen(None);
                inner.wayland.flush().map_err(HostError::Failed)?;
            }
            (WindowCommand::Maximize, Some(_)) => {
                return Err(HostError::Unsupported(
                    "maximize: sway tiles its windows and has no maximized state; \
                     ask for fullscreen instead"
                        .into(),
                ))
            }
            (WindowCommand::Maximize, None) => {
                toplevel.set_maximized();
                inner.wayland.flush().map_err(HostError::Failed)?;
            }
            (WindowCommand::Move { .. } | WindowCommand::Resize { .. }, _) => {
                return Err(HostError::Unsupported(
                    "moving and resizing: the desktop's compositor places its windows; \
                     Wayland gives its clients no way to move them"
                        .into(),
                ))
            }
        }
        Ok(inner.joined(window).ok().map(|j| j.info))
    }

    async fn wait_frames(
        &self,
        window: WindowHandle,
        until: FrameWait,
        timeout: Duration,
    ) -> HostResult<Settled> {
        self.inner.watch_damage(window, until, timeout).await
    }

    async fn input(
        &self,
        window: WindowHandle,
        events: Vec<InputEvent>,
        options: InputOptions,
    ) -> HostResult<InputReport> {
        let inner = &self.inner;
        // Where the window is now, not as the last event left it.
        inner.refresh().await.map_err(HostError::Failed)?;
        let joined = inner.joined(window)?;
        if joined.info.content.is_empty() {
            return Err(HostError::Unsupported(format!(
                "input: the place of window {window} is unknown (sway's IPC did not report it)"
            )));
        }
        let mut report = InputReport::default();
        if !joined.info.focused {
            if options.activate {
                inner.activate(&joined).await?;
                report.activated = true;
            } else if needs_keyboard(&events) {
                return Err(HostError::Unsupported(
                    "keys to a background window: the desktop sends keys to the focused \
                     window only; let Wayrig activate it first"
                        .into(),
                ));
            }
        }
        let info = inner.joined(window)?.info;
        inner.send_input(&info, &events).await?;
        report.text_paths = events
            .iter()
            .filter(|e| matches!(e, InputEvent::Text { .. }))
            .map(|_| wayrig_host::TextPath::Keymap)
            .collect();
        Ok(report)
    }

    async fn commits(&self, _window: WindowHandle) -> HostResult<u64> {
        // The desktop's frames are not ours to count: every read is fresh.
        Ok(self.inner.commits.fetch_add(1, Ordering::Relaxed) + 1)
    }

    async fn step(&self, _frames: u32) -> HostResult<Stepped> {
        Err(HostError::Unsupported(
            "stepping frames: the desktop's compositor paces its own frames".into(),
        ))
    }

    async fn capture_window(&self, window: WindowHandle) -> HostResult<Capture> {
        let inner = &self.inner;
        // Whether it shows now, not as the last event left it.
        inner.refresh().await.map_err(HostError::Failed)?;
        let info = inner.joined(window)?.info;
        if info.content.is_empty() {
            return Err(HostError::Unsupported(format!(
                "capture of window {window}: its place is unknown without sway's IPC"
            )));
        }
        if !info.on_screen {
            return Err(HostError::Unsupported(format!(
                "capture of window {window}: it is covered or hidden, and {}",
                inner
                    .offered
                    .limits()
                    .into_iter()
                    .find(|l| l.capability == wayrig_host::Capability::CaptureCovered)
                    .map(|l| l.reason)
                    .unwrap_or_default()
            )));
        }
        let output = inner.output_for(info.content)?;
        let region = Rect::new(
            info.content.x.max(output.x),
            info.content.y.max(output.y),
            info.content
                .width
                .min(output.x + output.bounds().width - info.content.x.max(output.x)),
            info.content
                .height
                .min(output.y + output.bounds().height - info.content.y.max(output.y)),
        );
        let copied = capture::copy(&inner.wayland, &output, Some(region), false, Duration::ZERO)
            .await?
            .ok_or_else(|| HostError::Failed("the compositor copied nothing".into()))?;
        copied.pixels().map(capture::into_capture)
    }

    async fn capture_output(&self) -> HostResult<Capture> {
        let inner = &self.inner;
        let output = inner
            .primary_output()
            .ok_or_else(|| HostError::Failed("the desktop has no output".into()))?;
        let copied = capture::copy(&inner.wayland, &output, None, false, Duration::ZERO)
            .await?
            .ok_or_else(|| HostError::Failed("the compositor copied nothing".into()))?;
        copied.pixels().map(capture::into_capture)
    }

    async fn displays(&self) -> HostResult<Vec<DisplayInfo>> {
        let outputs = self.inner.wayland.shared.outputs.lock().unwrap();
        Ok(outputs
            .iter()
            .enumerate()
            .map(|(i, o)| DisplayInfo {
                id: i as u32 + 1,
                name: o.name.clone(),
                primary: i == 0,
                bounds: o.bounds(),
                pixel_width: o.pixel_width.max(0) as u32,
                pixel_height: o.pixel_height.max(0) as u32,
                scale: o.scale.max(1) as f64,
                refresh_mhz: o.refresh_mhz,
            })
            .collect())
    }

    async fn pointer(&self) -> HostResult<PointerState> {
        let guard = self.inner.input.lock().await;
        let (position, buttons) = guard
            .as_ref()
            .map_or(((0.0, 0.0), Vec::new()), |d| (d.position(), d.buttons()));
        let window = self
            .inner
            .windows
            .lock()
            .unwrap()
            .iter()
            .filter(|j| j.info.on_screen)
            .find(|j| j.info.content.contains_point(position.0, position.1))
            .map(|j| j.info.handle);
        Ok(PointerState {
            x: position.0,
            y: position.1,
            buttons,
            window,
        })
    }

    async fn clipboard(&self) -> HostResult<ClipboardText> {
        if !self.inner.offered.capabilities().clipboard {
            return Err(clipboard_unsupported(&self.inner.offered));
        }
        clipboard::read(&self.inner.wayland).await
    }

    async fn set_clipboard(&self, text: String) -> HostResult<u64> {
        if !self.inner.offered.capabilities().clipboard {
            return Err(clipboard_unsupported(&self.inner.offered));
        }
        // One at a time: each answer is the generation of its own text.
        let _turn = self.inner.setting_clipboard.lock().await;
        clipboard::set(&self.inner.wayland, text).await
    }

    async fn shutdown(&self) {
        if let Some(manager) = &self.inner.wayland.globals.toplevels {
            manager.stop();
            let _ = self.inner.wayland.flush();
        }
        // Apps end while the desktop still serves them; what outlives the
        // grace is killed with its process group.
        let apps = self.inner.apps.clone();
        let ended = tokio::task::spawn_blocking(move || apps.lock().unwrap().end_all(APP_GRACE));
        if let Err(e) = ended.await {
            tracing::warn!(%e, "ending the apps launched on the desktop failed");
        }
    }
}

fn clipboard_unsupported(offered: &Offered) -> HostError {
    let why = offered
        .limits()
        .into_iter()
        .find(|l| l.capability == wayrig_host::Capability::Clipboard)
        .map(|l| l.reason)
        .unwrap_or_default();
    HostError::Unsupported(format!("clipboard: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_animation_s_gaps_ask_for_more_quiet_up_to_the_limit() {
        let quiet = Duration::from_millis(33);
        let ms = Duration::from_millis;
        // A spinner drawing every 60 ms on a busy machine is not quiet between frames.
        assert_eq!(paced(quiet, ms(60)), ms(120));
        assert_eq!(paced(ms(120), ms(20)), ms(120), "the longest gap holds");
        // Changes far apart ask for no more than the limit.
        assert_eq!(paced(quiet, ms(500)), QUIET_LIMIT);
    }
}
