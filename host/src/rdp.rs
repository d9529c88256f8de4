//! Firefox's remote debugging protocol over the Unix socket its debugger
//! server listens on (`LENGTH:JSON` packets), to run a script in a page.
//!
//! Each evaluation connects anew and finds the page again: a page's console
//! kept across a navigation would answer from the document that was left.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::{HostError, HostResult};

/// Packets larger than this are refused: a page's answer is far less.
const PACKET_MAX: usize = 64 << 20;

/// The debugger server of one Firefox, listening at `socket`.
#[derive(Debug)]
pub struct FirefoxServer {
    socket: PathBuf,
}

/// A tab Firefox has open, as `listTabs` lists it.
#[derive(Debug, Clone)]
struct Tab {
    actor: String,
    title: String,
    /// Shown in the window the user used last.
    selected: bool,
}

impl FirefoxServer {
    pub fn new(socket: PathBuf) -> Self {
        FirefoxServer { socket }
    }

    /// Firefox has ended: remove the socket it leaves behind.
    pub fn remove_socket(&self) {
        let _ = std::fs::remove_file(&self.socket);
    }

    /// Evaluate `script` in the page a window titled `window_title` shows,
    /// answering its value as JSON (`alone`: the window is the browser's
    /// only one, so its selected tab is the page it shows).
    pub async fn evaluate(
        &self,
        window_title: &str,
        alone: bool,
        script: &str,
        limit: Duration,
    ) -> HostResult<Value> {
        let socket = self.socket.clone();
        let (title, script) = (window_title.to_string(), script.to_string());
        let deadline = Instant::now() + limit;
        tokio::task::spawn_blocking(move || {
            let mut firefox = Connection::open(&socket, deadline, limit)?;
            let tab = firefox.tab_shown_in(&title, alone)?;
            let console = firefox.console_of(&tab)?;
            firefox.evaluate(&console, &script)
        })
        .await
        .map_err(|e| HostError::Failed(format!("the evaluation stopped: {e}")))?
    }
}

/// One connection to the server; every read and write ends by `deadline`.
struct Connection {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    /// Events that came while a reply was awaited, oldest first.
    events: std::collections::VecDeque<Value>,
    deadline: Instant,
    limit: Duration,
}

impl Connection {
    fn open(socket: &std::path::Path, deadline: Instant, limit: Duration) -> HostResult<Self> {
        let stream = UnixStream::connect(socket).map_err(|e| {
            HostError::Failed(format!(
                "cannot reach Firefox's debugger server at {}: {e} \
                 (it opens it a moment after it starts, and closes it as it ends)",
                socket.display()
            ))
        })?;
        let reader = BufReader::new(stream.try_clone().map_err(io_failed)?);
        let mut connection = Connection {
            writer: stream,
            reader,
            events: Default::default(),
            deadline,
            limit,
        };
        // The root actor greets first.
        connection.receive()?;
        Ok(connection)
    }

