//! A VP8 encoder (libvpx, through the C shim beside this file): I420 frames in,
//! compressed frames out, times in milliseconds.

use std::ffi::{c_char, c_int, c_uint, c_ulong, CStr};

#[repr(C)]
struct RawEncoder {
    _private: [u8; 0],
}

extern "C" {
    fn wr_vp8_open(
        width: c_uint,
        height: c_uint,
        bitrate_kbps: c_uint,
        error: *mut *const c_char,
    ) -> *mut RawEncoder;
    fn wr_vp8_encode(
        enc: *mut RawEncoder,
        i420: *mut u8,
        pts: i64,
        duration: c_ulong,
        key: c_int,
        error: *mut *const c_char,
    ) -> c_int;
    fn wr_vp8_packet(
        enc: *mut RawEncoder,
        data: *mut *const u8,
        size: *mut usize,
        pts: *mut i64,
        key: *mut c_int,
    ) -> c_int;
    fn wr_vp8_close(enc: *mut RawEncoder);
}

/// One compressed frame.
pub struct Packet {
    pub data: Vec<u8>,
    /// Its time in milliseconds.
    pub pts: i64,
    pub key: bool,
}

/// An encoder of frames of one size.
pub struct Encoder {
    raw: *mut RawEncoder,
    width: u32,
    height: u32,
}

// SAFETY: the encoder is used by one thread at a time (it is `&mut` for each
// call); libvpx's context holds no thread-bound state.
unsafe impl Send for Encoder {}

fn error_text(error: *const c_char) -> String {
    if error.is_null() {
        return "unknown error".into();
    }
    // SAFETY: libvpx's error strings are static, NUL-terminated.
    unsafe { CStr::from_ptr(error) }
        .to_string_lossy()
        .into_owned()
}

impl Encoder {
    /// An encoder for `width` x `height` frames (both even).
    pub fn new(width: u32, height: u32, bitrate_kbps: u32) -> Result<Encoder, String> {
        if width == 0 || height == 0 || width % 2 == 1 || height % 2 == 1 {
            return Err(format!(
                "VP8 frames here are even-sized, not {width}x{height}"
            ));
        }
        let mut error = std::ptr::null();
        // SAFETY: plain values in, an owned pointer or NULL out.
        let raw = unsafe { wr_vp8_open(width, height, bitrate_kbps, &mut error) };
        if raw.is_null() {
            return Err(format!(
                "libvpx cannot start a VP8 encoder: {}",
                error_text(error)
            ));
        }
        Ok(Encoder { raw, width, height })
    }

    /// The size of the I420 frame `encode` takes.
    pub fn frame_len(&self) -> usize {
        let (w, h) = (self.width as usize, self.height as usize);
        w * h + 2 * (w / 2) * (h / 2)
    }

    /// Encode `i420` (`frame_len` bytes) shown at `pts` ms for `duration`
    /// ms; `None` flushes. Returns the packets it made.
    pub fn encode(
        &mut self,
        i420: Option<&mut [u8]>,
        pts: i64,
        duration: u64,
        key: bool,
    ) -> Result<Vec<Packet>, String> {
        let frame = match i420 {
            Some(frame) if frame.len() != self.frame_len() => {
                return Err(format!(
                    "a frame of {} bytes where {} were expected",
                    frame.len(),
                    self.frame_len()
                ))
            }
            Some(frame) => frame.as_mut_ptr(),
            None => std::ptr::null_mut(),
        };
        let mut error = std::ptr::null();
        // SAFETY: the frame holds frame_len bytes laid out as the shim wraps
        // them; libvpx reads it during this call only.
        let status = unsafe {
            wr_vp8_encode(
                self.raw,
                frame,
                pts,
                duration as c_ulong,
                key as c_int,
                &mut error,
            )
        };
        if status != 0 {
            return Err(format!("VP8 encoding failed: {}", error_text(error)));
        }
        let mut packets = Vec::new();
        loop {
            let (mut data, mut size, mut pts, mut key) = (std::ptr::null(), 0usize, 0i64, 0);
            // SAFETY: the out-pointers are valid; the packet's bytes live until
            // the next encode, and are copied before it.
            let more = unsafe { wr_vp8_packet(self.raw, &mut data, &mut size, &mut pts, &mut key) };
            if more == 0 {
                break;
            }
            // SAFETY: libvpx gives `size` bytes at `data`.
            let bytes = unsafe { std::slice::from_raw_parts(data, size) }.to_vec();
            packets.push(Packet {
                data: bytes,
                pts,
                key: key != 0,
            });
        }
        Ok(packets)
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        // SAFETY: opened by wr_vp8_open and closed once.
        unsafe { wr_vp8_close(self.raw) }
    }
}

