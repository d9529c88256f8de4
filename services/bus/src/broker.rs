//! The broker: ABP over WebSocket text frames at `ws://HOST:PORT/ws`, loopback
//! only unless a token is set; `noded.register`, `noded.ping`, heartbeats, and requests routed to apps.
//!
//! Each hosted app answers its requests one at a time, in arrival order, on
//! a worker of its own; a bad frame is answered rc 20, never a dropped connection.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wayrig_proto::abp::{Frame, Kind, Rc, Refusal, MAX_FRAME};
use wayrig_services::Session;

use crate::access::Access;
use crate::apps::{spawn_writer, Apps, Outbox, Routed};
use crate::names::valid_name;

/// The broker's own name, as MixOS's broker is called.
const BROKER: &str = "noded";

/// A bound Bus listener, with who may connect to it.
pub struct BusListener {
    listener: TcpListener,
    pub addr: SocketAddr,
    access: Arc<Access>,
}

/// Bind `HOST:PORT`: on a loopback address, or anywhere once a token is set.
pub async fn bind(addr: &str, access: Access) -> Result<BusListener, String> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .map_err(|e| format!("--bus-listen {addr}: not a HOST:PORT address: {e}"))?
        .collect();
    let Some(first) = resolved.first() else {
        return Err(format!("--bus-listen {addr}: the host has no address"));
    };
    if let Some(open) = resolved
        .iter()
        .find(|a| !a.ip().is_loopback() && access.token.is_none())
    {
        return Err(format!(
            "--bus-listen {addr}: {} is not a loopback address; without a token the Bus \
             listens on 127.0.0.1 or ::1 only (use --bus-listen 127.0.0.1:PORT, or set \
             --bus-token-file)",
            open.ip()
        ));
    }
    let listener = TcpListener::bind(first)
        .await
        .map_err(|e| format!("--bus-listen {addr}: cannot listen: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("--bus-listen {addr}: {e}"))?;
    Ok(BusListener {
        listener,
        addr,
        access: Arc::new(access),
    })
}

struct Broker {
    apps: Arc<Apps>,
    next_client: AtomicU64,
}

/// Serve the Bus until `stop` is cancelled; then answer every request accepted,
/// write the answers and close the connections. `first_name` names the first
/// app that shows a window; `on_named` hears of each app's Bus name.
pub async fn serve(
    listener: BusListener,
    session: Arc<Session>,
    first_name: Option<String>,
    on_named: impl Fn(&str, u32, &str) + Send + Sync + 'static,
    stop: CancellationToken,
) {
    let apps = Apps::new(session, first_name);
    let broker = Arc::new(Broker {
        apps: apps.clone(),
        next_client: AtomicU64::new(1),
    });
    let naming = tokio::spawn(apps.clone().name_apps(on_named));
    let (closing, closed) = watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Connections that ended are let go as new ones come.
                    while connections.try_join_next().is_some() {}
                    // Nagle off: a frame is not held back for the client's delayed ACK.
                    let _ = stream.set_nodelay(true);
                    let broker = broker.clone();
                    let closed = closed.clone();
                    let access = listener.access.clone();
                    let at = listener.addr;
                    connections.spawn(async move {
                        connection(broker, stream, (access, at), closed).await
                    });
                }
                Err(e) => {
                    tracing::warn!(%e, "Bus accept failed; accepting again");
                    tokio::time::sleep(wayrig_services::sockets::ACCEPT_PAUSE).await;
                }
            },
            _ = stop.cancelled() => break,
        }
    }
    // Connections still read (what arrives now is refused BUSY) while the
    // apps answer what they accepted; then they write it all and close.
    apps.finish().await;
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    naming.abort();
}

impl Broker {
    /// The answer to one frame, if it gets one now (app requests answer later).
    fn handle(&self, client: u64, text: &str, reply: &Outbox) -> Option<Frame> {
        let request = match Frame::parse_strict(text) {
            Ok(f) => f,
            Err(e) => {
                // Answered to the request it was, as far as that can be read.
                return Some(malformed(&Frame::salvage(text), &e.to_string()));
            }
        };
        if request.is_heartbeat() {
            return Some(Frame::heartbeat());
        }
        match request.kind() {
            Some(Kind::Request) => {}
            Some(_) => return None,
            None => {
                return Some(malformed(
                    &request,
                    "a frame says its type: request, response, event or stream",
                ))
            }
        }
        let (Some(to), Some(command)) = (request.to(), request.command()) else {
            return Some(malformed(
                &request,
                "a request names its target in `to` and its verb in `command`",
            ));
        };
        if to == BROKER {
            return Some(self.broker_verb(client, command, &request));
        }
        match self.apps.route(&request, reply) {
            Routed::Queued => return None,
            Routed::Refused(refusal) => return Some(refusal),
            Routed::NoSuchApp => {}
        }
        let names = self.apps.names.lock().unwrap();
        let refusal = match names.owner(to) {
            Some(_) => Refusal::new(
                "UNAVAILABLE",
                format!(
                    "{to} is a Bus client; Wayrig's broker routes requests to its hosted apps only"
                ),
            ),
            None => Refusal::new(
                "UNKNOWN_SERVICE",
                format!(
                    "no service {to:?} on this Bus; the hosted apps are: {}",
                    names.app_names().join(", ")
                ),
            ),
        };
        Some(Frame::refusal_to(&request, &refusal))
    }

