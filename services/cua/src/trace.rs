//! Each call to a recorded session's trace (`wayrig run --record`): its
//! method, its request and answer as protobuf JSON, and its status.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::{HeaderMap, Request, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited, StreamBody};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use serde_json::{json, Value};
use tonic::body::Body;
use tonic::Status;
use wayrig_services::Session;

use crate::system::MAX_MESSAGE_BYTES;

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response<Body>, E>> + Send>>;

/// The cua.env.v1 messages, by name.
static PROTOS: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(wayrig_cua_proto::FILE_DESCRIPTOR_SET)
        .expect("the descriptors built with the protos decode")
});

/// The gRPC frames a whole message may take: the limit the services
/// decode, and its frame's header.
const BODY_LIMIT: usize = MAX_MESSAGE_BYTES as usize + 5;

/// Traces the calls that passed the gate.
#[derive(Clone)]
pub struct TraceLayer(pub Arc<Session>);

impl<S> tower_layer::Layer<S> for TraceLayer {
    type Service = Trace<S>;

    fn layer(&self, inner: S) -> Trace<S> {
        Trace {
            inner,
            session: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Trace<S> {
    inner: S,
    session: Arc<Session>,
}

impl<S> tower_service::Service<Request<Body>> for Trace<S>
where
    S: tower_service::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if !self.session.is_recorded() {
            return Box::pin(self.inner.call(request));
        }
        // The clone is ready only once polled: call the one that was.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let session = self.session.clone();
        let path = request.uri().path().trim_start_matches('/').to_string();
        let method = method_of(&path);
        Box::pin(async move {
            // A stream from the client is not held back to be read whole.
            let (request, asked) = match &method {
                Some(m) if !m.is_client_streaming() => match read_request(request, m).await {
                    Ok(read) => read,
                    Err((asked, refusal)) => {
                        let (ok, said) = status_of(refusal.headers());
                        if let Some(trace) = session.trace_request("cua", &path, asked) {
                            trace.answer(ok, said).await;
                        }
                        return Ok(refusal);
                    }
                },
                _ => (request, Value::Null),
            };
            let Some(trace) = session.trace_request("cua", &path, asked) else {
                return inner.call(request).await;
            };
            let answer = inner.call(request).await?;
            let (answer, ok, said) = match &method {
                Some(m) if !m.is_server_streaming() => read_answer(answer, &m.output()).await,
                _ => {
                    let (ok, said) = status_of(answer.headers());
                    (answer, ok, said)
                }
            };
            trace.answer(ok, said).await;
            Ok(answer)
        })
    }
}

/// The method a path (`cua.env.v1.WindowsService/ListWindows`) names.
fn method_of(path: &str) -> Option<MethodDescriptor> {
    let (service, method) = path.split_once('/')?;
    PROTOS
        .get_service_by_name(service)?
        .methods()
        .find(|m| m.name() == method)
}

/// The request read whole, and as JSON; one that cannot be read is
/// refused as the services refuse it (over the limit: RESOURCE_EXHAUSTED),
/// with what was learnt of it.
async fn read_request(
    request: Request<Body>,
    method: &MethodDescriptor,
) -> Result<(Request<Body>, Value), (Value, Response<Body>)> {
    let (parts, body) = request.into_parts();
    match Limited::new(body, BODY_LIMIT).collect().await {
        Ok(collected) => {
            let bytes = collected.to_bytes();
            let asked = messages_json(&bytes, &method.input());
            let body = Body::new(http_body_util::Full::new(bytes));
            Ok((Request::from_parts(parts, body), asked))
        }
        Err(e) => {
            let refusal = match e.downcast_ref::<LengthLimitError>() {
                Some(_) => Status::resource_exhausted(format!(
                    "the request is too large: over the limit of {MAX_MESSAGE_BYTES} bytes"
                )),
                None => Status::cancelled(format!("the request could not be read: {e}")),
            };
            Err((json!({"unread": e.to_string()}), refusal.into_http()))
        }
    }
}

/// The answer read whole (a unary call's one message and trailers), with
/// its status and, when it succeeded, its message as JSON.
async fn read_answer(
    answer: Response<Body>,
    output: &MessageDescriptor,
) -> (Response<Body>, bool, Value) {
    let (parts, body) = answer.into_parts();
    let collected = match body.collect().await {
        Ok(collected) => collected,
        Err(status) => {
            let said =
                json!({"status": format!("{:?}", status.code()), "message": status.message()});
            return (status.into_http(), false, said);
        }
    };
    let trailers = collected.trailers().cloned();
    let bytes = collected.to_bytes();
    // An error answered at once has its status in the headers; else the
    // trailers after the message carry it.
    let (ok, mut said) = match trailers.as_ref() {
        Some(t) if t.contains_key("grpc-status") => status_of(t),
        _ => status_of(&parts.headers),
    };
    if ok {
        said["message"] = messages_json(&bytes, output);
    }
    let mut frames = vec![Ok::<_, std::convert::Infallible>(http_body::Frame::data(
        bytes,
    ))];
    if let Some(trailers) = trailers {
        frames.push(Ok(http_body::Frame::trailers(trailers)));
    }
    let body = Body::new(StreamBody::new(futures_util::stream::iter(frames)));
    (Response::from_parts(parts, body), ok, said)
}

/// The gRPC frames of a body as JSON: its one message (as the protobuf
/// JSON mapping writes it), else a list of them; what does not decode says
/// why.
fn messages_json(mut body: &[u8], kind: &MessageDescriptor) -> Value {
    let mut messages = Vec::new();
    while body.has_remaining() {
        if body.len() < 5 {
            messages.push(json!({"unread": "a cut gRPC frame"}));
            break;
        }
        let compressed = body.get_u8() != 0;
        let length = body.get_u32() as usize;
        if body.len() < length {
            messages.push(json!({"unread": "a cut gRPC frame"}));
            break;
        }
        let (message, rest) = body.split_at(length);
        body = rest;
        messages.push(match compressed {
            true => json!({"compressed": length}),
            false => message_json(Bytes::copy_from_slice(message), kind),
        });
    }
    match messages.len() {
        1 => messages.pop().unwrap(),
        _ => Value::Array(messages),
    }
}

fn message_json(message: Bytes, kind: &MessageDescriptor) -> Value {
    DynamicMessage::decode(kind.clone(), message)
        .map_err(|e| e.to_string())
        .and_then(|m| serde_json::to_value(&m).map_err(|e| e.to_string()))
        .unwrap_or_else(|why| json!({"unread": why}))
}

/// A call's status as its headers or trailers carry it: OK unless they say
/// otherwise.
fn status_of(headers: &HeaderMap) -> (bool, Value) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let code = header("grpc-status")
        .and_then(|c| c.parse::<i32>().ok())
        .unwrap_or(0);
    let name = format!("{:?}", tonic::Code::from_i32(code));
    match code {
        0 => (true, json!({"status": name})),
        _ => (
            false,
            json!({"status": name, "message": header("grpc-message").unwrap_or_default()}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::prost::Message;
    use wayrig_cua_proto::v1;

    fn framed(message: &impl Message) -> Vec<u8> {
        let bytes = message.encode_to_vec();
        let mut framed = vec![0];
        framed.extend((bytes.len() as u32).to_be_bytes());
        framed.extend(bytes);
        framed
    }

    #[test]
    fn every_method_of_every_service_is_known_by_its_path() {
        for service in PROTOS.services() {
            for method in service.methods() {
                let path = format!("{}/{}", service.full_name(), method.name());
                assert_eq!(
                    method_of(&path).map(|m| m.name().to_string()),
                    Some(method.name().to_string())
                );
            }
        }
        assert!(method_of("cua.env.v1.WindowsService/NoSuchCall").is_none());
        assert!(method_of("no/such").is_none());
    }

    #[test]
    fn a_request_reads_as_the_json_its_clients_know() {
        let method = method_of("cua.env.v1.ComputerService/Keyboard").unwrap();
        let request = v1::KeyboardRequest {
            action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                text: "héllo".into(),
                ..Default::default()
            })),
            ..Default::default()
        };
        let json = messages_json(&framed(&request), &method.input());
        assert_eq!(json["type"]["text"], "héllo", "{json}");
    }

    #[test]
    fn a_body_that_is_not_a_message_says_so() {
        let method = method_of("cua.env.v1.ComputerService/Keyboard").unwrap();
        let json = messages_json(&[0, 0, 0, 0, 9, 1], &method.input());
        assert!(json["unread"].as_str().unwrap().contains("cut"), "{json}");
        let json = messages_json(&[0, 0, 0, 0, 2, 0xff, 0xff], &method.input());
        assert!(json["unread"].is_string(), "{json}");
        let json = messages_json(&[1, 0, 0, 0, 1, 7], &method.input());
        assert_eq!(json["compressed"], 1, "{json}");
    }
}
