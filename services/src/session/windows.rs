//! Windows, kept and not polled: the list follows the host's window stream (a
//! lagging reader resyncs), and selection and window operations read it.
//!
//! A window operation answers with the window as it shows after the change,
//! watched for in that stream, never right after the request was sent.

use std::sync::Arc;
use std::time::Duration;
use wayrig_host::Capability;

use tokio::sync::{broadcast, watch};
use wayrig_host::{
    DisplayInfo, Host, WindowCommand, WindowEvent, WindowHandle, WindowInfo, WindowKind,
};

use super::{Session, WINDOW_OP_LIMIT};

use crate::model::Error;

/// How long the kept list may take to catch up with the host.
pub(super) const CATCH_UP_LIMIT: Duration = Duration::from_secs(1);

/// The windows as the host last reported them, front to back.
pub(crate) struct WindowBook {
    list: watch::Receiver<Arc<Vec<WindowInfo>>>,
    follower: tokio::task::JoinHandle<()>,
}

impl Drop for WindowBook {
    fn drop(&mut self) {
        self.follower.abort();
    }
}

impl WindowBook {
    /// Take the host's snapshot and follow its events from there.
    pub(crate) async fn start(host: Arc<dyn Host>) -> Result<Self, Error> {
        let first = host.watch_windows().await?;
        let (tx, list) = watch::channel(Arc::new(sorted(first.windows)));
        let follower = tokio::spawn(follow(host, first.events, tx));
        Ok(WindowBook { list, follower })
    }

    pub(crate) fn now(&self) -> Arc<Vec<WindowInfo>> {
        self.list.borrow().clone()
    }

    pub(crate) fn watch(&self) -> watch::Receiver<Arc<Vec<WindowInfo>>> {
        self.list.clone()
    }

    /// Wait until `done` holds of the list, or `limit` passes; answers the
    /// list it held of, or the last list seen.
    pub(crate) async fn wait_for(
        &self,
        limit: Duration,
        done: impl Fn(&[WindowInfo]) -> bool,
    ) -> Result<Arc<Vec<WindowInfo>>, Arc<Vec<WindowInfo>>> {
        let mut list = self.list.clone();
        let waited = tokio::time::timeout(limit, list.wait_for(|l| done(l))).await;
        match waited {
            Ok(Ok(held)) => Ok(held.clone()),
            _ => Err(self.now()),
        }
    }

    /// Wait until the list no longer holds `handle`, or `limit` passes; as
    /// `wait_for`.
    pub(crate) async fn wait_gone(
        &self,
        handle: WindowHandle,
        limit: Duration,
    ) -> Result<Arc<Vec<WindowInfo>>, Arc<Vec<WindowInfo>>> {
        self.wait_for(limit, |list| list.iter().all(|w| w.handle != handle))
            .await
    }
}

/// Apply the host's events to the list; a reader that fell behind takes a
/// fresh snapshot, so no close is ever missed. Once the host's stream ends,
/// the list is empty.
async fn follow(
    host: Arc<dyn Host>,
    mut events: broadcast::Receiver<WindowEvent>,
    tx: watch::Sender<Arc<Vec<WindowInfo>>>,
) {
    loop {
        match events.recv().await {
            Ok(event) => tx.send_modify(|list| {
                let mut windows = (**list).clone();
                apply(&mut windows, event);
                *list = Arc::new(sorted(windows));
            }),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "window stream lagged; taking a new snapshot");
                match host.watch_windows().await {
                    Ok(again) => {
                        events = again.events;
                        tx.send_replace(Arc::new(sorted(again.windows)));
                    }
                    Err(_) => break,
                }
            }
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
    // The host is gone and its windows with it, whether or not it said so
    // of each: none is served as if it still showed.
    tx.send_replace(Arc::new(Vec::new()));
}

fn apply(windows: &mut Vec<WindowInfo>, event: WindowEvent) {
    match event {
        WindowEvent::Created(info) | WindowEvent::Updated(info) => {
            match windows.iter_mut().find(|w| w.handle.id == info.handle.id) {
                Some(w) => *w = info,
                None => windows.push(info),
            }
        }
        WindowEvent::Closed(handle) => windows.retain(|w| w.handle != handle),
    }
}

fn sorted(mut windows: Vec<WindowInfo>) -> Vec<WindowInfo> {
    windows.sort_by_key(|w| w.z);
    windows
}

