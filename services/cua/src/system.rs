//! SystemService: what this server is and can do (GetCapabilities, Health);
//! the RPCs for managed guests (Init, Metrics, relays, ...) are not served.
//!
//! Every feature Wayrig knows is listed, with a sentence a user can act on
//! where it is not supported.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::system_service_server::SystemService;
use wayrig_host::Capability;
use wayrig_services::Session;

use crate::convert::display;
use crate::errors::unimplemented;

/// Additions to protocol version 1 this server has (none beyond it).
const PROTOCOL_REVISION: u32 = 0;
/// The largest message the server takes or sends.
pub const MAX_MESSAGE_BYTES: u32 = 8 << 20;

pub struct System {
    pub session: Arc<Session>,
    pub started: Instant,
}

/// One feature: supported, or why not in a sentence a user can act on.
/// A feature the host may lack: its own sentence on why, else `fallback`.
fn host_feature(
    session: &Session,
    name: &str,
    capability: Capability,
    fallback: &str,
) -> v1::Feature {
    let why = session.limit(capability);
    feature(
        name,
        session.capabilities().has(capability),
        why.as_deref().unwrap_or(fallback),
    )
}

fn feature(name: &str, supported: bool, limitation: &str) -> v1::Feature {
    v1::Feature {
        name: name.to_string(),
        supported,
        limitation: if supported {
            String::new()
        } else {
            limitation.to_string()
        },
        attributes: Default::default(),
    }
}

/// Every feature Wayrig knows, for the session it serves.
fn features(session: &Session) -> Vec<v1::Feature> {
    vec![
        host_feature(
            session,
            "windows",
            Capability::WindowCommands,
            "this host cannot move, resize or close windows; run the apps under `wayrig run`",
        ),
        feature("window_stream", true, ""),
        feature(
            "a11y",
            session.has_accessibility(),
            "this session was started without accessibility buses; start it with \
             `wayrig run` and a face flag so its apps join a private AT-SPI bus",
        ),
        host_feature(
            session,
            "launch_app",
            Capability::Launch,
            "this host cannot start apps; start them yourself on its display",
        ),
        host_feature(
            session,
            "background_input",
            Capability::BackgroundInput,
            "this host cannot deliver input without activating the window",
        ),
        host_feature(
            session,
            "screenshot.covered_window",
            Capability::CaptureCovered,
            "this host captures what the screen shows; bring the window to the front first",
        ),
        host_feature(
            session,
            "clipboard.text",
            Capability::Clipboard,
            "this host has no clipboard of its own; run the apps under `wayrig run`",
        ),
        feature(
            "clipboard.files",
            false,
            "Wayrig's clipboard carries text; set file paths as text instead",
        ),
        feature(
            "clipboard.image",
            false,
            "Wayrig's clipboard carries text; take a Screenshot for pixels",
        ),
        feature(
            "desktop_stream",
            false,
            "Wayrig streams no video; take Screenshots, and WatchWindows for changes",
        ),
        feature(
            "driver",
            false,
            "Wayrig is the compositor and needs no driver; every service here is served directly",
        ),
        feature(
            "presence",
            false,
            "Wayrig shows no presence cursors; the session's one pointer is reported by \
             GetCursorPosition",
        ),
        feature("displays", true, ""),
        feature("screenshot", true, ""),
        host_feature(
            session,
            "input",
            Capability::Input,
            "this host cannot send input; run the apps under `wayrig run`",
        ),
        host_feature(
            session,
            "pointer",
            Capability::Input,
            "this host has no pointer of its own; run the apps under `wayrig run`",
        ),
        feature(
            "pointer.back_forward",
            false,
            "the session's pointer has left, right and middle buttons; press \
             KEY_BROWSER_BACK or KEY_BROWSER_FORWARD to go back or forward",
        ),
        feature(
            "init",
            false,
            "Wayrig's session is ready when it serves; there is nothing to initialize",
        ),
        feature(
            "metrics",
            false,
            "Wayrig reports no metrics over cua.env.v1; read its benchmarks in the README",
        ),
        feature(
            "shutdown",
            false,
            "Wayrig stops on SIGTERM or when its last app exits, not on request",
        ),
        feature(
            "diagnose",
            false,
            "Wayrig runs no diagnostics over cua.env.v1; its log is on its standard error",
        ),
        feature(
            "relay",
            false,
            "Wayrig serves its clients directly and joins no relay",
        ),
        recording(session),
    ]
}

