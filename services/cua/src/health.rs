//! `GET /health`: a plain HTTP check beside the gRPC services, answered 204
//! while the session serves, before gRPC-Web (which refuses plain HTTP/1.1).

use std::task::{Context, Poll};

use futures_util::future::{ready, Either, Ready};
use http::{Method, Request, Response, StatusCode};
use tonic::body::Body;

/// Wraps the server's services with the health check.
#[derive(Clone, Copy, Default)]
pub struct HealthLayer;

impl<S> tower_layer::Layer<S> for HealthLayer {
    type Service = Health<S>;

    fn layer(&self, inner: S) -> Health<S> {
        Health { inner }
    }
}

/// Answers `GET /health` itself; passes every other request on.
#[derive(Clone)]
pub struct Health<S> {
    inner: S,
}

impl<S, B> tower_service::Service<Request<B>> for Health<S>
where
    S: tower_service::Service<Request<B>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response<Body>, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.method() == Method::GET && request.uri().path() == "/health" {
            let mut answer = Response::new(Body::empty());
            *answer.status_mut() = StatusCode::NO_CONTENT;
            Either::Left(ready(Ok(answer)))
        } else {
            Either::Right(self.inner.call(request))
        }
    }
}
