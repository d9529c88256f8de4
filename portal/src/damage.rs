//! One stream of screencopy damage per output, shared by everyone who watches
//! it: wlroots keeps one damage record per client, so two copies would split it.
//!
//! A stream runs while someone listens (a settle, the layout follower) and
//! stops within one `IDLE_CHECK` of the last one leaving.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;
use wayland_client::Proxy;
use wayrig_host::{HostResult, Rect};

use crate::capture;
use crate::wayland::{Output, Wayland};

/// How long one copy waits for a change before the stream looks for listeners.
const IDLE_CHECK: Duration = Duration::from_millis(200);

/// Damage events held for a listener that has not read them yet.
const BACKLOG: usize = 64;

/// Where one copy saw the output change, in the output's pixels.
pub type Changed = Arc<Vec<Rect>>;

/// The running streams, by the output's protocol id.
#[derive(Default)]
pub struct DamageHub {
    streams: Mutex<HashMap<u32, broadcast::Sender<Changed>>>,
}

impl DamageHub {
    /// Listen to every change `output` shows from now on; a closed channel
    /// means the compositor stopped copying it (attach's log says why).
    pub fn listen(
        self: &Arc<Self>,
        wayland: &Arc<Wayland>,
        output: &Output,
    ) -> HostResult<broadcast::Receiver<Changed>> {
        capture::damage_offered(wayland)?;
        let key = output.proxy.id().protocol_id();
        let mut streams = self.streams.lock().unwrap();
        if let Some(stream) = streams.get(&key) {
            return Ok(stream.subscribe());
        }
        let (stream, listener) = broadcast::channel(BACKLOG);
        streams.insert(key, stream.clone());
        tokio::spawn(pump(
            Arc::downgrade(self),
            wayland.clone(),
            output.clone(),
            key,
            stream,
        ));
        Ok(listener)
    }

    /// Forget the stream unless someone listens again; answers whether it ended.
    fn end_if_unheard(&self, key: u32, stream: &broadcast::Sender<Changed>) -> bool {
        let mut streams = self.streams.lock().unwrap();
        if stream.receiver_count() > 0 {
            return false;
        }
        streams.remove(&key);
        true
    }
}

/// Copy the output with damage, again and again, telling each change.
async fn pump(
    hub: std::sync::Weak<DamageHub>,
    wayland: Arc<Wayland>,
    output: Output,
    key: u32,
    stream: broadcast::Sender<Changed>,
) {
    loop {
        let Some(strong) = hub.upgrade() else { return };
        if strong.end_if_unheard(key, &stream) {
            return;
        }
        drop(strong);
        // Damage is the whole output's; one pixel is all the copy needs to
        // carry, which spares the compositor a whole frame per change.
        let pixel = Rect::new(output.x, output.y, 1, 1);
        match capture::copy(&wayland, &output, Some(pixel), true, IDLE_CHECK).await {
            Ok(Some(copied)) => {
                let _ = stream.send(Arc::new(copied.damage));
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
