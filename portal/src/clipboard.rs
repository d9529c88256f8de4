//! The desktop's clipboard through zwlr_data_control_manager_v1: its text read
//! through a pipe off the event thread, and Wayrig's own text offered until replaced.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wayland_client::Proxy;
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_offer_v1::ZwlrDataControlOfferV1,
    zwlr_data_control_source_v1::ZwlrDataControlSourceV1,
};
use wayrig_host::{ClipboardText, HostError, HostResult, CLIPBOARD_TEXT_LIMIT};

use crate::wayland::Wayland;

/// The types Wayrig offers its text in: UTF-8 for every one, as `run` offers it.
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

/// How long an app may take to read Wayrig's text after asking for it.
const WRITE_LIMIT: Duration = Duration::from_secs(10);

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
        let text = self.text.clone();
        let written = std::thread::Builder::new()
            .name("wayrig-portal-clipboard".into())
            .spawn(move || {
                if let Err(e) = write_all_by(fd, text.as_bytes(), Instant::now() + WRITE_LIMIT) {
                    tracing::debug!(%e, "an app did not take the clipboard's text");
                }
            });
        if let Err(e) = written {
            tracing::warn!(%e, "cannot start a thread to write the clipboard");
        }
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
        let deadline = Instant::now() + READ_LIMIT;
        let read = tokio::task::spawn_blocking(move || {
            read_until_closed(read_end, CLIPBOARD_TEXT_LIMIT, deadline)
        })
        .await
        .map_err(|e| HostError::Failed(format!("the clipboard reader panicked: {e}")))?;
        // A new selection while reading: the offer read may be gone; read the new one.
        if wayland.shared.selection.lock().unwrap().generation != generation {
            continue;
        }
        let owner = "the app that owns the clipboard";
        return match read {
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
        };
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

fn pipe() -> HostResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two fds, which are owned at once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(HostError::Failed(format!(
            "cannot make a pipe to read the clipboard through: {}",
            io::Error::last_os_error()
        )));
    }
    // SAFETY: both fds were just made by pipe2 and are ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on an fd this process owns, reading and setting its flags.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
    set_nonblocking(fd.as_fd()).map_err(Unread::Failed)?;
    let mut pipe = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        if !ready_by(pipe.as_fd(), libc::POLLIN, deadline).map_err(Unread::Failed)? {
            return Err(Unread::TimedOut);
        }
        let room = (limit + 1 - bytes.len()).min(chunk.len());
        match pipe.read(&mut chunk[..room]) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > limit {
                    return Err(Unread::TooLong);
                }
            }
            Err(e) if retry(&e) => {}
            Err(e) => return Err(Unread::Failed(e)),
        }
    }
}

/// Write all of `bytes` to the pipe by `deadline`, then close it.
fn write_all_by(fd: OwnedFd, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    set_nonblocking(fd.as_fd())?;
    let mut pipe = std::fs::File::from(fd);
    while !bytes.is_empty() {
        if !ready_by(pipe.as_fd(), libc::POLLOUT, deadline)? {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{} bytes left unread after {WRITE_LIMIT:?}", bytes.len()),
            ));
        }
        match pipe.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if retry(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// Wait until the fd is ready for `events` (or hung up: the read or write
/// then says so); answers false once `deadline` passed first.
fn ready_by(fd: BorrowedFd<'_>, events: libc::c_short, deadline: Instant) -> io::Result<bool> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: poll on one pollfd that lives across the call.
        match unsafe { libc::poll(&mut poll, 1, ms) } {
            0 => {}
            n if n > 0 => return Ok(true),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
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

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(200)
    }

    #[test]
    fn a_pipe_is_read_until_its_writer_closes_it_and_a_silent_one_is_given_up_on() {
        let (read_end, write_end) = pipe().unwrap();
        let text = "héllo 世界".repeat(20_000); // more than a pipe holds at once
        let writer = {
            let text = text.clone();
            std::thread::spawn(move || write_all_by(write_end, text.as_bytes(), soon()))
        };
        let bytes = read_until_closed(read_end, CLIPBOARD_TEXT_LIMIT, soon()).unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(decode(bytes, "text/plain"), text);

        let (read_end, write_end) = pipe().unwrap();
        std::fs::File::from(write_end).write_all(b"12345").unwrap();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TooLong)
        ));
        let (read_end, _kept_open) = pipe().unwrap();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TimedOut)
        ));
        let (_never_read, write_end) = pipe().unwrap();
        let err = write_all_by(write_end, &vec![b'x'; 1 << 20], soon()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }
}
