//! What the session adds to its recording (`wayrig run --record`): each
//! request a face answers, with its answer; each act on an app, with the
//! screen just before it; and the screen once a request that acted answers.

use std::sync::Arc;

use serde_json::{json, Value};
use wayrig_host::{InputEvent, WindowHandle};
use wayrig_model::Role;
use wayrig_record::Recording;

use super::{encode_capture, ImageFormat, Session};

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
    pub fn with_recording(mut self, recording: Option<Arc<Recording>>) -> Self {
        self.recording = recording;
        self
    }

    /// Whether the session is recorded.
    pub fn is_recorded(&self) -> bool {
        self.recording.is_some()
    }

    /// Start tracing a request `method` that came over `face` with its
    /// arguments; `None` when the session is not recorded.
    pub fn trace_request(
        &self,
        face: &'static str,
        method: &str,
        request: Value,
    ) -> Option<RequestTrace<'_>> {
        let recording = self.recording.clone()?;
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

    /// Mask `secret` (a token, a password) in the recording from now on.
    pub fn trace_secret(&self, secret: &str) {
        if let Some(recording) = &self.recording {
            recording.secret(secret);
        }
    }

    /// Note an act on window `handle`, with the screen just before it.
    pub(crate) async fn record_act(&self, handle: WindowHandle, act: Value) {
        let Some(recording) = &self.recording else {
            return;
        };
        let t = recording.now();
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
        if self.recording.is_none() {
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

    /// The output now, kept in the recording's folder; its path there.
    async fn record_screen(&self, label: &str) -> Option<String> {
        let recording = self.recording.as_ref()?;
        let capture = self.host.capture_output().await.ok()?;
        let png = encode_capture(capture, ImageFormat::Png).await.ok()?;
        recording.shot(label, &png)
    }
}

impl RequestTrace<'_> {
    /// Write the request with its answer (`ok` or not); when it acted on an
    /// app, with the screen now, as its answer leaves it.
    pub async fn answer(self, ok: bool, answer: Value) {
        let acted = self.session.acts.load(std::sync::atomic::Ordering::SeqCst) != self.acts_before;
        let after = match acted {
            true => self.session.record_screen("after").await,
            false => None,
        };
        let mut fields = vec![
            ("face", Value::from(self.face)),
            ("method", Value::from(self.method)),
            ("request", self.request),
            ("answered", Value::from(self.recording.now())),
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
