//! A recording of a session in one directory: `trace.jsonl` (one JSON line
//! per event, with a time), `shots/` (PNG screenshots at actions) and
//! `video.webm` (the output as drawn), within a size limit.

mod budget;
mod trace;
mod video;
mod viewer;
mod vp8;
mod webm;

pub use trace::Recording;
pub use video::{Frame, VideoStats};
pub use viewer::{write_viewer, VIEWER_FILE};

/// The trace's file in a recording's directory.
pub const TRACE_FILE: &str = "trace.jsonl";
/// The video's file in a recording's directory.
pub const VIDEO_FILE: &str = "video.webm";
/// The screenshots' folder in a recording's directory.
pub const SHOTS_DIR: &str = "shots";
/// The default size limit of a recording: 1 GiB.
pub const DEFAULT_LIMIT: u64 = 1 << 30;