    fn left(&self) -> HostResult<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HostError::Timeout(
                self.limit,
                "Firefox did not answer the evaluation in time".into(),
            ));
        }
        Ok(left)
    }

    fn send(&mut self, packet: &Value) -> HostResult<()> {
        let text = packet.to_string();
        self.writer
            .set_write_timeout(Some(self.left()?))
            .map_err(io_failed)?;
        self.writer
            .write_all(format!("{}:{text}", text.len()).as_bytes())
            .map_err(|e| self.io_error(e))
    }

    /// The next packet, replies and events alike.
    fn receive(&mut self) -> HostResult<Value> {
        let left = self.left()?;
        self.reader
            .get_ref()
            .set_read_timeout(Some(left))
            .map_err(io_failed)?;
        let mut length = Vec::new();
        self.reader
            .read_until(b':', &mut length)
            .map_err(|e| self.io_error(e))?;
        let length = std::str::from_utf8(&length)
            .ok()
            .and_then(|l| l.strip_suffix(':'))
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| *l <= PACKET_MAX)
            .ok_or_else(|| {
                HostError::Failed("Firefox's debugger server sent no packet it could".into())
            })?;
        let mut body = vec![0; length];
        self.reader
            .read_exact(&mut body)
            .map_err(|e| self.io_error(e))?;
        serde_json::from_slice(&body)
            .map_err(|e| HostError::Failed(format!("Firefox's debugger server sent no JSON: {e}")))
    }

    fn io_error(&self, e: std::io::Error) -> HostError {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => HostError::Timeout(
                self.limit,
                "Firefox did not answer the evaluation in time (a script that never \
                 ends keeps its page busy)"
                    .into(),
            ),
            std::io::ErrorKind::UnexpectedEof => {
                HostError::Failed("Firefox closed its debugger server: it has ended".into())
            }
            _ => io_failed(e),
        }
    }

    /// Send `packet` to actor `to` and answer its reply: the next packet
    /// from that actor that is no event (events carry a `type`).
    fn request(&mut self, to: &str, packet: Value) -> HostResult<Value> {
        let mut packet = packet;
        packet["to"] = to.into();
        self.send(&packet)?;
        loop {
            let got = self.receive()?;
            if got["from"] != to || got.get("type").is_some() {
                self.events.push_back(got);
                continue;
            }
            if let Some(error) = got["error"].as_str() {
                return Err(HostError::Failed(format!(
                    "Firefox refused {}: {error}: {}",
                    packet["type"],
                    got["message"].as_str().unwrap_or_default()
                )));
            }
            return Ok(got);
        }
    }

    /// The one tab the window shows: the tab titled as the window is
    /// (Firefox adds " — Mozilla Firefox"), else, in the browser's only
    /// window, its selected tab. Never a guess: none, or several, is an error.
    fn tab_shown_in(&mut self, window_title: &str, alone: bool) -> HostResult<Tab> {
        let listed = self.request("root", json!({"type": "listTabs"}))?;
        let tabs: Vec<Tab> = listed["tabs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Tab {
                actor: t["actor"].as_str().unwrap_or_default().to_string(),
                title: t["title"].as_str().unwrap_or_default().to_string(),
                selected: t["selected"] == true,
            })
            .collect();
        let titled: Vec<&Tab> = tabs
            .iter()
            .filter(|t| crate::devtools::titles_page(window_title, &t.title))
            .collect();
        if let [tab] = titled.as_slice() {
            return Ok((*tab).clone());
        }
        if alone {
            if let Some(tab) = tabs.iter().find(|t| t.selected) {
                return Ok(tab.clone());
            }
        }
        Err(match titled.len() {
            0 => HostError::Unsupported(format!(
                "no page Firefox has open shows in window {window_title:?}: \
                 it shows the browser's own UI, not a page"
            )),
            n => HostError::Failed(format!(
                "{n} tabs are titled like window {window_title:?}: give the page a \
                 title of its own to evaluate in it"
            )),
        })
    }

    /// The console of the document `tab` shows now.
    fn console_of(&mut self, tab: &Tab) -> HostResult<String> {
        let target = self.request(&tab.actor, json!({"type": "getTarget"}))?;
        target["frame"]["consoleActor"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| HostError::Failed("Firefox gave the page no console".into()))
    }

    /// Run `script` in the page: as an expression first (so that `await`
    /// works in it), else as statements, whose last value is the answer.
    fn evaluate(&mut self, console: &str, script: &str) -> HostResult<Value> {
        match self.run(console, &as_expression(script))? {
            Ran::SyntaxError(_) => match self.run(console, &as_statements(script))? {
                Ran::SyntaxError(message) => {
                    Err(HostError::Failed(format!("the script threw {message}")))
                }
                Ran::Answered(answer) => answer,
            },
            Ran::Answered(answer) => answer,
        }
    }

    /// Evaluate a wrapped script and wait for its result.
    fn run(&mut self, console: &str, text: &str) -> HostResult<Ran> {
        let started = self.request(
            console,
            json!({"type": "evaluateJSAsync", "text": text, "mapped": {"await": true}}),
        )?;
        let id = started["resultID"].clone();
        let result = loop {
            let got = match self.events.pop_front() {
                Some(event) => event,
                None => self.receive()?,
            };
            if got["type"] == "evaluationResult" && got["resultID"] == id {
                break got;
            }
        };
        if result["hasException"] == true {
            let message = result["exceptionMessage"]
                .as_str()
                .unwrap_or("an exception")
                .to_string();
            if message.starts_with("SyntaxError") {
                return Ok(Ran::SyntaxError(message));
            }
            return Ok(Ran::Answered(Err(HostError::Failed(format!(
                "the script threw {message}"
            )))));
        }
        let text = match &result["result"] {
            Value::String(text) => text.clone(),
            grip if grip["type"] == "longString" => self.long_string(grip)?,
            other => {
                return Err(HostError::Failed(format!(
                    "Firefox answered the evaluation with no text: {other}"
                )))
            }
        };
        Ok(Ran::Answered(wrapped_value(&text)))
    }

    /// The whole of a string too long to come in one packet.
    fn long_string(&mut self, grip: &Value) -> HostResult<String> {
        let actor = grip["actor"].as_str().unwrap_or_default().to_string();
        let length = grip["length"].as_u64().unwrap_or(0);
        let got = self.request(
            &actor,
            json!({"type": "substring", "start": 0, "end": length}),
        )?;
        Ok(got["substring"].as_str().unwrap_or_default().to_string())
    }
}

