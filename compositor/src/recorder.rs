//! What the compositor adds to a session's recording: the output each time
//! it changed (for the video), each input step with the window that took it,
//! each window's commits, and the window events.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use tokio::sync::broadcast;
use wayrig_host::WindowEvent;
use wayrig_record::{Frame, Recording};

use crate::capture::OutputCanvas;
use crate::rig::input_queue::{ResolvedKey, Step, Target};
use crate::rig::windows::root_surface;
use crate::state::State;

/// The compositor's side of a recording.
pub struct OutputRecorder {
    recording: Arc<Recording>,
    /// The output as the video last had it, repainted where it changed.
    canvas: Option<OutputCanvas>,
    /// The output changed since its last frame went to the video.
    changed: bool,
    /// Where the video last drew the pointer (physical pixels).
    pointer: Option<(i32, i32)>,
    windows: broadcast::Receiver<WindowEvent>,
}

impl OutputRecorder {
    pub fn new(recording: Arc<Recording>, windows: broadcast::Receiver<WindowEvent>) -> Self {
        OutputRecorder {
            recording,
            canvas: None,
            // The first frame shows the empty output.
            changed: true,
            pointer: None,
            windows,
        }
    }
}

/// How an input step names its keys: evdev codes, as the trace's reader
/// looks them up (xkb's codes are 8 more).
fn key_json(key: &ResolvedKey) -> Value {
    let code = |k: &smithay::input::keyboard::Keycode| k.raw().saturating_sub(8);
    json!({"key": code(&key.key), "mods": key.mods.iter().map(code).collect::<Vec<_>>()})
}

impl State {
    /// Record into `recording` from now on, or stop recording with `None`.
    pub(crate) fn record_into(&mut self, recording: Option<Arc<Recording>>) {
        self.recorder =
            recording.map(|r| OutputRecorder::new(r, self.rig.windows.events.subscribe()));
    }

    /// The window (handle, as clients know it) a surface belongs to.
    fn window_of_surface(&self, surface: &WlSurface) -> Value {
        let root = root_surface(surface);
        self.rig
            .windows
            .id_for_surface(&root)
            .and_then(|id| self.rig.windows.registry.get(id))
            .map_or(Value::Null, |rec| Value::from(rec.handle().to_string()))
    }