/// A window people address: top-level (menus and tooltips belong to one).
pub(crate) fn is_top_level(w: &WindowInfo) -> bool {
    matches!(w.kind, WindowKind::Normal | WindowKind::Dialog)
}

/// The popups (menus, tooltips) open over `window`: those that hang from
/// it, and from those in turn. A dialog's popups are the dialog's, not its
/// parent's: the chain runs through popups only.
pub(crate) fn popups_over(window: WindowHandle, windows: &[WindowInfo]) -> Vec<&WindowInfo> {
    let mut found: Vec<&WindowInfo> = Vec::new();
    let mut parents = vec![window];
    while let Some(parent) = parents.pop() {
        for w in windows.iter().filter(|w| w.parent == Some(parent)) {
            // A loop in a broken list is walked once.
            if !is_top_level(w) && !found.iter().any(|f| f.handle == w.handle) {
                found.push(w);
                parents.push(w.handle);
            }
        }
    }
    found
}

/// The top-level window a popup hangs from, through the popups between;
/// a top-level window is its own. A broken chain ends where it breaks.
pub(crate) fn top_level_of(window: WindowHandle, windows: &[WindowInfo]) -> WindowHandle {
    let chain: Vec<WindowHandle> = std::iter::once(window)
        .chain(parents_of(window, windows))
        .collect();
    let top_level = |h: &WindowHandle| windows.iter().any(|w| w.handle == *h && is_top_level(w));
    chain
        .iter()
        .copied()
        .find(top_level)
        .unwrap_or(chain[chain.len() - 1])
}

/// The windows `window` hangs from: its parent (the window a popup hangs
/// from, or a dialog is transient for) first, then that one's, and so on.
pub(crate) fn parents_of(window: WindowHandle, windows: &[WindowInfo]) -> Vec<WindowHandle> {
    let mut found: Vec<WindowHandle> = Vec::new();
    let mut at = window;
    while let Some(parent) = windows
        .iter()
        .find(|w| w.handle == at)
        .and_then(|w| w.parent)
    {
        // A loop in a broken list is walked once.
        if parent == window || found.contains(&parent) {
            break;
        }
        found.push(parent);
        at = parent;
    }
    found
}

/// Which window a request means.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum WindowPick {
    /// The focused window, else the frontmost top-level one.
    #[default]
    Default,
    /// The window with keyboard focus, or none.
    Focused,
    /// This handle; a window mapped again since answers `StaleWindow`.
    Handle(WindowHandle),
    /// The window with this id, whatever its epoch.
    Id(u64),
    /// The frontmost window matching.
    Filter(WindowFilter),
}

/// What a window must match; every field set must hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowFilter {
    /// Case-insensitive substring of the title.
    pub title_contains: Option<String>,
    /// Case-insensitive substring of the app's display name.
    pub app_name_contains: Option<String>,
    /// The app's id exactly: the Wayland app id or its .desktop id.
    pub app_id: Option<String>,
    pub pid: Option<u32>,
    pub on_screen_only: bool,
    /// Menus and tooltips too (left out by default).
    pub include_popups: bool,
}

/// The app a window belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppIdentity {
    /// What people call it: the .desktop file's Name, else the app id.
    pub name: String,
    /// The .desktop id (`org.gtk.Demo4.desktop`) where one matches.
    pub desktop_id: Option<String>,
    pub pid: Option<u32>,
}

/// A change of a window's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowOp {
    /// Raise it and give it keyboard focus.
    Activate,
    Minimize,
    Maximize,
    Fullscreen,
    /// Undo minimize, maximize and fullscreen.
    Restore,
    /// Move the top-left corner of `area`, resize `area`; each optional.
    SetBounds {
        area: Area,
        position: Option<(i32, i32)>,
        size: Option<(i32, i32)>,
    },
}

/// Which of a window's rectangles bounds are given for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The window as it lies on screen, decorations and shadows included
    /// (W3C WebDriver's window rect).
    Frame,
    /// What the app draws inside (cua.env.v1's window bounds).
    Content,
}

/// A point or a size, each optional, as `SetBounds` takes them.
type PlaceAndSize = (Option<(i32, i32)>, Option<(i32, i32)>);

