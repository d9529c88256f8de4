//! Wayrig on another broker's Bus (`noded`): each hosted app's name registered
//! over one WebSocket, forwarded requests answered on it, reconnecting with backoff.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wayrig_proto::abp::{Frame, Kind, Rc, Refusal, MAX_FRAME};
use wayrig_services::Session;

use crate::apps::{spawn_writer, Apps, Outbox, Routed};
use crate::broker::malformed;

/// The broker's own name on the Bus.
const BROKER: &str = "noded";
/// The first wait before connecting again.
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// The longest wait before connecting again.
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How long a connection to the broker may take, its upgrade answered.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
/// A heartbeat goes to the broker this often while nothing else does.
const HEARTBEAT: Duration = Duration::from_secs(5);
/// A broker silent this long (three heartbeats unanswered) is gone.
const SILENCE_LIMIT: Duration = Duration::from_secs(15);

/// Check a broker's address before anything starts: a `ws://` URL.
pub fn check_url(url: &str) -> Result<(), String> {
    let request = url.into_client_request().map_err(|e| {
        format!("--bus-connect {url}: not a WebSocket URL ({e}); give ws://HOST:PORT/ws")
    })?;
    match request.uri().scheme_str() {
        Some("ws") => Ok(()),
        other => Err(format!(
            "--bus-connect {url}: the scheme is {}, not ws (TLS is not supported); give ws://HOST:PORT/ws",
            other.unwrap_or("missing")
        )),
    }
}

/// What the connector tells its user, as it happens.
#[derive(Debug)]
pub enum Notice<'a> {
    /// Connected to the broker (again).
    Connected,
    /// The broker could not be reached or went away; connecting again after `retry`.
    Lost { why: &'a str, retry: Duration },
    /// An app's name was registered with the broker: the `--bus-name` one
    /// from the start (its app not shown yet: no pid), the rest as they show.
    Registered {
        name: &'a str,
        pid: Option<u32>,
        app_id: &'a str,
    },
    /// The broker refused an app's name; the app stays off this Bus until the
    /// next connection.
    Refused {
        name: &'a str,
        pid: Option<u32>,
        error_code: &'a str,
        message: &'a str,
    },
}

/// A hosted app with its Bus name; `pid` None while the name is held for an
/// app that has not shown a window yet.
#[derive(Debug, Clone)]
struct Named {
    name: String,
    pid: Option<u32>,
    app_id: String,
}

/// The wait before the next connection: doubling from 100 ms to 5 s, from
/// the start again once a connection was made.
#[derive(Debug)]
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: BACKOFF_FIRST,
        }
    }

    /// The wait now; the one after is twice as long, up to the longest.
    fn take(&mut self) -> Duration {
        let now = self.next;
        self.next = (now * 2).min(BACKOFF_MAX);
        now
    }

    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }
}

/// Why one connection ended.
enum Ended {
    /// The session ended: nothing more to serve.
    Session,
    /// The broker went away, for this reason.
    Lost(String),
}

/// Register the hosted apps with the broker at `url` and answer what it
/// forwards, connecting again whenever it goes away, until the session ends or
/// `stop` is cancelled (then every request accepted is answered first).
/// `first_name` names the first app that shows a window.
pub async fn connect(
    url: String,
    session: Arc<Session>,
    first_name: Option<String>,
    notify: impl Fn(Notice) + Send + Sync + 'static,
    stop: CancellationToken,
) {
    // The name given is the broker's to hold for us from the first
    // connection on, so that no other client takes it first.
    let mut known: Vec<Named> = first_name
        .iter()
        .map(|name| Named {
            name: name.clone(),
            pid: None,
            app_id: String::new(),
        })
        .collect();
    let apps = Apps::new(session, first_name);
    let (named_tx, mut named_rx) = mpsc::unbounded_channel::<Named>();
    let naming = tokio::spawn(apps.clone().name_apps(move |name, pid, app_id| {
        let _ = named_tx.send(Named {
            name: name.to_string(),
            pid: Some(pid),
            app_id: app_id.to_string(),
        });
    }));
    let mut backoff = Backoff::new();
    // Only the first failure of a run of them is told; the rest are traced.
    let mut told_lost = false;
    loop {
        // A broker that takes the connection and never answers its upgrade
        // is one more failure to retry; a stop ends the attempt.
        let connected = tokio::select! {
            connected = tokio::time::timeout(CONNECT_LIMIT, connect_once(&url)) => {
                connected.unwrap_or_else(|_| {
                    Err(format!(
                        "the broker did not finish the WebSocket handshake within {} s",
                        CONNECT_LIMIT.as_secs()
                    ))
                })
            }
            _ = stop.cancelled() => {
                apps.finish().await;
                naming.abort();
                return;
            }
        };
        let why = match connected {
            Ok(ws) => {
                backoff.reset();
                told_lost = false;
                notify(Notice::Connected);
                match serve(ws, &apps, &mut known, &mut named_rx, &notify, &stop).await {
                    Ended::Session => break,
                    Ended::Lost(why) => why,
                }
            }
            Err(why) => why,
        };
        let retry = backoff.take();
        if told_lost {
            tracing::debug!(%why, ?retry, "Bus broker still unreachable");
        } else {
            notify(Notice::Lost { why: &why, retry });
            told_lost = true;
        }
        let wait = tokio::time::sleep(retry);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                _ = &mut wait => break,
                _ = stop.cancelled() => {
                    apps.finish().await;
                    naming.abort();
                    return;
                }
                named = named_rx.recv() => match named {
                    Some(named) => remember(&mut known, named),
                    None => {
                        naming.abort();
                        return;
                    }
                },
            }
        }
    }
    naming.abort();
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect_once(url: &str) -> Result<Ws, String> {
    // An answer up to MixOS's 16 MiB fits; a capture's path is far less.
    let mut config = WebSocketConfig::default();
    config.max_frame_size = Some(2 * MAX_FRAME);
    config.max_message_size = Some(2 * MAX_FRAME);
    // Nagle off: an answer is not held back for the broker's delayed ACK.
    tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| e.to_string())
}

