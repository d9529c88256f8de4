//! The desktop's clipboard through zwlr_data_control_manager_v1: its text read
//! through a pipe (`clipboard_pipe`), and Wayrig's own text offered until replaced.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use wayland_client::Proxy;
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_offer_v1::ZwlrDataControlOfferV1,
    zwlr_data_control_source_v1::ZwlrDataControlSourceV1,
};
use wayrig_host::clipboard_pipe::{pipe, read_text, send_text, OFFERED_TYPES, READ_PREFERENCE};
use wayrig_host::{ClipboardText, HostError, HostResult};

use crate::wayland::Wayland;

/// How often a read starts again when the clipboard changed under it.
const READ_TRIES: usize = 3;

/// The MIME types an offer announced, as they come.
#[derive(Default)]
pub struct OfferTypes(pub Mutex<Vec<String>>);

/// The text a data source of Wayrig's serves, and whether it was replaced.
pub struct SourceText {
    text: Arc<str>,
    cancelled: AtomicBool,
}

impl SourceText {
    /// Write the text to an app that asked for it, on a thread of its own: an
    /// app that reads slowly, or never, holds up no one.
    pub fn send(&self, fd: OwnedFd) {
        send_text(self.text.clone(), fd);
    }

    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// The clipboard as the compositor last announced it.
#[derive(Default)]
pub struct Selection {
    /// Moves on at every new selection (or none), Wayrig's own included.
    generation: u64,
    offer: Option<ZwlrDataControlOfferV1>,
    /// Wayrig's source, and the generation at which it became the selection.
    own: Option<(ZwlrDataControlSourceV1, u64)>,
    /// The compositor withdrew the data device.
    finished: bool,
}

impl Selection {
    /// A new selection (`None`: the clipboard was cleared).
    pub fn replaced(&mut self, offer: Option<ZwlrDataControlOfferV1>) {
        if let Some(old) = std::mem::replace(&mut self.offer, offer) {
            old.destroy();
        }
        self.generation += 1;
    }

    pub fn finished(&mut self) {
        self.finished = true;
        self.own = None;
        if let Some(old) = self.offer.take() {
            old.destroy();
        }
    }

    /// Wayrig's `source` was replaced by another selection.
    pub fn lost(&mut self, source: &ZwlrDataControlSourceV1) {
        if self.own.as_ref().is_some_and(|(own, _)| own == source) {
            self.own = None;
        }
    }

    /// The text at once if the selection is Wayrig's own, else the offer to
    /// read and the type to read it in (none: no text on the clipboard).
    fn now(&self) -> HostResult<Now> {
        if self.finished {
            return Err(HostError::Failed(
                "the compositor withdrew its clipboard from Wayrig (the data control \
                 device finished); attach again"
                    .into(),
            ));
        }
        if let Some((source, generation)) = &self.own {
            if let Some(own) = source.data::<SourceText>() {
                if *generation == self.generation && !own.cancelled.load(Ordering::Acquire) {
                    return Ok(Now::Ready(Some(own.text.to_string())));
                }
            }
        }
        let Some(offer) = &self.offer else {
            return Ok(Now::Ready(None));
        };
        let types = offer
            .data::<OfferTypes>()
            .map(|t| t.0.lock().unwrap().clone())
            .unwrap_or_default();
        Ok(
            match READ_PREFERENCE
                .into_iter()
                .find(|t| types.iter().any(|m| m == t))
            {
                Some(mime_type) => Now::Offer(offer.clone(), mime_type),
                None => Now::Ready(None),
            },
        )
    }
}

enum Now {
    Ready(Option<String>),
    Offer(ZwlrDataControlOfferV1, &'static str),
}

/// The clipboard's text, whoever owns it, and its generation: the selection
/// as the compositor has it when asked, not as last heard.
pub async fn read(wayland: &Wayland) -> HostResult<ClipboardText> {
    wayland.sync().await.map_err(HostError::Failed)?;
    for _ in 0..READ_TRIES {
        let (now, generation) = {
            let selection = wayland.shared.selection.lock().unwrap();
            (selection.now()?, selection.generation)
        };
        let (offer, mime_type) = match now {
            Now::Ready(text) => return Ok(ClipboardText { text, generation }),
            Now::Offer(offer, mime_type) => (offer, mime_type),
        };
        let (read_end, write_end) = pipe()?;
        offer.receive(mime_type.into(), write_end.as_fd());
        wayland.flush().map_err(HostError::Failed)?;
        // The app holds its own copy of the write end; closing it ends the read.
        drop(write_end);
        let read = read_text(read_end, mime_type, "the app that owns the clipboard").await;
        // A new selection while reading: the offer read may be gone; read the new one.
        if wayland.shared.selection.lock().unwrap().generation != generation {
            continue;
        }
        return read.map(|text| ClipboardText {
            text: Some(text),
            generation,
        });
    }
    Err(HostError::Failed(format!(
        "the clipboard changed {READ_TRIES} times while Wayrig read it; ask again"
    )))
}

/// Make `text` the clipboard's content, offered by Wayrig until another
/// selection replaces it; answers the clipboard's new generation.
pub async fn set(wayland: &Wayland, text: String) -> HostResult<u64> {
    let (Some(manager), Some(device)) = (&wayland.globals.data_control, &wayland.globals.clipboard)
    else {
        return Err(HostError::Unsupported(
            "clipboard: the compositor offers no zwlr_data_control_manager_v1 (or no seat)".into(),
        ));
    };
    let source = manager.create_data_source(
        &wayland.queue,
        SourceText {
            text: text.into(),
            cancelled: AtomicBool::new(false),
        },
    );
    for mime_type in OFFERED_TYPES {
        source.offer(mime_type.into());
    }
    device.set_selection(Some(&source));
    // The compositor announces the new selection to every data control
    // device as it takes it: once the round trip is back, it has been heard.
    wayland.sync().await.map_err(HostError::Failed)?;
    let mut selection = wayland.shared.selection.lock().unwrap();
    let taken = source
        .data::<SourceText>()
        .is_some_and(|s| !s.cancelled.load(Ordering::Acquire));
    if taken {
        selection.own = Some((source, selection.generation));
    }
    Ok(selection.generation)
}
