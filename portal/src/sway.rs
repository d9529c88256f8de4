//! A small client of sway's IPC (the i3 protocol over $SWAYSOCK): the views of
//! its tree with their rectangles, pids and focus; window events; commands.

use std::path::Path;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use wayrig_host::Rect;

const MAGIC: &[u8; 6] = b"i3-ipc";
/// The largest reply accepted; a tree of thousands of windows fits easily.
const REPLY_LIMIT: u32 = 64 << 20;

const RUN_COMMAND: u32 = 0;
const SUBSCRIBE: u32 = 2;
const GET_TREE: u32 = 4;
const GET_INPUTS: u32 = 100;

/// The workspace sway keeps its scratchpad in.
const SCRATCHPAD: &str = "__i3_scratch";

/// One connection to sway's IPC socket.
pub struct SwayIpc {
    stream: UnixStream,
}

/// A window (a view) of sway's tree, as its IPC reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct SwayView {
    /// The container id, which `[con_id=N]` criteria name.
    pub con_id: i64,
    pub app_id: String,
    pub title: String,
    pub pid: Option<u32>,
    /// The container, border and title bar included.
    pub frame: Rect,
    /// The window's content, global.
    pub content: Rect,
    pub focused: bool,
    pub visible: bool,
    pub fullscreen: bool,
    /// In sway's scratchpad: hidden, which is what sway has for minimized.
    pub in_scratchpad: bool,
}

impl SwayIpc {
    pub async fn connect(path: &Path) -> Result<Self, String> {
        let stream = UnixStream::connect(path)
            .await
            .map_err(|e| format!("cannot connect to sway's IPC at {}: {e}", path.display()))?;
        Ok(SwayIpc { stream })
    }

    async fn send(&mut self, kind: u32, payload: &[u8]) -> Result<(), String> {
        let mut message = Vec::with_capacity(14 + payload.len());
        message.extend_from_slice(MAGIC);
        message.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
        message.extend_from_slice(&kind.to_ne_bytes());
        message.extend_from_slice(payload);
        self.stream
            .write_all(&message)
            .await
            .map_err(|e| format!("sway's IPC: {e}"))
    }

    /// The next message: a reply or, after a subscription, an event.
    async fn receive(&mut self) -> Result<(u32, Value), String> {
        let mut header = [0u8; 14];
        self.stream
            .read_exact(&mut header)
            .await
            .map_err(|e| format!("sway's IPC closed: {e}"))?;
        if &header[..6] != MAGIC {
            return Err("sway's IPC answered without the i3-ipc magic".into());
        }
        let len = u32::from_ne_bytes(header[6..10].try_into().expect("4 bytes"));
        let kind = u32::from_ne_bytes(header[10..14].try_into().expect("4 bytes"));
        if len > REPLY_LIMIT {
            return Err(format!("sway's IPC sent a {len} byte message; refusing it"));
        }
        let mut payload = vec![0u8; len as usize];
        self.stream
            .read_exact(&mut payload)
            .await
            .map_err(|e| format!("sway's IPC closed: {e}"))?;
        let value = serde_json::from_slice(&payload)
            .map_err(|e| format!("sway's IPC sent bad JSON: {e}"))?;
        Ok((kind, value))
    }

    async fn request(&mut self, kind: u32, payload: &[u8]) -> Result<Value, String> {
        self.send(kind, payload).await?;
        loop {
            let (got, value) = self.receive().await?;
            // Events (the high bit set) are not replies.
            if got == kind {
                return Ok(value);
            }
        }
    }

    /// Every view in sway's tree, the scratchpad's included.
    pub async fn views(&mut self) -> Result<Vec<SwayView>, String> {
        let tree = self.request(GET_TREE, b"").await?;
        let mut views = Vec::new();
        collect_views(&tree, false, &mut views);
        Ok(views)
    }

    /// Run a sway command; an error sway reports comes back in its words.
    pub async fn run(&mut self, command: &str) -> Result<(), String> {
        let reply = self.request(RUN_COMMAND, command.as_bytes()).await?;
        for outcome in reply.as_array().into_iter().flatten() {
            if outcome.get("success").and_then(Value::as_bool) != Some(true) {
                let why = outcome
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                return Err(format!("sway refused {command:?}: {why}"));
            }
        }
        Ok(())
    }