/// Where a `SetBounds` puts the window's content (position, size), with
/// the decorations it has now.
fn content_asked(
    area: Area,
    position: Option<(i32, i32)>,
    size: Option<(i32, i32)>,
    w: &WindowInfo,
) -> PlaceAndSize {
    match area {
        Area::Content => (position, size),
        Area::Frame => (
            position.map(|(x, y)| (x + w.content.x - w.frame.x, y + w.content.y - w.frame.y)),
            size.map(|(width, height)| {
                (
                    width - (w.frame.width - w.content.width),
                    height - (w.frame.height - w.content.height),
                )
            }),
        ),
    }
}

/// What closing a window came to.
#[derive(Debug, Clone, PartialEq)]
pub enum CloseOutcome {
    Closed,
    /// The app still shows the window after its wait (a save prompt, say).
    Kept(WindowInfo),
}

impl WindowFilter {
    fn matches(&self, w: &WindowInfo, app: &AppIdentity) -> bool {
        let contains =
            |hay: &str, needle: &str| hay.to_lowercase().contains(&needle.to_lowercase());
        (self.include_popups || is_top_level(w))
            && (!self.on_screen_only || w.on_screen)
            && self
                .title_contains
                .as_deref()
                .is_none_or(|t| contains(&w.title, t))
            && self
                .app_name_contains
                .as_deref()
                .is_none_or(|n| contains(&app.name, n))
            && self.app_id.as_deref().is_none_or(|id| {
                w.app_id == id
                    || app
                        .desktop_id
                        .as_deref()
                        .is_some_and(|d| d == id || d.trim_end_matches(".desktop") == id)
            })
            && self.pid.is_none_or(|p| w.pid == Some(p))
    }
}

/// The window a pick means among `windows` (front to back).
pub(crate) fn pick(
    windows: &[WindowInfo],
    pick: &WindowPick,
    app_of: impl Fn(&WindowInfo) -> AppIdentity,
) -> Result<WindowInfo, Error> {
    let top = || windows.iter().filter(|w| is_top_level(w));
    let found = match pick {
        WindowPick::Default => top()
            .find(|w| w.focused)
            .or_else(|| top().find(|w| w.kind == WindowKind::Normal))
            .or_else(|| top().next()),
        WindowPick::Focused => top().find(|w| w.focused),
        WindowPick::Handle(h) => match windows.iter().find(|w| w.handle.id == h.id) {
            Some(w) if w.handle.epoch != h.epoch => {
                return Err(Error::StaleWindow(format!(
                    "{h}: it was mapped again as {}",
                    w.handle
                )))
            }
            found => found,
        },
        WindowPick::Id(id) => top().find(|w| w.handle.id == *id),
        WindowPick::Filter(f) => windows.iter().find(|w| f.matches(w, &app_of(w))),
    };
    found.cloned().ok_or_else(|| {
        Error::NoWindow(match pick {
            WindowPick::Default => "open: the session shows none".into(),
            WindowPick::Focused => "has keyboard focus".into(),
            WindowPick::Handle(h) => h.to_string(),
            WindowPick::Id(id) => id.to_string(),
            WindowPick::Filter(f) => format!("matches {f:?}"),
        })
    })
}

/// The host command that starts an operation, with the frame-to-content
/// offsets applied to bounds.
fn commands_for(op: WindowOp, w: &WindowInfo) -> Vec<WindowCommand> {
    match op {
        WindowOp::Activate => vec![WindowCommand::Activate],
        WindowOp::Minimize => vec![WindowCommand::Minimize],
        WindowOp::Maximize => vec![WindowCommand::Maximize],
        WindowOp::Fullscreen => vec![WindowCommand::Fullscreen],
        WindowOp::Restore => vec![WindowCommand::Restore],
        WindowOp::SetBounds {
            area,
            position,
            size,
        } => {
            let (position, size) = content_asked(area, position, size, w);
            let mut commands = Vec::new();
            if let Some((width, height)) = size {
                commands.push(WindowCommand::Resize { width, height });
            }
            if let Some((x, y)) = position {
                commands.push(WindowCommand::Move { x, y });
            }
            commands
        }
    }
}

