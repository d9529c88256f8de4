//! The clipboard as the compositor offers it: its own text offered to apps, and
//! an app's text asked for through a pipe that `clipboard_pipe` reads.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use smithay::reexports::wayland_server::Resource;
use smithay::wayland::selection::data_device::{
    request_data_device_client_selection, set_data_device_selection,
};
use wayrig_host::clipboard_pipe::{pipe, read_text, OFFERED_TYPES, READ_PREFERENCE};
use wayrig_host::{ClipboardText, HostError, HostResult};

use crate::rig::clipboard::ClipboardOwner;
use crate::state::State;

impl State {
    /// Become the clipboard's owner, offering `text`; answers the new generation.
    pub fn set_clipboard(&mut self, text: String) -> u64 {
        let text: Arc<str> = text.into();
        set_data_device_selection(
            &self.rig.display_handle,
            &self.seat,
            OFFERED_TYPES.map(String::from).to_vec(),
            text.clone(),
        );
        self.rig
            .clipboard
            .owned_by(Some(ClipboardOwner::Compositor(text)))
    }

    /// An app (the one with keyboard focus: only it may) set the clipboard,
    /// or cleared it.
    pub fn app_set_clipboard(&mut self, mime_types: Option<Vec<String>>) {
        let owner = mime_types.map(|mime_types| {
            let focus = self.keyboard_focus();
            ClipboardOwner::App {
                client: focus.as_ref().and_then(Resource::client).map(|c| c.id()),
                pid: focus
                    .as_ref()
                    .and_then(|s| self.rig.clients.of_surface(s))
                    .and_then(|r| r.pid),
                mime_types,
            }
        });
        self.rig.clipboard.owned_by(owner);
    }

    /// The clipboard now: answered at once when it is empty or the
    /// compositor's own, else a pipe the owning app was asked to write to.
    pub fn read_clipboard(&mut self) -> HostResult<ClipboardRead> {
        self.forget_departed_owner();
        let generation = self.rig.clipboard.generation();
        let ready =
            |text: Option<String>| Ok(ClipboardRead::Ready(ClipboardText { text, generation }));
        let (mime_type, pid) = match self.rig.clipboard.owner() {
            None => return ready(None),
            Some(ClipboardOwner::Compositor(text)) => return ready(Some(text.to_string())),
            Some(ClipboardOwner::App {
                mime_types, pid, ..
            }) => match READ_PREFERENCE
                .into_iter()
                .find(|t| mime_types.iter().any(|m| m == t))
            {
                Some(mime_type) => (mime_type, *pid),
                None => return ready(None),
            },
        };
        let owner = match pid {
            Some(pid) => format!("the app that owns the clipboard (pid {pid})"),
            None => "the app that owns the clipboard".into(),
        };
        let (read_end, write_end) = pipe()?;
        request_data_device_client_selection(&self.seat, mime_type.into(), write_end)
            .map_err(|e| HostError::Failed(format!("cannot ask {owner} for its text: {e}")))?;
        Ok(ClipboardRead::Pipe {
            read_end,
            mime_type,
            owner,
            generation,
        })
    }

    /// An app that ended, or was disconnected, took its clipboard content
    /// with it.
    fn forget_departed_owner(&mut self) {
        if let Some(ClipboardOwner::App {
            client: Some(owner),
            ..
        }) = self.rig.clipboard.owner()
        {
            // Clients killed and not yet cleaned up are left out here.
            let mut connected = false;
            let handle = self.rig.display_handle.backend_handle();
            handle.with_all_clients(|client| connected |= client == *owner);
            if !connected {
                self.rig.clipboard.owned_by(None);
            }
        }
    }
}

/// The clipboard as the event loop answers it.
pub enum ClipboardRead {
    Ready(ClipboardText),
    /// The owning app (described in `owner`) was asked to write its text to
    /// this pipe.
    Pipe {
        read_end: OwnedFd,
        mime_type: &'static str,
        owner: String,
        generation: u64,
    },
}

impl ClipboardRead {
    /// The text, read from the pipe on a blocking thread (bounded in time and
    /// size), never on the event loop.
    pub async fn text(self) -> HostResult<ClipboardText> {
        let (read_end, mime_type, owner, generation) = match self {
            ClipboardRead::Ready(text) => return Ok(text),
            ClipboardRead::Pipe {
                read_end,
                mime_type,
                owner,
                generation,
            } => (read_end, mime_type, owner, generation),
        };
        let text = read_text(read_end, mime_type, &owner).await?;
        Ok(ClipboardText {
            text: Some(text),
            generation,
        })
    }
}