/// Whether the session is recorded (`wayrig run --record`), and where: a
/// cua client's calls are in its trace, with their messages.
fn recording(session: &Session) -> v1::Feature {
    let dir = session.recorded_into();
    let mut recording = feature(
        "experimental.recording",
        dir.is_some(),
        "this session is not recorded: start Wayrig with `--record DIR`, or start a recording over MyGo (`wayrig.record`) or the Bus (`<app>.wayrig.record`)",
    );
    if let Some(dir) = dir {
        recording
            .attributes
            .insert("dir".into(), dir.to_string_lossy().into_owned());
    }
    recording
}

/// What kind of machine this is: a container, a QEMU guest, or bare.
fn runtime() -> (v1::Runtime, String) {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    if std::path::Path::new("/.dockerenv").exists() {
        return (v1::Runtime::Container, "/.dockerenv exists".into());
    }
    if std::path::Path::new("/run/.containerenv").exists() {
        return (v1::Runtime::Container, "/run/.containerenv exists".into());
    }
    if let Ok(kind) = std::env::var("container") {
        return (v1::Runtime::Container, format!("container={kind}"));
    }
    let cgroup = read("/proc/1/cgroup");
    if ["docker", "containerd", "kubepods", "libpod", "lxc"]
        .iter()
        .any(|k| cgroup.contains(k))
    {
        return (
            v1::Runtime::Container,
            "pid 1's cgroup is a container's".into(),
        );
    }
    let vendor = read("/sys/class/dmi/id/sys_vendor");
    if vendor.trim() == "QEMU" {
        return (v1::Runtime::Qemu, "DMI system vendor QEMU".into());
    }
    (v1::Runtime::Bare, String::new())
}

