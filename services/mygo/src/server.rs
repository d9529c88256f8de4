//! The MyGo socket: bound by the protocol's rules, each connection's requests
//! read a line at a time and answered in order.
//!
//! Socket rules: mode 0600; a socket left by an ended process is replaced, a
//! live one or a file that is no socket is not; removed when the server stops.

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use wayrig_proto::mygo::{answer_line, Code, Request, WireError, MAX_LINE};
use wayrig_services::Session;

use crate::translate;

/// A bound automation socket; dropping it removes the socket file.
pub struct Listener {
    listener: UnixListener,
    path: PathBuf,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bind the socket at `path`, following the protocol's rules.
pub async fn bind(path: &Path) -> Result<Listener, String> {
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
    let listener = bind_private(path)?;
    Ok(Listener {
        listener,
        path: path.to_path_buf(),
    })
}

/// Bind a socket that is the user's alone from its first moment: made in a
/// fresh 0700 directory beside `path`, made 0600 there, then renamed into place.
fn bind_private(path: &Path) -> Result<UnixListener, String> {
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

/// Serve connections until the task is dropped; each connection runs on its own.
pub async fn serve(listener: Listener, session: Arc<Session>) {
    loop {
        match listener.listener.accept().await {
            Ok((stream, _)) => {
                let session = session.clone();
                tokio::spawn(async move { connection(stream, session).await });
            }
            Err(e) => {
                tracing::warn!(%e, "automation socket accept failed");
                return;
            }
        }
    }
}

/// One client: requests in order, each answered before the next is read.
async fn connection(stream: UnixStream, session: Arc<Session>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let out = match read_line(&mut reader, &mut line).await {
            Ok(Line::End) => return,
            Ok(Line::TooLong) => answer_line(
                &Value::Null,
                Err(WireError::new(
                    Code::InvalidRequest,
                    format!("request line longer than {MAX_LINE} bytes"),
                )),
            ),
            Ok(Line::Complete) => match Request::parse(&line) {
                Ok(request) => {
                    answer_line(&request.id, translate::answer(&session, request.call).await)
                }
                Err((id, e)) => answer_line(&id, Err(e)),
            },
            Err(_) => return,
        };
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

enum Line {
    Complete,
    TooLong,
    End,
}

/// Read one line, keeping at most `MAX_LINE` bytes; a half line at the end is dropped.
async fn read_line(
    reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // A last request the client ended by closing its side, without a
            // newline, is a request all the same.
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Complete,
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() <= MAX_LINE {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}
