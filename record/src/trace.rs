//! The recording itself: its directory, its trace's lines written as events
//! happen (secrets masked), its screenshots, and its video.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::budget::Budget;
use crate::video::{Frame, Video, VideoStats};
use crate::{SHOTS_DIR, TRACE_FILE, VIDEO_FILE};

/// What a masked secret reads as.
const MASK: &str = "•••";
/// Strings longer than this (an image's base64, a whole page) are written
/// as their length: the trace is for reading.
const LONGEST_STRING: usize = 2048;
/// Secrets shorter than this are masked only where their caller puts them,
/// not wherever the same letters appear.
const SHORTEST_SECRET: usize = 3;

/// A session's recording; shared by everything that adds to it.
pub struct Recording {
    dir: PathBuf,
    zero: Instant,
    budget: Arc<Budget>,
    trace: Mutex<TraceFile>,
    secrets: Mutex<Vec<String>>,
    video: Mutex<Option<Video>>,
    shots: AtomicU64,
    /// Output frames that changed while the encoder was busy.
    frames_skipped: AtomicU64,
    /// Why the recording is not whole: the first write that failed (a full
    /// disk), which the trace itself may not have room to tell.
    incomplete: Mutex<Option<String>>,
}

struct TraceFile {
    out: Option<BufWriter<File>>,
    /// Told once that the limit was reached.
    limit_told: bool,
}

fn private_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

