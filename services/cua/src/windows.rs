//! WindowsService: list, watch and arrange the session's windows, launch apps
//! and open files, each RPC one or two session calls.
//!
//! WatchWindows diffs the session's kept window list (which never loses a
//! close) against what the client was last sent, so a slow reader misses none.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::windows_service_server::WindowsService;
use wayrig_host::{DisplayInfo, WindowInfo};
use wayrig_services::{
    AppSpec, Area, CloseOutcome, Launch, OpenTarget, Session, WindowFilter, WindowOp, WindowPick,
};

use crate::convert::{display_id, handle_of, on_screen, window_infos};
use crate::errors::{from_session, invalid, known};
use wayrig_services::session::{display_of, primary_display};

/// Keepalives come this often when a watch does not say.
const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(30);
/// Keepalives come no more often than this, whatever a watch asks.
const MIN_KEEPALIVE: Duration = Duration::from_millis(10);
/// Keepalives come at least this often: a longer interval (up to `i64::MAX`
/// seconds on the wire) is taken as this one.
const MAX_KEEPALIVE: Duration = Duration::from_secs(24 * 60 * 60);
/// Events a watch may have in flight before the reader is waited for.
const WATCH_BUFFER: usize = 64;

/// The largest window side taken, in points (as the largest output).
const MAX_SIDE: f64 = 16384.0;
/// How far from the origin a window may be placed, in points.
const MAX_PLACE: f64 = 1_048_576.0;

pub struct Windows {
    pub session: Arc<Session>,
    /// Cancelled when the server stops: window streams end on it.
    pub stop: CancellationToken,
}

/// A cua filter as the session's, plus what only cua filters on.
struct Filter {
    session: WindowFilter,
    display_id: Option<String>,
    /// cua's own sense of on screen (covered counts), not the session's.
    on_screen_only: bool,
}

impl Filter {
    fn from_wire(f: Option<v1::WindowFilter>) -> Self {
        let f = f.unwrap_or_default();
        let some = |s: String| (!s.is_empty()).then_some(s);
        Filter {
            session: WindowFilter {
                title_contains: some(f.title_contains),
                app_name_contains: some(f.app_name_contains),
                app_id: some(f.app_id),
                pid: (f.pid != 0).then_some(f.pid),
                on_screen_only: false,
                // cua lists menus and tooltips as windows of their kinds.
                include_popups: true,
            },
            display_id: some(f.display_id),
            on_screen_only: f.on_screen_only,
        }
    }

    /// The matching windows, front to back, as cua describes them.
    fn list(&self, session: &Session, displays: &[DisplayInfo]) -> Vec<v1::WindowInfo> {
        let windows = session.list_windows(&self.session);
        // "primary" names the primary display here too, as in targets.
        let wanted = self.display_id.as_deref().map(|id| match id {
            "primary" => primary_display(displays).map_or_else(String::new, display_id),
            id => id.to_string(),
        });
        let windows = windows.iter().filter(|w| {
            wanted.as_deref().is_none_or(|id| {
                display_of(&w.content, displays).is_some_and(|d| display_id(d) == id)
            }) && (!self.on_screen_only || on_screen(w, displays))
        });
        window_infos(session, windows, displays)
    }
}

impl Windows {
    async fn displays(&self) -> Vec<DisplayInfo> {
        self.session.displays().await.unwrap_or_default()
    }

    /// A window as cua describes it, numbered among every window listed.
    async fn describe(&self, w: &WindowInfo) -> v1::WindowInfo {
        let displays = self.displays().await;
        let all = self.session.windows();
        let z = all.iter().position(|o| o.handle == w.handle).unwrap_or(0);
        let mut info = window_infos(&self.session, [w], &displays).remove(0);
        info.z_order = z as u32;
        info
    }

    async fn window(&self, r: Option<&v1::WindowRef>) -> Result<WindowInfo, Status> {
        let handle = handle_of(r)?;
        self.session
            .window(&WindowPick::Handle(handle))
            .await
            .map_err(|e| from_session(e, "windows"))
    }

    async fn op(&self, r: Option<&v1::WindowRef>, op: WindowOp) -> Result<v1::WindowInfo, Status> {
        let handle = handle_of(r)?;
        let after = self
            .session
            .window_op(handle, op)
            .await
            .map_err(|e| from_session(e, "windows"))?;
        Ok(self.describe(&after).await)
    }
}

