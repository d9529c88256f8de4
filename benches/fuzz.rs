//! A live fuzzer: mutated requests, reproducible from their seed, sent to a
//! running session over MyGo, the Bus and cua.env.v1 (gRPC-Web bodies), and
//! over W3C WebDriver to a session of the same app on `wayrig serve`.
//!
//! After every batch the session must still answer a known-good request on
//! every face, and the app's window must have received no press, key or
//! scroll but while a request that sends input ran. Per face: requests
//! tried, hangs (no answer within 15 s), the session lost, input unasked
//! (0 of each is the goal), and the slowest answer. Run with
//! `scripts/fuzz [SEED] [REQUESTS]` (seed 1, 2,000 a face).

#[path = "../tests/support/mod.rs"]
mod support;
mod table;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use support::grid::{serve, Ended};
use support::{ProtocolClient, Wayrig};
use tokio_tungstenite::tungstenite::Message;
use wayrig_proto::abp::{Frame, Rc};
use wayrig_proto::mygo::Call;

/// How long an answer may take before the request counts as a hang.
const ANSWER_LIMIT: Duration = Duration::from_secs(15);
/// Requests between two checks that every face still answers.
const BATCH: usize = 100;

/// The presses, releases, keys and scrolls the fixture's window received,
/// as it logs them: any that came while no request sending input ran (or
/// had just run: its last events may land after its answer) was unasked.
struct InputWatch {
    log: std::path::PathBuf,
    seen: usize,
    asked_before: bool,
    unasked: Vec<String>,
}

impl InputWatch {
    fn new(log: std::path::PathBuf) -> InputWatch {
        InputWatch {
            log,
            seen: 0,
            asked_before: false,
            unasked: Vec::new(),
        }
    }

    /// A request was answered; `asked` whether it sends input.
    fn after(&mut self, asked: bool, what: impl FnOnce() -> String) {
        let now = std::fs::read_to_string(&self.log)
            .map(|l| l.lines().count())
            .unwrap_or(0);
        if now > self.seen && !asked && !self.asked_before {
            self.unasked.push(format!(
                "{} event(s) during {:.200}",
                now - self.seen,
                what()
            ));
        }
        self.seen = now;
        self.asked_before = asked;
    }
}

/// xorshift64*: small, seeded, the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Text at the edges: empty, NUL, scripts, a long run, a number's text.
    fn text(&mut self) -> String {
        match self.below(8) {
            0 => String::new(),
            1 => "a\0b".into(),
            2 => "Grüße, 世界 — ٣ 🙂\u{202e}".into(),
            // Long, but not so long that typing it takes minutes.
            3 => "x".repeat(self.below(5_000)),
            4 => u64::MAX.to_string(),
            5 => "../../etc/passwd".into(),
            6 => "Press".into(),
            _ => (0..self.below(20))
                .map(|_| char::from_u32(self.below(0x3000) as u32).unwrap_or('?'))
                .collect(),
        }
    }

    /// A JSON value at the edges of every type, nested up to `depth`.
    fn value(&mut self, depth: u32) -> Value {
        match self.below(if depth == 0 { 9 } else { 12 }) {
            0 => Value::Null,
            1 => json!(self.below(2) == 1),
            2 => json!(*self.pick(&[0i64, -1, 1, i64::MIN, i64::MAX, 4_294_967_296])),
            3 => json!(u64::MAX),
            4 => json!(*self.pick(&[0.5f64, -0.0, 1e308, -1e308, 5e-324])),
            5 => json!(self.text()),
            6 => json!("1.1"),
            7 => json!(self.below(5)),
            8 => json!({}),
            9 => Value::Array((0..self.below(4)).map(|_| self.value(depth - 1)).collect()),
            10 => {
                let mut object = serde_json::Map::new();
                for _ in 0..self.below(4) {
                    let key = self.pick(&["window", "id", "type", "events", "x", "y", "text"]);
                    object.insert(key.to_string(), self.value(depth - 1));
                }
                Value::Object(object)
            }
            _ => nested(self.below(2000)),
        }
    }

    /// `valid` with one part changed: a field given another value,
    /// dropped, or added.
    fn mutated(&mut self, valid: &Value) -> Value {
        let mut v = valid.clone();
        let Some(object) = v.as_object_mut() else {
            return self.value(3);
        };
        let keys: Vec<String> = object.keys().cloned().collect();
        match self.below(4) {
            0 if !keys.is_empty() => {
                let key = self.pick(&keys).clone();
                let value = self.value(3);
                object.insert(key, value);
            }
            1 if !keys.is_empty() => {
                let key = self.pick(&keys).clone();
                object.remove(&key);
            }
            2 => {
                let value = self.value(2);
                object.insert(self.text(), value);
            }
            _ => {
                for key in keys {
                    if self.below(2) == 0 {
                        let value = self.value(2);
                        object.insert(key, value);
                    }
                }
            }
        }
        v
    }

    /// Bytes changed at random places: flipped, dropped, repeated.
    fn bytes_mutated(&mut self, mut bytes: Vec<u8>) -> Vec<u8> {
        for _ in 0..=self.below(8) {
            if bytes.is_empty() || self.below(4) == 0 {
                let at = self.below(bytes.len() + 1);
                bytes.insert(at, self.next() as u8);
                continue;
            }
            let at = self.below(bytes.len());
            match self.below(3) {
                0 => bytes[at] ^= 1 << self.below(8),
                1 => {
                    bytes.remove(at);
                }
                _ => {
                    let run = bytes[at..].iter().take(16).copied().collect::<Vec<_>>();
                    for _ in 0..self.below(64) {
                        bytes.extend_from_slice(&run);
                    }
                }
            }
        }
        bytes
    }
}

