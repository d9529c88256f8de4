//! Readiness for a service manager: the sd_notify datagram protocol, spoken to
//! the socket systemd names in NOTIFY_SOCKET, so `Type=notify` means "drivable".

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The service manager's notification socket, when Wayrig runs under one.
pub struct ServiceManager {
    socket: UnixDatagram,
    address: SocketAddr,
    ready: bool,
}

impl ServiceManager {
    /// From NOTIFY_SOCKET: a path, or an abstract name written `@name`.
    /// None when unset or unusable (a warning says which).
    pub fn from_env() -> Option<Self> {
        let name = std::env::var_os("NOTIFY_SOCKET").filter(|v| !v.is_empty())?;
        let name = name.to_string_lossy().into_owned();
        let address = match name.strip_prefix('@') {
            Some(abstract_name) => SocketAddr::from_abstract_name(abstract_name.as_bytes()),
            None => SocketAddr::from_pathname(&name),
        };
        let made = address.and_then(|address| Ok((UnixDatagram::unbound()?, address)));
        match made {
            Ok((socket, address)) => Some(ServiceManager {
                socket,
                address,
                ready: false,
            }),
            Err(e) => {
                say!("wayrig: cannot use NOTIFY_SOCKET={name}: {e}");
                None
            }
        }
    }

    /// Once: the faces listen and the first window is mapped.
    pub fn ready(&mut self, status: &str) {
        if !self.ready {
            self.ready = true;
            self.send(&format!(
                "READY=1\nSTATUS={status}\nMAINPID={}",
                std::process::id()
            ));
        }
    }

    /// Wayrig is ending what it started.
    pub fn stopping(&self) {
        self.send("STOPPING=1");
    }

    fn send(&self, message: &str) {
        if let Err(e) = self.socket.send_to_addr(message.as_bytes(), &self.address) {
            say!("wayrig: cannot notify the service manager: {e}");
        }
    }
}
