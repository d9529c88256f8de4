//! The hosted apps on the Bus, for the broker and the connector alike: each named
//! when its first window shows, answering its requests in order on a worker of its own.
//!
//! The spec's ordering lives here: input and captures join a queue of 32 per
//! app, a hidden window refuses new input and cancels what waits, and closing
//! (the app's or Wayrig's) answers every request accepted.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Sink, SinkExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use wayrig_host::{WindowInfo, WindowKind};
use wayrig_proto::abp::{Frame, Rc, Refusal};
use wayrig_services::{Session, QUEUE_LIMIT};

use crate::names::{Names, Owner};
use crate::verbs;

/// Requests of any kind one app may hold; more are refused BUSY.
const REQUEST_LIMIT: usize = 256;
/// How long stopping waits for the requests in progress to be answered:
/// the grace every face gives them.
const FINISH_LIMIT: Duration = wayrig_services::STOP_GRACE;

/// The verbs that join an app's input queue: one step per frame.
const INPUT_VERBS: &[&str] = &[
    "ui.click",
    "ui.pointer",
    "ui.scroll",
    "ui.key",
    "ui.type",
    "ui.capture",
];

/// A request for an app's worker, with where its answer goes.
struct Job {
    request: Frame,
    /// The verb, the app's prefix taken off.
    verb: String,
    /// Joined the input queue (counted in `AppState::inputs`).
    input: bool,
    /// The app's hide count when the request was accepted.
    hides: u64,
    reply: Outbox,
}

/// Frames written to one connection before its reader reads another: a
/// client that sends without reading its answers is then slowed by its own
/// socket, not held in Wayrig's memory.
const OUTBOX_LIMIT: usize = 1024;

/// The frames on their way to one connection, in order, with their count.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<String>,
    backlog: Arc<AtomicUsize>,
    written: Arc<tokio::sync::Notify>,
}

impl Outbox {
    /// Queue a frame for the connection; an error once its writer is gone.
    pub(crate) fn send(&self, text: String) -> Result<(), ()> {
        self.backlog.fetch_add(1, Ordering::SeqCst);
        self.tx.send(text).map_err(|_| {
            self.backlog.fetch_sub(1, Ordering::SeqCst);
        })
    }

    /// Whether the connection's reader may read another frame.
    pub(crate) fn has_room(&self) -> bool {
        self.backlog.load(Ordering::SeqCst) < OUTBOX_LIMIT
    }

    /// Until the reader may read another frame.
    pub(crate) async fn room(&self) {
        while !self.has_room() {
            self.written.notified().await;
        }
    }
}