/// Whether the window shows the operation done, and if not, what is missing.
/// `answered`: the app was seen taking a new state since the request.
fn shows_done(
    op: WindowOp,
    before: &WindowInfo,
    now: &WindowInfo,
    answered: bool,
) -> Result<(), String> {
    let want = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
    // A minimized window draws nothing a person sees: the unfocused state
    // it was sent is drawn when it shows again.
    want(
        !now.configuring || matches!(op, WindowOp::Minimize),
        "the app did not acknowledge and draw what it was asked",
    )?;
    match op {
        WindowOp::Activate => want(now.focused, "the window did not take keyboard focus"),
        WindowOp::Minimize => want(now.minimized, "the window was not minimized"),
        WindowOp::Maximize => want(
            now.maximized,
            "the app did not acknowledge and draw the maximized state",
        ),
        WindowOp::Fullscreen => want(
            now.fullscreen,
            "the app did not acknowledge and draw the fullscreen state",
        ),
        WindowOp::Restore => want(
            !now.maximized && !now.fullscreen && !now.minimized,
            "the app did not acknowledge and draw its normal state",
        ),
        WindowOp::SetBounds {
            area,
            position,
            size,
        } => {
            let (position, size) = content_asked(area, position, size, before);
            if let Some((x, y)) = position {
                want(
                    (now.content.x, now.content.y) == (x, y),
                    "the window did not move",
                )?;
            }
            if let Some(asked) = size {
                let got = (now.content.width, now.content.height);
                // An app that constrains its size draws another one, or
                // keeps its own: what it drew after answering is its answer.
                want(
                    got == asked
                        || got != (before.content.width, before.content.height)
                        || answered,
                    "the app did not draw a new size",
                )?;
            }
            Ok(())
        }
    }
}

impl Session {
    /// Every window, front to back, popups included.
    pub fn windows(&self) -> Arc<Vec<WindowInfo>> {
        self.windows.now()
    }

    /// The popups (menus, tooltips) open over the window now (see
    /// `popups_over`).
    pub(crate) fn popups_of(&self, handle: WindowHandle) -> Vec<WindowInfo> {
        popups_over(handle, &self.windows())
            .into_iter()
            .cloned()
            .collect()
    }

    /// The window list, front to back, changing as windows come, change and
    /// go: a face that names apps learns of new ones from it.
    pub fn watch_windows(&self) -> tokio::sync::watch::Receiver<Arc<Vec<WindowInfo>>> {
        self.windows.watch()
    }

    /// The windows people address (no menus or tooltips) matching `filter`.
    pub fn list_windows(&self, filter: &WindowFilter) -> Vec<WindowInfo> {
        self.windows
            .now()
            .iter()
            .filter(|w| filter.matches(w, &self.app_of(w)))
            .cloned()
            .collect()
    }

    /// The window a request means. The kept list follows the host's stream
    /// a moment behind it: a window it does not know yet (one just mapped)
    /// is looked for again once the list has caught up with the host.
    pub async fn window(&self, which: &WindowPick) -> Result<WindowInfo, Error> {
        match self.kept_window(which) {
            Err(Error::NoWindow(_) | Error::StaleWindow(_)) => {
                self.catch_up().await?;
                self.kept_window(which)
            }
            found => found,
        }
    }

    /// The window a request means, waiting up to `limit` for it to map: an
    /// app just launched shows its first window a moment later, and a
    /// client that waits for it should not have to poll.
    pub async fn window_shown(
        &self,
        which: &WindowPick,
        limit: Duration,
    ) -> Result<WindowInfo, Error> {
        match self.window(which).await {
            Err(Error::NoWindow(_)) => {
                let app_of = |w: &WindowInfo| self.app_of(w);
                let shown = |list: &[WindowInfo]| pick(list, which, app_of).is_ok();
                let _ = self.windows.wait_for(limit, shown).await;
                self.kept_window(which)
            }
            found => found,
        }
    }

    /// The window a request means, as the kept list has it now.
    pub(crate) fn kept_window(&self, which: &WindowPick) -> Result<WindowInfo, Error> {
        pick(&self.windows.now(), which, |w| self.app_of(w))
    }

    /// Wait until the kept list holds every window the host has now: the
    /// host sends each change before it answers, so they are on their way.
    async fn catch_up(&self) -> Result<(), Error> {
        let now = self.host.windows().await?;
        let caught_up = |list: &[WindowInfo]| {
            now.iter()
                .all(|w| list.iter().any(|kept| kept.handle == w.handle))
        };
        // Bounded: a window that closed meanwhile may never show.
        let _ = self.windows.wait_for(CATCH_UP_LIMIT, caught_up).await;
        Ok(())
    }