/// An array nested `depth` deep.
fn nested(depth: usize) -> Value {
    serde_json::from_str(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)))
        .unwrap_or(Value::Null)
}

/// What one face's fuzzing found.
#[derive(Default)]
struct Found {
    tried: usize,
    hangs: Vec<String>,
    /// Requests after which the face closed the connection.
    closed: usize,
    slowest: Duration,
    /// Requests the face answered as done (the rest were refused).
    succeeded: usize,
    /// Waits still waiting, as asked, when the fuzzer stopped waiting.
    waiting: usize,
    /// The session stopped answering a known-good request.
    lost: Option<String>,
}

impl Found {
    fn answered(&mut self, took: Duration) {
        self.slowest = self.slowest.max(took);
    }
}

/// Methods a fuzzer may send: not those that start programs, record to
/// files or stop the session, which a mutated request would do as asked.
const MYGO_REQUESTS: &[(&str, &str)] = &[
    ("windows", r#"{}"#),
    ("tree", r#"{"window": 1}"#),
    ("act", r#"{"window": 1, "id": "1", "action": "press"}"#),
    (
        "input",
        r#"{"window": 1, "events": [{"type": "text", "text": "x"}]}"#,
    ),
    (
        "input",
        r#"{"events": [{"type": "pointerMove", "x": 10, "y": 10}]}"#,
    ),
    ("menu", r#"{"window": 1, "path": ["Menu", "Item"]}"#),
    ("capture", r#"{"window": 1}"#),
    ("idle", r#"{"window": 1, "timeout": 200}"#),
    ("eval", r#"{"window": 1, "script": "1"}"#),
    ("wayrig.waitFor", r#"{"text": "ready", "timeout": 200}"#),
    ("wayrig.menus", r#"{"window": 1}"#),
];

fn fuzz_mygo(
    rng: &mut Rng,
    wayrig: &Wayrig,
    count: usize,
    check: &mut dyn FnMut() -> Option<String>,
    input: &mut InputWatch,
) -> Found {
    let mut found = Found::default();
    let connect = || {
        let s = UnixStream::connect(&wayrig.socket).expect("the MyGo socket");
        s.set_read_timeout(Some(ANSWER_LIMIT)).unwrap();
        let reader = BufReader::new(s.try_clone().unwrap());
        (s, reader)
    };
    let (mut out, mut answers) = connect();
    for n in 0..count {
        // A wait (idle, waitFor) may be asked to take longer than the
        // fuzzer waits: no answer then is the wait asked for, not a hang.
        let mut waits = false;
        let mut sends_input = false;
        let line = match rng.below(10) {
            0 => {
                let mut garbage = rng.bytes_mutated(br#"{"id": 1, "method": "tree"}"#.to_vec());
                garbage.retain(|b| *b != b'\n');
                garbage
            }
            1 => format!("{}\n", rng.value(4)).trim_end().as_bytes().to_vec(),
            _ => {
                let (method, params) = *rng.pick(MYGO_REQUESTS);
                waits = matches!(method, "idle" | "wayrig.waitFor");
                sends_input = matches!(method, "act" | "input" | "menu");
                let params: Value = serde_json::from_str(params).unwrap();
                let params = if rng.below(4) == 0 {
                    params
                } else {
                    rng.mutated(&params)
                };
                let request = json!({"id": rng.value(1), "method": method, "params": params});
                request.to_string().into_bytes()
            }
        };
        found.tried += 1;
        let started = Instant::now();
        let sent = out.write_all(&line).and_then(|()| out.write_all(b"\n"));
        let mut answer = String::new();
        let read = sent.and_then(|()| answers.read_line(&mut answer));
        match read {
            Ok(0) | Err(_) if started.elapsed() >= ANSWER_LIMIT && waits => {
                found.waiting += 1;
                (out, answers) = connect();
            }
            Ok(0) | Err(_) if started.elapsed() >= ANSWER_LIMIT => {
                eprintln!("fuzz: MyGo request {n} had no answer in time");
                found.hangs.push(format!(
                    "request {n}: {:.200}",
                    String::from_utf8_lossy(&line)
                ));
                (out, answers) = connect();
            }
            Ok(0) | Err(_) => {
                found.closed += 1;
                (out, answers) = connect();
            }
            Ok(_) => {
                found.answered(started.elapsed());
                found.succeeded += usize::from(answer.contains("\"result\""));
            }
        }
        input.after(sends_input, || {
            format!("MyGo request {n}: {}", String::from_utf8_lossy(&line))
        });
        if (n + 1) % BATCH == 0 {
            if let Some(why) = check() {
                found.lost = Some(format!("after MyGo request {n}: {why}"));
                return found;
            }
        }
    }
    found
}

/// Bus verbs a fuzzer may send, with a valid body each.
const BUS_REQUESTS: &[(&str, &str)] = &[
    ("ui.tree", r#"{}"#),
    ("ui.click", r#"{"label": "Press"}"#),
    ("ui.pointer", r#"{"action": "move", "x": 10, "y": 10}"#),
    ("ui.scroll", r#"{"dy": 1}"#),
    ("ui.key", r#"{"key": "A"}"#),
    ("ui.type", r#"{"text": "x"}"#),
    ("ui.menu.list", r#"{}"#),
    ("ui.capture", r#"{}"#),
    ("window.state", r#"{}"#),
    ("window", r#"{"action": "focus"}"#),
    ("HELP", r#"{}"#),
    ("app.describe", r#"{}"#),
];

fn fuzz_bus(
    rng: &mut Rng,
    url: &str,
    app: &str,
    count: usize,
    check: &mut dyn FnMut() -> Option<String>,
    input: &mut InputWatch,
) -> Found {
    let rt = table::runtime();
    let mut found = Found::default();
    rt.block_on(async {
        let connect = || async {
            tokio_tungstenite::connect_async(url)
                .await
                .expect("the Bus takes a connection")
                .0
        };
        let mut ws = connect().await;
        for n in 0..count {
            found.tried += 1;
            let mut sends_input = false;
            let (text, answered) = match rng.below(10) {
                0 => {
                    let valid = Frame::request("ui.tree", "fuzz", app, "g").serialize();
                    let bytes = rng.bytes_mutated(valid.into_bytes());
                    (String::from_utf8_lossy(&bytes).into_owned(), false)
                }
                _ => {
                    let (verb, body) = *rng.pick(BUS_REQUESTS);
                    sends_input = matches!(
                        verb,
                        "ui.click" | "ui.pointer" | "ui.scroll" | "ui.key" | "ui.type"
                    );
                    let body: Value = serde_json::from_str(body).unwrap();
                    let body = if rng.below(4) == 0 {
                        body
                    } else {
                        rng.mutated(&body)
                    };
                    let id = format!("f{n}");
                    let frame = Frame::request(&format!("{app}.{verb}"), "fuzz", app, &id)
                        .with_body(body.to_string());
                    (frame.serialize(), true)
                }
            };
            let started = Instant::now();
            if ws.send(Message::text(text.clone())).await.is_err() {
                found.closed += 1;
                ws = connect().await;
                continue;
            }
            if answered {
                let id = format!("f{n}");
                let got = tokio::time::timeout(ANSWER_LIMIT, async {
                    while let Some(Ok(message)) = ws.next().await {
                        if let Message::Text(t) = message {
                            if let Ok(frame) = Frame::parse_strict(t.as_str()) {
                                if frame.id() == Some(id.as_str()) {
                                    return Some(frame.rc() == Some(Rc::Ok));
                                }
                            }
                        }
                    }
                    None
                })
                .await;
                match got {
                    Ok(Some(done)) => {
                        found.answered(started.elapsed());
                        found.succeeded += usize::from(done);
                    }
                    Ok(None) => {
                        found.closed += 1;
                        ws = connect().await;
                    }
                    Err(_) => {
                        eprintln!("fuzz: Bus request {n} had no answer in time: {text:.300}");
                        found.hangs.push(format!("request {n}: {text:.200}"));
                        ws = connect().await;
                    }
                }
            }
            input.after(sends_input, || format!("Bus request {n}: {text}"));
            if (n + 1) % BATCH == 0 {
                if let Some(why) = check() {
                    found.lost = Some(format!("after Bus request {n}: {why}"));
                    return;
                }
            }
        }
    });
    found
}

/// cua methods a fuzzer may call, with a valid request's protobuf bytes.
fn cua_requests(window: &wayrig_cua_proto::v1::WindowRef) -> Vec<(&'static str, Vec<u8>)> {
    use prost::Message as _;
    use wayrig_cua_proto::v1;
    let window = || window.clone();
    vec![
        (
            "WindowsService/ListWindows",
            v1::ListWindowsRequest::default().encode_to_vec(),
        ),
        (
            "WindowsService/GetWindow",
            v1::GetWindowRequest {
                window: Some(window()),
            }
            .encode_to_vec(),
        ),
        (
            "AccessibilityService/GetTree",
            v1::GetTreeRequest {
                window: Some(window()),
                max_depth: 3,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "AccessibilityService/Find",
            v1::FindRequest {
                window: Some(window()),
                query: Some(v1::AccessibilityQuery {
                    name: "Press".into(),
                    ..Default::default()
                }),
                max_results: 2,
            }
            .encode_to_vec(),
        ),
        (
            "AccessibilityService/Act",
            v1::ActRequest {
                element: Some(v1::ElementRef {
                    snapshot_id: "1".into(),
                    element_id: "1".into(),
                }),
                action: v1::AccessibilityAction::Press as i32,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            "ComputerService/Keyboard",
            v1::KeyboardRequest {
                target: Some(v1::InputTarget {
                    window: Some(window()),
                    ..Default::default()
                }),
                action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                    text: "x".into(),
                    ..Default::default()
                })),
            }
            .encode_to_vec(),
        ),
        (
            "ComputerService/Pointer",
            v1::PointerRequest {
                target: Some(v1::InputTarget::default()),
                action: Some(v1::pointer_request::Action::Click(v1::PointerClick {
                    position: Some(v1::Point { x: 10.0, y: 10.0 }),
                    ..Default::default()
                })),
            }
            .encode_to_vec(),
        ),
        (
            "ComputerService/Screenshot",
            v1::ScreenshotRequest {
                source: Some(v1::screenshot_request::Source::Window(window())),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        ("ComputerService/GetClipboard", Vec::new()),
        ("ComputerService/GetCursorPosition", Vec::new()),
        ("ComputerService/ListDisplays", Vec::new()),
        ("SystemService/GetCapabilities", Vec::new()),
        ("SystemService/Health", Vec::new()),
    ]
}

/// One gRPC-Web call over HTTP/1.1: the gRPC status of the answer that
/// came in time.
fn grpc_web(address: &str, method: &str, message: &[u8]) -> Result<u32, String> {
    let mut body = vec![0];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(message);
    let mut s = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(ANSWER_LIMIT)).unwrap();
    let head = format!(
        "POST /cua.env.v1.{method} HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(&body))
        .map_err(|e| format!("write: {e}"))?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("read: {e}"))?;
    if !answer.starts_with(b"HTTP/1.1 ") {
        return Err(format!("no HTTP answer ({} bytes)", answer.len()));
    }
    // In the headers, or in the trailers frame after the message.
    let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    text.split("grpc-status:")
        .nth(1)
        .and_then(|rest| {
            rest.trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
        })
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| "an HTTP answer without a gRPC status".to_string())
}

fn fuzz_cua(
    rng: &mut Rng,
    address: &str,
    count: usize,
    check: &mut dyn FnMut() -> Option<String>,
    input: &mut InputWatch,
) -> Found {
    // The window's own ref, so that unchanged requests reach it.
    let (_, window) = table::runtime().block_on(support::cua_first_window(address));
    let requests = cua_requests(&window);
    let mut found = Found::default();
    for n in 0..count {
        let (method, valid) = rng.pick(&requests).clone();
        let message = if rng.below(5) == 0 {
            valid
        } else {
            rng.bytes_mutated(valid)
        };
        found.tried += 1;
        let started = Instant::now();
        match grpc_web(address, method, &message) {
            Ok(code) => {
                found.answered(started.elapsed());
                found.succeeded += usize::from(code == 0);
            }
            Err(why) if started.elapsed() >= ANSWER_LIMIT => {
                eprintln!("fuzz: cua request {n} ({method}) had no answer in time");
                found.hangs.push(format!("request {n}: {method}: {why}"));
            }
            Err(_) => found.closed += 1,
        }
        let sends_input = matches!(
            method,
            "ComputerService/Pointer" | "ComputerService/Keyboard" | "AccessibilityService/Act"
        );
        input.after(sends_input, || format!("cua request {n}: {method}"));
        if (n + 1) % BATCH == 0 {
            if let Some(why) = check() {
                found.lost = Some(format!("after cua request {n}: {why}"));
                return found;
            }
        }
    }
    found
}

/// WebDriver commands a fuzzer may send: method, path and a valid body
/// (none for a command without one), `{session}` standing for the
/// session's id and `{element}` for the fixture's "First" entry. Not New
/// or Delete Session or Close Window, which end what is fuzzed, nor Set
/// Timeouts: a mutated implicit wait makes each later find that misses
/// wait for days, as asked. Mutation cannot make `wayrig: settle` into
/// `wayrig: launch`, which starts programs.
const WEBDRIVER_REQUESTS: &[(&str, &str, &str)] = &[
    (
        "POST",
        "/session/{session}/element",
        r#"{"using": "accessibility id", "value": "Press"}"#,
    ),
    (
        "POST",
        "/session/{session}/elements",
        r#"{"using": "tag name", "value": "button"}"#,
    ),
    (
        "POST",
        "/session/{session}/element/{element}/elements",
        r#"{"using": "xpath", "value": "//*"}"#,
    ),
    ("GET", "/session/{session}/element/active", ""),
    ("POST", "/session/{session}/element/{element}/click", "{}"),
    ("POST", "/session/{session}/element/{element}/clear", "{}"),
    (
        "POST",
        "/session/{session}/element/{element}/value",
        r#"{"text": "x"}"#,
    ),
    ("GET", "/session/{session}/element/{element}/text", ""),
    ("GET", "/session/{session}/element/{element}/name", ""),
    ("GET", "/session/{session}/element/{element}/rect", ""),
    ("GET", "/session/{session}/element/{element}/enabled", ""),
    ("GET", "/session/{session}/element/{element}/displayed", ""),
    (
        "GET",
        "/session/{session}/element/{element}/attribute/name",
        "",
    ),
    (
        "GET",
        "/session/{session}/element/{element}/property/focused",
        "",
    ),
    (
        "GET",
        "/session/{session}/element/{element}/computedlabel",
        "",
    ),
    ("GET", "/session/{session}/element/{element}/screenshot", ""),
    (
        "POST",
        "/session/{session}/actions",
        concat!(
            r#"{"actions": [{"type": "pointer", "id": "mouse", "actions": ["#,
            r#"{"type": "pointerMove", "x": 0, "y": 0, "origin": "#,
            r#"{"element-6066-11e4-a52e-4f735466cecf": "{element}"}}, "#,
            r#"{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]}"#
        ),
    ),
    (
        "POST",
        "/session/{session}/actions",
        concat!(
            r#"{"actions": [{"type": "key", "id": "keyboard", "actions": ["#,
            r#"{"type": "keyDown", "value": "a"}, {"type": "keyUp", "value": "a"}]}]}"#
        ),
    ),
    (
        "POST",
        "/session/{session}/actions",
        concat!(
            r#"{"actions": [{"type": "wheel", "id": "wheel", "actions": ["#,
            r#"{"type": "scroll", "x": 250, "y": 450, "deltaX": 0, "deltaY": 50}]}]}"#
        ),
    ),
    ("DELETE", "/session/{session}/actions", ""),
    ("GET", "/session/{session}/window", ""),
    ("GET", "/session/{session}/window/handles", ""),
    ("GET", "/session/{session}/window/rect", ""),
    (
        "POST",
        "/session/{session}/window/rect",
        r#"{"width": 500, "height": 560}"#,
    ),
    ("GET", "/session/{session}/title", ""),
    ("GET", "/session/{session}/screenshot", ""),
    ("GET", "/session/{session}/source", ""),
    ("GET", "/session/{session}/timeouts", ""),
    (
        "POST",
        "/session/{session}/execute/sync",
        r#"{"script": "wayrig: settle", "args": []}"#,
    ),
];

/// One WebDriver command over HTTP/1.1 (`body` empty for none): the HTTP
/// status and the body of the answer that came within `limit`.
fn webdriver_http(
    address: &str,
    method: &str,
    path: &str,
    body: &str,
    limit: Duration,
) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(limit)).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(body.as_bytes()))
        .map_err(|e| format!("write: {e}"))?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .map_err(|e| format!("read: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let status: u16 = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("no HTTP answer ({} bytes)", answer.len()))?;
    let content = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, content)| content);
    Ok((status, content.to_string()))
}

/// Why a command without a body was not answered HTTP 200 in time, if so.
fn webdriver_not_ok(address: &str, method: &str, path: &str) -> Option<String> {
    match webdriver_http(address, method, path, "", ANSWER_LIMIT) {
        Ok((200, _)) => None,
        Ok((status, answer)) => Some(format!("{method} {path}: HTTP {status}: {answer:.200}")),
        Err(why) => Some(format!("{method} {path}: {why}")),
    }
}

/// The `value` a WebDriver command that must succeed within `limit` answers.
fn webdriver_value(
    address: &str,
    method: &str,
    path: &str,
    body: &Value,
    limit: Duration,
) -> Value {
    let (status, answer) = webdriver_http(address, method, path, &body.to_string(), limit)
        .unwrap_or_else(|why| panic!("WebDriver {method} {path}: {why}"));
    assert_eq!(status, 200, "WebDriver {method} {path}: {answer}");
    let answer: Value = serde_json::from_str(&answer)
        .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}: {answer}"));
    answer["value"].clone()
}

/// A WebDriver session of the GTK 4 fixture on a `wayrig serve` of its own,
/// whose process group ends however the fuzzer ends (`wayrig serve` ends
/// every session it holds on SIGTERM).
struct WebDriverFace {
    /// Where the face listens: HOST:PORT.
    address: String,
    /// The session's id.
    session: String,
    /// The `wayrig serve` process group, ended when dropped.
    _served: Ended,
}

impl WebDriverFace {
    /// Serve WebDriver on a loopback port, and start a session of the
    /// fixture whose window logs the input it receives to `input_log`.
    fn start(fixture: &str, input_log: &Path) -> WebDriverFace {
        // A place beside the fuzzed session's, so that /status says ready.
        let (served, url) = serve(Path::new(env!("CARGO_BIN_EXE_wayrig")), 2);
        let address = url.trim_start_matches("http://").to_string();
        // The capability gives the log to this session's app alone.
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "platformName": "linux",
            "wayrig:app": ["/usr/bin/python3", fixture],
            "wayrig:env": {
                "GSK_RENDERER": "cairo",
                "WAYRIG_FIXTURE_INPUT": input_log.display().to_string(),
            },
        }}});
        // The session's compositor starts, then its app shows a window.
        let made = webdriver_value(
            &address,
            "POST",
            "/session",
            &capabilities,
            support::APP_START * 2,
        );
        let session = made["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        WebDriverFace {
            address,
            session,
            _served: served,
        }
    }
}

/// The reference of the session's element named `name`, found once its
/// window's tree shows it; the session's implicit wait is none after.
fn webdriver_element(address: &str, session: &str, name: &str) -> String {
    let timeouts = format!("/session/{session}/timeouts");
    let implicit = |ms: u64| json!({ "implicit": ms });
    let wait = support::APP_START.as_millis() as u64;
    webdriver_value(address, "POST", &timeouts, &implicit(wait), ANSWER_LIMIT);
    let by = json!({"using": "accessibility id", "value": name});
    let element = format!("/session/{session}/element");
    let found = webdriver_value(address, "POST", &element, &by, support::APP_START * 2);
    // A fuzzed find that misses answers at once.
    webdriver_value(address, "POST", &timeouts, &implicit(0), ANSWER_LIMIT);
    found
        .as_object()
        .and_then(|reference| reference.values().next())
        .and_then(Value::as_str)
        .expect("an element reference")
        .to_string()
}

/// `template` with its ids in place but the last mangled: an id well formed
/// and naming nothing, a number past every integer type, `..`, the id with
/// every byte percent-encoded (the same id once decoded), or an escape that
/// decodes to something odd or to nothing.
fn mangled_path(rng: &mut Rng, template: &str, session: &str, element: &str) -> String {
    let (placeholder, id) = if template.contains("{element}") {
        ("{element}", element)
    } else {
        ("{session}", session)
    };
    let mangled = match rng.below(5) {
        0 => "4294967295.4294967295.4294967295".to_string(),
        1 => "9".repeat(40),
        2 => "..".to_string(),
        3 => id.bytes().map(|b| format!("%{b:02X}")).collect::<String>(),
        _ => rng
            .pick(&["%00", "%zz", "%", "..%2F..%2Fstatus", "%E2%80%AE"])
            .to_string(),
    };
    template
        .replace(placeholder, &mangled)
        .replace("{session}", session)
        .replace("{element}", element)
}

/// Fuzz the WebDriver face's `session`: each command sent with its valid
/// body 1 time in 4, else that body mutated, and 1 time in 10 its path
/// mangled; done is HTTP 200.
fn fuzz_webdriver(
    rng: &mut Rng,
    address: &str,
    session: &str,
    count: usize,
    check: &mut dyn FnMut() -> Option<String>,
    input: &mut InputWatch,
) -> Found {
    // A real element, so that unchanged requests reach it.
    let element = webdriver_element(address, session, "First");
    let mut found = Found::default();
    for n in 0..count {
        let (method, template, valid) = *rng.pick(WEBDRIVER_REQUESTS);
        let body = match valid {
            "" => String::new(),
            valid => {
                let valid: Value =
                    serde_json::from_str(&valid.replace("{element}", &element)).unwrap();
                let body = if rng.below(4) == 0 {
                    valid
                } else {
                    rng.mutated(&valid)
                };
                body.to_string()
            }
        };
        let path = if rng.below(10) == 0 {
            mangled_path(rng, template, session, &element)
        } else {
            template
                .replace("{session}", session)
                .replace("{element}", &element)
        };
        found.tried += 1;
        let started = Instant::now();
        match webdriver_http(address, method, &path, &body, ANSWER_LIMIT) {
            Ok((status, _)) => {
                found.answered(started.elapsed());
                found.succeeded += usize::from(status == 200);
            }
            Err(why) if started.elapsed() >= ANSWER_LIMIT => {
                eprintln!(
                    "fuzz: WebDriver request {n} ({method} {template}) had no answer in time"
                );
                found.hangs.push(format!(
                    "request {n}: {method} {path:.200} {body:.200}: {why}"
                ));
            }
            Err(_) => found.closed += 1,
        }
        // Element Click, Clear and Send Keys, Perform and Release Actions.
        let sends_input = matches!(
            template.rsplit('/').next(),
            Some("click" | "clear" | "value" | "actions")
        );
        input.after(sends_input, || {
            format!("WebDriver request {n}: {method} {path} {body}")
        });
        if (n + 1) % BATCH == 0 {
            if let Some(why) = check() {
                found.lost = Some(format!("after WebDriver request {n}: {why}"));
                return found;
            }
        }
    }
    found
}

fn main() {
    if table::listing_only() {
        return;
    }
    let seed: u64 = table::env_number("WAYRIG_FUZZ_SEED", 1);
    let count: usize = table::env_number("WAYRIG_FUZZ_REQUESTS", 2_000);
    let fixture = support::gtk4_fixture();
    let runtime_dir = std::env::temp_dir().join(format!("wayrig-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&runtime_dir).unwrap();
    // SAFETY: no other thread runs yet to read the environment meanwhile.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", &runtime_dir) };
    let input_log = runtime_dir.join("input.log");
    let input_env = format!("WAYRIG_FIXTURE_INPUT={}", input_log.display());
    let wayrig = Wayrig::start_with(
        &[
            "--keep-running",
            "--bus-listen",
            "127.0.0.1:0",
            "--cua-listen",
            "127.0.0.1:0",
            "--env",
            &input_env,
        ],
        &["/usr/bin/python3", &fixture],
    );
    let mut input = InputWatch::new(input_log.clone());
    let (bus, app) = wayrig.bus_and_app();
    let cua = wayrig.cua_address.clone().expect("the cua face listens");
    let mut known_good = ProtocolClient::connect(&wayrig.socket);
    known_good.first_window();
    let webdriver = WebDriverFace::start(&fixture, &input_log);
    let pid = wayrig.pid();
    // Every face answers a known-good request, and Wayrig runs.
    let mut check = || -> Option<String> {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Some("wayrig exited".into());
        }
        if let Err(e) = known_good.answer(Call::Windows) {
            return Some(format!("MyGo windows: {}", e.message));
        }
        match grpc_web(&cua, "WindowsService/ListWindows", &[]) {
            Ok(0) => {}
            Ok(code) => return Some(format!("cua ListWindows: gRPC status {code}")),
            Err(e) => return Some(format!("cua ListWindows: {e}")),
        }
        let title = format!("/session/{}/title", webdriver.session);
        for path in ["/status", title.as_str()] {
            if let Some(why) = webdriver_not_ok(&webdriver.address, "GET", path) {
                return Some(format!("WebDriver {why}"));
            }
        }
        // On a thread of its own: the Bus fuzzer calls this from its runtime.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    table::runtime().block_on(async {
                        let connect = tokio_tungstenite::connect_async(&bus);
                        match tokio::time::timeout(ANSWER_LIMIT, connect).await {
                            Ok(Ok(_)) => None,
                            Ok(Err(e)) => Some(format!("Bus connect: {e}")),
                            Err(_) => Some("Bus connect: no answer in time".into()),
                        }
                    })
                })
                .join()
                .unwrap_or_else(|_| Some("the Bus check panicked".into()))
        })
    };
    let mut rng = Rng(seed.max(1));
    let started = Instant::now();
    let faces = [
        (
            "MyGo",
            fuzz_mygo(&mut rng, &wayrig, count, &mut check, &mut input),
        ),
        (
            "Bus",
            fuzz_bus(&mut rng, &bus, &app, count, &mut check, &mut input),
        ),
        (
            "cua",
            fuzz_cua(&mut rng, &cua, count, &mut check, &mut input),
        ),
        (
            "WebDriver",
            fuzz_webdriver(
                &mut rng,
                &webdriver.address,
                &webdriver.session,
                count,
                &mut check,
                &mut input,
            ),
        ),
    ];
    let mut rows = Vec::new();
    for (face, found) in &faces {
        rows.push((
            face.to_string(),
            format!(
                "{} / {} / {}",
                found.tried,
                found.hangs.len(),
                if found.lost.is_some() { 1 } else { 0 }
            ),
            format!(
                "{} done, the rest refused; slowest answer {}; {} closed the connection; \
                 {} waits still waiting as asked",
                found.succeeded,
                table::ms(found.slowest),
                found.closed,
                found.waiting
            ),
        ));
    }
    table::print_as("tried / hangs / session lost", &rows);
    println!(
        "\nseed {seed}, {count} requests a face, in {:.0} s; the window received {} \
         presses, keys and scrolls; {} requests that send no input were met by some",
        started.elapsed().as_secs_f64(),
        input.seen,
        input.unasked.len()
    );
    for unasked in &input.unasked {
        println!("unasked input: {unasked}");
    }
    for (face, found) in &faces {
        for hang in &found.hangs {
            println!("{face} hang: {hang}");
        }
        if let Some(lost) = &found.lost {
            println!("{face}: the session was lost {lost}");
        }
    }
    let session = format!("/session/{}", webdriver.session);
    if let Some(why) = webdriver_not_ok(&webdriver.address, "DELETE", &session) {
        println!("WebDriver: the session did not end: {why}");
    }
    drop(webdriver);
    drop(wayrig);
    let _ = std::fs::remove_dir_all(&runtime_dir);
}