/// Write the frames sent to the returned outbox to a connection, in order,
/// and close it once every sender is gone.
pub(crate) fn spawn_writer<S>(mut sink: S) -> (Outbox, JoinHandle<()>)
where
    S: Sink<Message> + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let outbox = Outbox {
        tx,
        backlog: Arc::new(AtomicUsize::new(0)),
        written: Arc::new(tokio::sync::Notify::new()),
    };
    let (backlog, written) = (outbox.backlog.clone(), outbox.written.clone());
    let writer = tokio::spawn(async move {
        while let Some(text) = rx.recv().await {
            let sent = sink.send(Message::text(text)).await;
            backlog.fetch_sub(1, Ordering::SeqCst);
            written.notify_one();
            if sent.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    (outbox, writer)
}

/// What became of a request routed to an app.
pub(crate) enum Routed {
    /// Queued; the answer goes to the reply channel when the app gave it.
    Queued,
    /// Refused at once (the app's queue is full, its window hidden, or it is closing).
    Refused(Frame),
    /// No hosted app has that name.
    NoSuchApp,
}

/// What the Bus knows of one named app, shared by its router and worker.
struct AppState {
    pid: u32,
    /// The app's front top-level window, `None` while it shows none.
    window: Mutex<Option<WindowInfo>>,
    /// Input requests accepted and not yet answered.
    inputs: AtomicUsize,
    /// Bumped whenever the window is hidden: input accepted before that is cancelled.
    hides: AtomicU64,
    /// A `window minimize` was accepted and the window is not minimized yet:
    /// input sent after it is refused as if it were.
    minimizing: AtomicBool,
}

impl AppState {
    fn hidden(&self) -> bool {
        self.window.lock().unwrap().as_ref().is_some_and(is_hidden)
    }
}

/// A window that draws nothing a person sees: minimized or fully covered.
fn is_hidden(w: &WindowInfo) -> bool {
    w.minimized || !w.on_screen
}

/// A named app: its state and its worker's queue.
struct App {
    state: Arc<AppState>,
    jobs: mpsc::Sender<Job>,
    worker: JoinHandle<()>,
}

/// The hosted apps' names and workers.
pub(crate) struct Apps {
    session: Arc<Session>,
    /// The Bus's names; for the broker, the clients' registrations too.
    pub(crate) names: Mutex<Names>,
    /// Each named app, by Bus name.
    apps: Arc<Mutex<HashMap<String, App>>>,
    /// Wayrig is stopping: new requests are refused, queued ones settled.
    stopping: Arc<AtomicBool>,
}

impl Apps {
    /// `first_name` names the first app that shows a window.
    pub(crate) fn new(session: Arc<Session>, first_name: Option<String>) -> Arc<Apps> {
        Arc::new(Apps {
            session,
            names: Mutex::new(Names::new(first_name)),
            apps: Arc::default(),
            stopping: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Give each app a Bus name and a worker when its first top-level window
    /// shows, and follow each named app's front window; `on_named` hears of
    /// each name. Returns when the session ends.
    pub(crate) async fn name_apps(self: Arc<Self>, on_named: impl Fn(&str, u32, &str)) {
        let mut windows = self.session.watch_windows();
        loop {
            let list = windows.borrow_and_update().clone();
            let tops: Vec<&WindowInfo> = list
                .iter()
                .filter(|w| matches!(w.kind, WindowKind::Normal | WindowKind::Dialog))
                .collect();
            let mut named_now = Vec::new();
            for w in &tops {
                let Some(pid) = w.pid else { continue };
                let named = self.names.lock().unwrap().name_app(pid, &w.app_id);
                if let Some(name) = named {
                    self.start_worker(&name, pid);
                    named_now.push((name, pid, w.app_id.as_str()));
                }
            }
            // Each app's window is recorded before its name is told: a
            // client that hears of a name finds the window it came with
            // (told first, a starved Bus answered it BUSY, showing none).
            self.follow_windows(&tops);
            for (name, pid, app_id) in named_now {
                on_named(&name, pid, app_id);
            }
            if windows.changed().await.is_err() {
                return;
            }
        }
    }

    /// Record each app's front window; one newly hidden cancels the input
    /// that waits for it (a hidden window's input would never be drawn).
    fn follow_windows(&self, tops: &[&WindowInfo]) {
        for app in self.apps.lock().unwrap().values() {
            let front = tops
                .iter()
                .find(|w| w.pid == Some(app.state.pid))
                .map(|w| (*w).clone());
            let was_hidden = app.state.hidden();
            if let Some(w) = front.as_ref().filter(|w| is_hidden(w) && !was_hidden) {
                app.state.hides.fetch_add(1, Ordering::SeqCst);
                self.session.cancel_input(w.handle);
            }
            // The minimize asked for shows: being minimized says it from now on.
            if front.as_ref().is_some_and(|w| w.minimized) {
                app.state.minimizing.store(false, Ordering::SeqCst);
            }
            *app.state.window.lock().unwrap() = front;
        }
    }

    fn start_worker(&self, name: &str, pid: u32) {
        let (jobs, mut rx) = mpsc::channel::<Job>(REQUEST_LIMIT);
        let state = Arc::new(AppState {
            pid,
            window: Mutex::new(None),
            inputs: AtomicUsize::new(0),
            hides: AtomicU64::new(0),
            minimizing: AtomicBool::new(false),
        });
        let session = self.session.clone();
        let stopping = self.stopping.clone();
        let app = name.to_string();
        let worker_state = state.clone();
        // Held until the app is in the map: a worker whose app ended at
        // once must find it there to remove it.
        let mut named = self.apps.lock().unwrap();
        let apps = self.apps.clone();
        let worker = tokio::spawn(async move {
            // Once the app's process has ended, what it holds here goes: the
            // requests already queued are answered, and no more are routed.
            let ended = session.app_ended(pid);
            tokio::pin!(ended);
            let mut gone = false;
            loop {
                let job = tokio::select! {
                    job = rx.recv() => job,
                    () = &mut ended, if !gone => {
                        gone = true;
                        apps.lock().unwrap().remove(&app);
                        rx.close();
                        continue;
                    }
                };
                let Some(job) = job else { break };
                let answer = app_answer(&session, &app, &worker_state, &stopping, &job).await;
                if job.input {
                    worker_state.inputs.fetch_sub(1, Ordering::SeqCst);
                }
                if job.verb == "window"
                    && is_minimize(&job.request.body)
                    && answer.rc() != Some(Rc::Ok)
                {
                    // Refused: the window will not be minimized after all.
                    worker_state.minimizing.store(false, Ordering::SeqCst);
                }
                let _ = job.reply.send(answer.serialize());
            }
        });
        named.insert(
            name.to_string(),
            App {
                state,
                jobs,
                worker,
            },
        );
    }

    /// Queue a request for the app its `to` names; its answer goes to `reply`.
    pub(crate) fn route(&self, request: &Frame, reply: &Outbox) -> Routed {
        let to = request.to().unwrap_or_default();
        let busy =
            |why: String| Routed::Refused(Frame::refusal_to(request, &Refusal::new("BUSY", why)));
        if self.stopping.load(Ordering::SeqCst) {
            return busy("Wayrig is stopping; it takes no more requests".into());
        }
        let apps = self.apps.lock().unwrap();
        let Some(app) = apps.get(to) else {
            let owner = self.names.lock().unwrap().owner(to);
            if let Some(Owner::App(pid)) = owner {
                return Routed::Refused(Frame::refusal_to(
                    request,
                    &Refusal::new(
                        "UNAVAILABLE",
                        format!("{to} (pid {pid}) has exited; start it again to drive it"),
                    ),
                ));
            }
            if self.names.lock().unwrap().reserved() == Some(to) {
                return busy(format!(
                    "{to} has drawn no window yet; ask again once its first frame shows"
                ));
            }
            return Routed::NoSuchApp;
        };
        let verb = verb_of(to, request.command().unwrap_or_default());
        let input = INPUT_VERBS.contains(&verb.as_str());
        let window = app.state.window.lock().unwrap().clone();
        let Some(window) = window else {
            return busy(format!(
                "{to} shows no window now (it is closing, or has not drawn one yet)"
            ));
        };
        let minimizing = app.state.minimizing.load(Ordering::SeqCst);
        if input && (is_hidden(&window) || minimizing) {
            return busy(format!(
                "{to}'s window is {}: input to it would never be drawn; send {to}.window \
                 {{\"action\": \"focus\"}} first",
                if window.minimized || minimizing {
                    "minimized"
                } else {
                    "covered"
                }
            ));
        }
        if input && app.state.inputs.fetch_add(1, Ordering::SeqCst) >= QUEUE_LIMIT {
            app.state.inputs.fetch_sub(1, Ordering::SeqCst);
            return busy(format!(
                "{to} already holds {QUEUE_LIMIT} input requests; wait for their answers"
            ));
        }
        if verb == "window" && !is_minimize(&request.body) {
            // Brought back (focus, restore...): input is taken again once
            // the window shows, in order after this request.
            app.state.minimizing.store(false, Ordering::SeqCst);
        }
        if verb == "window" && is_minimize(&request.body) {
            // A minimized window draws no frames: its queued input is settled
            // now, not after it, and input sent after it is refused.
            app.state.minimizing.store(true, Ordering::SeqCst);
            app.state.hides.fetch_add(1, Ordering::SeqCst);
            self.session.cancel_input(window.handle);
        }
        let job = Job {
            request: request.clone(),
            verb,
            input,
            hides: app.state.hides.load(Ordering::SeqCst),
            reply: reply.clone(),
        };
        match app.jobs.try_send(job) {
            Ok(()) => Routed::Queued,
            Err(e) => {
                if input {
                    app.state.inputs.fetch_sub(1, Ordering::SeqCst);
                }
                busy(match e {
                    mpsc::error::TrySendError::Full(_) => format!(
                        "{to} already holds {REQUEST_LIMIT} requests; wait for their answers"
                    ),
                    mpsc::error::TrySendError::Closed(_) => format!("{to} is closing"),
                })
            }
        }
    }

    /// Wayrig stops: every request accepted is answered (input in progress
    /// `closing`, queued input CANCELLED, the rest BUSY), new ones refused BUSY.
    pub(crate) async fn finish(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let workers: Vec<JoinHandle<()>> = {
            let mut apps = self.apps.lock().unwrap();
            for app in apps.values() {
                if let Some(w) = app.state.window.lock().unwrap().as_ref() {
                    self.session.cancel_input(w.handle);
                }
            }
            // Each worker ends once it has answered what its queue holds.
            apps.drain().map(|(_, app)| app.worker).collect()
        };
        let all = futures_util::future::join_all(workers);
        if tokio::time::timeout(FINISH_LIMIT, all).await.is_err() {
            tracing::warn!("Bus requests still unanswered after {FINISH_LIMIT:?}; stopping anyway");
        }
    }
}

/// The verb a command names for app `to`: its prefix taken off (`HELP` has none).
fn verb_of(to: &str, command: &str) -> String {
    command
        .strip_prefix(to)
        .and_then(|v| v.strip_prefix('.'))
        .unwrap_or(command)
        .to_string()
}

/// The body asks `window` to minimize.
fn is_minimize(body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("action").cloned())
        == Some(Value::String("minimize".into()))
}

/// An app's answer to a request routed to it, under the ordering rules.
async fn app_answer(
    session: &Arc<Session>,
    app: &str,
    state: &AppState,
    stopping: &AtomicBool,
    job: &Job,
) -> Frame {
    let request = &job.request;
    let refused = |code: &str, why: String| Frame::refusal_to(request, &Refusal::new(code, why));
    if stopping.load(Ordering::SeqCst) {
        return if job.input {
            refused(
                "CANCELLED",
                "Wayrig stopped before this input was sent".into(),
            )
        } else {
            refused("BUSY", "Wayrig is stopping".into())
        };
    }
    if job.input && job.hides != state.hides.load(Ordering::SeqCst) {
        return refused(
            "CANCELLED",
            format!("{app}'s window was minimized or covered before this input was sent"),
        );
    }
    if state.window.lock().unwrap().is_none() {
        return if job.input {
            refused(
                "CANCELLED",
                format!("{app} closed before this input was sent"),
            )
        } else {
            refused("BUSY", format!("{app} is closing"))
        };
    }
    let trace = session.trace_request(
        "bus",
        &format!("{app}.{}", job.verb),
        serde_json::from_str(&request.body).unwrap_or_else(|_| request.body.clone().into()),
    );
    let answer = verbs::answer(session, app, state.pid, &job.verb, &request.body).await;
    if let Some(trace) = trace {
        let traced = match &answer {
            Ok(body) => body.clone(),
            Err(r) => json!({"error_code": r.error_code, "message": r.message}),
        };
        trace.answer(answer.is_ok(), traced).await;
    }
    let stopped = stopping.load(Ordering::SeqCst);
    match answer {
        Ok(mut body) => {
            if stopped && job.input {
                body["closing"] = Value::Bool(true);
            }
            Frame::response_to(request, Rc::Ok, body.to_string())
        }
        // Input that Wayrig's stop cut short is answered, not refused.
        Err(r) if stopped && job.input && r.error_code == "CANCELLED" => Frame::response_to(
            request,
            Rc::Ok,
            json!({"closing": true, "interrupted": true, "menu": null, "focused": null, "pointer": null})
                .to_string(),
        ),
        // The window went while the input waited its turn: it was never sent.
        Err(r) if job.input && r.error_code == "BUSY" && app_closed(session, state.pid).await => {
            refused("CANCELLED", format!("{app} closed before this input was sent"))
        }
        Err(refusal) => Frame::refusal_to(request, &refusal),
    }
}

/// The app shows no top-level window any more.
async fn app_closed(session: &Session, pid: u32) -> bool {
    matches!(
        session.window(&verbs::app_pick(pid)).await,
        Err(wayrig_services::Error::NoWindow(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verb_is_the_command_without_the_apps_prefix() {
        assert_eq!(verb_of("calc", "calc.ui.click"), "ui.click");
        assert_eq!(verb_of("calc", "HELP"), "HELP");
        assert_eq!(verb_of("calc", "other.ui.click"), "other.ui.click");
    }

    #[test]
    fn only_a_window_minimize_settles_input_early() {
        assert!(is_minimize(r#"{"action":"minimize"}"#));
        assert!(!is_minimize(r#"{"action":"maximize"}"#));
        assert!(!is_minimize("not json"));
    }
}
