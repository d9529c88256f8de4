//! The recipe: a session's directory and bus first, then its compositor given
//! the bus's environment, then the `Session` joining them; each phase bounded.
//!
//! The compositor may start on a thread of its own (`Staged::start`) or on the
//! caller's (`Staged::config`, then `Staged::join`), as the nested window needs.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use wayrig_compositor::{CompositorHost, Config, RuntimeDir};
use wayrig_desktop::XdgDirs;
use wayrig_host::Host;
use wayrig_services::{PrivateBus, Session};

use crate::live::Live;

/// How long each phase of a start may take before it fails, naming the phase.
/// The bus activates the AT-SPI launcher and registry; the compositor binds its
/// socket; joining reads the windows and connects to both buses.
const BUS_LIMIT: Duration = Duration::from_secs(20);
const COMPOSITOR_LIMIT: Duration = Duration::from_secs(10);
const JOIN_LIMIT: Duration = Duration::from_secs(20);

/// What a session is made of.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The compositor's output, pacing and launch environment; its
    /// `runtime_parent` is the session's own directory, whatever is set here.
    pub compositor: Config,
    /// A private bus pair for the session's apps, so their elements are read:
    /// without it, windows, input, capture and settle work, elements do not.
    pub accessibility: bool,
    /// Where its apps, MIME types and handlers are found, when not in
    /// Wayrig's own environment (another user's desktop, a test's).
    pub desktop: Option<XdgDirs>,
    /// Read each window's elements as soon as it maps, before a client
    /// asks (`Session::read_windows_ahead`): the first read a client asks
    /// then finds the window mirrored.
    pub read_ahead: bool,
}

/// A phase of a session's start that failed or took too long.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the session's {phase}: {detail}")]
pub struct StartError {
    /// The phase, as a person names it: "directory", "private bus", ...
    pub phase: &'static str,
    pub detail: String,
}

impl StartError {
    pub(crate) fn new(phase: &'static str, detail: impl ToString) -> Self {
        StartError {
            phase,
            detail: detail.to_string(),
        }
    }
}

/// Run one phase within its limit.
async fn phase<T, E: ToString>(
    name: &'static str,
    limit: Duration,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, StartError> {
    match tokio::time::timeout(limit, work).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(e)) => Err(StartError::new(name, e)),
        Err(_) => Err(StartError::new(
            name,
            format!("it did not start within {limit:?}"),
        )),
    }
}

/// The addresses of a session's private buses, for tools joining them.
#[derive(Debug, Clone)]
pub struct BusAddresses {
    /// The D-Bus session bus its apps are on.
    pub session: String,
    /// The AT-SPI bus.
    pub a11y: String,
}

/// A session before its compositor runs: its directory, and its bus when
/// it reads accessibility.
pub struct Staged {
    files: RuntimeDir,
    bus: Option<PrivateBus>,
    config: Config,
    desktop: Option<XdgDirs>,
    read_ahead: bool,
}

impl Staged {
    /// Make the session's private directory and start its bus in it.
    pub async fn prepare(spec: Spec) -> Result<Staged, StartError> {
        let files = RuntimeDir::create(spec.compositor.runtime_parent.as_deref())
            .map_err(|e| StartError::new("directory", e))?;
        let bus = match spec.accessibility {
            true => Some(phase("private bus", BUS_LIMIT, PrivateBus::start(files.path())).await?),
            false => None,
        };
        let mut config = spec.compositor;
        // The bus's settings turn accessibility on; a setting the user gave
        // (`--env`) comes after them and wins.
        let mut app_env: Vec<(String, String)> = bus.iter().flat_map(PrivateBus::app_env).collect();
        app_env.append(&mut config.app_env);
        config.app_env = app_env;
        config.runtime_parent = Some(files.path().to_path_buf());
        Ok(Staged {
            files,
            bus,
            config,
            desktop: spec.desktop,
            read_ahead: spec.read_ahead,
        })
    }

    /// The compositor's configuration, for starting it on the caller's thread.
    pub fn config(&self) -> Config {
        self.config.clone()
    }

    /// Start the compositor on a thread of its own, then join the session.
    pub async fn start(self) -> Result<Live, StartError> {
        let config = self.config();
        let started = tokio::task::spawn_blocking(move || CompositorHost::start(config));
        let host = phase("compositor", COMPOSITOR_LIMIT, async {
            started
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())
        })
        .await?;
        self.join(host).await
    }

    /// Join the started compositor with the bus into the live session.
    pub async fn join(self, host: CompositorHost) -> Result<Live, StartError> {
        let host = Arc::new(host);
        let buses = self.bus.as_ref().map(|bus| BusAddresses {
            session: bus.address.clone(),
            a11y: bus.a11y_address.clone(),
        });
        let dyn_host: Arc<dyn Host> = host.clone();
        let session = phase("accessibility", JOIN_LIMIT, async {
            match self.bus {
                Some(bus) => Session::new(dyn_host, bus).await,
                None => Session::without_accessibility(dyn_host).await,
            }
        })
        .await;
        let recording = self.config.record.clone();
        let session = session.map(|session| session.with_recording(recording));
        let session = match self.desktop {
            Some(dirs) => session.map(|session| session.with_desktop(dirs)),
            None => session,
        };
        match session {
            Ok(session) => {
                let live = Live::new(host, session, buses, Some(self.files));
                if self.read_ahead {
                    let (session, stop) = (live.session().clone(), live.stopping());
                    live.spawn("reading windows ahead", async move {
                        tokio::select! {
                            () = stop.cancelled() => {}
                            () = session.read_windows_ahead() => {}
                        }
                    });
                }
                Ok(live)
            }
            Err(e) => {
                host.shutdown().await;
                Err(e)
            }
        }
    }
}
