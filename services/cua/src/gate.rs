//! What every call passes before a service sees it, and every answer after:
//! the token first (an unknown method included), browser origins, and an
//! `ErrorInfo` on the statuses tonic makes itself (unknown method, a body
//! that does not decode, one over the size limit).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{HeaderValue, ORIGIN};
use http::{Method, Request, Response, StatusCode};
use tonic::body::Body;
use tonic::{Code, Status};
use wayrig_cua_proto::v1::ErrorReason;

use crate::errors::{status, unsupported};
use wayrig_services::sockets::same_token;

/// Who may call, shared by both layers.
#[derive(Clone, Default)]
pub struct Rules {
    token: Option<Arc<[u8]>>,
    /// Browser origins allowed to call through gRPC-Web.
    origins: Arc<[String]>,
}

impl Rules {
    pub fn new(token: Option<String>, origins: Vec<String>) -> Self {
        Rules {
            token: token.map(|t| Arc::from(t.into_bytes())),
            origins: origins
                .into_iter()
                .map(|o| o.trim_end_matches('/').to_string())
                .collect(),
        }
    }

    /// The call's token, when one is set: UNAUTHENTICATED if it is missing or wrong.
    fn check_token<B>(&self, request: &Request<B>) -> Result<(), Status> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(given) if same_token(given.as_bytes(), token) => Ok(()),
            Some(_) => Err(status(
                Code::Unauthenticated,
                ErrorReason::Unauthenticated,
                "the bearer token is wrong; send the token Wayrig was started with",
            )),
            None => Err(status(
                Code::Unauthenticated,
                ErrorReason::Unauthenticated,
                "this server needs a token: send metadata authorization: Bearer <token>",
            )),
        }
    }

    fn allows(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<Response<Body>, E>> + Send>>;

/// The token and error details, inside gRPC-Web's translation.
#[derive(Clone)]
pub struct GateLayer(pub Rules);

impl<S> tower_layer::Layer<S> for GateLayer {
    type Service = Gate<S>;

    fn layer(&self, inner: S) -> Gate<S> {
        Gate {
            inner,
            rules: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Gate<S> {
    inner: S,
    rules: Rules,
}

impl<S, B> tower_service::Service<Request<B>> for Gate<S>
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
        if let Err(refused) = self.rules.check_token(&request) {
            return Box::pin(async move { Ok(refused.into_http()) });
        }
        let method = request.uri().path().to_string();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await?;
            Ok(with_error_info(answer, &method))
        })
    }
}

/// A status tonic answered without details gets an `ErrorInfo`, in the code
/// the wire notes give: an unknown method is UNIMPLEMENTED, a body that does
/// not decode INVALID_ARGUMENT, one over the limit RESOURCE_EXHAUSTED.
fn with_error_info(answer: Response<Body>, method: &str) -> Response<Body> {
    let headers = answer.headers();
    let code = headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map(Code::from_i32);
    let Some(code) = code.filter(|c| *c != Code::Ok) else {
        return answer;
    };
    if headers.contains_key("grpc-status-details-bin") {
        return answer;
    }
    let said = headers
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .map(percent_decoded)
        .unwrap_or_default();
    let detailed = match code {
        Code::Unimplemented => unsupported(
            Code::Unimplemented,
            "",
            format!("{method} is no cua.env.v1 method this server has; GetCapabilities lists what is served"),
        ),
        Code::OutOfRange | Code::ResourceExhausted if said.contains("too large") => status(
            Code::ResourceExhausted,
            ErrorReason::LimitExceeded,
            format!("{said}; GetCapabilities gives the limits"),
        ),
        Code::Internal | Code::InvalidArgument => status(
            Code::InvalidArgument,
            ErrorReason::Unspecified,
            format!("the request could not be read: {said}"),
        ),
        other => status(other, ErrorReason::Unspecified, said),
    };
    let mut response: Response<Body> = detailed.into_http();
    // What the answer said besides its status (its CORS headers) stays.
    for (name, value) in answer.headers() {
        if !name.as_str().starts_with("grpc-") && name != http::header::CONTENT_TYPE {
            response.headers_mut().insert(name.clone(), value.clone());
        }
    }
    response
}

