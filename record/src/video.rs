//! The video of a recording: frames offered by the compositor as it draws,
//! encoded to VP8 on a thread of its own and written as WebM; a frame that
//! comes while the encoder is busy is dropped (and counted), never waited for.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::budget::Budget;
use crate::vp8::{rgba_to_i420, Encoder};
use crate::webm::WebmWriter;

/// The video's bit rate: screens are mostly still, and text must stay legible.
const BITRATE_KBPS: u32 = 2_000;
/// A key frame at least this often (ms of video), so that a player can seek.
const KEY_EVERY_MS: i64 = 2_000;
/// Frames waiting for the encoder at most; more are dropped.
const QUEUE: usize = 2;

/// One frame of the output as drawn.
pub struct Frame {
    pub width: u32,
    pub height: u32,
    /// 4 bytes a pixel: R, G, B, A; rows packed.
    pub rgba: Vec<u8>,
    /// The rows that changed since the frame before (from, to: `to` not
    /// included); the rest are as they were.
    pub rows: (u32, u32),
    /// Where the pointer is, in the frame's pixels: drawn over it, so that
    /// the video shows where each click went.
    pub pointer: Option<(i32, i32)>,
    /// When it was drawn.
    pub at: Instant,
}

/// What a finished video holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VideoStats {
    /// Frames offered by the compositor.
    pub offered: u64,
    /// Frames encoded into the file.
    pub encoded: u64,
    /// Frames dropped because the encoder was busy (or the size limit hit).
    pub dropped: u64,
    /// Frames drawn again with nothing changed: no new frame of video.
    pub unchanged: u64,
    pub bytes: u64,
}

#[derive(Default)]
struct Counts {
    offered: AtomicU64,
    encoded: AtomicU64,
    dropped: AtomicU64,
    unchanged: AtomicU64,
}

/// A video being recorded.
pub struct Video {
    frames: Option<SyncSender<Frame>>,
    counts: Arc<Counts>,
    encoder: Option<JoinHandle<Result<u64, String>>>,
}

impl Video {
    /// Record to `path`, its times from `zero`.
    pub(crate) fn start(path: PathBuf, zero: Instant, budget: Arc<Budget>) -> Video {
        let (frames, queue) = sync_channel::<Frame>(QUEUE);
        let counts = Arc::new(Counts::default());
        let encoder_counts = counts.clone();
        let encoder = std::thread::Builder::new()
            .name("wayrig-video".into())
            .spawn(move || encode_all(path, zero, queue, encoder_counts, budget))
            .expect("cannot start the video encoder's thread");
        Video {
            frames: Some(frames),
            counts,
            encoder: Some(encoder),
        }
    }

