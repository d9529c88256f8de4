//! The cua.env.v1 face: the Windows, Accessibility, System and Computer
//! services over gRPC and gRPC-Web on one port, each RPC a few session calls.
//!
//! `listen` binds (TCP or a private Unix socket); `auth` checks bearer tokens;
//! `health` answers `GET /health`;
//! `errors` and `convert` map the session's errors and model to the wire;
//! one module per service translates its RPCs.

mod accessibility;
mod auth;
mod computer;
mod convert;
mod errors;
mod health;
mod keys;
mod listen;
mod screenshot;
mod system;
mod windows;

use std::sync::Arc;
use std::time::Instant;

use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::service::interceptor::InterceptedService;
use wayrig_cua_proto::v1::accessibility_service_server::AccessibilityServiceServer;
use wayrig_cua_proto::v1::computer_service_server::ComputerServiceServer;
use wayrig_cua_proto::v1::system_service_server::SystemServiceServer;
use wayrig_cua_proto::v1::windows_service_server::WindowsServiceServer;
use wayrig_services::Session;

pub use listen::{bind, CuaListener, ListenAddr, DEFAULT_PORT};

/// Serve every service on `listener` until the task is dropped; with a
/// token, every call must carry it.
pub async fn serve(
    mut listener: CuaListener,
    session: Arc<Session>,
    token: Option<String>,
) -> Result<(), String> {
    let check = auth::TokenCheck::new(token);
    let limit = system::MAX_MESSAGE_BYTES as usize;
    let routes = tonic::service::Routes::new(InterceptedService::new(
        WindowsServiceServer::new(windows::Windows {
            session: session.clone(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
        check.clone(),
    ))
    .add_service(InterceptedService::new(
        AccessibilityServiceServer::new(accessibility::Accessibility {
            session: session.clone(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
        check.clone(),
    ))
    .add_service(InterceptedService::new(
        SystemServiceServer::new(system::System {
            session: session.clone(),
            started: Instant::now(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
        check.clone(),
    ))
    .add_service(InterceptedService::new(
        ComputerServiceServer::new(computer::Computer { session })
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit),
        check,
    ));
    let server = tonic::transport::Server::builder()
        .accept_http1(true)
        .layer(health::HealthLayer)
        .layer(tonic_web::GrpcWebLayer::new())
        .add_routes(routes);
    let served = match listener.take() {
        listen::Bound::Tcp(l) => server.serve_with_incoming(TcpListenerStream::new(l)).await,
        listen::Bound::Unix(l) => server.serve_with_incoming(UnixListenerStream::new(l)).await,
    };
    drop(listener);
    served.map_err(|e| format!("the cua.env.v1 server stopped: {e}"))
}
