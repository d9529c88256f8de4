//! W3C WebDriver errors: the error code, its HTTP status and the JSON shape
//! `{"value": {"error", "message", "stacktrace"}}`, from the session's errors.
//!
//! Every handler answers `Result<Json, WdError>`; nothing here panics.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use wayrig_services::Error;

/// A WebDriver error as the spec names it.
#[derive(Debug)]
pub struct WdError {
    pub code: &'static str,
    pub message: String,
}

impl WdError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        WdError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        WdError::new("invalid argument", message)
    }

    /// The HTTP status the spec gives the error code.
    fn status(&self) -> StatusCode {
        match self.code {
            "invalid argument"
            | "element not interactable"
            | "element click intercepted"
            | "invalid selector"
            | "invalid element state" => StatusCode::BAD_REQUEST,
            "no such element"
            | "no such window"
            | "stale element reference"
            | "invalid session id"
            | "unknown command"
            | "no such alert" => StatusCode::NOT_FOUND,
            "unknown method" => StatusCode::METHOD_NOT_ALLOWED,
            "move target out of bounds" => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<Error> for WdError {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::NoElement(_) => "no such element",
            Error::StaleElement(_) | Error::StaleGeometry(_) => "stale element reference",
            Error::NotShown(_) => "element not interactable",
            Error::NoWindow(_) | Error::StaleWindow(_) => "no such window",
            Error::InvalidRequest(_) | Error::TooLarge(_) | Error::NotFound(_) => {
                "invalid argument"
            }
            Error::Ambiguous { .. } => "invalid selector",
            Error::Unsupported(_) | Error::WouldActivate(_) => "unsupported operation",
            Error::Timeout(_) => "timeout",
            Error::Busy(_) | Error::Cancelled(_) | Error::Interrupted { .. } | Error::Failed(_) => {
                "unknown error"
            }
        };
        WdError::new(code, e.to_string())
    }
}

impl IntoResponse for WdError {
    fn into_response(self) -> Response {
        let body = json!({"value": {
            "error": self.code,
            "message": self.message,
            "stacktrace": "",
        }});
        (self.status(), axum::Json(body)).into_response()
    }
}
