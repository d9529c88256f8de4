//! A blocking client of MyGo automation over its Unix socket: one request
//! line, one answer line. The agent CLI and the tests both speak through it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::mygo::{parse_answer, Call, Request, WireError};

/// One connection to an automation socket.
pub struct Client {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

/// Why a call failed: the server's error, or no answer to read.
#[derive(Debug)]
pub enum CallError {
    /// The server answered with an error.
    App(WireError),
    /// The connection failed, or the answer was not an answer.
    Link(String),
}

/// An error as `code: message`, the code as the wire spells it and not
/// repeated at the message's start.
pub fn coded(e: &WireError) -> String {
    let code = serde_json::to_value(e.code)
        .ok()
        .and_then(|c| c.as_str().map(str::to_string))
        .unwrap_or_else(|| "error".into());
    format!("{code}: {}", without_code(&code, &e.message))
}

/// A message without a leading repeat of its code (`unsupported: …`,
/// `timed out: …` under `timeout`), which would read doubled after it.
fn without_code<'m>(code: &str, message: &'m str) -> &'m str {
    let spoken = code.replace('_', " ");
    let repeats: &[&str] = match code {
        "timeout" => &["timed out", "timeout"],
        _ => &[code, spoken.as_str()],
    };
    repeats
        .iter()
        .find_map(|r| message.strip_prefix(r)?.strip_prefix(": "))
        .unwrap_or(message)
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::App(e) => f.write_str(&coded(e)),
            CallError::Link(why) => f.write_str(why),
        }
    }
}

impl From<CallError> for String {
    fn from(e: CallError) -> String {
        e.to_string()
    }
}

impl Client {
    pub fn connect(path: &Path) -> Result<Client, String> {
        let stream = UnixStream::connect(path)
            .map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
        let reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
        Ok(Client {
            stream,
            reader,
            next_id: 1,
        })
    }

    /// Give up reading an answer after `limit` (none: wait as long as it takes).
    pub fn answer_within(&self, limit: Option<Duration>) -> Result<(), String> {
        self.stream
            .set_read_timeout(limit)
            .map_err(|e| e.to_string())
    }

    /// Write `line` (which ends in its newline) and read the answer line as sent.
    pub fn exchange(&mut self, line: &str) -> Result<String, CallError> {
        let gone = |e: std::io::Error| CallError::Link(format!("the server went away: {e}"));
        self.stream.write_all(line.as_bytes()).map_err(gone)?;
        let mut answer = String::new();
        self.reader.read_line(&mut answer).map_err(gone)?;
        if answer.is_empty() {
            return Err(CallError::Link("the server closed the connection".into()));
        }
        Ok(answer)
    }

    /// One request, its result; the answer must repeat the request's id.
    pub fn call(&mut self, call: Call) -> Result<Value, CallError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let line = Request {
            id: id.clone(),
            call,
        }
        .to_line();
        let answer = self.exchange(&line)?;
        let (answered, result) = parse_answer(&answer)
            .map_err(|e| CallError::Link(format!("the server answered garbage: {e}")))?;
        if answered != id {
            return Err(CallError::Link(format!(
                "the answer {answer:?} is to request {answered}, not {id}"
            )));
        }
        result.map_err(CallError::App)
    }

    /// One request, its result as its method's answer type.
    pub fn call_as<T: DeserializeOwned>(&mut self, call: Call) -> Result<T, CallError> {
        let result = self.call(call)?;
        serde_json::from_value(result)
            .map_err(|e| CallError::Link(format!("the answer is not the method's: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_says_its_code_once() {
        assert_eq!(
            without_code("unsupported", "unsupported: no such thing"),
            "no such thing"
        );
        assert_eq!(without_code("timeout", "timed out: slow"), "slow");
        assert_eq!(without_code("no_element", "no element 5"), "no element 5");
    }
}
