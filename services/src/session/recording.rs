//! What the session adds to its recording (`wayrig run --record`): each
//! request a face answers, with its answer; each act on an app, with the
//! screen and the tree just before it; and once a request that acted
//! answers, the screen and what changed in the tree.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use wayrig_host::{InputEvent, WindowHandle};
use wayrig_model::{Node, Role};
use wayrig_record::Recording;

use super::{encode_capture, ImageFormat, Session};
use crate::model::Error;

/// Recordings started by `start_recording` in this process: each folder's own.
static RECORDINGS_STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Where recordings a client starts go: `$XDG_STATE_HOME/wayrig/recordings`
/// (`~/.local/state/...`), the user's own; a client names no path.
fn recordings_folder() -> Result<PathBuf, Error> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .ok_or_else(|| {
            Error::Failed("no folder for recordings: set XDG_STATE_HOME or HOME".into())
        })?;
    Ok(state.join("wayrig/recordings"))
}

/// A request under way on a face, written to the trace when it is answered.
pub struct RequestTrace<'a> {
    session: &'a Session,
    recording: Arc<Recording>,
    face: &'static str,
    method: String,
    request: Value,
    started: f64,
    acts_before: u64,
}

impl Session {
    /// Record into `recording` from now on.
    pub fn with_recording(self, recording: Option<Arc<Recording>>) -> Self {
        *self.recording.lock().unwrap() = recording;
        self
    }

    /// The session's recording, while it records.
    fn recording(&self) -> Option<Arc<Recording>> {
        self.recording.lock().unwrap().clone()
    }

    /// Whether the session is recorded.
    pub fn is_recorded(&self) -> bool {
        self.recording.lock().unwrap().is_some()
    }

    /// The folder the session is recorded into, while it is.
    pub fn recorded_into(&self) -> Option<PathBuf> {
        self.recording().map(|r| r.dir().to_path_buf())
    }

