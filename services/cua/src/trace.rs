//! Each call's method and status to a recorded session's trace (`wayrig run
//! --record`): what was asked of an app shows in the session's own events.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use serde_json::{json, Value};
use tonic::body::Body;
use wayrig_services::Session;

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response<Body>, E>> + Send>>;

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

impl<S, B> tower_service::Service<Request<B>> for Trace<S>
where
    S: tower_service::Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.uri().path().trim_start_matches('/').to_string();
        let session = self.session.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let trace = session.trace_request("cua", &method, Value::Null);
            let answer = answer.await?;
            if let Some(trace) = trace {
                let (ok, said) = status_of(&answer);
                trace.answer(ok, said).await;
            }
            Ok(answer)
        })
    }
}

/// The call's status where its answer's headers carry it (an error answered
/// at once); a call that answers a message has its status in the trailers,
/// after the message: OK unless a stream fails later.
fn status_of(answer: &Response<Body>) -> (bool, Value) {
    let header = |name: &str| {
        answer
            .headers()
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
