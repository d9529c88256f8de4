//! The hosted apps on the Bus, for the broker and the connector alike: each named
//! when its first window shows, answering its requests in order on a worker of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use wayrig_host::WindowKind;
use wayrig_proto::abp::{Frame, Rc, Refusal};
use wayrig_services::Session;

use crate::names::Names;
use crate::verbs;

/// Requests one app may hold waiting; more are refused BUSY.
const APP_BACKLOG: usize = 64;

/// A request for an app's worker, with where its answer goes.
struct Job {
    request: Frame,
    reply: mpsc::UnboundedSender<String>,
}

/// What became of a request routed to an app.
pub(crate) enum Routed {
    /// Queued; the answer goes to the reply channel when the app gave it.
    Queued,
    /// Refused at once (the app's queue is full or it is closing).
    Refused(Frame),
    /// No hosted app has that name.
    NoSuchApp,
}

/// The hosted apps' names and workers.
pub(crate) struct Apps {
    session: Arc<Session>,
    /// The Bus's names; for the broker, the clients' registrations too.
    pub(crate) names: Mutex<Names>,
    /// Each named app's worker, by Bus name.
    workers: Mutex<HashMap<String, mpsc::Sender<Job>>>,
}

impl Apps {
    /// `first_name` names the first app that shows a window.
    pub(crate) fn new(session: Arc<Session>, first_name: Option<String>) -> Arc<Apps> {
        Arc::new(Apps {
            session,
            names: Mutex::new(Names::new(first_name)),
            workers: Mutex::new(HashMap::new()),
        })
    }

    /// Give each app a Bus name and a worker when its first top-level window
    /// shows; `on_named` hears of each. Returns when the session ends.
    pub(crate) async fn name_apps(self: Arc<Self>, on_named: impl Fn(&str, u32, &str)) {
        let mut windows = self.session.watch_windows();
        loop {
            let list = windows.borrow_and_update().clone();
            for w in list
                .iter()
                .filter(|w| matches!(w.kind, WindowKind::Normal | WindowKind::Dialog))
            {
                let Some(pid) = w.pid else { continue };
                let named = self.names.lock().unwrap().name_app(pid, &w.app_id);
                if let Some(name) = named {
                    self.start_worker(&name, pid);
                    on_named(&name, pid, &w.app_id);
                }
            }
            if windows.changed().await.is_err() {
                return;
            }
        }
    }

    fn start_worker(&self, name: &str, pid: u32) {
        let (tx, mut rx) = mpsc::channel::<Job>(APP_BACKLOG);
        self.workers.lock().unwrap().insert(name.to_string(), tx);
        let session = self.session.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                let answer = app_answer(&session, &name, pid, &job.request).await;
                let _ = job.reply.send(answer.serialize());
            }
        });
    }

    /// Queue a request for the app its `to` names; its answer goes to `reply`.
    pub(crate) fn route(&self, request: &Frame, reply: &mpsc::UnboundedSender<String>) -> Routed {
        let to = request.to().unwrap_or_default();
        let Some(worker) = self.workers.lock().unwrap().get(to).cloned() else {
            return Routed::NoSuchApp;
        };
        let job = Job {
            request: request.clone(),
            reply: reply.clone(),
        };
        let why = match worker.try_send(job) {
            Ok(()) => return Routed::Queued,
            Err(mpsc::error::TrySendError::Full(_)) => {
                format!("{to} already holds {APP_BACKLOG} requests; wait for their answers")
            }
            Err(mpsc::error::TrySendError::Closed(_)) => format!("{to} is closing"),
        };
        Routed::Refused(Frame::refusal_to(request, &Refusal::new("BUSY", why)))
    }
}

/// An app's answer to a request routed to it.
async fn app_answer(session: &Arc<Session>, app: &str, pid: u32, request: &Frame) -> Frame {
    let command = request.command().unwrap_or_default();
    let verb = match command {
        "HELP" => "HELP",
        c => c
            .strip_prefix(app)
            .and_then(|v| v.strip_prefix('.'))
            .unwrap_or(c),
    };
    match verbs::answer(session, app, pid, verb, &request.body).await {
        Ok(body) => Frame::response_to(request, Rc::Ok, body.to_string()),
        Err(refusal) => Frame::refusal_to(request, &refusal),
    }
}
