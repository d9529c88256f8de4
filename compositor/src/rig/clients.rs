//! What the compositor knows of each Wayland client: the data on its connection,
//! its pid, its last input and its pings, ordered by one moment counter.

use std::collections::HashMap;

use smithay::reexports::wayland_server::backend::{ClientData, ClientId, DisconnectReason};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::{DisplayHandle, Resource};
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::compositor::CompositorClientState;
use smithay::wayland::shell::xdg::ShellClient;

/// Per-client data Smithay needs.
#[derive(Default)]
pub struct ClientState {
    pub compositor_state: CompositorClientState,
    /// Wayrig's own client (its input method), not an app under test.
    pub internal: bool,
}

impl ClientState {
    pub fn internal() -> Self {
        ClientState {
            internal: true,
            ..Default::default()
        }
    }
}

impl ClientData for ClientState {
    fn initialized(&self, _client_id: ClientId) {}
    fn disconnected(&self, _client_id: ClientId, _reason: DisconnectReason) {}
}

/// What the compositor knows of one Wayland client.
#[derive(Debug, Default)]
pub struct ClientRecord {
    pub pid: Option<u32>,
    /// Moment of the last input delivered to this client.
    pub last_input: u64,
    /// A ping in flight and the moment it was sent.
    pub ping_in_flight: Option<u64>,
    /// Moment at which the last answered ping had been sent.
    pub answered: u64,
}

/// Every client's record, and the moments their input and pings are ordered by.
#[derive(Debug, Default)]
pub struct Clients {
    records: HashMap<ClientId, ClientRecord>,
    /// Increases on every input and ping: orders "after the last input".
    moment: u64,
}

impl Clients {
    /// The moment now.
    pub fn moment(&self) -> u64 {
        self.moment
    }

    pub fn next_moment(&mut self) -> u64 {
        self.moment += 1;
        self.moment
    }

    /// The record of the client that owns `surface`, made on first use.
    pub fn record(&mut self, surface: &WlSurface) -> Option<&mut ClientRecord> {
        let client = surface.client()?;
        Some(self.records.entry(client.id()).or_default())
    }

    /// The record of the client that owns `surface`, if it has one.
    pub fn of_surface(&self, surface: &WlSurface) -> Option<&ClientRecord> {
        surface.client().and_then(|c| self.records.get(&c.id()))
    }

    /// Learn a client's pid from its socket credentials, else take `launched`,
    /// the pid of the newest app we launched.
    pub fn note_client(
        &mut self,
        display_handle: &DisplayHandle,
        surface: &WlSurface,
        launched: Option<u32>,
    ) {
        let Some(client) = surface.client() else {
            return;
        };
        let creds_pid = client
            .get_credentials(display_handle)
            .ok()
            .map(|c| c.pid as u32);
        let rec = self.records.entry(client.id()).or_default();
        if rec.pid.is_none() {
            rec.pid = creds_pid.or(launched);
        }
    }

    /// Send a ping to the client of `surface` through its xdg_wm_base (`shell`),
    /// unless one is in flight.
    pub fn ping(&mut self, surface: &WlSurface, shell: Option<ShellClient>) {
        let moment = self.next_moment();
        let Some(shell) = shell else {
            return;
        };
        let Some(rec) = self.record(surface) else {
            return;
        };
        if rec.ping_in_flight.is_some() {
            return;
        }
        if shell.send_ping(SERIAL_COUNTER.next_serial()).is_ok() {
            rec.ping_in_flight = Some(moment);
        }
    }

    /// A client answered our ping; returns the moment its last answered ping
    /// had been sent, or `None` for a client without a record.
    pub fn pong(&mut self, client: &ClientId) -> Option<u64> {
        let rec = self.records.get_mut(client)?;
        if let Some(sent) = rec.ping_in_flight.take() {
            rec.answered = rec.answered.max(sent);
        }
        Some(rec.answered)
    }
}
