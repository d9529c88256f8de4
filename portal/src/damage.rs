//! One stream of screencopy damage per output, shared by everyone who watches
//! it: wlroots keeps one damage record per client, so two copies would split it.
//!
//! A stream runs while someone listens (a settle, the layout follower), and
//! `LINGER` after, remembering its last `HISTORY` of changes for the next wait.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;
use wayland_client::Proxy;
use wayrig_host::{HostResult, Rect};

use crate::capture;
use crate::wayland::{Output, Wayland};

/// How long one copy waits for a change before the stream looks for listeners.
const IDLE_CHECK: Duration = Duration::from_millis(200);

/// How long a stream keeps running after its last listener left, so the next
/// wait (an agent's act, then idle) finds the output's recent pace.
const LINGER: Duration = Duration::from_secs(2);

/// How far back a stream remembers its changes.
const HISTORY: Duration = Duration::from_secs(1);

/// Damage events held for a listener that has not read them yet.
const BACKLOG: usize = 64;

/// Where one copy saw the output change, in the output's pixels.
pub type Changed = Arc<Vec<Rect>>;

/// The changes of the last `HISTORY`, oldest first, each with when it came.
pub type Recent = Vec<(Instant, Changed)>;

/// One output's stream and what it saw lately.
struct Stream {
    sender: broadcast::Sender<Changed>,
    recent: VecDeque<(Instant, Changed)>,
}

/// The running streams, by the output's protocol id.
#[derive(Default)]
pub struct DamageHub {
    streams: Mutex<HashMap<u32, Stream>>,
}

impl DamageHub {
    /// Listen to every change `output` shows from now on, and have the ones
    /// of the last `HISTORY` the stream saw; a closed channel means the
    /// compositor stopped copying it (attach's log says why).
    pub fn listen(
        self: &Arc<Self>,
        wayland: &Arc<Wayland>,
        output: &Output,
    ) -> HostResult<(broadcast::Receiver<Changed>, Recent)> {
        capture::damage_offered(wayland)?;
        let key = output.proxy.id().protocol_id();
        let mut streams = self.streams.lock().unwrap();
        if let Some(stream) = streams.get(&key) {
            let recent = stream.recent.iter().cloned().collect();
            return Ok((stream.sender.subscribe(), recent));
        }
        let (sender, listener) = broadcast::channel(BACKLOG);
        streams.insert(
            key,
            Stream {
                sender: sender.clone(),
                recent: VecDeque::new(),
            },
        );
        tokio::spawn(pump(
            Arc::downgrade(self),
            wayland.clone(),
            output.clone(),
            key,
            sender,
        ));
        Ok((listener, Vec::new()))
    }

    /// Forget the stream once no one has listened for `LINGER`; answers
    /// whether it ended.
    fn end_if_unheard(
        &self,
        key: u32,
        sender: &broadcast::Sender<Changed>,
        unheard_since: &mut Option<Instant>,
    ) -> bool {
        let mut streams = self.streams.lock().unwrap();
        if sender.receiver_count() > 0 {
            *unheard_since = None;
            return false;
        }
        if unheard_since.get_or_insert_with(Instant::now).elapsed() < LINGER {
            return false;
        }
        streams.remove(&key);
        true
    }

    fn remember(&self, key: u32, changed: &Changed) {
        if let Some(stream) = self.streams.lock().unwrap().get_mut(&key) {
            let now = Instant::now();
            stream.recent.push_back((now, changed.clone()));
            while stream
                .recent
                .front()
                .is_some_and(|(at, _)| now.duration_since(*at) > HISTORY)
            {
                stream.recent.pop_front();
            }
        }
    }
}

/// Copy the output with damage, again and again, telling each change.
async fn pump(
    hub: std::sync::Weak<DamageHub>,
    wayland: Arc<Wayland>,
    output: Output,
    key: u32,
    sender: broadcast::Sender<Changed>,
) {
    let mut unheard_since = None;
    loop {
        let Some(strong) = hub.upgrade() else { return };
        if strong.end_if_unheard(key, &sender, &mut unheard_since) {
            return;
        }
        drop(strong);
        // Damage is the whole output's; one pixel is all the copy needs to
        // carry, which spares the compositor a whole frame per change.
        let pixel = Rect::new(output.x, output.y, 1, 1);
        match capture::copy(&wayland, &output, Some(pixel), true, IDLE_CHECK).await {
            Ok(Some(copied)) => {
                let changed = Arc::new(copied.damage);
                if let Some(strong) = hub.upgrade() {
                    strong.remember(key, &changed);
                }
                let _ = sender.send(changed);
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!("portal: cannot follow the output's changes: {e}");
                if let Some(hub) = hub.upgrade() {
                    hub.streams.lock().unwrap().remove(&key);
                }
                return;
            }
        }
    }
}
