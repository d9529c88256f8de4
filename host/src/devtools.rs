//! Scripts in browser pages: Chromium's DevTools protocol over the pipe a
//! browser is started with (`--remote-debugging-pipe`: fd 3 in, fd 4 out,
//! NUL-separated JSON), and Firefox's debugger server ([`crate::rdp`]);
//! never a TCP port.
//!
//! The launcher opens a debugger for each browser it starts; a host
//! evaluates scripts through it in the page a window of that browser shows.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::rdp::FirefoxServer;
use crate::{HostError, HostResult, WindowHandle, WindowInfo, WindowKind};

/// The switch that opens the pipe.
const PIPE_SWITCH: &str = "--remote-debugging-pipe";

/// The fds Chromium reads commands from and writes answers to.
const COMMANDS_FD: RawFd = 3;
const ANSWERS_FD: RawFd = 4;

/// The browser's ends of a pipe not yet connected: set on a command before
/// it spawns, then `connect`ed once it has.
pub struct PipeToSpawn {
    browser_reads: OwnedFd,
    browser_writes: OwnedFd,
    we_write: OwnedFd,
    we_read: OwnedFd,
}

impl PipeToSpawn {
    /// Open the pipes and have `cmd` hand the browser its ends as fds 3
    /// and 4, with the switch that tells it to use them.
    pub fn attach(cmd: &mut Command) -> std::io::Result<Self> {
        let (browser_reads, we_write) = pipe_above_answers_fd()?;
        let (we_read, browser_writes) = pipe_above_answers_fd()?;
        let (from, to) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
        cmd.arg(PIPE_SWITCH);
        // SAFETY: between fork and exec only dup2(2) runs, which is
        // async-signal-safe; `from` and `to` stay open until spawn returns
        // (this value owns them), and are above 4, so neither is overwritten
        // by the other's dup2. dup2 leaves the new fds open across exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(from, COMMANDS_FD) < 0 || libc::dup2(to, ANSWERS_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(PipeToSpawn {
            browser_reads,
            browser_writes,
            we_write,
            we_read,
        })
    }

    /// The browser has started: close its ends here, so that its exit is
    /// seen, and read its answers on a thread of their own.
    pub fn connect(self, pid: u32) -> HostResult<Arc<DevToolsPipe>> {
        drop(self.browser_reads);
        drop(self.browser_writes);
        let pipe = Arc::new(DevToolsPipe {
            commands: Arc::new(tokio::sync::Mutex::new(File::from(self.we_write))),
            waiting: Arc::new(Mutex::new(Some(HashMap::new()))),
            next_id: AtomicU64::new(1),
            sessions: Mutex::default(),
        });
        let waiting = pipe.waiting.clone();
        let answers = File::from(self.we_read);
        std::thread::Builder::new()
            .name(format!("wayrig-devtools-{pid}"))
            .spawn(move || read_answers(answers, &waiting))
            .map_err(|e| {
                HostError::Failed(format!("cannot read pid {pid}'s DevTools pipe: {e}"))
            })?;
        Ok(pipe)
    }
}

/// A pipe with both ends close-on-exec and numbered above fd 4.
fn pipe_above_answers_fd() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) writes two fds into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just opened and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_answers_fd(read)?, above_answers_fd(write)?))
}

fn above_answers_fd(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > ANSWERS_FD {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC returns a new fd (or -1) and touches no memory.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, ANSWERS_FD + 1) };
    if moved < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `moved` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Where a call's answer goes: its result, or the browser's error message.
type AnswerTo = oneshot::Sender<Result<Value, String>>;
/// Calls waiting for their answers; `None` once the browser closed its end.
type Waiting = Arc<Mutex<Option<HashMap<u64, AnswerTo>>>>;

fn read_answers(answers: File, waiting: &Mutex<Option<HashMap<u64, AnswerTo>>>) {
    let mut reader = BufReader::new(answers);
    let mut message = Vec::new();
    loop {
        message.clear();
        match reader.read_until(0, &mut message) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if message.last() == Some(&0) {
            message.pop();
        }
        let Ok(answer) = serde_json::from_slice::<Value>(&message) else {
            tracing::debug!("DevTools sent a message that is not JSON");
            continue;
        };
        // Events carry no id; only answers are waited for.
        let Some(id) = answer.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let sender = waiting.lock().unwrap().as_mut().and_then(|w| w.remove(&id));
        if let Some(sender) = sender {
            let outcome = match answer.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error with no message")
                    .to_string()),
                None => Ok(answer.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = sender.send(outcome);
        }
    }
    // Dropping the senders fails every call still waiting.
    waiting.lock().unwrap().take();
}

