//! Where the cua.env.v1 face listens: `HOST:PORT` (3211 when only a host is
//! given) or `unix:PATH`, and the rule that only loopback or a private Unix
//! socket may go without a token.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use tokio::net::{TcpListener, UnixListener};

/// cua.env.v1's port when an address names only a host.
pub const DEFAULT_PORT: u16 = 3211;

/// A parsed `--cua-listen` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl std::str::FromStr for ListenAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("unix: needs a path, as in unix:/run/user/1000/wayrig-cua".into());
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let with_port = |host: &str| format!("{host}:{DEFAULT_PORT}");
        // A bare host (name, IPv4, or bracketed IPv6) takes the default port.
        let text = if s.parse::<IpAddr>().is_ok() {
            match s.contains(':') {
                true => format!("[{s}]:{DEFAULT_PORT}"),
                false => with_port(s),
            }
        } else if s.starts_with('[') && s.ends_with(']') || !s.contains(':') {
            with_port(s)
        } else {
            s.to_string()
        };
        let addr = text
            .to_socket_addrs()
            .map_err(|e| format!("{s:?} is not HOST:PORT, HOST or unix:PATH: {e}"))?
            .next()
            .ok_or_else(|| format!("{s:?} names no address"))?;
        Ok(ListenAddr::Tcp(addr))
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Tcp(a) => write!(f, "{a}"),
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

impl ListenAddr {
    /// Only this machine can reach it without a token: loopback, or a
    /// socket file only its user can open.
    pub fn is_private(&self) -> bool {
        match self {
            ListenAddr::Tcp(a) => a.ip().is_loopback(),
            ListenAddr::Unix(_) => true,
        }
    }
}

/// A bound listener, not yet serving; a Unix socket's file goes with it.
pub struct CuaListener {
    bound: Option<Bound>,
    socket_file: Option<PathBuf>,
}

pub(crate) enum Bound {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Drop for CuaListener {
    fn drop(&mut self) {
        if let Some(path) = &self.socket_file {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl CuaListener {
    /// Where it listens, as a client would dial it.
    pub fn addr(&self) -> String {
        match (&self.bound, &self.socket_file) {
            (_, Some(path)) => format!("unix:{}", path.display()),
            (Some(Bound::Tcp(l)), None) => l
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| a.to_string()),
            _ => "(serving)".into(),
        }
    }

    /// The socket to serve on; the listener keeps the file until dropped.
    pub(crate) fn take(&mut self) -> Bound {
        self.bound.take().expect("a listener serves once")
    }
}

/// Bind `addr`; anything but loopback or a Unix socket needs `has_token`.
pub async fn bind(addr: &ListenAddr, has_token: bool) -> Result<CuaListener, String> {
    if !addr.is_private() && !has_token {
        return Err(format!(
            "--cua-listen {addr} is reachable from other machines; give a token with \
             --cua-token-file PATH or CUA_TOKEN, or listen on 127.0.0.1 or unix:PATH"
        ));
    }
    match addr {
        ListenAddr::Tcp(a) => TcpListener::bind(a)
            .await
            .map(|l| CuaListener {
                bound: Some(Bound::Tcp(l)),
                socket_file: None,
            })
            .map_err(|e| format!("cannot listen on {a}: {e}")),
        ListenAddr::Unix(path) => {
            wayrig_services::sockets::bind_private(path)
                .await
                .map(|l| CuaListener {
                    bound: Some(Bound::Unix(l)),
                    socket_file: Some(path.clone()),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> ListenAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_bare_host_takes_port_3211_and_unix_takes_a_path() {
        assert_eq!(
            parse("127.0.0.1"),
            ListenAddr::Tcp("127.0.0.1:3211".parse().unwrap())
        );
        assert_eq!(parse("::1"), ListenAddr::Tcp("[::1]:3211".parse().unwrap()));
        assert_eq!(
            parse("[::1]"),
            ListenAddr::Tcp("[::1]:3211".parse().unwrap())
        );
        assert_eq!(
            parse("127.0.0.1:0"),
            ListenAddr::Tcp("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(parse("unix:/tmp/x"), ListenAddr::Unix("/tmp/x".into()));
        assert!("unix:".parse::<ListenAddr>().is_err());
        assert!("127.0.0.1:notaport".parse::<ListenAddr>().is_err());
    }

    #[tokio::test]
    async fn only_loopback_and_unix_go_without_a_token() {
        assert!(parse("127.0.0.1:0").is_private());
        assert!(parse("unix:/tmp/x").is_private());
        let open = parse("0.0.0.0:0");
        assert!(!open.is_private());
        let refused = bind(&open, false).await.err().unwrap();
        assert!(refused.contains("--cua-token-file"), "{refused}");
        assert!(bind(&open, true).await.is_ok());
    }
}