/// What a wrapped script did: it did not parse, or it answered.
enum Ran {
    SyntaxError(String),
    Answered(HostResult<Value>),
}

/// The page's side of an evaluation: the value awaited, made JSON (values
/// JSON cannot hold as their text, as Chromium gives them), or what it threw.
const ANSWER: &str = "const j = v => typeof v === 'bigint' || (typeof v === 'number' && \
    (!Number.isFinite(v) || Object.is(v, -0))) ? String(v) : v;";

fn wrapped(body: &str) -> String {
    format!(
        "(async () => {{ {ANSWER} try {{ return JSON.stringify({{ok: [j(await {body})]}}); }} \
         catch (e) {{ return JSON.stringify({{threw: String(e)}}); }} }})()"
    )
}

/// The script as one expression, on lines of its own (a last line that
/// is a comment stays one).
fn as_expression(script: &str) -> String {
    wrapped(&format!("(\n{script}\n)"))
}

/// The script as statements, run as the console runs them: in the page's
/// global scope, its last value answered.
fn as_statements(script: &str) -> String {
    let quoted = serde_json::to_string(script).unwrap_or_default();
    wrapped(&format!("(0, eval)({quoted})"))
}

/// The script's value from what the wrapper answered.
fn wrapped_value(text: &str) -> HostResult<Value> {
    let answer: Value = serde_json::from_str(text)
        .map_err(|e| HostError::Failed(format!("the page answered no JSON ({e}): {text:.200}")))?;
    if let Some(thrown) = answer["threw"].as_str() {
        return Err(HostError::Failed(format!("the script threw {thrown}")));
    }
    Ok(answer["ok"][0].clone())
}

fn io_failed(e: std::io::Error) -> HostError {
    HostError::Failed(format!("Firefox's debugger server: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_answer_is_the_value_or_what_was_thrown() {
        assert_eq!(
            wrapped_value(r#"{"ok":[{"n":[1,2]}]}"#).unwrap(),
            json!({"n": [1, 2]})
        );
        assert_eq!(wrapped_value(r#"{"ok":[null]}"#).unwrap(), Value::Null);
        let thrown = wrapped_value(r#"{"threw":"TypeError: null has no properties"}"#);
        assert!(
            matches!(&thrown, Err(HostError::Failed(m)) if m.contains("TypeError: null has no properties")),
            "{thrown:?}"
        );
        assert!(wrapped_value("not json").is_err());
    }

    #[test]
    fn a_script_is_quoted_whole_when_run_as_statements() {
        let script = "let a = \"x\"; // a comment\na + '`${}`'";
        let text = as_statements(script);
        assert!(
            text.contains(&serde_json::to_string(script).unwrap()),
            "{text}"
        );
        assert!(as_expression("1 + 1 // sum").contains("(\n1 + 1 // sum\n)"));
    }
}
