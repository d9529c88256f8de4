//! The clipboard as a host offers it: the compositor's own text offered to apps,
//! and an app's text read through a pipe off the event loop, bounded.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use smithay::reexports::rustix::event::{poll, PollFd, PollFlags, Timespec};
use smithay::reexports::rustix::io::{ioctl_fionbio, Errno};
use smithay::reexports::rustix::pipe::{pipe_with, PipeFlags};
use smithay::reexports::wayland_server::Resource;
use smithay::wayland::selection::data_device::{
    request_data_device_client_selection, set_data_device_selection,
};
use wayrig_host::{ClipboardText, HostError, HostResult, CLIPBOARD_TEXT_LIMIT};

use crate::rig::clipboard::ClipboardOwner;
use crate::state::State;

/// The types the compositor offers its own text in: UTF-8 for every one.
const OFFERED_TYPES: [&str; 5] = [
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "TEXT",
    "STRING",
    "text/plain",
];

/// The text types read from an app, the ones that say UTF-8 first.
const READ_PREFERENCE: [&str; 5] = [
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "TEXT",
    "STRING",
];

/// How long an app may take to send its clipboard text.
const READ_LIMIT: Duration = Duration::from_secs(2);

/// How long an app may take to read the compositor's text after asking for it.
const WRITE_LIMIT: Duration = Duration::from_secs(10);

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
        let (read_end, write_end) = pipe_with(PipeFlags::CLOEXEC).map_err(|e| {
            HostError::Failed(format!(
                "cannot make a pipe to read the clipboard through: {e}"
            ))
        })?;
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
        let deadline = Instant::now() + READ_LIMIT;
        let read = tokio::task::spawn_blocking(move || {
            read_until_closed(read_end, CLIPBOARD_TEXT_LIMIT, deadline)
        })
        .await
        .map_err(|e| HostError::Failed(format!("the clipboard reader panicked: {e}")))?;
        match read {
            Ok(bytes) => Ok(ClipboardText {
                text: Some(decode(bytes, mime_type)),
                generation,
            }),
            Err(Unread::TooLong) => Err(HostError::Failed(format!(
                "{owner} holds more than {CLIPBOARD_TEXT_LIMIT} bytes of text, more than \
                 Wayrig reads; copy less text"
            ))),
            Err(Unread::TimedOut) => Err(HostError::Timeout(
                READ_LIMIT,
                format!(
                    "{owner} did not send all of its text within {} s; let it settle and ask again",
                    READ_LIMIT.as_secs()
                ),
            )),
            Err(Unread::Failed(e)) => Err(HostError::Failed(format!(
                "reading the text of {owner} failed: {e}"
            ))),
        }
    }
}

/// Write the compositor's text to an app that asked for it, on a thread of its
/// own: an app that reads slowly, or never, holds up no one.
pub fn send_text(text: Arc<str>, fd: OwnedFd) {
    let written = std::thread::Builder::new()
        .name("wayrig-clipboard-write".into())
        .spawn(move || {
            if let Err(e) = write_all_by(fd, text.as_bytes(), Instant::now() + WRITE_LIMIT) {
                tracing::debug!(%e, "an app did not take the clipboard's text");
            }
        });
    if let Err(e) = written {
        tracing::warn!(%e, "cannot start a thread to write the clipboard");
    }
}

/// Why a pipe's content was not read whole.
#[derive(Debug)]
enum Unread {
    /// More than the limit came.
    TooLong,
    /// The writer did not close its end by the deadline.
    TimedOut,
    Failed(io::Error),
}

/// Everything written to the pipe until its writer closes it: at most `limit`
/// bytes (the read stops at the byte after them), by `deadline`.
fn read_until_closed(fd: OwnedFd, limit: usize, deadline: Instant) -> Result<Vec<u8>, Unread> {
    ioctl_fionbio(&fd, true).map_err(|e| Unread::Failed(e.into()))?;
    let mut pipe = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        if !ready_by(pipe.as_fd(), PollFlags::IN, deadline).map_err(Unread::Failed)? {
            return Err(Unread::TimedOut);
        }
        // One byte past the limit is enough to know it was passed.
        let room = (limit + 1 - bytes.len()).min(chunk.len());
        match pipe.read(&mut chunk[..room]) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > limit {
                    return Err(Unread::TooLong);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(Unread::Failed(e)),
        }
    }
}

/// Write all of `bytes` to the pipe by `deadline`, then close it.
fn write_all_by(fd: OwnedFd, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    ioctl_fionbio(&fd, true)?;
    let mut pipe = std::fs::File::from(fd);
    while !bytes.is_empty() {
        if !ready_by(pipe.as_fd(), PollFlags::OUT, deadline)? {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{} bytes left unread after {WRITE_LIMIT:?}", bytes.len()),
            ));
        }
        match pipe.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Wait until the fd is ready for `events` (or hung up: the read or write
/// then says so); answers false once `deadline` passed first.
fn ready_by(fd: BorrowedFd<'_>, events: PollFlags, deadline: Instant) -> io::Result<bool> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let timeout = Timespec::try_from(left).ok();
        let mut fds = [PollFd::from_borrowed_fd(fd, events)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return Ok(true),
            Err(e) => return Err(e.into()),
        }
    }
}

/// The text in `bytes`: UTF-8 as the types read say, except that STRING that
/// is not UTF-8 is Latin-1 (what the X11 type means); bad bytes become U+FFFD.
fn decode(bytes: Vec<u8>, mime_type: &str) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if mime_type == "STRING" => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> (OwnedFd, OwnedFd) {
        pipe_with(PipeFlags::CLOEXEC).unwrap()
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(200)
    }

    #[test]
    fn a_pipe_is_read_until_its_writer_closes_it() {
        let (read_end, write_end) = pipe();
        let text = "héllo 世界".repeat(20_000); // more than a pipe holds at once
        let writer = {
            let text = text.clone();
            std::thread::spawn(move || write_all_by(write_end, text.as_bytes(), soon()))
        };
        let bytes = read_until_closed(read_end, CLIPBOARD_TEXT_LIMIT, soon()).unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(decode(bytes, "UTF8_STRING"), text);
    }

    #[test]
    fn a_read_stops_past_the_limit_and_at_the_deadline() {
        let (read_end, write_end) = pipe();
        std::fs::File::from(write_end).write_all(b"12345").unwrap();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TooLong)
        ));
        // Exactly the limit is read whole.
        let (read_end, write_end) = pipe();
        std::fs::File::from(write_end).write_all(b"1234").unwrap();
        assert_eq!(read_until_closed(read_end, 4, soon()).unwrap(), b"1234");
        // A writer that never closes its end is given up on.
        let (read_end, _kept_open) = pipe();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TimedOut)
        ));
    }

    #[test]
    fn a_reader_that_never_reads_is_given_up_on_and_one_that_left_is_an_error() {
        let big = vec![b'x'; 1 << 20];
        let (_never_read, write_end) = pipe();
        let err = write_all_by(write_end, &big, soon()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        let (read_end, write_end) = pipe();
        drop(read_end);
        let err = write_all_by(write_end, b"text", soon()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn text_types_decode_as_utf8_and_string_falls_back_to_latin1() {
        assert_eq!(decode("héllo".into(), "text/plain"), "héllo");
        assert_eq!(decode(vec![b'h', 0xe9], "STRING"), "hé");
        assert_eq!(decode(vec![b'h', 0xe9], "UTF8_STRING"), "h\u{fffd}");
    }
}
