//! Each command of a recorded session (`wayrig serve --record DIR`) into its
//! trace with its answer, the session found by the command's path.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::WdError;
use crate::Face;

/// The most of a command's body read to trace it: what the commands take
/// (axum's default body limit, which the face keeps), not a byte more held.
const BODY_LIMIT: usize = 2 << 20;

/// Trace the command if its session is recorded; else pass it on untouched.
pub(crate) async fn trace(State(face): State<Arc<Face>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let id = path
        .strip_prefix("/session/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default();
    let live = face.driven.lock().unwrap().get(id).map(|d| d.live.clone());
    let Some(live) = live.filter(|live| live.is_recorded()) else {
        return next.run(request).await;
    };
    let command = format!("{} {}", request.method(), path);
    let (parts, body) = request.into_parts();
    let Ok(asked) = axum::body::to_bytes(body, BODY_LIMIT).await else {
        return WdError::new(
            "invalid argument",
            format!("a command of a recorded session is at most {BODY_LIMIT} bytes"),
        )
        .into_response();
    };
    let traced = live.trace_request("webdriver", &command, json_or_null(&asked));
    let response = next
        .run(Request::from_parts(parts, Body::from(asked)))
        .await;
    let Some(traced) = traced else {
        return response;
    };
    let (parts, body) = response.into_parts();
    let answered = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    traced
        .answer(parts.status.is_success(), json_or_null(&answered))
        .await;
    Response::from_parts(parts, Body::from(answered))
}

fn json_or_null(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}
