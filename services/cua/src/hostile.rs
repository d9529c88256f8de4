//! Hostile input on the cua.env.v1 wire: every request of every service, its
//! fields at random and at their edges, through the face's own routes to a
//! session over the in-memory host and app (`test-support`).
//!
//! Each call is answered within its bound, with a message or a status that
//! carries cua's `ErrorInfo` (never a panic), and input reaches the app only
//! from the calls that send it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use prost_reflect::prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, Value};
use tokio_util::sync::CancellationToken;
use tonic::Code;
use wayrig_cua_proto::v1;
use wayrig_host::WindowHandle;
use wayrig_services::session::fake_access::{a_form, paused_runtime};

/// The calls that send input to the app.
const SENDING_INPUT: [&str; 3] = [
    "/cua.env.v1.ComputerService/Pointer",
    "/cua.env.v1.ComputerService/Keyboard",
    "/cua.env.v1.AccessibilityService/Act",
];

/// A call not answered within this (the test's paused time, where waits
/// cost nothing) hangs.
const BOUND: Duration = Duration::from_secs(600);

/// Calls made of one session, after the tree a client reads first.
const CALLS: usize = 8;

/// Random words the generator takes its choices from; proptest shrinks them
/// towards zero, which takes each choice's first and plainest option.
struct Tape {
    words: Vec<u64>,
    at: usize,
}

impl Tape {
    fn next(&mut self) -> u64 {
        let word = self.words.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        word
    }

    /// One of `n` options.
    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `in_four` times in four.
    fn chance(&mut self, in_four: u64) -> bool {
        self.next() % 4 < in_four
    }

    fn of<T: Copy>(&mut self, options: &[T]) -> T {
        options[self.pick(options.len())]
    }
}

/// What the session gave out, which a request may name to reach past the
/// first checks.
struct Known {
    window: v1::WindowRef,
    snapshot: String,
    elements: Vec<String>,
}

fn text(tape: &mut Tape, known: &Known) -> String {
    match tape.pick(13) {
        0 => String::new(),
        1 => "a".into(),
        2 => "\0".into(),
        3 => "x".repeat(1 << 20),
        4 => "é😀\u{202e}\u{feff}".into(),
        5 => "../../../etc/passwd".into(),
        6 => known.snapshot.clone(),
        7 => known.elements[tape.pick(known.elements.len())].clone(),
        8 => "1".into(),
        9 => u64::MAX.to_string(),
        10 => "Save".into(),
        11 => "Ctrl+Alt+Delete".into(),
        _ => char::from_u32(tape.next() as u32 % 0x11_0000)
            .map(String::from)
            .unwrap_or_default(),
    }
}

/// A field's value of `kind`, at random and at its edges.
fn value_of(kind: &Kind, tape: &mut Tape, known: &Known, depth: usize) -> Value {
    let word = tape.next();
    match kind {
        Kind::Bool => Value::Bool(word & 1 == 1),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(tape.of(&[0, 1, -1, 2, 100, i32::MIN, i32::MAX, word as i32]))
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(tape.of(&[0, 1, -1, 100, i64::MIN, i64::MAX, word as i64]))
        }
        Kind::Uint32 | Kind::Fixed32 => Value::U32(tape.of(&[0, 1, 2, 100, u32::MAX, word as u32])),
        Kind::Uint64 | Kind::Fixed64 => {
            Value::U64(tape.of(&[0, 1, 2, 100, (1 << 53) + 1, u64::MAX, word]))
        }
        Kind::Float => Value::F32(tape.of(&[
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::from_bits(word as u32),
        ])),
        Kind::Double => Value::F64(tape.of(&[
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            150.0,
            1e9,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::from_bits(word),
        ])),
        Kind::String => Value::String(text(tape, known)),
        Kind::Bytes => Value::Bytes(Bytes::from(word.to_le_bytes().to_vec())),
        Kind::Enum(e) => {
            let known_values: Vec<i32> = e.values().map(|v| v.number()).collect();
            Value::EnumNumber(if tape.chance(3) {
                tape.of(&known_values)
            } else {
                tape.of(&[-1, 9999, i32::MIN, i32::MAX])
            })
        }
        Kind::Message(m) => Value::Message(message(m, tape, known, depth + 1)),
    }
}

