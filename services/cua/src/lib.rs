//! The cua.env.v1 face: the Windows, Accessibility, System and Computer
//! services over gRPC and gRPC-Web on one port, each RPC a few session calls.
//!
//! `listen` binds (TCP or a private Unix socket); `gate` checks bearer tokens
//! and browser origins and details tonic's own errors;
//! `health` answers `GET /health`;
//! `errors` and `convert` map the session's errors and model to the wire;
//! one module per service translates its RPCs.

mod accessibility;
mod authority;
mod computer;
mod convert;
mod errors;
mod gate;
mod health;
#[cfg(test)]
mod hostile;
mod keys;
mod listen;
mod screenshot;
mod system;
mod trace;
mod windows;

use std::sync::Arc;
use std::time::Instant;

use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use wayrig_cua_proto::v1::accessibility_service_server::AccessibilityServiceServer;
use wayrig_cua_proto::v1::computer_service_server::ComputerServiceServer;
use wayrig_cua_proto::v1::system_service_server::SystemServiceServer;
use wayrig_cua_proto::v1::windows_service_server::WindowsServiceServer;
use wayrig_services::Session;

pub use listen::{bind, CuaListener, ListenAddr, DEFAULT_PORT};

/// Calls one HTTP/2 connection may have under way at once.
const STREAMS_AT_ONCE: u32 = 100;

/// Serve every service on `listener` until `stop` is cancelled, then answer
/// the calls under way and end the window streams; with a token, every call
/// must carry it; browsers may call from `origins` only.
pub async fn serve(
    mut listener: CuaListener,
    session: Arc<Session>,
    token: Option<String>,
    origins: Vec<String>,
    stop: CancellationToken,
) -> Result<(), String> {
    let rules = gate::Rules::new(token, origins);
    let routes = routes(session.clone(), stop.clone());
    let server = tonic::transport::Server::builder()
        // Calls one connection runs at once: a client opening more waits,
        // instead of holding Wayrig's memory with them.
        .max_concurrent_streams(STREAMS_AT_ONCE)
        .accept_http1(true)
        .layer(health::HealthLayer)
        .layer(gate::CorsLayer(rules.clone()))
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(gate::GateLayer(rules))
        .layer(trace::TraceLayer(session.clone()))
        .add_routes(routes);
    let served = match listener.take() {
        listen::Bound::Tcp(l) => {
            // Without TCP_NODELAY an answer's last frames wait for the
            // client's delayed ACK: 40 ms on a large GetTree.
            let prompt = TcpListenerStream::new(l).map(|accepted| {
                accepted.inspect(|stream| {
                    let _ = stream.set_nodelay(true);
                })
            });
            server
                .serve_with_incoming_shutdown(prompt, stop.cancelled_owned())
                .await
        }
        listen::Bound::Unix(l) => {
            // Each connection's authority mended (grpcio names the path).
            let mended = UnixListenerStream::new(l).map(|accepted| accepted.map(authority::mend));
            server
                .serve_with_incoming_shutdown(mended, stop.cancelled_owned())
                .await
        }
    };
    drop(listener);
    served.map_err(|e| format!("the cua.env.v1 server stopped: {e}"))
}

/// The four services, each RPC translated into calls on `session`; their
/// streams end when `stop` is cancelled.
fn routes(session: Arc<Session>, stop: CancellationToken) -> tonic::service::Routes {
    let limit = system::MAX_MESSAGE_BYTES as usize;
    tonic::service::Routes::new(
        WindowsServiceServer::new(windows::Windows {
            session: session.clone(),
            stop,
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
    )
    .add_service(
        AccessibilityServiceServer::new(accessibility::Accessibility {
            session: session.clone(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
    )
    .add_service(
        SystemServiceServer::new(system::System {
            session: session.clone(),
            started: Instant::now(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
    )
    .add_service(
        ComputerServiceServer::new(computer::Computer { session })
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit),
    )
}
