//! A WebM writer for one VP8 video track: EBML header, segment, info, tracks,
//! clusters of SimpleBlocks and cues; streamed, with sizes patched at the end.

use std::fs::OpenOptions;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

// Element IDs, from the Matroska and WebM specifications.
const EBML: u32 = 0x1A45_DFA3;
const EBML_VERSION: u32 = 0x4286;
const EBML_READ_VERSION: u32 = 0x42F7;
const EBML_MAX_ID_LENGTH: u32 = 0x42F2;
const EBML_MAX_SIZE_LENGTH: u32 = 0x42F3;
const DOC_TYPE: u32 = 0x4282;
const DOC_TYPE_VERSION: u32 = 0x4287;
const DOC_TYPE_READ_VERSION: u32 = 0x4285;
const SEGMENT: u32 = 0x1853_8067;
const SEEK_HEAD: u32 = 0x114D_9B74;
const SEEK: u32 = 0x4DBB;
const SEEK_ID: u32 = 0x53AB;
const SEEK_POSITION: u32 = 0x53AC;
const INFO: u32 = 0x1549_A966;
const TIMESTAMP_SCALE: u32 = 0x2A_D7B1;
const DURATION: u32 = 0x4489;
const MUXING_APP: u32 = 0x4D80;
const WRITING_APP: u32 = 0x5741;
const TRACKS: u32 = 0x1654_AE6B;
const TRACK_ENTRY: u32 = 0xAE;
const TRACK_NUMBER: u32 = 0xD7;
const TRACK_UID: u32 = 0x73C5;
const TRACK_TYPE: u32 = 0x83;
const FLAG_LACING: u32 = 0x9C;
const CODEC_ID: u32 = 0x86;
const VIDEO: u32 = 0xE0;
const PIXEL_WIDTH: u32 = 0xB0;
const PIXEL_HEIGHT: u32 = 0xBA;
const CLUSTER: u32 = 0x1F43_B675;
const TIMESTAMP: u32 = 0xE7;
const SIMPLE_BLOCK: u32 = 0xA3;
const CUES: u32 = 0x1C53_BB6B;
const CUE_POINT: u32 = 0xBB;
const CUE_TIME: u32 = 0xB3;
const CUE_TRACK_POSITIONS: u32 = 0xB7;
const CUE_TRACK: u32 = 0xF7;
const CUE_CLUSTER_POSITION: u32 = 0xF1;

/// A size field of 8 bytes that says "unknown", patched when known.
const UNKNOWN_SIZE: [u8; 8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];

/// The longest a cluster runs: a block's time is 16 bits from its cluster's.
const CLUSTER_SPAN_MS: i64 = 30_000;

fn id_bytes(id: u32) -> Vec<u8> {
    let bytes = id.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    bytes[skip..].to_vec()
}

/// `size` as an EBML variable-size integer in the fewest bytes.
fn size_bytes(size: u64) -> Vec<u8> {
    for len in 1..=8u32 {
        // All ones is reserved for "unknown".
        if size < (1u64 << (7 * len)) - 1 {
            let mut out = vec![0u8; len as usize];
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = (size >> (8 * (len as usize - 1 - i))) as u8;
            }
            out[0] |= 1 << (8 - len);
            return out;
        }
    }
    panic!("an EBML size over 2^56");
}

/// An element with its content.
fn element(id: u32, content: &[u8]) -> Vec<u8> {
    let mut out = id_bytes(id);
    out.extend(size_bytes(content.len() as u64));
    out.extend_from_slice(content);
    out
}

fn uint(id: u32, value: u64) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(7);
    element(id, &bytes[skip..])
}

/// An unsigned integer that always takes 8 bytes, to be patched in place.
fn uint8(id: u32, value: u64) -> Vec<u8> {
    element(id, &value.to_be_bytes())
}

fn text(id: u32, value: &str) -> Vec<u8> {
    element(id, value.as_bytes())
}

fn float(id: u32, value: f64) -> Vec<u8> {
    element(id, &value.to_be_bytes())
}

/// A WebM file being written.
pub struct WebmWriter {
    out: BufWriter<std::fs::File>,
    /// Where the segment's content starts (positions inside are from here).
    segment_start: u64,
    /// Where the seek head's entry for the cues keeps its position.
    cues_seek_at: u64,
    duration_at: u64,
    cluster: Option<Cluster>,
    cues: Vec<(i64, u64)>,
    last_pts: i64,
    written: u64,
}

struct Cluster {
    start: i64,
    blocks: Vec<u8>,
}

