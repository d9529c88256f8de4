//! Who may reach a control face: Unix sockets private to the user from their
//! first moment (0600, in a fresh 0700 directory), and tokens compared alike;
//! and when a client on one has gone.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::Path;

use tokio::io::Interest;
use tokio::net::{UnixListener, UnixStream};

/// How long a face waits after an accept failed before it accepts again:
/// such a failure passes (no file descriptor left until a client goes, a
/// connection reset before it was taken), and a face that stopped at it
/// would serve no client again.
pub const ACCEPT_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// Bind a control socket at `path`: a socket left by an ended process is
/// replaced; a live one, or a file that is no socket, is not.
pub async fn bind_private(path: &Path) -> Result<UnixListener, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(format!(
                "{} exists and is not a socket; not replacing it",
                path.display()
            ));
        }
        Ok(_) => {
            if UnixStream::connect(path).await.is_ok() {
                return Err(format!("another process listens on {}", path.display()));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot replace the stale socket {}: {e}", path.display()))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot use {}: {e}", path.display())),
    }
    bind_fresh(path)
}

/// Bind a socket that is the user's alone from its first moment: made in a
/// fresh 0700 directory beside `path`, made 0600 there, then renamed into place.
fn bind_fresh(path: &Path) -> Result<UnixListener, String> {
    let cannot = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
    let dir = path.parent().unwrap_or(Path::new("."));
    let staging = dir.join(format!(
        ".wayrig-bind-{}-{:x}",
        std::process::id(),
        rand_tag()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&staging)
        .map_err(|e| cannot("make a private directory beside", e))?;
    let inside = staging.join("s");
    let bound = UnixListener::bind(&inside)
        .map_err(|e| cannot("listen on", e))
        .and_then(|listener| {
            std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| cannot("make private", e))?;
            std::fs::rename(&inside, path).map_err(|e| cannot("put the socket at", e))?;
            Ok(listener)
        });
    let _ = std::fs::remove_file(&inside);
    let _ = std::fs::remove_dir(&staging);
    bound
}

/// A tag that keeps two binds of one process apart.
fn rand_tag() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}
/// Whether a token given equals the one set, in a time that depends on
/// the lengths only: every face's bearer check compares with this.
pub fn same_token(given: &[u8], set: &[u8]) -> bool {
    let mut diff = given.len() ^ set.len();
    for (i, x) in given.iter().enumerate() {
        diff |= usize::from(x ^ set.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

/// Resolves once the client has closed its connection both ways, so no
/// answer can reach it. A client that only ended its sending side still
/// reads its answer: that leaves this pending. Only the end of the reading
/// side is waited for (the priority interest's readiness, which data does
/// not wake), so requests the client sent behind the one being answered,
/// still unread, do not hide its going.
pub async fn hung_up(stream: &UnixStream) {
    match stream.ready(Interest::PRIORITY).await {
        Ok(ready) if ready.is_read_closed() && both_ways_closed(stream) => {}
        Ok(_) => std::future::pending().await,
        Err(_) => {}
    }
}

/// Whether poll(2) says the peer has gone (`POLLHUP`: both directions shut).
fn both_ways_closed(stream: &UnixStream) -> bool {
    let mut fd = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: 0,
        revents: 0,
    };
    // SAFETY: one pollfd for a descriptor `stream` holds open, no wait.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n == 1 && fd.revents & libc::POLLHUP != 0
}