impl Recording {
    /// Start recording into `dir` (made, 0700, if it is not there; it must
    /// not hold a recording already), within `limit` bytes.
    pub fn start(dir: &Path, limit: u64) -> Result<Arc<Recording>, String> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot make the recording's folder {}: {e}", dir.display()))?;
        let trace_path = dir.join(TRACE_FILE);
        let trace = private_file(&trace_path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{} holds a recording already: give --record a new or empty folder",
                dir.display()
            ),
            _ => format!("cannot write {}: {e}", trace_path.display()),
        })?;
        DirBuilder::new()
            .mode(0o700)
            .create(dir.join(SHOTS_DIR))
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Ok(()),
                _ => Err(e),
            })
            .map_err(|e| format!("cannot make {}: {e}", dir.join(SHOTS_DIR).display()))?;
        let zero = Instant::now();
        let budget = Arc::new(Budget::new(limit));
        let video = Video::start(dir.join(VIDEO_FILE), zero, budget.clone());
        let recording = Arc::new(Recording {
            dir: dir.to_path_buf(),
            zero,
            budget,
            trace: Mutex::new(TraceFile {
                out: Some(BufWriter::new(trace)),
                limit_told: false,
            }),
            secrets: Mutex::new(Vec::new()),
            video: Mutex::new(Some(video)),
            shots: AtomicU64::new(0),
            frames_skipped: AtomicU64::new(0),
            incomplete: Mutex::new(None),
        });
        recording.event("recording", [("limit", Value::from(limit))]);
        Ok(recording)
    }

    /// The recording's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Milliseconds since the recording began, the time of its events and
    /// of its video.
    pub fn now(&self) -> f64 {
        self.at(Instant::now())
    }

    /// `instant` on the recording's clock.
    pub fn at(&self, instant: Instant) -> f64 {
        let micros = instant.saturating_duration_since(self.zero).as_micros();
        micros as f64 / 1000.0
    }

    /// Mask `secret` in every line written from now on.
    pub fn secret(&self, secret: &str) {
        if secret.chars().count() < SHORTEST_SECRET {
            return;
        }
        // As it reads inside a JSON string.
        let quoted = serde_json::to_string(secret).expect("a string serializes");
        let escaped = quoted[1..quoted.len() - 1].to_string();
        let mut secrets = self.secrets.lock().unwrap();
        if !secrets.contains(&escaped) {
            secrets.push(escaped);
        }
    }

    /// Write an event of `kind` now, with `fields`.
    pub fn event<K: Into<String>>(&self, kind: &str, fields: impl IntoIterator<Item = (K, Value)>) {
        self.event_at(self.now(), kind, fields);
    }

    /// Write an event of `kind` that happened at `t` (the recording's ms).
    pub fn event_at<K: Into<String>>(
        &self,
        t: f64,
        kind: &str,
        fields: impl IntoIterator<Item = (K, Value)>,
    ) {
        let mut line = Map::new();
        for (key, mut value) in fields {
            abridge(&mut value);
            line.insert(key.into(), value);
        }
        // Every line's time and kind are its own, whatever the fields hold.
        line.insert("t".into(), Value::from((t * 1000.0).round() / 1000.0));
        line.insert("kind".into(), Value::from(kind));
        let mut text = Value::Object(line).to_string();
        for secret in self.secrets.lock().unwrap().iter() {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), MASK);
            }
        }
        text.push('\n');
        self.write_line(&text);
    }

    fn write_line(&self, text: &str) {
        let mut trace = self.trace.lock().unwrap();
        let len = text.len() as u64;
        if !self.budget.fits(len) {
            if !trace.limit_told {
                trace.limit_told = true;
                let told = format!(
                    "{{\"t\":{},\"kind\":\"limit\",\"used\":{}}}\n",
                    self.now(),
                    self.budget.used()
                );
                if let Some(out) = trace.out.as_mut() {
                    let _ = out.write_all(told.as_bytes()).and_then(|_| out.flush());
                }
            }
            return;
        }
        let Some(out) = trace.out.as_mut() else {
            return;
        };
        // Each line reaches the file whole and at once: a killed session
        // keeps everything before its end.
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            trace.out = None;
            self.lose(format!(
                "its trace stops early: {TRACE_FILE} could not be written: {e}"
            ));
            return;
        }
        self.budget.spend(len);
    }

    /// Keep a screenshot (PNG bytes) named after `label`; its path from the
    /// recording's folder, or `None` when the limit is reached.
    pub fn shot(&self, label: &str, png: &[u8]) -> Option<String> {
        if !self.budget.fits(png.len() as u64) {
            return None;
        }
        let n = self.shots.fetch_add(1, Ordering::Relaxed) + 1;
        let label: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        let name = format!("{SHOTS_DIR}/{n:05}-{label}.png");
        let path = self.dir.join(&name);
        let written = private_file(&path).and_then(|mut file| file.write_all(png));
        if let Err(e) = written {
            // No half image is left to be taken for the screen.
            let _ = std::fs::remove_file(&path);
            self.lose(format!("a screenshot could not be written: {e}"));
            return None;
        }
        self.budget.spend(png.len() as u64);
        Some(name)
    }

    /// Note why the recording is not whole; the first reason is kept.
    fn lose(&self, why: String) {
        let mut incomplete = self.incomplete.lock().unwrap();
        if incomplete.is_none() {
            *incomplete = Some(why);
        }
    }

    /// Why the recording is not whole (a write failed: a full disk), if it
    /// is not; its size limit reached is no such reason.
    pub fn incomplete(&self) -> Option<String> {
        self.incomplete.lock().unwrap().clone()
    }

    /// Whether the video would take a frame now: a compositor draws one
    /// only then, so a busy encoder costs the apps nothing.
    /// A changed output the video cannot take now counts as a frame skipped.
    pub fn wants_frame(&self) -> bool {
        let video = self.video.lock().unwrap();
        let Some(video) = video.as_ref() else {
            return false;
        };
        if self.budget.spent() {
            return false;
        }
        if !video.has_room() {
            self.frames_skipped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Offer a frame of the output to the video.
    pub fn frame(&self, frame: Frame) {
        if let Some(video) = self.video.lock().unwrap().as_ref() {
            video.offer(frame);
        }
    }

    /// End the recording: the video's end is written, and the trace's last
    /// line says what the video holds.
    pub fn finish(&self) {
        let Some(mut video) = self.video.lock().unwrap().take() else {
            return;
        };
        let fields = match video.finish() {
            Ok(VideoStats {
                offered,
                encoded,
                dropped,
                unchanged,
                bytes,
            }) => vec![
                ("frames_unchanged", Value::from(unchanged)),
                ("frames_offered", Value::from(offered)),
                ("frames_encoded", Value::from(encoded)),
                ("frames_dropped", Value::from(dropped)),
                ("video_bytes", Value::from(bytes)),
            ],
            Err(e) => {
                self.lose(format!("its video stops early: {e}"));
                vec![("video_error", Value::from(e))]
            }
        };
        let skipped = self.frames_skipped.load(Ordering::Relaxed);
        let fields = fields
            .into_iter()
            .chain([("frames_skipped", Value::from(skipped))]);
        // The end is told even past the limit: it is what makes the rest readable.
        let mut line = Map::new();
        line.insert("t".into(), Value::from(self.now()));
        line.insert("kind".into(), Value::from("end"));
        for (key, value) in fields {
            line.insert(key.into(), value);
        }
        let text = format!("{}\n", Value::Object(line));
        let mut trace = self.trace.lock().unwrap();
        if let Some(out) = trace.out.as_mut() {
            let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
        }
        trace.out = None;
    }
}

/// Replace each string over `LONGEST_STRING` bytes in `value` by its length.
fn abridge(value: &mut Value) {
    match value {
        Value::String(s) if s.len() > LONGEST_STRING => {
            *s = format!("<{} bytes, not kept>", s.len());
        }
        Value::Array(items) => items.iter_mut().for_each(abridge),
        Value::Object(map) => map.values_mut().for_each(abridge),
        _ => {}
    }
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording").field("dir", &self.dir).finish()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(dir: &Path) -> Vec<Value> {
        std::fs::read_to_string(dir.join(TRACE_FILE))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wayrig-record-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_secret_is_masked_in_every_later_line() {
        let dir = temp("secret");
        let recording = Recording::start(&dir, 1 << 20).unwrap();
        recording.secret("hunter\"2");
        recording.event("request", [("text", Value::from("typed hunter\"2 here"))]);
        let png = serde_json::json!({"base64": "A".repeat(5000)});
        recording.event("answer", [("png", png)]);
        recording.finish();
        let text = std::fs::read_to_string(dir.join(TRACE_FILE)).unwrap();
        assert!(!text.contains("hunter"), "{text}");
        let lines = lines(&dir);
        assert_eq!(lines[1]["text"], "typed ••• here");
        assert_eq!(lines[2]["png"]["base64"], "<5000 bytes, not kept>");
        assert_eq!(lines.last().unwrap()["kind"], "end");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_with_a_recording_is_refused() {
        let dir = temp("twice");
        let first = Recording::start(&dir, 1 << 20).unwrap();
        let again = Recording::start(&dir, 1 << 20).err().unwrap();
        assert!(again.contains("holds a recording already"), "{again}");
        drop(first);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn past_the_limit_the_trace_says_so_once_and_stops() {
        let dir = temp("limit");
        let recording = Recording::start(&dir, 600).unwrap();
        for n in 0..50 {
            recording.event("request", [("n", Value::from(n))]);
        }
        assert!(recording.shot("after", &[0u8; 1000]).is_none());
        recording.finish();
        let lines = lines(&dir);
        let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds.iter().filter(|k| **k == "limit").count(), 1);
        assert!(kinds.len() < 20, "{kinds:?}");
        assert_eq!(kinds.last(), Some(&"end"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn frames_become_a_video_of_their_count() {
        let dir = temp("video");
        let recording = Recording::start(&dir, 1 << 30).unwrap();
        let start = Instant::now();
        for n in 0..5u8 {
            let frame = Frame {
                width: 64,
                height: 48,
                rgba: vec![n * 40; 64 * 48 * 4],
                rows: (0, 48),
                pointer: None,
                at: start + std::time::Duration::from_millis(n as u64 * 100),
            };
            let video = recording.video.lock().unwrap();
            video.as_ref().unwrap().offer_waiting(frame);
        }
        recording.finish();
        let end = lines(&dir).pop().unwrap();
        assert_eq!(end["frames_encoded"], 5, "{end}");
        let webm = std::fs::read(dir.join(VIDEO_FILE)).unwrap();
        assert_eq!(&webm[..4], &[0x1A, 0x45, 0xDF, 0xA3]);
        assert!(webm.windows(5).any(|w| w == b"V_VP8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
