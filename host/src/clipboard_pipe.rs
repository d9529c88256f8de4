//! Clipboard text through pipes, as every host moves it: the types offered and
//! read, an app's text read bounded in size and time, Wayrig's written off-thread.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{HostError, HostResult, CLIPBOARD_TEXT_LIMIT};

/// The types Wayrig offers its own text in: UTF-8 for every one.
pub const OFFERED_TYPES: [&str; 5] = [
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "TEXT",
    "STRING",
    "text/plain",
];

/// The text types read from an app, the ones that say UTF-8 first.
pub const READ_PREFERENCE: [&str; 5] = [
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

/// A pipe for an app to write its clipboard text to: (read end, write end).
pub fn pipe() -> HostResult<(OwnedFd, OwnedFd)> {
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

/// The text `owner` (a phrase naming the app) writes to the pipe in
/// `mime_type`, read on a blocking thread, never on an event loop: at most
/// `CLIPBOARD_TEXT_LIMIT` bytes, within `READ_LIMIT`.
pub async fn read_text(read_end: OwnedFd, mime_type: &str, owner: &str) -> HostResult<String> {
    let deadline = Instant::now() + READ_LIMIT;
    let read = tokio::task::spawn_blocking(move || {
        read_until_closed(read_end, CLIPBOARD_TEXT_LIMIT, deadline)
    })
    .await
    .map_err(|e| HostError::Failed(format!("the clipboard reader panicked: {e}")))?;
    match read {
        Ok(bytes) => Ok(decode(bytes, mime_type)),
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

/// Write Wayrig's text to an app that asked for it, on a thread of its own:
/// an app that reads slowly, or never, holds up no one.
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
    set_nonblocking(fd.as_fd()).map_err(Unread::Failed)?;
    let mut pipe = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        if !ready_by(pipe.as_fd(), libc::POLLIN, deadline).map_err(Unread::Failed)? {
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
    fn a_pipe_is_read_until_its_writer_closes_it() {
        let (read_end, write_end) = pipe().unwrap();
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
        let (read_end, write_end) = pipe().unwrap();
        std::fs::File::from(write_end).write_all(b"12345").unwrap();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TooLong)
        ));
        // Exactly the limit is read whole.
        let (read_end, write_end) = pipe().unwrap();
        std::fs::File::from(write_end).write_all(b"1234").unwrap();
        assert_eq!(read_until_closed(read_end, 4, soon()).unwrap(), b"1234");
        // A writer that never closes its end is given up on.
        let (read_end, _kept_open) = pipe().unwrap();
        assert!(matches!(
            read_until_closed(read_end, 4, soon()),
            Err(Unread::TimedOut)
        ));
    }

    #[test]
    fn a_reader_that_never_reads_is_given_up_on_and_one_that_left_is_an_error() {
        let big = vec![b'x'; 1 << 20];
        let (_never_read, write_end) = pipe().unwrap();
        let err = write_all_by(write_end, &big, soon()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        let (read_end, write_end) = pipe().unwrap();
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
