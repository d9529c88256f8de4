//! Bearer tokens: with a token set, every call carries
//! `authorization: Bearer <token>`, compared in constant time.

use std::sync::Arc;

use tonic::service::Interceptor;
use tonic::{Code, Request, Status};
use wayrig_cua_proto::v1::ErrorReason;

use crate::errors::status;

/// Checks each call's token; without a token set, lets every call through.
#[derive(Clone, Default)]
pub struct TokenCheck {
    token: Option<Arc<[u8]>>,
}

impl TokenCheck {
    pub fn new(token: Option<String>) -> Self {
        TokenCheck {
            token: token.map(|t| Arc::from(t.into_bytes())),
        }
    }
}

/// Equal bytes, in a time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

impl Interceptor for TokenCheck {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.token else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(given) if same(given.as_bytes(), token) => Ok(request),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(check: &mut TokenCheck, header: Option<&str>) -> Result<(), Code> {
        let mut request = Request::new(());
        if let Some(h) = header {
            request
                .metadata_mut()
                .insert("authorization", h.parse().unwrap());
        }
        check.call(request).map(drop).map_err(|s| s.code())
    }

    #[test]
    fn a_token_is_needed_exactly_when_one_is_set() {
        let mut open = TokenCheck::new(None);
        assert_eq!(call(&mut open, None), Ok(()));
        let mut closed = TokenCheck::new(Some("s3cret".into()));
        assert_eq!(call(&mut closed, Some("Bearer s3cret")), Ok(()));
        for wrong in [
            None,
            Some("Bearer s3cre"),
            Some("Bearer s3cret2"),
            Some("s3cret"),
        ] {
            assert_eq!(
                call(&mut closed, wrong),
                Err(Code::Unauthenticated),
                "{wrong:?}"
            );
        }
    }
}