impl WebmWriter {
    /// Start a file at `path` for `width` x `height` VP8 frames.
    pub fn create(path: &Path, width: u32, height: u32, app: &str) -> io::Result<WebmWriter> {
        // A recording shows what the apps showed: the user's alone to read.
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        let mut out = BufWriter::new(file);
        let header = [
            uint(EBML_VERSION, 1),
            uint(EBML_READ_VERSION, 1),
            uint(EBML_MAX_ID_LENGTH, 4),
            uint(EBML_MAX_SIZE_LENGTH, 8),
            text(DOC_TYPE, "webm"),
            uint(DOC_TYPE_VERSION, 4),
            uint(DOC_TYPE_READ_VERSION, 2),
        ]
        .concat();
        out.write_all(&element(EBML, &header))?;
        out.write_all(&id_bytes(SEGMENT))?;
        out.write_all(&UNKNOWN_SIZE)?;
        let segment_start = out.stream_position()?;

        let info = [
            uint(TIMESTAMP_SCALE, 1_000_000),
            text(MUXING_APP, app),
            text(WRITING_APP, app),
            float(DURATION, 0.0),
        ]
        .concat();
        let tracks = element(
            TRACK_ENTRY,
            &[
                uint(TRACK_NUMBER, 1),
                uint(TRACK_UID, 1),
                uint(TRACK_TYPE, 1),
                uint(FLAG_LACING, 0),
                text(CODEC_ID, "V_VP8"),
                element(
                    VIDEO,
                    &[
                        uint(PIXEL_WIDTH, width as u64),
                        uint(PIXEL_HEIGHT, height as u64),
                    ]
                    .concat(),
                ),
            ]
            .concat(),
        );
        let seek = |id: u32, position: u64| {
            element(
                SEEK,
                &[
                    element(SEEK_ID, &id_bytes(id)),
                    uint8(SEEK_POSITION, position),
                ]
                .concat(),
            )
        };
        // The seek head's size does not depend on the positions it holds.
        let seek_head_len = element(
            SEEK_HEAD,
            &[seek(INFO, 0), seek(TRACKS, 0), seek(CUES, 0)].concat(),
        )
        .len() as u64;
        let info = element(INFO, &info);
        let tracks = element(TRACKS, &tracks);
        let info_at = seek_head_len;
        let tracks_at = info_at + info.len() as u64;
        let seek_head = element(
            SEEK_HEAD,
            &[seek(INFO, info_at), seek(TRACKS, tracks_at), seek(CUES, 0)].concat(),
        );
        // The cues' position is the last 8 bytes of the seek head.
        let cues_seek_at = segment_start + seek_head.len() as u64 - 8;
        out.write_all(&seek_head)?;
        // The duration is the last 8 bytes of the info.
        let duration_at = segment_start + info_at + info.len() as u64 - 8;
        out.write_all(&info)?;
        out.write_all(&tracks)?;
        let written = out.stream_position()?;
        Ok(WebmWriter {
            out,
            segment_start,
            cues_seek_at,
            duration_at,
            cluster: None,
            cues: Vec::new(),
            last_pts: 0,
            written,
        })
    }

    /// Bytes written so far (the open cluster's included).
    pub fn len(&self) -> u64 {
        self.written + self.cluster.as_ref().map_or(0, |c| c.blocks.len() as u64)
    }

    /// Add a frame at `pts` ms (not before the last); a key frame starts a cluster.
    pub fn add_frame(&mut self, data: &[u8], pts: i64, key: bool) -> io::Result<()> {
        let pts = pts.max(self.last_pts);
        self.last_pts = pts;
        let starts_cluster = match &self.cluster {
            None => true,
            Some(c) => key || pts - c.start > CLUSTER_SPAN_MS,
        };
        if starts_cluster {
            self.close_cluster()?;
            self.cluster = Some(Cluster {
                start: pts,
                blocks: Vec::new(),
            });
        }
        let cluster = self.cluster.as_mut().expect("a cluster was opened");
        let relative = (pts - cluster.start) as i16;
        let mut block = vec![0x81];
        block.extend_from_slice(&relative.to_be_bytes());
        block.push(if key { 0x80 } else { 0x00 });
        block.extend_from_slice(data);
        cluster.blocks.extend(element(SIMPLE_BLOCK, &block));
        Ok(())
    }

    fn close_cluster(&mut self) -> io::Result<()> {
        let Some(cluster) = self.cluster.take() else {
            return Ok(());
        };
        let position = self.written - self.segment_start;
        self.cues.push((cluster.start, position));
        let content = [uint(TIMESTAMP, cluster.start as u64), cluster.blocks].concat();
        let bytes = element(CLUSTER, &content);
        self.out.write_all(&bytes)?;
        // Each cluster reaches the disk whole: a killed recording keeps them.
        self.out.flush()?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Write the last cluster, the cues and the sizes; `duration_ms` is how
    /// long the video runs.
    pub fn finish(mut self, duration_ms: i64) -> io::Result<u64> {
        self.close_cluster()?;
        let cues_at = self.written - self.segment_start;
        let points: Vec<u8> = self
            .cues
            .iter()
            .flat_map(|&(time, position)| {
                element(
                    CUE_POINT,
                    &[
                        uint(CUE_TIME, time as u64),
                        element(
                            CUE_TRACK_POSITIONS,
                            &[uint(CUE_TRACK, 1), uint(CUE_CLUSTER_POSITION, position)].concat(),
                        ),
                    ]
                    .concat(),
                )
            })
            .collect();
        let cues = element(CUES, &points);
        self.out.write_all(&cues)?;
        self.written += cues.len() as u64;
        let segment_size = self.written - self.segment_start;
        let mut size = segment_size.to_be_bytes();
        size[0] = 0x01;
        self.out.seek(SeekFrom::Start(self.segment_start - 8))?;
        self.out.write_all(&size)?;
        self.out.seek(SeekFrom::Start(self.cues_seek_at))?;
        self.out.write_all(&cues_at.to_be_bytes())?;
        self.out.seek(SeekFrom::Start(self.duration_at))?;
        self.out
            .write_all(&(duration_ms.max(self.last_pts) as f64).to_be_bytes())?;
        self.out.flush()?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_the_fewest_bytes_and_never_all_ones() {
        assert_eq!(size_bytes(0), vec![0x80]);
        assert_eq!(size_bytes(126), vec![0xFE]);
        assert_eq!(size_bytes(127), vec![0x40, 0x7F]);
        assert_eq!(size_bytes(300), vec![0x41, 0x2C]);
    }

    #[test]
    fn ids_keep_their_marker_bytes() {
        assert_eq!(id_bytes(SEGMENT), vec![0x18, 0x53, 0x80, 0x67]);
        assert_eq!(id_bytes(SIMPLE_BLOCK), vec![0xA3]);
        assert_eq!(uint(TRACK_NUMBER, 1), vec![0xD7, 0x81, 0x01]);
    }
}