fn app_spec(spec: Option<v1::AppSpec>) -> Result<AppSpec, Status> {
    use v1::app_spec::App;
    let nonempty = |s: String, what: &str| {
        if s.is_empty() {
            Err(invalid(format!("AppSpec.{what} is empty")))
        } else {
            Ok(s)
        }
    };
    match spec.and_then(|s| s.app) {
        Some(App::AppId(id)) => Ok(AppSpec::DesktopId(nonempty(id, "app_id")?)),
        Some(App::Executable(e)) => Ok(AppSpec::Executable(nonempty(e, "executable")?)),
        Some(App::Name(n)) => Ok(AppSpec::Name(nonempty(n, "name")?)),
        None => Err(invalid(
            "app is required: set AppSpec.app_id, executable or name",
        )),
    }
}

fn background(delivery: i32) -> Result<bool, Status> {
    let d: v1::Delivery = known(delivery, "delivery")?;
    Ok(d == v1::Delivery::Background)
}

fn duration(d: Option<prost_types::Duration>, field: &str) -> Result<Option<Duration>, Status> {
    match d {
        None => Ok(None),
        Some(d) if d.seconds < 0 || d.nanos < 0 => {
            Err(invalid(format!("{field} must not be negative")))
        }
        Some(d) => Ok(Some(
            Duration::from_secs(d.seconds as u64) + Duration::from_nanos(d.nanos as u64),
        )),
    }
}

/// How often a watch's keepalives come, as asked, within the bounds.
fn keepalive_every(asked: Option<prost_types::Duration>) -> Result<Duration, Status> {
    Ok(duration(asked, "keepalive_interval")?
        .unwrap_or(DEFAULT_KEEPALIVE)
        .clamp(MIN_KEEPALIVE, MAX_KEEPALIVE))
}

#[tonic::async_trait]
impl WindowsService for Windows {
    async fn list_windows(
        &self,
        request: Request<v1::ListWindowsRequest>,
    ) -> Result<Response<v1::ListWindowsResponse>, Status> {
        let filter = Filter::from_wire(request.into_inner().filter);
        let displays = self.displays().await;
        Ok(Response::new(v1::ListWindowsResponse {
            windows: filter.list(&self.session, &displays),
        }))
    }

    type WatchWindowsStream = ReceiverStream<Result<v1::WatchWindowsResponse, Status>>;

