//! A MixOS Bus client for the tests: ABP frames over a WebSocket, as MixOS
//! writes one, with answers matched to requests by id.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use wayrig_proto::abp::{Frame, Rc};

/// How long an app may take to show its window and get its Bus name.
pub const APP_START: Duration = Duration::from_secs(60);
/// How long one answer may take.
pub const ANSWER: Duration = Duration::from_secs(30);

/// The nodes of a `ui.tree` answer.
pub fn nodes(tree: &Value) -> &Vec<Value> {
    tree["nodes"].as_array().expect("nodes")
}

/// A Bus client speaking ABP over WebSocket text frames.
pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    name: String,
    next_id: u64,
}

impl Client {
    pub async fn connect(url: &str, name: &str) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the Bus takes a WebSocket");
        Client {
            ws,
            name: name.into(),
            next_id: 1,
        }
    }

    pub async fn send_text(&mut self, text: String) {
        self.ws.send(Message::text(text)).await.expect("sent");
    }

    pub async fn receive(&mut self) -> Frame {
        loop {
            let message = tokio::time::timeout(ANSWER, self.ws.next())
                .await
                .expect("an answer in time")
                .expect("the connection stays open")
                .expect("a frame");
            if let Message::Text(text) = message {
                return Frame::parse_strict(text.as_str()).expect("the broker writes strict ABP");
            }
        }
    }

    /// A request, and its answer (matched by id).
    pub async fn request(&mut self, to: &str, command: &str, body: Value) -> Frame {
        let id = self.next_id.to_string();
        self.next_id += 1;
        let frame = Frame::request(command, &self.name, to, &id).with_body(body.to_string());
        self.send_text(frame.serialize()).await;
        loop {
            let answer = self.receive().await;
            if answer.id() == Some(id.as_str()) {
                assert_eq!(answer.command(), Some(command), "{answer:?}");
                return answer;
            }
        }
    }

    /// A verb of the app that must answer rc 0.
    pub async fn ok(&mut self, app: &str, verb: &str, body: Value) -> Value {
        let answer = self.request(app, &format!("{app}.{verb}"), body).await;
        assert_eq!(answer.rc(), Some(Rc::Ok), "{verb}: {}", answer.body);
        serde_json::from_str(&answer.body).expect("a JSON answer")
    }

    /// A verb of the app that must be refused rc 10; its body.
    pub async fn refused(&mut self, app: &str, verb: &str, body: Value) -> Value {
        let answer = self.request(app, &format!("{app}.{verb}"), body).await;
        assert_eq!(answer.rc(), Some(Rc::Error), "{verb}: {}", answer.body);
        serde_json::from_str(&answer.body).expect("a JSON refusal")
    }

    /// `ui.tree`, asked again until the window has drawn widgets.
    pub async fn tree(&mut self, app: &str, body: Value) -> Value {
        let deadline = Instant::now() + APP_START;
        loop {
            let answer = self
                .request(app, &format!("{app}.ui.tree"), body.clone())
                .await;
            let value: Value = serde_json::from_str(&answer.body).unwrap();
            if answer.rc() == Some(Rc::Ok) {
                return value;
            }
            assert_eq!(value["error_code"], "BUSY", "{value}");
            assert!(Instant::now() < deadline, "the tree never came: {value}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Client {
    /// Send a request without waiting for its answer; its id.
    pub async fn send(&mut self, to: &str, command: &str, body: Value) -> String {
        let id = self.next_id.to_string();
        self.next_id += 1;
        let frame = Frame::request(command, &self.name, to, &id).with_body(body.to_string());
        self.send_text(frame.serialize()).await;
        id
    }

    /// Queue a request to be sent with the next flush, in one write with others; its id.
    pub async fn feed(&mut self, to: &str, command: &str, body: Value) -> String {
        let id = self.next_id.to_string();
        self.next_id += 1;
        let frame = Frame::request(command, &self.name, to, &id).with_body(body.to_string());
        self.ws
            .feed(Message::text(frame.serialize()))
            .await
            .expect("queued");
        id
    }

    /// The answers to requests sent, by id, in the order they came.
    pub async fn answers(&mut self, ids: &[String]) -> Vec<Frame> {
        let mut got = Vec::new();
        while got.len() < ids.len() {
            let frame = self.receive().await;
            if frame.id().is_some_and(|id| ids.iter().any(|i| i == id)) {
                got.push(frame);
            }
        }
        got
    }

    /// `ui.tree` until `done` holds of it (an app may fill its window late).
    pub async fn tree_until(
        &mut self,
        app: &str,
        body: Value,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + APP_START;
        loop {
            let tree = self.tree(app, body.clone()).await;
            if done(&tree) {
                return tree;
            }
            assert!(Instant::now() < deadline, "the tree never held it: {tree}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}