    /// Start recording the session into a new folder under the user's
    /// state directory (`$XDG_STATE_HOME/wayrig/recordings`), as `wayrig
    /// run --record` does; its folder. Recording already, its folder.
    pub async fn start_recording(&self) -> Result<PathBuf, Error> {
        if let Some(recording) = self.recording() {
            return Ok(recording.dir().to_path_buf());
        }
        let dir = recordings_folder()?.join(format!(
            "{}-{}-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            std::process::id(),
            RECORDINGS_STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let recording =
            Recording::start(&dir, wayrig_record::DEFAULT_LIMIT).map_err(Error::Failed)?;
        self.host.record(Some(recording.clone())).await?;
        *self.recording.lock().unwrap() = Some(recording);
        Ok(dir)
    }

    /// End the session's recording (its video's end is written); its folder,
    /// and why it is not whole when a write failed (a full disk).
    pub async fn end_recording(&self) -> Result<(PathBuf, Option<String>), Error> {
        let Some(recording) = self.recording.lock().unwrap().take() else {
            return Err(Error::InvalidRequest(
                "the session is not recorded: start it with on: true (or wayrig run --record)"
                    .into(),
            ));
        };
        self.host.record(None).await?;
        recording.finish();
        Ok((recording.dir().to_path_buf(), recording.incomplete()))
    }

    /// Start tracing a request `method` that came over `face` with its
    /// arguments; `None` when the session is not recorded.
    pub fn trace_request(
        &self,
        face: &'static str,
        method: &str,
        request: Value,
    ) -> Option<RequestTrace<'_>> {
        let recording = self.recording()?;
        Some(RequestTrace {
            session: self,
            started: recording.now(),
            recording,
            face,
            method: method.to_string(),
            request,
            acts_before: self.acts.load(std::sync::atomic::Ordering::SeqCst),
        })
    }

    /// End the recording: the video's end is written. What comes later is
    /// not recorded.
    pub fn finish_recording(&self) {
        if let Some(recording) = self.recording() {
            recording.finish();
        }
    }

    /// Mask `secret` (a token, a password) in the recording from now on.
    pub fn trace_secret(&self, secret: &str) {
        if let Some(recording) = self.recording() {
            recording.secret(secret);
        }
    }

    /// Note an act on window `handle`, with the screen just before it.
    pub(crate) async fn record_act(&self, handle: WindowHandle, act: Value) {
        let Some(recording) = self.recording() else {
            return;
        };
        let t = recording.now();
        // The tree the act is aimed by: what the answer's diff starts from.
        let mirrored = self
            .mirror
            .lock()
            .unwrap()
            .get(&handle)
            .map(|m| m.tree.nodes.clone());
        if let Some(nodes) = mirrored {
            self.trees_before_acts
                .lock()
                .unwrap()
                .entry(handle)
                .or_insert(nodes);
        }
        let shot = self.record_screen("before").await;
        recording.event_at(
            t,
            "act",
            [
                ("window", Value::from(handle.to_string())),
                ("act", act),
                ("shot", shot.map_or(Value::Null, Value::from)),
            ],
        );
    }

    /// Note input sent to window `handle`: text typed where the window's
    /// focused field is a password's is masked first.
    pub(crate) async fn record_input(&self, handle: WindowHandle, events: &[InputEvent]) {
        if !self.is_recorded() {
            return;
        }
        if self.password_is_focused(handle) {
            for event in events {
                if let InputEvent::Text { text } = event {
                    self.trace_secret(text);
                }
            }
        }
        self.record_act(handle, json!({"input": events})).await;
    }

    /// Whether the window's last read tree has a password field focused.
    fn password_is_focused(&self, handle: WindowHandle) -> bool {
        let mirror = self.mirror.lock().unwrap();
        mirror.get(&handle).is_some_and(|m| {
            m.tree
                .nodes
                .iter()
                .any(|n| n.role == Role::PasswordInput && n.states.focused)
        })
    }

    /// What changed in each window acted on since its tree before the act,
    /// read now (after the act's answer, once it showed its effect).
    async fn record_tree_changes(&self) {
        let Some(recording) = self.recording() else {
            return;
        };
        let before: Vec<(WindowHandle, Vec<Node>)> =
            self.trees_before_acts.lock().unwrap().drain().collect();
        for (handle, before) in before {
            // A window the act closed has no tree to compare.
            let Ok(now) = self.tree(handle).await else {
                continue;
            };
            let mut fields = vec![("window", Value::from(handle.to_string()))];
            fields.extend(tree_changes(&before, &now.nodes));
            recording.event("tree", fields);
        }
    }

    /// The output now, kept in the recording's folder; its path there.
    async fn record_screen(&self, label: &str) -> Option<String> {
        let recording = self.recording()?;
        let capture = self.host.capture_output().await.ok()?;
        let png = encode_capture(capture, ImageFormat::Png).await.ok()?;
        recording.shot(label, &png)
    }
}

impl RequestTrace<'_> {
    /// Write the request with its answer (`ok` or not); when it acted on an
    /// app, with the screen now, as its answer leaves it.
    pub async fn answer(self, ok: bool, answer: Value) {
        let answered = self.recording.now();
        let acted = self.session.acts.load(std::sync::atomic::Ordering::SeqCst) != self.acts_before;
        let after = match acted {
            true => self.session.record_screen("after").await,
            false => None,
        };
        if acted {
            self.session.record_tree_changes().await;
        }
        let mut fields = vec![
            ("face", Value::from(self.face)),
            ("method", Value::from(self.method)),
            ("request", self.request),
            ("answered", Value::from(answered)),
            ("ok", Value::from(ok)),
            ("answer", answer),
            ("acted", Value::from(acted)),
        ];
        if let Some(after) = after {
            fields.push(("shot", Value::from(after)));
        }
        self.recording.event_at(self.started, "request", fields);
    }
}

/// An element as a change names it.
fn brief(node: &Node) -> Value {
    let mut brief = json!({"id": node.id.to_string(), "role": node.role, "name": node.name});
    if let Some(value) = &node.value {
        brief["value"] = json!(value);
    }
    brief
}