    /// The app a window belongs to.
    pub fn app_of(&self, w: &WindowInfo) -> AppIdentity {
        let installed = self
            .installed
            .get_or_init(|| wayrig_desktop::Applications::load(self.desktop_dirs()));
        let entry = (!w.app_id.is_empty())
            .then(|| installed.for_app_id(&w.app_id))
            .flatten();
        AppIdentity {
            name: entry.map_or_else(|| w.app_id.clone(), |e| e.name.clone()),
            desktop_id: entry.map(|e| e.id.clone()),
            pid: w.pid,
        }
    }

    /// The frontmost shown window whose content holds a global point,
    /// popups included (they are in front of their parents).
    pub fn window_at(&self, x: f64, y: f64) -> Option<WindowInfo> {
        self.windows
            .now()
            .iter()
            .find(|w| !w.minimized && w.content.contains_point(x, y))
            .cloned()
    }

    /// Move the pointer to a point of the desktop no window lies under.
    pub async fn move_pointer_to_desktop(
        &self,
        x: f64,
        y: f64,
    ) -> Result<wayrig_host::PointerState, Error> {
        self.require(wayrig_host::Capability::Input, "input")?;
        Ok(self.host.move_pointer_to_desktop(x, y).await?)
    }

    /// The outputs, primary first.
    pub async fn displays(&self) -> Result<Vec<DisplayInfo>, Error> {
        Ok(self.host.displays().await?)
    }

