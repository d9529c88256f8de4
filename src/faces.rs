//! The faces' flags, shared by `wayrig run` and `wayrig attach`, their
//! listeners bound before anything starts, and serving them over one session.

use std::path::PathBuf;

use clap::Args;
use wayrig_mygo as mygo;
use wayrig_sessions::Live;

#[derive(Args)]
pub struct FaceArgs {
    /// How long the answer to input or an action waits for the window to
    /// settle, so that it shows the effect, in ms (0: only for the frame
    /// drawn in answer); past it, the Bus, cua.env.v1 and MyGo answers say
    /// why.
    #[arg(long, value_name = "MS", default_value_t = wayrig_services::session::EFFECT_WAIT.as_millis() as u64)]
    effect_wait: u64,
    /// Serve the MyGo automation protocol on this Unix socket (default: the
    /// MYGO_AUTOMATION environment variable, and no socket when it is unset
    /// or empty).
    #[arg(long, value_name = "PATH")]
    mygo_socket: Option<PathBuf>,
    /// Be the MixOS Bus broker for the hosted apps: ABP over WebSocket at
    /// ws://HOST:PORT/ws, on a loopback address only (port 0 picks one).
    #[arg(long, value_name = "HOST:PORT", group = "bus")]
    bus_listen: Option<String>,
    /// A browser origin allowed to open the Bus (`http://localhost:8080`);
    /// pages from any other origin are refused (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "bus_listen")]
    bus_allow_origin: Vec<String>,
    /// A file holding the token every Bus connection must carry (as
    /// `Authorization: Bearer TOKEN` or `/ws?token=TOKEN`); with one, the Bus
    /// may listen beyond loopback.
    #[arg(long, value_name = "PATH", requires = "bus_listen")]
    bus_token_file: Option<PathBuf>,
    /// Register each hosted app's Bus name with the MixOS broker (noded) at
    /// this ws://HOST:PORT/ws URL and answer the requests it forwards,
    /// connecting again whenever it goes away.
    #[arg(long, value_name = "URL", group = "bus", conflicts_with = "bus_listen")]
    bus_connect: Option<String>,
    /// The Bus name of the first app (default: from its app id, as
    /// org.gnome.Calculator is calculator).
    #[arg(long, value_name = "NAME", requires = "bus", value_parser = parse_bus_name)]
    bus_name: Option<String>,
    /// Serve cua.env.v1 (gRPC and gRPC-Web, one port) at HOST:PORT, HOST
    /// (port 3211) or unix:PATH (a 0600 socket). Anything but loopback or a
    /// Unix socket needs a token.
    #[arg(long, value_name = "ADDR")]
    cua_listen: Option<wayrig_cua::ListenAddr>,
    /// A file holding the token every cua.env.v1 call must carry as
    /// `authorization: Bearer <token>` (default: the CUA_TOKEN environment
    /// variable; no token when both are unset).
    #[arg(long, value_name = "PATH", requires = "cua_listen")]
    cua_token_file: Option<PathBuf>,
    /// A browser origin allowed to call cua.env.v1 through gRPC-Web
    /// (`http://localhost:8080`): preflights from it are answered, calls
    /// from any other origin refused (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "cua_listen")]
    cua_allow_origin: Vec<String>,
}

impl FaceArgs {
    /// Any face is asked for.
    pub fn any(&self) -> bool {
        self.mygo_socket().is_some()
            || self.bus_listen.is_some()
            || self.bus_connect.is_some()
            || self.cua_listen.is_some()
    }

    /// The cua.env.v1 token: the file's first line, else a non-empty CUA_TOKEN.
    fn cua_token(&self) -> Result<Option<String>, String> {
        match &self.cua_token_file {
            Some(path) => read_token("--cua-token-file", path).map(Some),
            None => Ok(std::env::var("CUA_TOKEN").ok().filter(|t| !t.is_empty())),
        }
    }

    /// The tokens the faces were given, kept out of recordings.
    pub fn secrets(&self) -> Result<Vec<String>, String> {
        let bus = self.bus_access()?.token;
        Ok(bus.into_iter().chain(self.cua_token()?).collect())
    }

    /// Who may open the Bus.
    fn bus_access(&self) -> Result<wayrig_bus::Access, String> {
        Ok(wayrig_bus::Access {
            origins: self.bus_allow_origin.clone(),
            token: match &self.bus_token_file {
                Some(path) => Some(read_token("--bus-token-file", path)?),
                None => None,
            },
        })
    }