/// What differs between two trees of one window: elements changed (the
/// facts that changed, then and now), added and removed.
fn tree_changes(before: &[Node], now: &[Node]) -> [(&'static str, Value); 3] {
    let then: HashMap<u64, &Node> = before.iter().map(|n| (n.id, n)).collect();
    let mut changed = Vec::new();
    let mut added = Vec::new();
    for node in now {
        let Some(old) = then.get(&node.id) else {
            added.push(brief(node));
            continue;
        };
        if *old == node {
            continue;
        }
        let (Ok(Value::Object(was)), Ok(Value::Object(is))) =
            (serde_json::to_value(old), serde_json::to_value(node))
        else {
            continue;
        };
        // Structure shows as elements added and removed; ids inside lists
        // would only be noise (and lose digits in a reader's JavaScript).
        let keys: HashSet<&String> = was
            .keys()
            .chain(is.keys())
            .filter(|k| !matches!(k.as_str(), "children" | "parent"))
            .collect();
        let mut then_facts = serde_json::Map::new();
        let mut now_facts = serde_json::Map::new();
        for key in keys {
            let (then, now) = (was.get(key), is.get(key));
            if then == now {
                continue;
            }
            // Of a set of facts (its states), only those that changed.
            let (then, now) = match (then, now) {
                (Some(Value::Object(a)), Some(Value::Object(b))) => {
                    let changed = |k: &&String| a.get(*k) != b.get(*k);
                    let pick = |m: &serde_json::Map<String, Value>| -> Value {
                        let mut keys: Vec<&String> =
                            a.keys().chain(b.keys()).filter(changed).collect();
                        keys.dedup();
                        keys.into_iter()
                            .map(|k| (k.clone(), m.get(k).cloned().unwrap_or(Value::Null)))
                            .collect::<serde_json::Map<_, _>>()
                            .into()
                    };
                    (pick(a), pick(b))
                }
                _ => (
                    then.cloned().unwrap_or(Value::Null),
                    now.cloned().unwrap_or(Value::Null),
                ),
            };
            then_facts.insert(key.clone(), then);
            now_facts.insert(key.clone(), now);
        }
        if then_facts.is_empty() {
            continue;
        }
        let mut change = brief(node);
        change["was"] = Value::Object(then_facts);
        change["now"] = Value::Object(now_facts);
        changed.push(change);
    }
    let kept: HashSet<u64> = now.iter().map(|n| n.id).collect();
    let removed: Vec<Value> = before
        .iter()
        .filter(|n| !kept.contains(&n.id))
        .map(brief)
        .collect();
    [
        ("changed", Value::from(changed)),
        ("added", Value::from(added)),
        ("removed", Value::from(removed)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::elements::tests::node;

    #[test]
    fn a_tree_change_names_what_changed_came_and_went() {
        let mut check = node(2, Some(1), Role::CheckBox, "Subscribe");
        let before = vec![
            node(1, None, Role::Group, "Form"),
            check.clone(),
            node(3, Some(1), Role::Label, "Saving…"),
        ];
        check.states.checked = true;
        let mut form = node(1, None, Role::Group, "Form");
        form.children = vec![2, 4];
        let now = vec![form, check, node(4, Some(1), Role::Label, "Saved")];
        let [(_, changed), (_, added), (_, removed)] = tree_changes(&before, &now);
        assert_eq!(changed.as_array().unwrap().len(), 1, "{changed}");
        assert_eq!(changed[0]["name"], "Subscribe");
        assert_eq!(changed[0]["was"]["states"]["checked"], false);
        assert_eq!(changed[0]["now"]["states"]["checked"], true);
        assert!(changed[0]["now"].get("name").is_none(), "only what changed");
        assert_eq!(changed[0]["now"]["states"], json!({"checked": true}));
        assert_eq!(
            added,
            json!([{"id": "4", "role": "label", "name": "Saved"}])
        );
        assert_eq!(removed[0]["name"], "Saving…");
    }
}