    fn broker_verb(&self, client: u64, command: &str, request: &Frame) -> Frame {
        match command {
            "noded.ping" => Frame::response_to(
                request,
                Rc::Ok,
                json!({"pong": true, "broker": "wayrig"}).to_string(),
            ),
            "noded.register" => {
                let Some(name) = request.from() else {
                    return Frame::refusal_to(
                        request,
                        &Refusal::new(
                            "ARGUMENT",
                            "noded.register registers the name in `from`; give one",
                        ),
                    );
                };
                if let Err(why) = valid_name(name) {
                    return Frame::refusal_to(request, &Refusal::new("ARGUMENT", why));
                }
                if name == BROKER {
                    return taken(request, name);
                }
                match self.apps.names.lock().unwrap().register(name, client) {
                    Ok(()) => {
                        Frame::response_to(request, Rc::Ok, json!({"registered": name}).to_string())
                    }
                    Err(_) => taken(request, name),
                }
            }
            other => Frame::refusal_to(
                request,
                &Refusal::new(
                    "UNKNOWN_VERB",
                    format!(
                        "{BROKER} has no verb {other:?}; it answers noded.register and noded.ping"
                    ),
                ),
            ),
        }
    }
}

fn taken(request: &Frame, name: &str) -> Frame {
    Frame::response_to(
        request,
        Rc::Error,
        json!({
            "schema": "noded.registration-rejection.v1",
            "error_code": "NAME_TAKEN",
            "message": format!("the name {name:?} is taken on this Bus; register another"),
        })
        .to_string(),
    )
}

/// rc 20 for a frame that could not be read.
pub(crate) fn malformed(seen: &Frame, message: &str) -> Frame {
    Frame::response_to(
        seen,
        Rc::Failure,
        Refusal::new("MALFORMED", format!("malformed frame: {message}")).to_json(),
    )
}

/// One client connection: frames read in order, answers written as they come,
/// until the client goes or `closed` turns true.
/// `access` is the listener's rules and address.
async fn connection(
    broker: Arc<Broker>,
    stream: TcpStream,
    (access, at): (Arc<Access>, SocketAddr),
    mut closed: watch::Receiver<bool>,
) {
    // The handshake callback's type is tungstenite's: its error is a response.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let refuse = |status: StatusCode, why: String| {
            let mut refused = ErrorResponse::new(Some(why));
            *refused.status_mut() = status;
            refused
        };
        if request.uri().path() != "/ws" {
            return Err(refuse(StatusCode::NOT_FOUND, "the Bus is at /ws".into()));
        }
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        match access.check(at, request.uri().query(), header) {
            Ok(()) => Ok(response),
            Err(why) => {
                tracing::info!(status = why.status, message = %why.message, "Bus connection refused");
                let status = StatusCode::from_u16(why.status).unwrap_or(StatusCode::FORBIDDEN);
                Err(refuse(status, why.message))
            }
        }
    };
    // Frames past MixOS's 16 MiB still arrive, to be answered rc 20; only
    // twice that is beyond what a connection can carry.
    let mut config = WebSocketConfig::default();
    config.max_frame_size = Some(2 * MAX_FRAME);
    config.max_message_size = Some(2 * MAX_FRAME);
    let ws =
        match tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config)).await {
            Ok(ws) => ws,
            Err(e) => {
                tracing::debug!(%e, "Bus handshake failed");
                return;
            }
        };
    let client = broker.next_client.fetch_add(1, Ordering::Relaxed);
    let (sink, mut source) = ws.split();
    let (tx, writer) = spawn_writer(sink);
    loop {
        let message = tokio::select! {
            message = async {
                tx.room().await;
                source.next().await
            } => match message {
                Some(message) => message,
                None => break,
            },
            _ = closed.wait_for(|closed| *closed) => break,
        };
        let answer = match message {
            Ok(Message::Text(text)) => broker.handle(client, text.as_str(), &tx),
            Ok(Message::Binary(_)) => Some(malformed(
                &Frame::default(),
                "ABP frames travel as WebSocket text frames, not binary ones",
            )),
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => None,
        };
        if let Some(frame) = answer {
            if tx.send(frame.serialize()).is_err() {
                break;
            }
        }
    }
    broker.apps.names.lock().unwrap().release(client);
    drop(tx);
    // Answers still on their way from apps are written before the socket
    // goes, within a second once the apps answered: a client that reads
    // nothing holds nothing.
    let mut writer = writer;
    if tokio::time::timeout(LAST_WRITES, &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
}

/// How long a closing connection's last answers may take to be written.
const LAST_WRITES: std::time::Duration = std::time::Duration::from_secs(1);