    async fn watch_windows(
        &self,
        request: Request<v1::WatchWindowsRequest>,
    ) -> Result<Response<Self::WatchWindowsStream>, Status> {
        let request = request.into_inner();
        let every = keepalive_every(request.keepalive_interval)?;
        let filter = Filter::from_wire(request.filter);
        let (tx, rx) = mpsc::channel(WATCH_BUFFER);
        let (session, stop) = (self.session.clone(), self.stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = watch(session, filter, every, tx) => {}
                _ = stop.cancelled() => {}
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn get_window(
        &self,
        request: Request<v1::GetWindowRequest>,
    ) -> Result<Response<v1::GetWindowResponse>, Status> {
        let w = self.window(request.get_ref().window.as_ref()).await?;
        Ok(Response::new(v1::GetWindowResponse {
            window: Some(self.describe(&w).await),
        }))
    }

    async fn activate_window(
        &self,
        request: Request<v1::ActivateWindowRequest>,
    ) -> Result<Response<v1::ActivateWindowResponse>, Status> {
        let window = self
            .op(request.get_ref().window.as_ref(), WindowOp::Activate)
            .await?;
        Ok(Response::new(v1::ActivateWindowResponse {
            window: Some(window),
        }))
    }

    async fn set_window_bounds(
        &self,
        request: Request<v1::SetWindowBoundsRequest>,
    ) -> Result<Response<v1::SetWindowBoundsResponse>, Status> {
        let r = request.into_inner();
        let w = self.window(r.window.as_ref()).await?;
        for v in [r.width, r.height].into_iter().flatten() {
            if !(1.0..=MAX_SIDE).contains(&v) {
                return Err(invalid(format!(
                    "width and height are 1 to {MAX_SIDE} points, not {v}"
                )));
            }
        }
        if r.position.as_ref().is_some_and(|p| {
            !(-MAX_PLACE..=MAX_PLACE).contains(&p.x) || !(-MAX_PLACE..=MAX_PLACE).contains(&p.y)
        }) {
            return Err(invalid(format!(
                "position is within {MAX_PLACE} points of the origin either way"
            )));
        }
        // cua's bounds are the content's.
        let position = r.position.map(|p| (p.x.round() as i32, p.y.round() as i32));
        let size = match (r.width, r.height) {
            (None, None) => None,
            (width, height) => Some((
                width.map_or(w.content.width, |v| v.round() as i32),
                height.map_or(w.content.height, |v| v.round() as i32),
            )),
        };
        let bounds = WindowOp::SetBounds {
            area: Area::Content,
            position,
            size,
        };
        let window = self.op(r.window.as_ref(), bounds).await?;
        Ok(Response::new(v1::SetWindowBoundsResponse {
            window: Some(window),
        }))
    }

    async fn minimize_window(
        &self,
        request: Request<v1::MinimizeWindowRequest>,
    ) -> Result<Response<v1::MinimizeWindowResponse>, Status> {
        let window = self
            .op(request.get_ref().window.as_ref(), WindowOp::Minimize)
            .await?;
        Ok(Response::new(v1::MinimizeWindowResponse {
            window: Some(window),
        }))
    }

    async fn maximize_window(
        &self,
        request: Request<v1::MaximizeWindowRequest>,
    ) -> Result<Response<v1::MaximizeWindowResponse>, Status> {
        let window = self
            .op(request.get_ref().window.as_ref(), WindowOp::Maximize)
            .await?;
        Ok(Response::new(v1::MaximizeWindowResponse {
            window: Some(window),
        }))
    }

    async fn restore_window(
        &self,
        request: Request<v1::RestoreWindowRequest>,
    ) -> Result<Response<v1::RestoreWindowResponse>, Status> {
        let window = self
            .op(request.get_ref().window.as_ref(), WindowOp::Restore)
            .await?;
        Ok(Response::new(v1::RestoreWindowResponse {
            window: Some(window),
        }))
    }

    async fn close_window(
        &self,
        request: Request<v1::CloseWindowRequest>,
    ) -> Result<Response<v1::CloseWindowResponse>, Status> {
        let r = request.into_inner();
        let handle = handle_of(r.window.as_ref())?;
        let outcome = self
            .session
            .close(handle, r.force)
            .await
            .map_err(|e| from_session(e, "windows"))?;
        Ok(Response::new(v1::CloseWindowResponse {
            closed: outcome == CloseOutcome::Closed,
        }))
    }

    async fn launch_app(
        &self,
        request: Request<v1::LaunchAppRequest>,
    ) -> Result<Response<v1::LaunchAppResponse>, Status> {
        let r = request.into_inner();
        let launch = Launch {
            app: Some(app_spec(r.app)?),
            args: r.args,
            env: r.env.into_iter().collect(),
            cwd: (!r.cwd.is_empty()).then(|| r.cwd.into()),
            background: background(r.delivery)?,
            wait_for_window: duration(r.wait_for_window, "wait_for_window")?,
        };
        let launched = self
            .session
            .launch(launch)
            .await
            .map_err(|e| from_session(e, "launch_app"))?;
        let mut windows = Vec::new();
        for w in &launched.windows {
            windows.push(self.describe(w).await);
        }
        Ok(Response::new(v1::LaunchAppResponse {
            pid: launched.pid,
            windows,
        }))
    }

    async fn open(
        &self,
        request: Request<v1::OpenRequest>,
    ) -> Result<Response<v1::OpenResponse>, Status> {
        use v1::open_request::Target;
        let r = request.into_inner();
        let target = match r.target {
            Some(Target::Url(url)) if !url.is_empty() => OpenTarget::Url(url),
            Some(Target::Path(path)) if !path.is_empty() => OpenTarget::Path(path.into()),
            _ => return Err(invalid("target is required: set url or path")),
        };
        let with = r.with_app.map(|a| app_spec(Some(a))).transpose()?;
        let opened = self
            .session
            .open(target, with, background(r.delivery)?)
            .await
            .map_err(|e| from_session(e, "launch_app"))?;
        Ok(Response::new(v1::OpenResponse { pid: opened.pid }))
    }
}

type WatchSender = mpsc::Sender<Result<v1::WatchWindowsResponse, Status>>;

/// Send the snapshot, then what changed each time the kept list changes,
/// and a keepalive whenever the stream has been quiet for `every`.
async fn watch(session: Arc<Session>, filter: Filter, every: Duration, tx: WatchSender) {
    use v1::watch_windows_response::Event;
    let send = |event: Event| {
        let tx = tx.clone();
        async move {
            tx.send(Ok(v1::WatchWindowsResponse { event: Some(event) }))
                .await
                .is_ok()
        }
    };
    let mut list = session.watch_windows();
    list.mark_unchanged();
    let displays = session.displays().await.unwrap_or_default();
    let mut shown = filter.list(&session, &displays);
    if !send(Event::Snapshot(v1::WindowSnapshot {
        windows: shown.clone(),
    }))
    .await
    {
        return;
    }
    let mut quiet = Box::pin(tokio::time::sleep(every));
    loop {
        tokio::select! {
            changed = list.changed() => {
                if changed.is_err() {
                    return;
                }
                list.mark_unchanged();
                let displays = session.displays().await.unwrap_or_default();
                let now = filter.list(&session, &displays);
                let events = changes(&shown, &now);
                shown = now;
                if events.is_empty() {
                    continue;
                }
                for event in events {
                    if !send(event).await {
                        return;
                    }
                }
            }
            () = &mut quiet => {
                if !send(Event::Keepalive(v1::KeepAlive {})).await {
                    return;
                }
            }
            () = tx.closed() => return,
        }
        quiet.as_mut().reset(tokio::time::Instant::now() + every);
    }
}

/// What a client that saw `before` must be told to see `now`: closes first,
/// then new windows, then windows whose description changed.
fn changes(
    before: &[v1::WindowInfo],
    now: &[v1::WindowInfo],
) -> Vec<v1::watch_windows_response::Event> {
    use v1::watch_windows_response::Event;
    let key = |w: &v1::WindowInfo| w.r#ref.clone().map(|r| (r.id, r.epoch));
    let was: HashMap<_, _> = before.iter().map(|w| (key(w), w)).collect();
    let is: HashMap<_, _> = now.iter().map(|w| (key(w), w)).collect();
    let mut events: Vec<Event> = before
        .iter()
        .filter(|w| !is.contains_key(&key(w)))
        .map(|w| {
            Event::Closed(v1::WindowClosed {
                r#ref: w.r#ref.clone(),
            })
        })
        .collect();
    for w in now {
        match was.get(&key(w)) {
            None => events.push(Event::Created(w.clone())),
            Some(old) if *old != w => events.push(Event::Updated(w.clone())),
            Some(_) => {}
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use wayrig_host::WindowHandle;

    fn handle(w: &v1::WindowInfo) -> WindowHandle {
        handle_of(w.r#ref.as_ref()).unwrap()
    }

    fn info(id: u64, title: &str) -> v1::WindowInfo {
        v1::WindowInfo {
            r#ref: Some(crate::convert::window_ref(WindowHandle { id, epoch: 1 })),
            title: title.into(),
            ..Default::default()
        }
    }

    #[test]
    fn changes_say_closed_created_and_updated_and_nothing_for_the_same() {
        use v1::watch_windows_response::Event;
        let before = [info(1, "a"), info(2, "b")];
        let now = [info(2, "b2"), info(3, "c")];
        let events = changes(&before, &now);
        assert!(matches!(&events[0], Event::Closed(c) if c.r#ref == before[0].r#ref));
        assert!(matches!(&events[1], Event::Updated(w) if w.title == "b2"));
        assert!(matches!(&events[2], Event::Created(w) if handle(w).id == 3));
        assert_eq!(events.len(), 3);
        assert!(changes(&now, &now).is_empty());
    }

    #[test]
    fn keepalive_intervals_are_kept_within_bounds_even_at_the_wires_largest() {
        let asked =
            |seconds, nanos| keepalive_every(Some(prost_types::Duration { seconds, nanos }));
        assert_eq!(keepalive_every(None).unwrap(), DEFAULT_KEEPALIVE);
        assert_eq!(asked(0, 0).unwrap(), MIN_KEEPALIVE);
        assert_eq!(asked(2, 0).unwrap(), Duration::from_secs(2));
        assert_eq!(asked(i64::MAX, 999_999_999).unwrap(), MAX_KEEPALIVE);
        // The next keepalive's deadline is reachable from now at the bound.
        assert!(tokio::time::Instant::now()
            .checked_add(MAX_KEEPALIVE)
            .is_some());
        assert!(asked(-1, 0).is_err());
    }
}