/// A connection to one browser's DevTools.
pub struct DevToolsPipe {
    /// Written on a blocking thread: a browser that stops reading (stopped,
    /// or busy) leaves the write waiting there, never a runtime worker; one
    /// such thread at most, as the calls after it wait for the file here.
    commands: Arc<tokio::sync::Mutex<File>>,
    waiting: Waiting,
    next_id: AtomicU64,
    /// The DevTools session attached to each page target, by target id.
    sessions: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for DevToolsPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevToolsPipe").finish_non_exhaustive()
    }
}

/// A page a browser has open, as DevTools lists it.
#[derive(Debug, Clone)]
struct Page {
    target: String,
    title: String,
}

impl DevToolsPipe {
    /// Send one command (to a page's session, if given) and wait `limit` for its answer.
    async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        limit: Duration,
    ) -> HostResult<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match self.waiting.lock().unwrap().as_mut() {
            Some(waiting) => waiting.insert(id, tx),
            None => return Err(closed()),
        };
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        let deadline = tokio::time::Instant::now() + limit;
        let Ok(mut commands) =
            tokio::time::timeout_at(deadline, self.commands.clone().lock_owned()).await
        else {
            self.forget(id);
            return Err(HostError::Timeout(
                limit,
                format!(
                    "the browser did not read {method} from its DevTools pipe: an earlier \
                     command is still unread"
                ),
            ));
        };
        let write = tokio::task::spawn_blocking(move || commands.write_all(&bytes));
        match tokio::time::timeout_at(deadline, write).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => {
                self.forget(id);
                return Err(HostError::Failed(format!(
                    "cannot write to the browser's DevTools pipe: {e}"
                )));
            }
            Ok(Err(e)) => {
                self.forget(id);
                return Err(HostError::Failed(format!(
                    "writing to the browser's DevTools pipe failed: {e}"
                )));
            }
            // The write goes on on its thread, whole, once the browser reads.
            Err(_) => {
                self.forget(id);
                return Err(HostError::Timeout(
                    limit,
                    format!("the browser did not read {method} from its DevTools pipe"),
                ));
            }
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(message))) => Err(HostError::Failed(format!(
                "the browser refused {method}: {message}"
            ))),
            Ok(Err(_)) => Err(closed()),
            Err(_) => {
                self.forget(id);
                Err(HostError::Timeout(
                    limit,
                    format!("the browser did not answer {method}"),
                ))
            }
        }
    }

    fn forget(&self, id: u64) {
        if let Some(waiting) = self.waiting.lock().unwrap().as_mut() {
            waiting.remove(&id);
        }
    }

    async fn pages(&self, limit: Duration) -> HostResult<Vec<Page>> {
        let answer = self
            .call("Target.getTargets", json!({}), None, limit)
            .await?;
        let infos = answer["targetInfos"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Ok(infos
            .iter()
            .filter(|t| t["type"] == "page")
            .map(|t| Page {
                target: t["targetId"].as_str().unwrap_or_default().to_string(),
                title: t["title"].as_str().unwrap_or_default().to_string(),
            })
            .collect())
    }

    /// Evaluate `script` in page `target`, attaching to it first if needed
    /// (and once more if the session kept for it has ended).
    async fn evaluate_in(&self, target: &str, script: &str, limit: Duration) -> HostResult<Value> {
        let params = json!({
            "expression": script,
            "returnByValue": true,
            "awaitPromise": true,
            "replMode": true,
        });
        let kept = self.sessions.lock().unwrap().get(target).cloned();
        if let Some(session) = kept {
            match self
                .call("Runtime.evaluate", params.clone(), Some(&session), limit)
                .await
            {
                Err(HostError::Failed(_)) => {
                    self.sessions.lock().unwrap().remove(target);
                }
                answer => return answer,
            }
        }
        let attached = self
            .call(
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                None,
                limit,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| {
                HostError::Failed("the browser attached to the page without a session".into())
            })?
            .to_string();
        self.sessions
            .lock()
            .unwrap()
            .insert(target.to_string(), session.clone());
        self.call("Runtime.evaluate", params, Some(&session), limit)
            .await
    }

    /// Evaluate `script` in the page a window titled `window_title` shows,
    /// answering its value as JSON (`alone`: the window is the browser's
    /// only one, so the page it shows is the one visible page).
    pub async fn evaluate(
        &self,
        window_title: &str,
        alone: bool,
        script: &str,
        limit: Duration,
    ) -> HostResult<Value> {
        let page = self.page_shown_in(window_title, alone, limit).await?;
        let answer = self.evaluate_in(&page.target, script, limit).await?;
        script_value(&answer)
    }

    /// The one page the window shows: its title is the window's (Chromium
    /// adds " - Chromium"), and of tabs alike the one whose document is
    /// visible. Never a guess: no page, or several, is an error.
    async fn page_shown_in(
        &self,
        window_title: &str,
        alone: bool,
        limit: Duration,
    ) -> HostResult<Page> {
        let pages = self.pages(limit).await?;
        let titled: Vec<Page> = pages
            .iter()
            .filter(|p| titles_page(window_title, &p.title))
            .cloned()
            .collect();
        if let [page] = titled.as_slice() {
            return Ok(page.clone());
        }
        let candidates = if titled.is_empty() && alone {
            pages
        } else {
            titled
        };
        let mut visible = Vec::new();
        for page in candidates {
            let state = self
                .evaluate_in(&page.target, "document.visibilityState", limit)
                .await?;
            if state["result"]["value"] == "visible" {
                visible.push(page);
            }
        }
        match visible.len() {
            1 => Ok(visible.remove(0)),
            0 => Err(HostError::Unsupported(format!(
                "no page the browser has open shows in window {window_title:?}: \
                 it shows the browser's own UI, not a page"
            ))),
            n => Err(HostError::Failed(format!(
                "{n} visible pages are titled like window {window_title:?} \
                 ({}): give the page a title of its own to evaluate in it",
                visible
                    .iter()
                    .map(|p| format!("{:?}", p.title))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Evaluate `script` in the page `window` shows, through the debugger of
/// the browser it belongs to; `windows` are all the host's windows.
pub async fn evaluate_in_window(
    debuggers: &PageDebuggers,
    windows: &[WindowInfo],
    window: WindowHandle,
    script: &str,
    limit: Duration,
) -> HostResult<Value> {
    let shown = windows
        .iter()
        .find(|w| w.handle.id == window.id)
        .ok_or(HostError::NoWindow(window))?;
    if shown.handle.epoch != window.epoch {
        return Err(HostError::StaleWindow(window, shown.handle.epoch));
    }
    let debugger = shown
        .pid
        .and_then(|pid| debuggers.of_process(pid))
        .ok_or_else(|| {
            HostError::Unsupported(format!(
                "window {} is not a page of a browser Wayrig started with a debugger \
                 (Chromium, or Firefox given --profile DIR): there is no script to evaluate",
                window.id
            ))
        })?;
    let group = |w: &WindowInfo| w.pid.and_then(group_of);
    let alone = windows
        .iter()
        .filter(|w| matches!(w.kind, WindowKind::Normal) && group(w) == group(shown))
        .count()
        == 1;
    match debugger {
        PageDebugger::Chromium(pipe) => pipe.evaluate(&shown.title, alone, script, limit).await,
        PageDebugger::Firefox(server) => server.evaluate(&shown.title, alone, script, limit).await,
    }
}

/// Whether a browser window titled `window` shows a page titled `page`:
/// the same title, or the page's title and the browser's name after " - "
/// (Chromium) or " — " (Firefox).
pub(crate) fn titles_page(window: &str, page: &str) -> bool {
    !page.is_empty()
        && (window == page
            || window
                .strip_prefix(page)
                .is_some_and(|rest| rest.starts_with(" - ") || rest.starts_with(" \u{2014} ")))
}

/// What `Runtime.evaluate` answered, as the script's value: JSON as it is,
/// values JSON cannot hold (NaN, Infinity, -0, BigInt) as their text,
/// `undefined` as null; a script that threw is an error that says what it threw.
fn script_value(answer: &Value) -> HostResult<Value> {
    if let Some(details) = answer.get("exceptionDetails") {
        let thrown = details["exception"]["description"]
            .as_str()
            .or_else(|| details["exception"]["value"].as_str())
            .or_else(|| details["text"].as_str())
            .unwrap_or("an exception");
        return Err(HostError::Failed(format!("the script threw {thrown}")));
    }
    let result = &answer["result"];
    if let Some(value) = result.get("value") {
        return Ok(value.clone());
    }
    if let Some(text) = result["unserializableValue"].as_str() {
        return Ok(Value::String(text.to_string()));
    }
    Ok(Value::Null)
}

fn closed() -> HostError {
    HostError::Failed("the browser closed its DevTools pipe: it has ended".into())
}

/// How scripts run in one browser's pages.
#[derive(Debug, Clone)]
pub enum PageDebugger {
    Chromium(Arc<DevToolsPipe>),
    Firefox(Arc<FirefoxServer>),
}

/// The debuggers of the browsers a launcher started, by the process group
/// each leads (the group of any of its windows' clients).
#[derive(Debug, Clone, Default)]
pub struct PageDebuggers(Arc<Mutex<HashMap<u32, PageDebugger>>>);

impl PageDebuggers {
    pub fn insert(&self, group: u32, debugger: PageDebugger) {
        self.0.lock().unwrap().insert(group, debugger);
    }

    /// The browser leading `group` has ended: its debugger goes.
    pub fn remove(&self, group: u32) -> Option<PageDebugger> {
        self.0.lock().unwrap().remove(&group)
    }

    /// The debugger of the browser whose process group `pid` is in.
    pub fn of_process(&self, pid: u32) -> Option<PageDebugger> {
        let group = group_of(pid)?;
        self.0.lock().unwrap().get(&group).cloned()
    }
}

/// The process group `pid` is in.
fn group_of(pid: u32) -> Option<u32> {
    // SAFETY: getpgid(2) reads a process's group id; no memory is touched.
    let group = unsafe { libc::getpgid(pid as i32) };
    (group > 0).then_some(group as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DevTools pipe to a browser that reads nothing: the read end is
    /// kept open, never read.
    fn unread_pipe() -> (Arc<DevToolsPipe>, OwnedFd) {
        let (read, write) = pipe_above_answers_fd().expect("a pipe");
        let pipe = Arc::new(DevToolsPipe {
            commands: Arc::new(tokio::sync::Mutex::new(File::from(write))),
            waiting: Arc::new(Mutex::new(Some(HashMap::new()))),
            next_id: AtomicU64::new(1),
            sessions: Mutex::default(),
        });
        (pipe, read)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_browser_that_reads_nothing_times_calls_out_and_the_runtime_goes_on() {
        let (pipe, unread) = unread_pipe();
        // Past any pipe's buffer: the write cannot end while nothing reads.
        let script = "x".repeat(4 << 20);
        let limit = Duration::from_millis(300);
        let big = pipe.call(
            "Runtime.evaluate",
            json!({"expression": script}),
            None,
            limit,
        );
        let answer = big.await;
        assert!(
            matches!(&answer, Err(HostError::Timeout(_, why)) if why.contains("did not read")),
            "{answer:?}"
        );
        // The one worker is free: a timer on it fires, and the next call
        // is answered within its limit too, waiting for the first write to
        // end, not on a blocking thread of its own.
        tokio::time::sleep(Duration::from_millis(1)).await;
        let next = pipe.call("Target.getTargets", json!({}), None, limit).await;
        assert!(
            matches!(&next, Err(HostError::Timeout(_, why)) if why.contains("an earlier command is still unread")),
            "{next:?}"
        );
        // The browser ends: the writes left waiting fail, and their threads end.
        drop(unread);
    }

    #[test]
    fn a_window_shows_the_page_of_its_title() {
        assert!(titles_page("Todo - Chromium", "Todo"));
        assert!(titles_page("Todo", "Todo"));
        assert!(titles_page("Todo \u{2014} Mozilla Firefox", "Todo"));
        assert!(!titles_page("Todo list - Chromium", "Todo"));
        assert!(!titles_page("Todo - Chromium", ""));
    }

    #[test]
    fn script_values_are_json_and_throws_are_errors() {
        let value = |result: Value| script_value(&json!({ "result": result }));
        assert_eq!(
            value(json!({"type": "number", "value": 3})).unwrap(),
            json!(3)
        );
        assert_eq!(
            value(json!({"type": "number", "unserializableValue": "NaN"})).unwrap(),
            json!("NaN")
        );
        assert_eq!(value(json!({"type": "undefined"})).unwrap(), Value::Null);
        let thrown = script_value(&json!({
            "result": {"type": "object"},
            "exceptionDetails": {"text": "Uncaught", "exception": {"description": "TypeError: x is not a function"}}
        }));
        assert!(
            matches!(&thrown, Err(HostError::Failed(m)) if m.contains("TypeError: x is not a function")),
            "{thrown:?}"
        );
    }
}