    /// Subscribe this connection to window events; read them with `next_event`.
    pub async fn subscribe_windows(&mut self) -> Result<(), String> {
        self.subscribe(br#"["window"]"#).await
    }

    /// Subscribe this connection to input device events.
    pub async fn subscribe_inputs(&mut self) -> Result<(), String> {
        self.subscribe(br#"["input"]"#).await
    }

    async fn subscribe(&mut self, kinds: &[u8]) -> Result<(), String> {
        let reply = self.request(SUBSCRIBE, kinds).await?;
        match reply.get("success").and_then(Value::as_bool) {
            Some(true) => Ok(()),
            _ => Err(format!("sway refused the subscription: {reply}")),
        }
    }

    /// The names of the input devices sway reads.
    pub async fn input_names(&mut self) -> Result<Vec<String>, String> {
        let inputs = self.request(GET_INPUTS, b"").await?;
        Ok(inputs
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect())
    }

    /// Wait for the next event after a subscription.
    pub async fn next_event(&mut self) -> Result<Value, String> {
        loop {
            let (kind, value) = self.receive().await?;
            if kind & 0x8000_0000 != 0 {
                return Ok(value);
            }
        }
    }
}

fn rect(value: Option<&Value>) -> Rect {
    let field = |name: &str| {
        value
            .and_then(|v| v.get(name))
            .and_then(Value::as_i64)
            .unwrap_or(0) as i32
    };
    Rect::new(field("x"), field("y"), field("width"), field("height"))
}

fn collect_views(node: &Value, in_scratchpad: bool, views: &mut Vec<SwayView>) {
    let kind = node.get("type").and_then(Value::as_str).unwrap_or("");
    let name = node.get("name").and_then(Value::as_str).unwrap_or("");
    let in_scratchpad = in_scratchpad || (kind == "workspace" && name == SCRATCHPAD);
    let is_view = matches!(kind, "con" | "floating_con") && node.get("pid").is_some();
    if is_view {
        let frame = rect(node.get("rect"));
        let inner = rect(node.get("window_rect"));
        let app_id = node
            .get("app_id")
            .and_then(Value::as_str)
            .or_else(|| {
                node.pointer("/window_properties/class")
                    .and_then(Value::as_str)
            })
            .unwrap_or("");
        views.push(SwayView {
            con_id: node.get("id").and_then(Value::as_i64).unwrap_or(0),
            app_id: app_id.to_string(),
            title: name.to_string(),
            pid: node
                .get("pid")
                .and_then(Value::as_u64)
                .and_then(|p| u32::try_from(p).ok()),
            frame,
            content: Rect::new(
                frame.x + inner.x,
                frame.y + inner.y,
                inner.width,
                inner.height,
            ),
            focused: node.get("focused").and_then(Value::as_bool) == Some(true),
            visible: node.get("visible").and_then(Value::as_bool) == Some(true),
            fullscreen: node.get("fullscreen_mode").and_then(Value::as_i64) == Some(1),
            in_scratchpad,
        });
    }
    for child in ["nodes", "floating_nodes"] {
        for n in node
            .get(child)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect_views(n, in_scratchpad, views);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_come_with_global_content_and_the_scratchpad_flag() {
        let tree = serde_json::json!({
            "type": "root", "name": "root", "nodes": [
                {"type": "output", "name": "__i3", "nodes": [
                    {"type": "workspace", "name": "__i3_scratch", "nodes": [], "floating_nodes": [
                        {"type": "floating_con", "id": 9, "name": "hidden", "pid": 12,
                         "app_id": "foot", "rect": {"x": 5, "y": 5, "width": 10, "height": 10},
                         "window_rect": {"x": 0, "y": 0, "width": 10, "height": 10}}
                    ]}
                ]},
                {"type": "output", "name": "HEADLESS-1", "nodes": [
                    {"type": "workspace", "name": "1", "nodes": [
                        {"type": "con", "id": 4, "name": "Widget Factory", "pid": 77,
                         "app_id": "org.gtk.WidgetFactory4", "focused": true, "visible": true,
                         "rect": {"x": 0, "y": 0, "width": 640, "height": 800},
                         "window_rect": {"x": 2, "y": 24, "width": 636, "height": 774}},
                        {"type": "con", "id": 5, "name": "split", "nodes": []}
                    ]}
                ]}
            ]
        });
        let mut views = Vec::new();
        collect_views(&tree, false, &mut views);
        assert_eq!(views.len(), 2);
        assert!(views[0].in_scratchpad && !views[0].visible);
        let factory = &views[1];
        assert_eq!(factory.con_id, 4);
        assert_eq!(factory.pid, Some(77));
        assert_eq!(factory.content, Rect::new(2, 24, 636, 774));
        assert!(factory.focused && !factory.in_scratchpad);
    }
}