/// A message of type `desc`: each field present or not, at most one of
/// each oneof, lists empty to long, references to what the session gave
/// out three times in four.
fn message(
    desc: &MessageDescriptor,
    tape: &mut Tape,
    known: &Known,
    depth: usize,
) -> DynamicMessage {
    let given = match desc.full_name() {
        "cua.env.v1.WindowRef" if tape.chance(3) => Some(known.window.encode_to_vec()),
        "cua.env.v1.ElementRef" if tape.chance(3) => {
            let element = v1::ElementRef {
                snapshot_id: if tape.chance(2) {
                    known.snapshot.clone()
                } else {
                    String::new()
                },
                element_id: known.elements[tape.pick(known.elements.len())].clone(),
            };
            Some(element.encode_to_vec())
        }
        _ => None,
    };
    if let Some(bytes) = given {
        return DynamicMessage::decode(desc.clone(), bytes.as_slice())
            .expect("a message read back");
    }
    let mut m = DynamicMessage::new(desc.clone());
    if depth > 4 {
        return m;
    }
    let mut chosen: HashMap<String, u32> = HashMap::new();
    for oneof in desc.oneofs() {
        let fields: Vec<u32> = oneof.fields().map(|f| f.number()).collect();
        let k = tape.pick(fields.len() + 1);
        if let Some(number) = fields.get(k) {
            chosen.insert(oneof.name().to_string(), *number);
        }
    }
    for field in desc.fields() {
        match field.containing_oneof() {
            Some(oneof) if chosen.get(oneof.name()) != Some(&field.number()) => continue,
            None if !tape.chance(3) => continue,
            _ => {}
        }
        let kind = field.kind();
        let value = if field.is_map() {
            let Kind::Message(entry) = &kind else {
                continue;
            };
            let (key, val) = (entry.map_entry_key_field(), entry.map_entry_value_field());
            if !matches!(key.kind(), Kind::String) {
                continue;
            }
            let entries = tape.pick(3);
            let map = (0..entries)
                .map(|_| {
                    let k = MapKey::String(text(tape, known));
                    (k, value_of(&val.kind(), tape, known, depth))
                })
                .collect();
            Value::Map(map)
        } else if field.is_list() {
            // Long lists of numbers; of texts and messages a few (each
            // text may be long already).
            let most = match &kind {
                Kind::Message(_) | Kind::String | Kind::Bytes => 3,
                _ => 300,
            };
            let n = tape.of(&[0, 1, 2, most]);
            Value::List(
                (0..n)
                    .map(|_| value_of(&kind, tape, known, depth))
                    .collect(),
            )
        } else {
            value_of(&kind, tape, known, depth)
        };
        m.set_field(&field, value);
    }
    m
}

/// One gRPC call through `routes`: its status and, when answered, its first
/// message (a stream's first, then the stream is dropped).
async fn call(
    routes: &mut tonic::service::Routes,
    path: &str,
    message: Vec<u8>,
    streams: bool,
) -> (tonic::Status, Bytes) {
    use tower_service::Service;
    let mut body = Vec::with_capacity(message.len() + 5);
    body.push(0);
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(&message);
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://wayrig{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    std::future::poll_fn(|cx| Service::<http::Request<Full<Bytes>>>::poll_ready(routes, cx))
        .await
        .unwrap();
    let response = routes.call(request).await.unwrap();
    let (parts, mut body) = response.into_parts();
    if let Some(status) = tonic::Status::from_header_map(&parts.headers) {
        return (status, Bytes::new());
    }
    let mut data = Vec::new();
    let mut trailers = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.expect("a body read in memory");
        match frame.into_data() {
            Ok(bytes) => data.extend_from_slice(&bytes),
            Err(frame) => trailers = frame.into_trailers().ok(),
        }
        if streams && data.len() >= 5 {
            return (tonic::Status::ok(""), first_message(&data));
        }
    }
    let status = trailers
        .as_ref()
        .and_then(tonic::Status::from_header_map)
        .unwrap_or_else(|| tonic::Status::unknown("no grpc-status"));
    (status, first_message(&data))
}

