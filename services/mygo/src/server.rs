//! The MyGo socket: bound by the protocol's rules, each connection's requests
//! read a line at a time and answered in order.
//!
//! Socket rules: mode 0600; a socket left by an ended process is replaced, a
//! live one or a file that is no socket is not; removed when the server stops.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use wayrig_proto::mygo::{answer_line, Call, Code, RawId, Request, WireError, MAX_LINE};
use wayrig_services::sockets::hung_up;
use wayrig_services::{AnnouncementsRead, Session, STOP_GRACE};

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
    let listener = wayrig_services::sockets::bind_private(path).await?;
    Ok(Listener {
        listener,
        path: path.to_path_buf(),
    })
}

/// Serve connections until `stop` is cancelled: then no connection is
/// accepted and none reads another request, but each answers the one it is
/// on before it closes (past `STOP_GRACE`, that Wayrig is stopping); the
/// socket goes once they all have.
pub async fn serve(listener: Listener, session: Arc<Session>, stop: CancellationToken) {
    let connections = TaskTracker::new();
    loop {
        tokio::select! {
            accepted = listener.listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let session = session.clone();
                    connections.spawn(connection(stream, session, stop.clone()));
                }
                Err(e) => {
                    tracing::warn!(%e, "automation socket accept failed; accepting again");
                    tokio::time::sleep(wayrig_services::sockets::ACCEPT_PAUSE).await;
                }
            },
            _ = stop.cancelled() => break,
        }
    }
    connections.close();
    connections.wait().await;
}

/// One client: requests in order, each answered before the next is read.
/// Its `tree`s carry the announcements it has not had yet.
async fn connection(stream: UnixStream, session: Arc<Session>, stop: CancellationToken) {
    let mut announced = AnnouncementsRead::default();
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = tokio::select! {
            read = read_line(&mut reader, &mut line) => read,
            _ = stop.cancelled() => return,
        };
        let out = match read {
            Ok(Line::End) => return,
            Ok(Line::TooLong) => answer_line(
                &RawId::null(),
                Err(WireError::new(
                    Code::InvalidRequest,
                    format!("request line longer than {MAX_LINE} bytes"),
                )),
            ),
            Ok(Line::Complete) => {
                let (id, call) = Request::parse(&line);
                let method = call.as_ref().map_or("invalid", |c| c.method());
                let trace = session.trace_request("mygo", method, traced_request(&line));
                let mut gone = false;
                let answer = match call {
                    Ok(call) => {
                        let looks_only = looks_only(&call);
                        tokio::select! {
                            answer = translate::answer(&session, &mut announced, call) => answer,
                            () = past_stop_grace(&stop) => Err(WireError::new(
                                Code::Failed,
                                "Wayrig is stopping: the request was not finished",
                            )),
                            () = hung_up(reader.get_ref().as_ref()), if looks_only => {
                                gone = true;
                                Err(WireError::new(
                                    Code::Failed,
                                    "the client closed its connection: the request was dropped",
                                ))
                            }
                        }
                    }
                    Err(e) => Err(e),
                };
                if let Some(trace) = trace {
                    let traced = match &answer {
                        Ok(result) => result.clone(),
                        Err(e) => serde_json::to_value(e).unwrap_or_default(),
                    };
                    trace.answer(answer.is_ok(), traced).await;
                }
                if gone {
                    return;
                }
                answer_line(&id, answer)
            }
            Err(_) => return,
        };
        // A client that reads nothing holds no stopping session.
        let written = tokio::select! {
            written = write.write_all(out.as_bytes()) => written.is_ok(),
            () = past_stop_grace(&stop) => false,
        };
        if !written {
            return;
        }
    }
}

/// Whether a call only reads or waits, so that nothing is lost when it is
/// dropped with its client: an `idle` or `wayrig.waitFor` may otherwise wait
/// for hours with no one to answer. Calls that act run to their end, so that
/// no input stops half sent.
fn looks_only(call: &Call) -> bool {
    match call {
        Call::Windows
        | Call::Tree { .. }
        | Call::Capture { .. }
        | Call::Idle { .. }
        | Call::WaitFor { .. }
        | Call::Menus { .. } => true,
        Call::Act { .. }
        | Call::Input { .. }
        | Call::Menu { .. }
        | Call::Eval { .. }
        | Call::Launch { .. }
        | Call::Record { .. }
        | Call::Step { .. } => false,
    }
}

/// Once the session stops and its grace for requests in flight is over.
async fn past_stop_grace(stop: &CancellationToken) {
    stop.cancelled().await;
    tokio::time::sleep(STOP_GRACE).await;
}

/// A request line as the trace keeps it: its JSON, or its text where it is none.
fn traced_request(line: &[u8]) -> serde_json::Value {
    serde_json::from_slice(line)
        .unwrap_or_else(|_| String::from_utf8_lossy(line).into_owned().into())
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
