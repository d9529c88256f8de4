//! Wayrig's W3C WebDriver face: HTTP and JSON, where each WebDriver session is
//! a Wayrig session of its own, made by the sessions' one recipe.
//!
//! `POST /session` makes an isolated session (compositor, buses, directory)
//! and starts the app its capabilities name; every command then translates
//! into calls on that session; `DELETE /session/{id}` ends all it started.

mod actions;
mod caps;
mod commands;
mod error;
#[cfg(test)]
mod hostile;
mod keys;
mod locate;
mod trace;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, ORIGIN};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use wayrig_sessions::Sessions;

pub use error::WdError;

/// Who may call, and what every session is made with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every request must carry `Authorization: Bearer TOKEN`.
    pub token: Option<String>,
    /// Browser origins allowed to call; a request from any other is refused.
    pub origins: Vec<String>,
    /// Environment every session's apps get, before the session's own.
    pub env: Vec<(String, String)>,
}

/// A bound WebDriver listener.
pub struct WebDriverListener {
    listener: TcpListener,
}

impl WebDriverListener {
    pub fn addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }
}

/// Bind `addr` (HOST:PORT); beyond loopback only with a token.
pub async fn bind(addr: &str, has_token: bool) -> Result<WebDriverListener, String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for WebDriver at {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen for WebDriver at {addr}: {e}"))?;
    if !local.ip().is_loopback() && !has_token {
        return Err(format!(
            "--webdriver {addr} is not a loopback address: give --webdriver-token-file to \
             listen beyond this machine"
        ));
    }
    Ok(WebDriverListener { listener })
}

/// The face's state: the sessions, and what each WebDriver session adds.
pub(crate) struct Face {
    pub sessions: Arc<Sessions>,
    pub driven: Mutex<HashMap<String, Arc<commands::Driven>>>,
    pub options: Options,
}

/// Serve WebDriver until `stop` is cancelled; then every session ends.
pub async fn serve(
    listener: WebDriverListener,
    sessions: Arc<Sessions>,
    options: Options,
    stop: CancellationToken,
) -> Result<(), String> {
    let face = Arc::new(Face {
        sessions: sessions.clone(),
        driven: Mutex::default(),
        options,
    });
    let app = router(face.clone());
    // Without TCP_NODELAY a large answer's tail waits for the client's
    // delayed ACK.
    let prompt = listener.listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let served = axum::serve(prompt, app)
        .with_graceful_shutdown(stop.cancelled_owned())
        .await;
    sessions.end_all().await;
    served.map_err(|e| format!("the WebDriver server stopped: {e}"))
}

fn router(face: Arc<Face>) -> Router {
    use commands::*;
    let s = "/session/{id}";
    let e = "/session/{id}/element/{element}";
    Router::new()
        .route("/status", get(status))
        .route("/session", post(new_session))
        .route(s, axum::routing::delete(delete_session))
        .route(
            &format!("{s}/timeouts"),
            get(get_timeouts).post(set_timeouts),
        )
        .route(&format!("{s}/element"), post(find_element))
        .route(&format!("{s}/elements"), post(find_elements))
        .route(&format!("{s}/element/active"), get(active_element))
        .route(&format!("{e}/element"), post(find_element_from))
        .route(&format!("{e}/elements"), post(find_elements_from))
        .route(&format!("{e}/click"), post(element_click))
        .route(&format!("{e}/clear"), post(element_clear))
        .route(&format!("{e}/value"), post(element_send_keys))
        .route(&format!("{e}/text"), get(element_text))
        .route(&format!("{e}/name"), get(element_tag))
        .route(&format!("{e}/rect"), get(element_rect))
        .route(&format!("{e}/enabled"), get(element_enabled))
        .route(&format!("{e}/selected"), get(element_selected))
        .route(&format!("{e}/displayed"), get(element_displayed))
        .route(&format!("{e}/attribute/{{name}}"), get(element_attribute))
        .route(&format!("{e}/property/{{name}}"), get(element_property))
        .route(&format!("{e}/computedrole"), get(element_tag))
        .route(&format!("{e}/computedlabel"), get(element_label))
        .route(&format!("{e}/screenshot"), get(element_screenshot))
        .route(&format!("{s}/screenshot"), get(screenshot))
        .route(&format!("{s}/source"), get(source))
        .route(&format!("{s}/title"), get(title))
        .route(
            &format!("{s}/window"),
            get(window_handle).post(switch_window).delete(close_window),
        )
        .route(&format!("{s}/window/handles"), get(window_handles))
        .route(
            &format!("{s}/window/rect"),
            get(window_rect).post(set_window_rect),
        )
        .route(&format!("{s}/window/maximize"), post(maximize))
        .route(&format!("{s}/window/minimize"), post(minimize))
        .route(&format!("{s}/window/fullscreen"), post(fullscreen))
        .route(&format!("{s}/execute/sync"), post(execute))
        .route(
            &format!("{s}/actions"),
            post(perform_actions).delete(release_actions),
        )
        .fallback(unknown_command)
        .method_not_allowed_fallback(unknown_method)
        .layer(axum::middleware::from_fn_with_state(
            face.clone(),
            trace::trace,
        ))
        .layer(axum::middleware::from_fn_with_state(face.clone(), gate))
        .with_state(face)
}

/// Refuse a request without the token, or from a browser origin not allowed.
async fn gate(State(face): State<Arc<Face>>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| face.options.origins.iter().any(|a| a == o));
        if !allowed {
            return (
                axum::http::StatusCode::FORBIDDEN,
                "this origin may not call Wayrig's WebDriver face (--webdriver-allow-origin)",
            )
                .into_response();
        }
    }
    if let Some(token) = &face.options.token {
        let given = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_str()) {
            return (
                axum::http::StatusCode::UNAUTHORIZED,
                "give the token as Authorization: Bearer TOKEN",
            )
                .into_response();
        }
    }
    next.run(request).await
}

async fn unknown_command() -> WdError {
    WdError::new(
        "unknown command",
        "Wayrig's WebDriver face has no such command",
    )
}

async fn unknown_method() -> WdError {
    WdError::new("unknown method", "this command takes another HTTP method")
}
