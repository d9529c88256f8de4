//! Who may open the Bus's WebSocket: a browser page only from an origin
//! allowed, a `Host` that is the address listened on, and the token if one is set.
//!
//! A page in a local browser can open `ws://127.0.0.1`; without these checks
//! it could click, type and read field values in the hosted apps.

use std::net::{IpAddr, SocketAddr};

use wayrig_services::sockets::same_token;

/// The rules a connection's handshake must pass.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Browser origins allowed to connect (`Origin` header), as written:
    /// `http://localhost:8080`. A client that sends no `Origin` is no page.
    pub origins: Vec<String>,
    /// The token each connection must carry, as `Authorization: Bearer
    /// TOKEN` or, for browsers that cannot set headers, `?token=TOKEN`.
    pub token: Option<String>,
}

/// Why a handshake was refused: an HTTP status and what to do about it.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

fn refused(status: u16, message: String) -> Refused {
    Refused { status, message }
}

impl Access {
    /// Check a handshake's headers (`get` looks one up by lowercase name)
    /// and query against the rules, for a listener at `listening`.
    pub fn check(
        &self,
        listening: SocketAddr,
        query: Option<&str>,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<(), Refused> {
        if let Some(origin) = get("origin") {
            let allowed = self
                .origins
                .iter()
                .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(&origin));
            if !allowed {
                return Err(refused(
                    403,
                    format!(
                        "browser origin {origin:?} may not drive this Bus; start wayrig with \
                         --bus-allow-origin {origin} to allow it"
                    ),
                ));
            }
        }
        match &self.token {
            Some(token) => {
                let bearer = get("authorization")
                    .and_then(|a| a.strip_prefix("Bearer ").map(str::to_string));
                let queried = query.and_then(|q| {
                    q.split('&')
                        .find_map(|pair| pair.strip_prefix("token=").map(str::to_string))
                });
                let given = bearer.or(queried);
                if !given.is_some_and(|g| same_token(g.as_bytes(), token.as_bytes())) {
                    return Err(refused(
                        401,
                        "this Bus needs its token: send `Authorization: Bearer TOKEN` or \
                         connect to /ws?token=TOKEN"
                            .into(),
                    ));
                }
            }
            // Without a token only loopback clients connect: a page served
            // from a name that resolves to 127.0.0.1 (DNS rebinding) names
            // that name as its Host.
            None => {
                let host = get("host").unwrap_or_default();
                if !names_listener(&host, listening) {
                    return Err(refused(
                        403,
                        format!(
                            "Host {host:?} is not the address this Bus listens on ({listening}); \
                             connect to ws://{listening}/ws"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `host` is the listener's port on a loopback address or `localhost`.
fn names_listener(host: &str, listening: SocketAddr) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() => (name, port),
        _ => return false,
    };
    if port.parse::<u16>().ok() != Some(listening.port()) {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    const AT: &str = "127.0.0.1:4200";

    #[test]
    fn a_loopback_client_without_an_origin_connects() {
        let access = Access::default();
        let at = AT.parse().unwrap();
        assert!(access.check(at, None, headers(&[("host", AT)])).is_ok());
        assert!(access
            .check(at, None, headers(&[("host", "localhost:4200")]))
            .is_ok());
    }

    #[test]
    fn a_page_from_an_origin_not_allowed_is_refused() {
        let at = AT.parse().unwrap();
        let evil = [("host", AT), ("origin", "http://evil.example")];
        let refused = Access::default()
            .check(at, None, headers(&evil))
            .unwrap_err();
        assert_eq!(refused.status, 403);
        assert!(
            refused.message.contains("--bus-allow-origin"),
            "{refused:?}"
        );
        let allowed = Access {
            origins: vec!["http://evil.example/".into()],
            token: None,
        };
        assert!(allowed.check(at, None, headers(&evil)).is_ok());
    }

    #[test]
    fn a_host_that_is_not_the_listener_is_refused_without_a_token() {
        let at = AT.parse().unwrap();
        for host in ["evil.example:4200", "127.0.0.1:80", "", "127.0.0.1"] {
            let refused = Access::default()
                .check(at, None, headers(&[("host", host)]))
                .unwrap_err();
            assert_eq!(refused.status, 403, "{host}");
        }
        let v6: SocketAddr = "[::1]:4200".parse().unwrap();
        assert!(Access::default()
            .check(v6, None, headers(&[("host", "[::1]:4200")]))
            .is_ok());
    }

    #[test]
    fn with_a_token_set_it_is_needed_in_a_header_or_the_query() {
        let at = "0.0.0.0:4200".parse().unwrap();
        let access = Access {
            origins: vec![],
            token: Some("s3cret".into()),
        };
        let host = ("host", "bus.example:4200");
        assert_eq!(
            access.check(at, None, headers(&[host])).unwrap_err().status,
            401
        );
        assert!(access
            .check(
                at,
                None,
                headers(&[host, ("authorization", "Bearer s3cret")])
            )
            .is_ok());
        assert!(access
            .check(at, Some("x=1&token=s3cret"), headers(&[host]))
            .is_ok());
        assert!(access
            .check(at, Some("token=wrong"), headers(&[host]))
            .is_err());
    }
}