/// RGBA pixels (4 bytes each, rows packed) as I420 of the even size at
/// least theirs (BT.601, studio range), the last row and column repeated.
/// Only the rows in `rows` are converted when `out` already holds the rest
/// (the frame before, of the same size).
pub fn rgba_to_i420(
    rgba: &[u8],
    width: u32,
    height: u32,
    rows: Option<(u32, u32)>,
    out: &mut Vec<u8>,
) {
    let (w, h) = (width as usize, height as usize);
    let (ew, eh) = (w.next_multiple_of(2), h.next_multiple_of(2));
    let len = ew * eh + 2 * (ew / 2) * (eh / 2);
    let (from, to) = match rows {
        Some((from, to)) if out.len() == len => {
            // Whole pairs of rows, as chroma takes them.
            (
                (from as usize / 2) * 2,
                (to as usize).min(h).next_multiple_of(2).min(eh),
            )
        }
        _ => {
            out.clear();
            out.resize(len, 0);
            (0, eh)
        }
    };
    let (luma, chroma) = out.split_at_mut(ew * eh);
    let (u_plane, v_plane) = chroma.split_at_mut((ew / 2) * (eh / 2));
    let row_of = |y: usize| &rgba[y.min(h - 1) * w * 4..][..w * 4];
    let luma_of = |p: &[u8]| {
        let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
        (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8
    };
    for y in (from..to).step_by(2) {
        let (top, bottom) = (row_of(y), row_of(y + 1));
        let (luma_top, luma_bottom) = luma[y * ew..(y + 2) * ew].split_at_mut(ew);
        for cx in 0..ew / 2 {
            let (mut r, mut g, mut b) = (0, 0, 0);
            for (row, out_row) in [(top, &mut *luma_top), (bottom, &mut *luma_bottom)] {
                for dx in 0..2 {
                    let x = (cx * 2 + dx).min(w - 1);
                    let p = &row[x * 4..x * 4 + 3];
                    out_row[cx * 2 + dx] = luma_of(p);
                    r += p[0] as i32;
                    g += p[1] as i32;
                    b += p[2] as i32;
                }
            }
            let (r, g, b) = (r / 4, g / 4, b / 4);
            let at = (y / 2) * (ew / 2) + cx;
            u_plane[at] = (((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128) as u8;
            v_plane[at] = (((112 * r - 94 * g - 18 * b + 128) >> 8) + 128) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_and_black_take_studio_range() {
        let rgba = [
            255, 255, 255, 255, 0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 255,
        ];
        let mut out = Vec::new();
        rgba_to_i420(&rgba, 2, 2, None, &mut out);
        assert_eq!(&out[..4], &[235, 16, 235, 16]);
        assert_eq!(&out[4..], &[128, 128]);
    }

    #[test]
    fn an_odd_size_is_padded_by_its_edge() {
        let rgba = [0u8, 0, 0, 255].repeat(3 * 3);
        let mut out = Vec::new();
        rgba_to_i420(&rgba, 3, 3, None, &mut out);
        assert_eq!(out.len(), 4 * 4 + 2 * 2 * 2);
        assert!(out[..16].iter().all(|&y| y == 16));
    }

    #[test]
    fn only_the_changed_rows_are_converted_again() {
        let mut rgba = [0u8, 0, 0, 255].repeat(4 * 6);
        let mut out = Vec::new();
        rgba_to_i420(&rgba, 4, 6, None, &mut out);
        // Rows 2 and 5 turn white; only row 3 is said to have changed.
        for y in [2, 5] {
            rgba[y * 16..(y + 1) * 16].fill(255);
        }
        rgba_to_i420(&rgba, 4, 6, Some((3, 4)), &mut out);
        // Row 3 is converted with its pair, row 2; row 5 is left as it was.
        assert!(out[2 * 4..3 * 4].iter().all(|&y| y == 235));
        assert!(out[5 * 4..6 * 4].iter().all(|&y| y == 16));
    }

    #[test]
    fn a_frame_encodes_to_a_key_frame_then_a_smaller_one() {
        let mut encoder = Encoder::new(64, 48, 500).unwrap();
        let mut frame = vec![0u8; encoder.frame_len()];
        let first = encoder.encode(Some(&mut frame), 0, 16, true).unwrap();
        let second = encoder.encode(Some(&mut frame), 16, 16, false).unwrap();
        assert!(first[0].key && !second[0].key);
        assert!(second[0].data.len() < first[0].data.len());
        assert_eq!(second[0].pts, 16);
        assert!(Encoder::new(63, 48, 500).is_err());
    }
}