/// One connection: every known app registered, then registrations of apps
/// named meanwhile and forwarded requests, until either side ends.
async fn serve(
    ws: Ws,
    apps: &Arc<Apps>,
    known: &mut Vec<Named>,
    named_rx: &mut mpsc::UnboundedReceiver<Named>,
    notify: &impl Fn(Notice),
    stop: &CancellationToken,
) -> Ended {
    let (sink, mut source) = ws.split();
    let (tx, writer) = spawn_writer(sink);
    let mut link = Link {
        tx,
        next_id: 1,
        pending: HashMap::new(),
        registered: HashSet::new(),
        beating: false,
    };
    for named in known.iter() {
        link.register(named);
    }
    // Heard from the broker: any frame it sends, a heartbeat's echo included.
    let mut heard = tokio::time::Instant::now();
    let mut beat = tokio::time::interval_at(heard + HEARTBEAT, HEARTBEAT);
    let ended = loop {
        tokio::select! {
            _ = beat.tick() => {
                if heard.elapsed() >= SILENCE_LIMIT {
                    break Ended::Lost(format!(
                        "the broker sent nothing for {} s, heartbeats unanswered",
                        heard.elapsed().as_secs()
                    ));
                }
                link.heartbeat();
            }
            _ = stop.cancelled() => {
                // What was accepted is answered while requests the broker
                // forwards meanwhile are read and refused BUSY; all of it is
                // written before the connection closes.
                let finish = apps.finish();
                tokio::pin!(finish);
                loop {
                    tokio::select! {
                        _ = &mut finish => break,
                        message = source.next() => match message {
                            Some(Ok(Message::Text(text))) => link.frame(text.as_str(), apps, notify),
                            Some(Ok(_)) => {}
                            Some(Err(_)) | None => {
                                (&mut finish).await;
                                break;
                            }
                        },
                    }
                }
                drop(link);
                let _ = writer.await;
                return Ended::Session;
            }
            named = named_rx.recv() => match named {
                Some(named) => {
                    link.named(&named, notify);
                    remember(known, named);
                }
                None => break Ended::Session,
            },
            // A broker that sends without reading waits for its answers
            // (its heartbeats go unheard meanwhile).
            message = source.next(), if link.tx.has_room() => match message {
                Some(Ok(Message::Text(text))) => {
                    heard = tokio::time::Instant::now();
                    link.frame(text.as_str(), apps, notify);
                }
                Some(Ok(Message::Close(_))) | None => {
                    break Ended::Lost("the broker closed the connection".into())
                }
                Some(Err(e)) => break Ended::Lost(e.to_string()),
                Some(Ok(_)) => heard = tokio::time::Instant::now(),
            },
        }
    };
    writer.abort();
    ended
}

/// Keep an app's name for the next connections; the app that shows with a
/// held name takes its place.
fn remember(known: &mut Vec<Named>, named: Named) {
    known.retain(|k| k.name != named.name);
    known.push(named);
}

/// One connection's state: our registrations in flight and those that took.
struct Link {
    tx: Outbox,
    next_id: u64,
    /// Our `noded.register` requests awaiting their answers, by id.
    pending: HashMap<String, Named>,
    /// The names the broker gave us on this connection.
    registered: HashSet<String>,
    /// Our heartbeat is out and not yet echoed: the next heartbeat that
    /// comes is its echo, not one of the broker's own to answer.
    beating: bool,
}