    /// Change a window's state and answer with the window as the app drew it
    /// afterwards; `Timeout` says what did not arrive.
    pub async fn window_op(&self, handle: WindowHandle, op: WindowOp) -> Result<WindowInfo, Error> {
        self.require(Capability::WindowCommands, "window operations")?;
        let before = self.window(&WindowPick::Handle(handle)).await?;
        if let WindowOp::SetBounds {
            area,
            position,
            size: size @ Some((w, h)),
        } = op
        {
            let (_, content) = content_asked(area, position, size, &before);
            if content.is_some_and(|(cw, ch)| cw <= 0 || ch <= 0) {
                return Err(Error::InvalidRequest(format!(
                    "a window's size must leave its content a positive size, not {w}x{h} \
                     ({area:?})"
                )));
            }
        }
        for command in commands_for(op, &before) {
            self.host.window_command(handle, command).await?;
        }
        let same = |w: &&WindowInfo| w.handle == handle;
        let asked = std::sync::atomic::AtomicBool::new(false);
        let answered = |now: &WindowInfo| {
            if now.configuring {
                asked.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            asked.load(std::sync::atomic::Ordering::Relaxed) && !now.configuring
        };
        let waited = self
            .windows
            .wait_for(WINDOW_OP_LIMIT, |list| {
                list.iter()
                    .find(same)
                    .is_none_or(|now| shows_done(op, &before, now, answered(now)).is_ok())
            })
            .await;
        let list = waited.as_ref().unwrap_or_else(|last| last);
        let now = list
            .iter()
            .find(same)
            .cloned()
            .ok_or_else(|| Error::NoWindow(format!("{handle}: it closed")))?;
        match shows_done(op, &before, &now, answered(&now)) {
            Ok(()) => Ok(now),
            Err(missing) => Err(Error::Timeout(format!(
                "{op:?} on window {handle}: {missing} within {WINDOW_OP_LIMIT:?}"
            ))),
        }
    }

    /// Ask the window to close (or, with `force`, end its app) and answer
    /// at once, without waiting to see whether it did.
    pub async fn ask_close(&self, handle: WindowHandle, force: bool) -> Result<(), Error> {
        self.require(Capability::WindowCommands, "closing windows")?;
        self.window(&WindowPick::Handle(handle)).await?;
        let command = if force {
            WindowCommand::ForceClose
        } else {
            WindowCommand::Close
        };
        self.host.window_command(handle, command).await?;
        Ok(())
    }

    /// Ask a window to close, or end its app (`force`), and answer whether it
    /// went.
    pub async fn close(&self, handle: WindowHandle, force: bool) -> Result<CloseOutcome, Error> {
        self.ask_close(handle, force).await?;
        match self.windows.wait_gone(handle, WINDOW_OP_LIMIT).await {
            Ok(_) => Ok(CloseOutcome::Closed),
            Err(list) => match list.iter().find(|w| w.handle == handle) {
                Some(w) => Ok(CloseOutcome::Kept(w.clone())),
                None => Ok(CloseOutcome::Closed),
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wayrig_host::Rect;

    pub(crate) fn window(id: u64, title: &str, kind: WindowKind, z: u32) -> WindowInfo {
        WindowInfo {
            handle: WindowHandle { id, epoch: 1 },
            title: title.into(),
            app_id: format!("org.example.App{id}"),
            pid: Some(100 + id as u32),
            kind,
            parent: None,
            frame: Rect::new(0, 0, 100, 100),
            surface: Rect::new(0, 0, 100, 100),
            content: Rect::new(0, 0, 100, 100),
            maximized: false,
            fullscreen: false,
            configuring: false,
            minimized: false,
            focused: false,
            on_screen: true,
            z,
            scale: 1.0,
        }
    }

    fn plain(w: &WindowInfo) -> AppIdentity {
        AppIdentity {
            name: w.app_id.clone(),
            desktop_id: None,
            pid: w.pid,
        }
    }

    fn picked(windows: &[WindowInfo], p: WindowPick) -> Result<u64, Error> {
        pick(windows, &p, plain).map(|w| w.handle.id)
    }

    #[test]
    fn the_default_is_the_focused_window_else_the_frontmost_normal_one() {
        let mut list = vec![
            window(3, "Menu", WindowKind::Menu, 0),
            window(2, "Prefs", WindowKind::Dialog, 1),
            window(1, "Main", WindowKind::Normal, 2),
        ];
        assert_eq!(picked(&list, WindowPick::Default).unwrap(), 1);
        list[1].focused = true;
        assert_eq!(picked(&list, WindowPick::Default).unwrap(), 2);
        assert!(matches!(
            picked(&[], WindowPick::Default),
            Err(Error::NoWindow(_))
        ));
    }

    /// `w`, hanging from (or transient for) window `parent`.
    pub(crate) fn hangs(mut w: WindowInfo, parent: u64) -> WindowInfo {
        w.parent = Some(WindowHandle {
            id: parent,
            epoch: 1,
        });
        w
    }

    #[test]
    fn a_window_is_above_the_windows_it_is_transient_for() {
        let list = vec![
            window(1, "Main", WindowKind::Normal, 2),
            hangs(window(2, "Prefs", WindowKind::Dialog, 1), 1),
            hangs(window(3, "Pick a file", WindowKind::Dialog, 0), 2),
        ];
        let ids = |id: u64| -> Vec<u64> {
            parents_of(WindowHandle { id, epoch: 1 }, &list)
                .iter()
                .map(|h| h.id)
                .collect()
        };
        assert_eq!(ids(3), [2, 1]);
        assert_eq!(ids(1), Vec::<u64>::new());
    }

    #[test]
    fn a_windows_popups_hang_from_it_not_from_its_dialogs() {
        let list = vec![
            window(1, "Main", WindowKind::Normal, 5),
            hangs(window(2, "File", WindowKind::Menu, 1), 1),
            hangs(window(3, "Recent", WindowKind::Menu, 0), 2),
            hangs(window(4, "Prefs", WindowKind::Dialog, 3), 1),
            hangs(window(5, "Theme", WindowKind::Menu, 2), 4),
            hangs(window(6, "Hint", WindowKind::Tooltip, 4), 5),
        ];
        let ids = |handle: u64| {
            let mut ids: Vec<u64> = popups_over(
                WindowHandle {
                    id: handle,
                    epoch: 1,
                },
                &list,
            )
            .iter()
            .map(|w| w.handle.id)
            .collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(1), [2, 3], "the menu and its submenu, not the dialog's");
        assert_eq!(ids(4), [5, 6], "the dialog's menu and the tooltip over it");
        let top = |id: u64| top_level_of(WindowHandle { id, epoch: 1 }, &list).id;
        assert_eq!(
            [1, 2, 3, 4, 5, 6].map(top),
            [1, 1, 1, 4, 4, 4],
            "a submenu's top-level is its menu's; a dialog is its own"
        );
    }

    #[test]
    fn a_handle_of_an_earlier_mapping_is_stale_and_an_unknown_one_missing() {
        let list = vec![window(1, "Main", WindowKind::Normal, 0)];
        let old = WindowHandle { id: 1, epoch: 0 };
        assert!(matches!(
            picked(&list, WindowPick::Handle(old)),
            Err(Error::StaleWindow(_))
        ));
        let other = WindowHandle { id: 9, epoch: 1 };
        assert!(matches!(
            picked(&list, WindowPick::Handle(other)),
            Err(Error::NoWindow(_))
        ));
        assert_eq!(picked(&list, WindowPick::Id(1)).unwrap(), 1);
    }

    #[test]
    fn filters_match_title_and_app_ignoring_case_and_pid_exactly() {
        let list = vec![
            window(1, "Widget Factory", WindowKind::Normal, 0),
            window(2, "GTK Demo", WindowKind::Normal, 1),
            window(3, "demo tooltip", WindowKind::Tooltip, 2),
        ];
        let f = |f: WindowFilter| picked(&list, WindowPick::Filter(f));
        let title = |t: &str| WindowFilter {
            title_contains: Some(t.into()),
            ..Default::default()
        };
        assert_eq!(f(title("DEMO")).unwrap(), 2);
        assert_eq!(
            f(WindowFilter {
                app_name_contains: Some("app1".into()),
                ..Default::default()
            })
            .unwrap(),
            1
        );
        assert_eq!(
            f(WindowFilter {
                pid: Some(102),
                ..Default::default()
            })
            .unwrap(),
            2
        );
        assert!(f(title("nothing")).is_err());
        // Popups only when asked for.
        let popups = WindowFilter {
            include_popups: true,
            ..title("tooltip")
        };
        assert_eq!(f(popups).unwrap(), 3);
        assert!(f(title("tooltip")).is_err());
    }

    #[test]
    fn events_keep_the_list_front_to_back_and_closes_remove() {
        let mut list = vec![window(1, "A", WindowKind::Normal, 0)];
        apply(
            &mut list,
            WindowEvent::Created(window(2, "B", WindowKind::Normal, 0)),
        );
        apply(
            &mut list,
            WindowEvent::Updated(window(1, "A2", WindowKind::Normal, 1)),
        );
        let list = sorted(list);
        assert_eq!(
            list.iter().map(|w| w.title.as_str()).collect::<Vec<_>>(),
            ["B", "A2"]
        );
        let mut list = list;
        let front = list[0].handle;
        apply(&mut list, WindowEvent::Closed(front));
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn set_bounds_moves_and_sizes_the_area_it_names() {
        let mut w = window(1, "A", WindowKind::Normal, 0);
        // A client-side shadow: content 14,12 inside the frame.
        w.frame = Rect::new(100, 100, 428, 324);
        w.content = Rect::new(114, 112, 400, 300);
        let commands = commands_for(
            WindowOp::SetBounds {
                area: Area::Frame,
                position: Some((0, 0)),
                size: Some((528, 424)),
            },
            &w,
        );
        assert_eq!(
            commands,
            [
                WindowCommand::Resize {
                    width: 500,
                    height: 400
                },
                WindowCommand::Move { x: 14, y: 12 }
            ]
        );
        // Content bounds are the content's own.
        let commands = commands_for(
            WindowOp::SetBounds {
                area: Area::Content,
                position: Some((20, 30)),
                size: Some((500, 400)),
            },
            &w,
        );
        assert_eq!(
            commands,
            [
                WindowCommand::Resize {
                    width: 500,
                    height: 400
                },
                WindowCommand::Move { x: 20, y: 30 }
            ]
        );
    }

    #[test]
    fn an_operation_is_done_only_when_the_window_shows_it() {
        let before = window(1, "A", WindowKind::Normal, 0);
        let mut now = before.clone();
        assert!(shows_done(WindowOp::Maximize, &before, &now, false).is_err());
        now.maximized = true;
        now.configuring = true;
        assert!(
            shows_done(WindowOp::Maximize, &before, &now, false).is_err(),
            "not while the app has yet to draw what it acknowledged"
        );
        now.configuring = false;
        assert!(shows_done(WindowOp::Maximize, &before, &now, true).is_ok());
        assert!(shows_done(WindowOp::Restore, &before, &now, true).is_err());
        let grow = WindowOp::SetBounds {
            area: Area::Frame,
            position: None,
            size: Some((300, 200)),
        };
        assert!(shows_done(grow, &before, &before, false).is_err());
        // The app answered and kept its size: that is its answer.
        assert!(shows_done(grow, &before, &before, true).is_ok());
        // The app drew a size of its own choosing: that is its answer too.
        now.content = Rect::new(0, 0, 250, 200);
        assert!(shows_done(grow, &before, &now, false).is_ok());
    }

    mod with_a_host {
        use std::sync::Arc;

        use super::super::super::fake_host::{window, FakeHost, Temper, OUTPUT};
        use super::*;
        use crate::session::Session;

        async fn session_over(temper: Temper, capacity: usize) -> (Session, FakeHost) {
            let host = FakeHost::new(
                vec![window(1, "Main"), window(2, "Prefs")],
                temper,
                capacity,
            );
            let session = Session::without_accessibility(Arc::new(host.clone()))
                .await
                .unwrap();
            (session, host)
        }

        #[tokio::test(start_paused = true)]
        async fn an_operation_answers_once_the_app_drew_it_not_when_it_was_asked() {
            let (session, _host) =
                session_over(Temper::Willing(Duration::from_millis(300)), 64).await;
            let handle = session.window(&WindowPick::Id(1)).await.unwrap().handle;
            let started = tokio::time::Instant::now();
            let w = session.window_op(handle, WindowOp::Maximize).await.unwrap();
            assert!(w.maximized);
            assert_eq!(w.content, OUTPUT);
            assert!(started.elapsed() >= Duration::from_millis(300));
        }

        #[tokio::test(start_paused = true)]
        async fn an_app_that_never_draws_the_change_times_out_saying_what_is_missing() {
            let (session, _host) = session_over(Temper::Stubborn, 64).await;
            let handle = session.window(&WindowPick::Id(1)).await.unwrap().handle;
            match session.window_op(handle, WindowOp::Maximize).await {
                Err(Error::Timeout(why)) => assert!(why.contains("maximized"), "{why}"),
                other => panic!("{other:?}"),
            }
        }

        #[tokio::test(start_paused = true)]
        async fn a_watcher_of_the_window_list_sees_a_window_go() {
            let (session, host) = session_over(Temper::Stubborn, 64).await;
            let mut list = session.watch_windows();
            assert!(list.borrow_and_update().iter().any(|w| w.handle.id == 2));
            host.remove(2);
            tokio::time::timeout(Duration::from_secs(5), list.changed())
                .await
                .expect("a change arrives")
                .unwrap();
            assert!(!list.borrow().iter().any(|w| w.handle.id == 2));
        }

        #[tokio::test(start_paused = true)]
        async fn close_answers_closed_when_the_window_goes_and_kept_when_it_stays() {
            let (session, _host) =
                session_over(Temper::Willing(Duration::from_millis(50)), 64).await;
            let handle = session.window(&WindowPick::Id(2)).await.unwrap().handle;
            assert_eq!(
                session.close(handle, false).await.unwrap(),
                CloseOutcome::Closed
            );
            assert!(matches!(
                session.window(&WindowPick::Handle(handle)).await,
                Err(Error::NoWindow(_))
            ));

            let (session, _host) = session_over(Temper::Stubborn, 64).await;
            let handle = session.window(&WindowPick::Id(2)).await.unwrap().handle;
            match session.close(handle, false).await.unwrap() {
                CloseOutcome::Kept(w) => assert_eq!(w.handle, handle),
                other => panic!("{other:?}"),
            }
        }

        #[tokio::test(start_paused = true)]
        async fn a_reader_that_lags_resyncs_and_never_misses_a_close() {
            let (session, host) = session_over(Temper::Stubborn, 4).await;
            // Far more events than the stream holds, with a close among them.
            for i in 0..50 {
                host.change(1, |w| w.title = format!("Main {i}"));
            }
            host.remove(2);
            for i in 0..50 {
                host.change(1, |w| w.title = format!("Main {}", 50 + i));
            }
            let done = session
                .windows
                .wait_for(Duration::from_secs(5), |list| {
                    list.len() == 1 && list[0].title == "Main 99"
                })
                .await;
            assert!(done.is_ok(), "{:?}", session.windows());
        }

        #[tokio::test(start_paused = true)]
        async fn a_host_that_stopped_shows_no_window() {
            let (session, host) = session_over(Temper::Stubborn, 16).await;
            assert_eq!(session.windows().len(), 2);
            host.stop();
            let none = session
                .windows
                .wait_for(Duration::from_secs(5), |list| list.is_empty())
                .await;
            assert!(none.is_ok(), "{:?}", session.windows());
            let window = session.window(&WindowPick::Id(1)).await;
            assert!(window.is_err(), "{window:?}");
        }
    }
}