    /// The MyGo socket asked for: the flag, else a non-empty MYGO_AUTOMATION.
    pub fn mygo_socket(&self) -> Option<PathBuf> {
        self.mygo_socket.clone().or_else(|| {
            std::env::var_os("MYGO_AUTOMATION")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
    }
}

fn parse_bus_name(s: &str) -> Result<String, String> {
    wayrig_bus::valid_name(s).map(|()| s.to_string())
}

/// What `--bus-connect` tells: registrations as `--bus-listen` prints its
/// names, and refusals and lost brokers saying what follows.
fn bus_notice(url: &str, notice: wayrig_bus::Notice) {
    use wayrig_bus::Notice;
    match notice {
        Notice::Connected => say!("wayrig: bus connected to {url}"),
        Notice::Lost { why, retry } => say!(
            "wayrig: bus broker {url} unreachable ({why}); connecting again in {retry:?}, backing off to 5s"
        ),
        Notice::Registered {
            name,
            pid: Some(pid),
            app_id,
        } => say!("wayrig: bus name {name} for pid {pid} (app id {app_id:?})"),
        Notice::Registered { name, pid: None, .. } => {
            say!("wayrig: bus holds the name {name} for the first app")
        }
        Notice::Refused {
            name,
            pid,
            error_code,
            message,
        } => {
            let whose = pid.map_or("the first app".to_string(), |pid| format!("pid {pid}"));
            say!(
                "wayrig: bus broker {url} refused the name {name} for {whose} ({error_code}: {message}); \
                 that app stays off this Bus until Wayrig connects to it again"
            )
        }
    }
}

/// A token file's first line, trimmed; an empty one is an error.
pub(crate) fn read_token(flag: &str, path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {flag} {}: {e}", path.display()))?;
    let line = text.lines().next().unwrap_or("").trim().to_string();
    if line.is_empty() {
        return Err(format!(
            "{flag} {} is empty; put the token on its first line",
            path.display()
        ));
    }
    Ok(line)
}

/// The faces' listeners, bound before anything started.
pub struct Listeners {
    bus: Option<wayrig_bus::BusListener>,
    cua: Option<(wayrig_cua::CuaListener, Option<String>)>,
}

impl Listeners {
    /// Bind what the flags ask for; an address or token that cannot be used is an error.
    pub async fn bind(faces: &FaceArgs) -> Result<Listeners, String> {
        let bus = match &faces.bus_listen {
            Some(addr) => Some(wayrig_bus::bind(addr, faces.bus_access()?).await?),
            None => None,
        };
        if let Some(url) = &faces.bus_connect {
            wayrig_bus::check_url(url)?;
        }
        let cua = match &faces.cua_listen {
            Some(addr) => {
                let token = faces.cua_token()?;
                let listener = wayrig_cua::bind(addr, token.is_some()).await?;
                Some((listener, token))
            }
            None => None,
        };
        Ok(Listeners { bus, cua })
    }

    /// Serve every face asked for over `live`'s session, as its tasks: they
    /// stop when it ends, each first answering what it accepted.
    pub async fn serve<H>(self, live: &Live<H>, faces: &FaceArgs) -> Result<(), String>
    where
        H: wayrig_host::Host + ?Sized,
    {
        let session = live.session();
        session.set_effect_wait(std::time::Duration::from_millis(faces.effect_wait));
        let mygo_listener = match faces.mygo_socket() {
            Some(path) => Some((mygo::bind(&path).await?, path)),
            None => None,
        };
        if let Some((listener, token)) = self.cua {
            say!("wayrig: cua.env.v1 listens at {}", listener.addr());
            let (session, stop) = (session.clone(), live.stopping());
            let origins = faces.cua_allow_origin.clone();
            live.spawn("the cua.env.v1 face", async move {
                if let Err(e) = wayrig_cua::serve(listener, session, token, origins, stop).await {
                    say!("wayrig: {e}");
                }
            });
        }
        if let Some((listener, path)) = mygo_listener {
            live.spawn(
                "the MyGo face",
                mygo::serve(listener, session.clone(), live.stopping()),
            );
            say!("wayrig: automation socket {}", path.display());
        }
        if let Some(listener) = self.bus {
            let addr = listener.addr;
            live.spawn(
                "the Bus face",
                wayrig_bus::serve(
                    listener,
                    session.clone(),
                    faces.bus_name.clone(),
                    |name, pid, app_id| {
                        say!("wayrig: bus name {name} for pid {pid} (app id {app_id:?})")
                    },
                    live.stopping(),
                ),
            );
            say!("wayrig: bus listens at ws://{addr}/ws");
        }
        if let Some(url) = faces.bus_connect.clone() {
            say!("wayrig: bus connects to {url}");
            live.spawn(
                "the Bus connection",
                wayrig_bus::connect(
                    url.clone(),
                    session.clone(),
                    faces.bus_name.clone(),
                    move |notice| bus_notice(&url, notice),
                    live.stopping(),
                ),
            );
        }
        Ok(())
    }
}