    fn target_json(&self, target: &Target) -> [(&'static str, Value); 3] {
        [
            ("x", Value::from(target.global.x)),
            ("y", Value::from(target.global.y)),
            ("window", self.window_of_surface(&target.surface)),
        ]
    }

    /// Note an input step as it is sent; `path` is how text goes (the text
    /// input protocol or a keymap).
    pub(crate) fn record_step(&self, step: &Step, path: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let focus = || {
            self.keyboard_focus()
                .map_or(Value::Null, |s| self.window_of_surface(&s))
        };
        let mut fields: Vec<(&str, Value)> = match step {
            Step::Move(target, _) => {
                let mut f = vec![("event", Value::from("move"))];
                f.extend(self.target_json(target));
                f
            }
            Step::Buttons {
                target,
                button,
                pairs,
                last,
                ..
            } => {
                let mut f = vec![
                    ("event", Value::from("button")),
                    ("button", Value::from(*button)),
                    ("clicks", Value::from(*pairs)),
                ];
                if let Some(last) = last {
                    f.push(("then", Value::from(format!("{last:?}").to_lowercase())));
                }
                f.extend(self.target_json(target));
                f
            }
            Step::Wheel { target, dx, dy, .. } => {
                let mut f = vec![
                    ("event", Value::from("wheel")),
                    ("dx", Value::from(*dx)),
                    ("dy", Value::from(*dy)),
                ];
                f.extend(self.target_json(target));
                f
            }
            Step::Key(k) => vec![("event", "key".into()), ("keys", key_json(k))],
            Step::KeyDown(k) => vec![("event", "key_down".into()), ("keys", key_json(k))],
            Step::KeyUp(k) => vec![("event", "key_up".into()), ("keys", key_json(k))],
            Step::Text { text, .. } => vec![
                ("event", "text".into()),
                ("text", text.clone().into()),
                ("path", path.into()),
            ],
        };
        if !fields.iter().any(|(k, _)| *k == "window") {
            fields.push(("window", focus()));
        }
        let modifiers: Vec<u32> = match step {
            Step::Move(_, mods) | Step::Buttons { mods, .. } | Step::Wheel { mods, .. } => {
                mods.iter().map(|k| k.raw().saturating_sub(8)).collect()
            }
            _ => Vec::new(),
        };
        if !modifiers.is_empty() {
            fields.push(("mods", Value::from(modifiers)));
        }
        recorder.recording.event("input", fields);
    }

    /// Note that window record `id` committed a frame.
    pub(crate) fn record_commit(&mut self, id: u64) {
        let handle = self.rig.windows.registry.get(id).map(|r| r.handle());
        let Some(recorder) = &mut self.recorder else {
            return;
        };
        recorder.changed = true;
        if let Some(handle) = handle {
            recorder
                .recording
                .event("commit", [("window", Value::from(handle.to_string()))]);
        }
    }

    /// Once per output frame: the window events since the last, and the
    /// output to the video if anything changed and the encoder has room.
    pub(crate) fn record_tick(&mut self) {
        let Some(recorder) = &mut self.recorder else {
            return;
        };
        loop {
            match recorder.windows.try_recv() {
                Ok(event) => {
                    recorder.changed = true;
                    let mut fields = match serde_json::to_value(&event) {
                        Ok(Value::Object(map)) => map,
                        _ => continue,
                    };
                    // "kind" names the trace's event: the window's own is its role.
                    if let Some(role) = fields.remove("kind") {
                        fields.insert("role".into(), role);
                    }
                    // Windows read as everywhere else in the trace: "id.epoch".
                    if let WindowEvent::Closed(handle) = &event {
                        fields.remove("id");
                        fields.remove("epoch");
                        fields.insert("handle".into(), handle.to_string().into());
                    }
                    for key in ["handle", "parent"] {
                        if let Some(Value::Object(h)) = fields.get(key) {
                            let handle = format!("{}.{}", h["id"], h["epoch"]);
                            fields.insert(key.into(), handle.into());
                        }
                    }
                    recorder.recording.event("window", fields);
                }
                Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                    recorder.changed = true;
                    recorder
                        .recording
                        .event("window", [("missed_events", Value::from(missed))]);
                }
                Err(_) => break,
            }
        }
        let scale = self.rig.config.scale;
        let pointer = self.seat.get_pointer().map(|p| {
            let at = p.current_location();
            ((at.x * scale).round() as i32, (at.y * scale).round() as i32)
        });
        let Some(recorder) = &mut self.recorder else {
            return;
        };
        let pointer_moved = pointer != recorder.pointer;
        if !(recorder.changed || pointer_moved) || !recorder.recording.wants_frame() {
            return;
        }
        recorder.pointer = pointer;
        recorder.changed = false;
        let at = Instant::now();
        let mut canvas = match recorder.canvas.take() {
            Some(canvas) => canvas,
            None => match OutputCanvas::new(&self.rig.output) {
                Ok(canvas) => canvas,
                Err(e) => {
                    tracing::debug!("no canvas for the video: {e}");
                    return;
                }
            },
        };
        let drawn =
            self.backend
                .draw_output(&mut canvas, &self.rig.windows.space, &self.rig.output);
        let frame = match &drawn {
            // A change, or only the pointer moved: the canvas with it drawn.
            Ok(rows) if rows.is_some() || pointer_moved => Some((canvas.pixels(), *rows)),
            _ => None,
        };
        let Some(recorder) = &mut self.recorder else {
            return;
        };
        recorder.canvas = Some(canvas);
        if let Some((pixels, rows)) = frame {
            recorder.recording.frame(Frame {
                width: pixels.width,
                height: pixels.height,
                rgba: pixels.rgba().to_vec(),
                rows: rows.unwrap_or((0, 0)),
                pointer,
                at,
            });
        }
        if let Err(e) = drawn {
            tracing::debug!("the output could not be drawn for the video: {e}");
        }
    }
}