impl Link {
    /// An app was named: registered now, unless its name is held already
    /// (the broker has it from the start, or is answering for it).
    fn named(&mut self, named: &Named, notify: &impl Fn(Notice)) {
        if let Some(pending) = self.pending.values_mut().find(|p| p.name == named.name) {
            *pending = named.clone();
        } else if self.registered.contains(&named.name) {
            notify(Notice::Registered {
                name: &named.name,
                pid: named.pid,
                app_id: &named.app_id,
            });
        } else {
            self.register(named);
        }
    }

    fn heartbeat(&mut self) {
        self.beating = true;
        let _ = self.tx.send(Frame::heartbeat().serialize());
    }

    fn register(&mut self, named: &Named) {
        let id = format!("wayrig-{}", self.next_id);
        self.next_id += 1;
        let frame = Frame::request("noded.register", &named.name, BROKER, &id).with_body("{}");
        let _ = self.tx.send(frame.serialize());
        self.pending.insert(id, named.clone());
    }

    /// A frame from the broker: an answer to a registration, or a request.
    fn frame(&mut self, text: &str, apps: &Arc<Apps>, notify: &impl Fn(Notice)) {
        // The broker writes headers sorted; any order is read all the same.
        let frame = match Frame::parse_lenient(text) {
            Ok(frame) => frame,
            Err(e) => {
                // A request the broker forwarded is answered all the same.
                let seen = Frame::salvage(text);
                tracing::warn!(%e, "unreadable frame from the Bus broker");
                if seen.id().is_some_and(|id| !self.pending.contains_key(id)) {
                    let _ = self.tx.send(malformed(&seen, &e.to_string()).serialize());
                }
                return;
            }
        };
        if frame.is_heartbeat() {
            // The broker's own heartbeat is echoed; the echo of ours is not.
            if !std::mem::take(&mut self.beating) {
                let _ = self.tx.send(Frame::heartbeat().serialize());
            }
            return;
        }
        match frame.kind() {
            Some(Kind::Response) => self.answered(&frame, notify),
            Some(Kind::Request) => {
                if let Some(answer) = self.request(&frame, apps) {
                    let _ = self.tx.send(answer.serialize());
                }
            }
            // Heartbeats, events and streams ask for nothing.
            _ => {}
        }
    }

    fn answered(&mut self, frame: &Frame, notify: &impl Fn(Notice)) {
        let Some(named) = frame.id().and_then(|id| self.pending.remove(id)) else {
            return;
        };
        if frame.rc() == Some(Rc::Ok) {
            self.registered.insert(named.name.clone());
            notify(Notice::Registered {
                name: &named.name,
                pid: named.pid,
                app_id: &named.app_id,
            });
            return;
        }
        let body: Value = serde_json::from_str(&frame.body).unwrap_or_default();
        let text = |key: &str| body[key].as_str().map(str::to_string);
        let error_code = text("error_code").unwrap_or_else(|| "UNKNOWN".into());
        let message = text("message").unwrap_or_else(|| frame.body.clone());
        notify(Notice::Refused {
            name: &named.name,
            pid: named.pid,
            error_code: &error_code,
            message: &message,
        });
    }

    /// The answer to a forwarded request, if it gets one now (an app answers later).
    fn request(&self, request: &Frame, apps: &Arc<Apps>) -> Option<Frame> {
        let to = request.to().unwrap_or_default();
        if self.registered.contains(to) {
            match apps.route(request, &self.tx) {
                Routed::Queued => return None,
                Routed::Refused(refusal) => return Some(refusal),
                Routed::NoSuchApp => {}
            }
        }
        let mut names: Vec<&str> = self.registered.iter().map(String::as_str).collect();
        names.sort();
        let refusal = Refusal::new(
            "UNKNOWN_SERVICE",
            format!(
                "Wayrig registered no {to:?} with this broker; its apps here are: {}",
                names.join(", ")
            ),
        );
        Some(Frame::refusal_to(request, &refusal))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_100_ms_to_5_s_and_starts_again_on_reset() {
        let mut backoff = Backoff::new();
        let waits: Vec<u128> = (0..9).map(|_| backoff.take().as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
        backoff.reset();
        assert_eq!(backoff.take(), Duration::from_millis(100));
    }

    #[test]
    fn only_ws_urls_are_taken() {
        assert!(check_url("ws://127.0.0.1:4200/ws").is_ok());
        let e = check_url("http://127.0.0.1:4200/ws").unwrap_err();
        assert!(e.contains("give ws://HOST:PORT/ws"), "{e}");
        assert!(check_url("wss://example.org/ws").is_err());
        assert!(check_url("not a url").is_err());
    }
}