fn first_message(data: &[u8]) -> Bytes {
    match data.get(1..5) {
        Some(length) => {
            let length = u32::from_be_bytes(length.try_into().unwrap()) as usize;
            Bytes::copy_from_slice(&data[5..(5 + length).min(data.len())])
        }
        None => Bytes::new(),
    }
}

/// Read the form's tree as a client does first, then make `CALLS` calls
/// the tape chooses.
async fn calls(words: Vec<u64>) -> Result<(), TestCaseError> {
    let pool = DescriptorPool::decode(wayrig_cua_proto::FILE_DESCRIPTOR_SET).unwrap();
    let methods: Vec<_> = pool
        .services()
        .flat_map(|s| s.methods().collect::<Vec<_>>())
        .collect();
    let (session, host) = a_form().await;
    let session = Arc::new(session);
    let stop = CancellationToken::new();
    let mut routes = crate::routes(session, stop.clone());
    let window = crate::convert::window_ref(WindowHandle { id: 1, epoch: 1 });
    let tree = v1::GetTreeRequest {
        window: Some(window.clone()),
        ..Default::default()
    };
    let path = "/cua.env.v1.AccessibilityService/GetTree";
    let (status, answer) = call(&mut routes, path, tree.encode_to_vec(), false).await;
    prop_assert_eq!(status.code(), Code::Ok, "{:?}", status);
    let tree = v1::GetTreeResponse::decode(answer).unwrap();
    let known = Known {
        window,
        elements: tree.nodes.iter().map(|n| n.element_id.clone()).collect(),
        snapshot: tree.snapshot_id,
    };
    prop_assert!(known.elements.len() >= 3, "{:?}", known.elements);
    let mut tape = Tape { words, at: 0 };
    for _ in 0..CALLS {
        let method = &methods[tape.pick(methods.len())];
        let path = format!("/{}/{}", method.parent_service().full_name(), method.name());
        let request = message(&method.input(), &mut tape, &known, 0);
        let bytes = request.encode_to_vec();
        // What a failure shows of the request: its start.
        let shown: String = format!("{request:?}").chars().take(2000).collect();
        let oversized = bytes.len() > crate::system::MAX_MESSAGE_BYTES as usize;
        let sent = host.sent().len();
        let answering = call(&mut routes, &path, bytes, method.is_server_streaming());
        let Ok((status, _)) = tokio::time::timeout(BOUND, answering).await else {
            return Err(TestCaseError::fail(format!("{path} hung on {shown}")));
        };
        if oversized {
            // Refused by gRPC's own limit, which the server sets.
            prop_assert_eq!(status.code(), Code::OutOfRange, "{}", path);
        } else if status.code() != Code::Ok {
            let info = wayrig_cua_proto::error_info(&status);
            prop_assert!(
                info.is_some_and(|i| !i.message.is_empty()),
                "{} answered {:?} without cua's ErrorInfo to {}",
                path,
                status,
                shown
            );
        }
        prop_assert!(
            host.sent().len() == sent || SENDING_INPUT.contains(&path.as_str()),
            "{} sent input to the app: {}",
            path,
            shown
        );
    }
    stop.cancel();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every request of every service, its fields at random and at their
    /// edges, is answered in cua's terms and sends input only where asked.
    #[test]
    fn every_request_is_answered_in_cuas_terms(
        words in proptest::collection::vec(any::<u64>(), 64..512),
    ) {
        let runtime = paused_runtime();
        runtime.block_on(calls(words))?;
    }
}