    /// Offer a frame; dropped when the encoder is behind.
    pub fn offer(&self, frame: Frame) {
        self.counts.offered.fetch_add(1, Ordering::Relaxed);
        let Some(frames) = &self.frames else {
            return;
        };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = frames.try_send(frame) {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Offer a frame, waiting for room (tests count frames exactly).
    #[cfg(test)]
    pub(crate) fn offer_waiting(&self, frame: Frame) {
        self.counts.offered.fetch_add(1, Ordering::Relaxed);
        if let Some(frames) = &self.frames {
            if frames.send(frame).is_err() {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether a frame offered now would be taken.
    pub(crate) fn has_room(&self) -> bool {
        let c = &self.counts;
        let done = c.encoded.load(Ordering::Relaxed)
            + c.dropped.load(Ordering::Relaxed)
            + c.unchanged.load(Ordering::Relaxed);
        c.offered.load(Ordering::Relaxed).saturating_sub(done) < QUEUE as u64
    }

    /// Encode what is queued, write the file's end, and say what it holds.
    pub fn finish(&mut self) -> Result<VideoStats, String> {
        self.frames = None;
        let bytes = match self.encoder.take() {
            Some(encoder) => encoder
                .join()
                .map_err(|_| "the video encoder panicked".to_string())??,
            None => 0,
        };
        Ok(VideoStats {
            offered: self.counts.offered.load(Ordering::Relaxed),
            encoded: self.counts.encoded.load(Ordering::Relaxed),
            dropped: self.counts.dropped.load(Ordering::Relaxed),
            unchanged: self.counts.unchanged.load(Ordering::Relaxed),
            bytes,
        })
    }
}

impl Drop for Video {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// An arrow pointer, its tip at the top left: B black, W white.
const POINTER: [&str; 17] = [
    "B",
    "BB",
    "BWB",
    "BWWB",
    "BWWWB",
    "BWWWWB",
    "BWWWWWB",
    "BWWWWWWB",
    "BWWWWWWWB",
    "BWWWWWWWWB",
    "BWWWWWBBBBB",
    "BWWBWWB",
    "BWB.BWWB",
    "BB..BWWB",
    "B....BWWB",
    ".....BWWB",
    "......BB",
];

/// Draw the pointer with its tip at `x`, `y` on RGBA pixels `width` wide.
fn draw_pointer(rgba: &mut [u8], width: u32, height: u32, x: i32, y: i32) {
    for (dy, row) in POINTER.iter().enumerate() {
        for (dx, c) in row.bytes().enumerate() {
            let (px, py) = (x + dx as i32, y + dy as i32);
            if px < 0 || py < 0 || px >= width as i32 || py >= height as i32 {
                continue;
            }
            let colour = match c {
                b'B' => 0,
                b'W' => 255,
                _ => continue,
            };
            let at = (py as usize * width as usize + px as usize) * 4;
            rgba[at..at + 3].fill(colour);
        }
    }
}

/// The rows of `rows` (from, to) where `now` differs from `before` (RGBA
/// rows of `width` pixels); all of them when `before` is another size;
/// `None` when none differ.
fn changed_rows(before: &[u8], now: &[u8], width: u32, rows: (u32, u32)) -> Option<(u32, u32)> {
    let stride = width as usize * 4;
    let height = (now.len() / stride.max(1)) as u32;
    if before.len() != now.len() {
        return Some((0, height));
    }
    let (from, to) = (rows.0.min(height), rows.1.min(height));
    let differs = |y: &u32| {
        let at = *y as usize * stride;
        before[at..at + stride] != now[at..at + stride]
    };
    let first = (from..to).find(differs)?;
    let last = (first..to).rev().find(differs)?;
    Some((first, last + 1))
}

/// The encoder thread: until the sender goes, encode each frame as it comes.
fn encode_all(
    path: PathBuf,
    zero: Instant,
    queue: std::sync::mpsc::Receiver<Frame>,
    counts: Arc<Counts>,
    budget: Arc<Budget>,
) -> Result<u64, String> {
    let mut open: Option<(Encoder, WebmWriter)> = None;
    let mut size = (0, 0);
    let mut i420 = Vec::new();
    // The frame before, to find the rows that really changed: toolkits
    // damage their whole window for a spinner's few pixels.
    let mut last_rgba: Vec<u8> = Vec::new();
    let mut last_key: Option<i64> = None;
    let mut last_pts = -1i64;
    let mut written = 0u64;
    for frame in queue {
        if budget.spent() {
            counts.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let (w, h) = (
            frame.width.next_multiple_of(2),
            frame.height.next_multiple_of(2),
        );
        if open.is_none() {
            let encoder = Encoder::new(w, h, BITRATE_KBPS)?;
            let writer = WebmWriter::create(&path, w, h, "wayrig")
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written = writer.len();
            budget.spend(written);
            open = Some((encoder, writer));
            size = (w, h);
        }
        let (encoder, writer) = open.as_mut().expect("opened above");
        if (w, h) != size {
            // The output keeps its size for a session; a frame of another is not ours.
            counts.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // Milliseconds are the container's unit: two frames in one are one.
        let pts = (frame.at.saturating_duration_since(zero).as_millis() as i64).max(last_pts + 1);
        last_pts = pts;
        let mut frame = frame;
        let mut rows = frame.rows;
        if let Some((x, y)) = frame.pointer {
            draw_pointer(&mut frame.rgba, frame.width, frame.height, x, y);
            // Where it was drawn before may be uncovered now: any row may differ.
            rows = (0, frame.height);
        }
        let Some(rows) = changed_rows(&last_rgba, &frame.rgba, frame.width, rows) else {
            // Drawn again, the same: no new frame of video.
            counts.unchanged.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        rgba_to_i420(
            &frame.rgba,
            frame.width,
            frame.height,
            Some(rows),
            &mut i420,
        );
        last_rgba = frame.rgba;
        let key = last_key.is_none_or(|last| pts - last >= KEY_EVERY_MS);
        let packets = encoder.encode(Some(&mut i420), pts, 1, key)?;
        for packet in packets {
            if packet.key {
                last_key = Some(packet.pts);
            }
            writer
                .add_frame(&packet.data, packet.pts, packet.key)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        counts.encoded.fetch_add(1, Ordering::Relaxed);
        let now = writer.len();
        budget.spend(now.saturating_sub(written));
        written = now;
    }
    let Some((mut encoder, mut writer)) = open else {
        return Ok(0);
    };
    for packet in encoder.encode(None, last_pts + 1, 1, false)? {
        writer
            .add_frame(&packet.data, packet.pts, packet.key)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let end = zero.elapsed().as_millis() as i64;
    writer
        .finish(end)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rows_that_differ_count_as_changed() {
        let before = vec![0u8; 2 * 4 * 5];
        let mut now = before.clone();
        now[2 * 8] = 1; // row 2
        now[3 * 8 + 7] = 1; // row 3
        assert_eq!(changed_rows(&before, &now, 2, (0, 5)), Some((2, 4)));
        assert_eq!(changed_rows(&before, &now, 2, (3, 5)), Some((3, 4)));
        assert_eq!(changed_rows(&before, &before, 2, (0, 5)), None);
        assert_eq!(changed_rows(&[], &now, 2, (2, 3)), Some((0, 5)));
    }

    #[test]
    fn the_pointer_is_drawn_at_its_tip_and_clipped_at_the_edge() {
        let mut rgba = vec![128u8; 20 * 20 * 4];
        draw_pointer(&mut rgba, 20, 20, 15, 10);
        let at = |x: usize, y: usize| rgba[(y * 20 + x) * 4];
        assert_eq!(at(15, 10), 0, "the tip is black");
        assert_eq!(at(16, 12), 255, "inside is white");
        assert_eq!(at(14, 10), 128, "left of the tip is untouched");
        assert_eq!(at(5, 19), 128, "far from it is untouched");
        // Off the frame's corner, nothing is drawn and nothing breaks.
        draw_pointer(&mut rgba, 20, 20, -3, 19);
    }
}
