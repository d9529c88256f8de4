//! A Bus client for benchmarks: one request at a time over a WebSocket, and
//! a free loopback port to listen on.
#![allow(dead_code)] // each bench uses its own subset

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use wayrig_proto::abp::{Frame, Rc};

use crate::table;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A Bus client that asks one request at a time.
pub struct Bus {
    rt: tokio::runtime::Runtime,
    ws: Ws,
    next_id: u64,
}

impl Bus {
    pub fn connect(url: &str) -> Bus {
        let rt = table::runtime();
        let ws = rt.block_on(async {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                match tokio_tungstenite::connect_async(url).await {
                    Ok((ws, _)) => return ws,
                    // The Bus listens just after the automation socket.
                    Err(_) if std::time::Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    Err(e) => panic!("the Bus at {url} takes no connection: {e}"),
                }
            }
        });
        Bus { rt, ws, next_id: 1 }
    }

    /// One verb of `app`, answered rc 0; its body.
    pub fn ok(&mut self, app: &str, verb: &str, body: Value) -> Value {
        let id = self.next_id.to_string();
        self.next_id += 1;
        let command = format!("{app}.{verb}");
        let frame = Frame::request(&command, "bench", app, &id).with_body(body.to_string());
        let answer = self.rt.block_on(async {
            self.ws
                .send(Message::text(frame.serialize()))
                .await
                .expect("sent");
            loop {
                let message = self.ws.next().await.expect("open").expect("a frame");
                if let Message::Text(text) = message {
                    let f = Frame::parse_strict(text.as_str()).expect("strict ABP");
                    if f.id() == Some(id.as_str()) {
                        return f;
                    }
                }
            }
        });
        assert_eq!(answer.rc(), Some(Rc::Ok), "{verb}: {}", answer.body);
        serde_json::from_str(&answer.body).expect("JSON")
    }
}

/// A loopback port free now, for `--bus-listen`.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