/// `grpc-message` is percent-encoded.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Browser origins, outside gRPC-Web's translation: a preflight from an
/// origin allowed is answered, any call from another origin refused.
#[derive(Clone)]
pub struct CorsLayer(pub Rules);

impl<S> tower_layer::Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors {
            inner,
            rules: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Cors<S> {
    inner: S,
    rules: Rules,
}

/// The headers a gRPC-Web client in a browser reads from an answer.
const EXPOSED: &str = "grpc-status, grpc-message, grpc-status-details-bin";

impl<S, B> tower_service::Service<Request<B>> for Cors<S>
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
        let Some(origin) = request.headers().get(ORIGIN).cloned() else {
            // No browser: gRPC clients send no Origin.
            let answer = self.inner.call(request);
            return Box::pin(answer);
        };
        let text = origin.to_str().unwrap_or_default().to_string();
        if !self.rules.allows(&text) {
            let refused = plain(
                StatusCode::FORBIDDEN,
                format!(
                    "browser origin {text:?} may not call this server; start wayrig with \
                     --cua-allow-origin {text} to allow it"
                ),
            );
            return Box::pin(async move { Ok(refused) });
        }
        if request.method() == Method::OPTIONS {
            let asked = request
                .headers()
                .get("access-control-request-headers")
                .cloned()
                .unwrap_or_else(|| HeaderValue::from_static("content-type"));
            let mut answer = Response::new(Body::empty());
            *answer.status_mut() = StatusCode::NO_CONTENT;
            let headers = answer.headers_mut();
            headers.insert("access-control-allow-origin", origin);
            headers.insert(
                "access-control-allow-methods",
                HeaderValue::from_static("POST, OPTIONS"),
            );
            headers.insert("access-control-allow-headers", asked);
            headers.insert("access-control-max-age", HeaderValue::from_static("600"));
            headers.insert("vary", HeaderValue::from_static("origin"));
            return Box::pin(async move { Ok(answer) });
        }
        let answer = self.inner.call(request);
        Box::pin(async move {
            let mut answer = answer.await?;
            let headers = answer.headers_mut();
            headers.insert("access-control-allow-origin", origin);
            headers.insert(
                "access-control-expose-headers",
                HeaderValue::from_static(EXPOSED),
            );
            headers.insert("vary", HeaderValue::from_static("origin"));
            Ok(answer)
        })
    }
}

fn plain(code: StatusCode, text: String) -> Response<Body> {
    let mut answer = Response::new(Body::new(text));
    *answer.status_mut() = code;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(authorization: Option<&str>) -> Request<()> {
        let mut r = Request::new(());
        if let Some(a) = authorization {
            r.headers_mut().insert("authorization", a.parse().unwrap());
        }
        r
    }

    #[test]
    fn a_token_is_needed_exactly_when_one_is_set() {
        let open = Rules::new(None, vec![]);
        assert!(open.check_token(&request(None)).is_ok());
        let closed = Rules::new(Some("s3cret".into()), vec![]);
        assert!(closed.check_token(&request(Some("Bearer s3cret"))).is_ok());
        for wrong in [
            None,
            Some("Bearer s3cre"),
            Some("Bearer s3cret2"),
            Some("s3cret"),
        ] {
            let refused = closed.check_token(&request(wrong)).unwrap_err();
            assert_eq!(refused.code(), Code::Unauthenticated, "{wrong:?}");
        }
    }

    #[test]
    fn grpc_messages_are_percent_decoded() {
        assert_eq!(percent_decoded("a%20b%3A%zz"), "a b:%zz");
    }
}