fn os() -> v1::OperatingSystem {
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let field = |key: &str| {
        release
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_default()
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    v1::OperatingSystem {
        family: v1::OsFamily::Linux as i32,
        name: field("NAME"),
        version: field("VERSION_ID"),
        kernel,
        pretty_name: field("PRETTY_NAME"),
    }
}

fn arch() -> v1::Architecture {
    match std::env::consts::ARCH {
        "x86_64" => v1::Architecture::X8664,
        "aarch64" => v1::Architecture::Arm64,
        _ => v1::Architecture::Unspecified,
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer outlives the call and its length is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// When the machine booted (`btime` of /proc/stat).
fn boot_time() -> Option<prost_types::Timestamp> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let secs = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(prost_types::Timestamp {
        seconds: secs,
        nanos: 0,
    })
}

#[tonic::async_trait]
impl SystemService for System {
    async fn get_capabilities(
        &self,
        _request: Request<v1::GetCapabilitiesRequest>,
    ) -> Result<Response<v1::GetCapabilitiesResponse>, Status> {
        let (runtime, runtime_detail) = runtime();
        let displays = self.session.displays().await.unwrap_or_default();
        Ok(Response::new(v1::GetCapabilitiesResponse {
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: 1,
            protocol_revision: PROTOCOL_REVISION,
            os: Some(os()),
            runtime: runtime as i32,
            runtime_detail,
            arch: arch() as i32,
            display_server: v1::DisplayServer::Wayland as i32,
            displays: displays.iter().map(display).collect(),
            features: features(&self.session),
            hostname: hostname(),
            initialized: true,
            boot_time: boot_time(),
            side_channels: None,
            limits: Some(v1::Limits {
                max_chunk_bytes: MAX_MESSAGE_BYTES / 2,
                max_message_bytes: MAX_MESSAGE_BYTES,
                preferred_chunk_bytes: 1 << 20,
                default_scrollback_bytes: 0,
            }),
            machine_seal_public_key: Vec::new(),
        }))
    }

    async fn init(
        &self,
        _request: Request<v1::InitRequest>,
    ) -> Result<Response<v1::InitResponse>, Status> {
        Err(unimplemented("SystemService.Init", "init"))
    }

    async fn health(
        &self,
        _request: Request<v1::HealthRequest>,
    ) -> Result<Response<v1::HealthResponse>, Status> {
        let uptime = self.started.elapsed();
        let serving = v1::HealthStatus::Serving as i32;
        let component = |name: &str, ok: bool, detail: &str| v1::ComponentHealth {
            name: name.to_string(),
            status: if ok {
                serving
            } else {
                v1::HealthStatus::NotServing as i32
            },
            detail: detail.to_string(),
        };
        let host_ok = self.session.displays().await.is_ok();
        let a11y = self.session.has_accessibility();
        Ok(Response::new(v1::HealthResponse {
            status: if host_ok {
                serving
            } else {
                v1::HealthStatus::NotServing as i32
            },
            components: vec![
                component("compositor", host_ok, "the host answers"),
                component("a11y", a11y, "the session's AT-SPI bus"),
            ],
            uptime: Some(prost_duration(uptime)),
        }))
    }

    async fn metrics(
        &self,
        _request: Request<v1::MetricsRequest>,
    ) -> Result<Response<v1::MetricsResponse>, Status> {
        Err(unimplemented("SystemService.Metrics", "metrics"))
    }

    async fn shutdown(
        &self,
        _request: Request<v1::ShutdownRequest>,
    ) -> Result<Response<v1::ShutdownResponse>, Status> {
        Err(unimplemented("SystemService.Shutdown", "shutdown"))
    }

    type DiagnoseStream = ReceiverStream<Result<v1::DiagnoseResponse, Status>>;

    async fn diagnose(
        &self,
        _request: Request<v1::DiagnoseRequest>,
    ) -> Result<Response<Self::DiagnoseStream>, Status> {
        Err(unimplemented("SystemService.Diagnose", "diagnose"))
    }

    async fn diagnose_once(
        &self,
        _request: Request<v1::DiagnoseOnceRequest>,
    ) -> Result<Response<v1::DiagnoseOnceResponse>, Status> {
        Err(unimplemented("SystemService.DiagnoseOnce", "diagnose"))
    }

    async fn create_viewer_ticket(
        &self,
        _request: Request<v1::CreateViewerTicketRequest>,
    ) -> Result<Response<v1::CreateViewerTicketResponse>, Status> {
        Err(unimplemented(
            "SystemService.CreateViewerTicket",
            "desktop_stream",
        ))
    }

    async fn attach_relay(
        &self,
        _request: Request<v1::AttachRelayRequest>,
    ) -> Result<Response<v1::AttachRelayResponse>, Status> {
        Err(unimplemented("SystemService.AttachRelay", "relay"))
    }

    async fn detach_relay(
        &self,
        _request: Request<v1::DetachRelayRequest>,
    ) -> Result<Response<v1::DetachRelayResponse>, Status> {
        Err(unimplemented("SystemService.DetachRelay", "relay"))
    }
}

pub fn prost_duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

#[cfg(test)]
mod tests {

    /// Every feature an error of this face names, in its ErrorInfo.
    const NAMED_IN_ERRORS: &[&str] = &[
        "a11y",
        "background_input",
        "clipboard.files",
        "clipboard.image",
        "clipboard.text",
        "desktop_stream",
        "diagnose",
        "displays",
        "init",
        "input",
        "launch_app",
        "metrics",
        "pointer",
        "pointer.back_forward",
        "relay",
        "screenshot",
        "shutdown",
        "windows",
    ];

    #[test]
    fn capabilities_list_every_feature_an_error_names() {
        let source = include_str!("system.rs");
        let start = source.find("fn features(").unwrap();
        let listing = &source[start..start + source[start..].find("\n}\n").unwrap()];
        for name in NAMED_IN_ERRORS {
            assert!(
                listing.contains(&format!("\"{name}\"")),
                "{name} is named in errors but not listed by GetCapabilities"
            );
        }
    }
}
