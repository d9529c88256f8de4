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
pub fn rgba_to_i420(rgba: &[u8], width: u32, height: u32, out: &mut Vec<u8>) {
    let (w, h) = (width as usize, height as usize);
    let (ew, eh) = (w.next_multiple_of(2), h.next_multiple_of(2));
    out.clear();
    out.resize(ew * eh + 2 * (ew / 2) * (eh / 2), 0);
    let pixel = |x: usize, y: usize| {
        let at = (y.min(h - 1) * w + x.min(w - 1)) * 4;
        (rgba[at] as i32, rgba[at + 1] as i32, rgba[at + 2] as i32)
    };
    let (luma, chroma) = out.split_at_mut(ew * eh);
    let (u_plane, v_plane) = chroma.split_at_mut((ew / 2) * (eh / 2));
    for y in 0..eh {
        for x in 0..ew {
            let (r, g, b) = pixel(x, y);
            luma[y * ew + x] = (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8;
        }
    }
    for cy in 0..eh / 2 {
        for cx in 0..ew / 2 {
            let (mut r, mut g, mut b) = (0, 0, 0);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (pr, pg, pb) = pixel(cx * 2 + dx, cy * 2 + dy);
                r += pr;
                g += pg;
                b += pb;
            }
            let (r, g, b) = (r / 4, g / 4, b / 4);
            u_plane[cy * (ew / 2) + cx] = (((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128) as u8;
            v_plane[cy * (ew / 2) + cx] = (((112 * r - 94 * g - 18 * b + 128) >> 8) + 128) as u8;
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
        rgba_to_i420(&rgba, 2, 2, &mut out);
        assert_eq!(&out[..4], &[235, 16, 235, 16]);
        assert_eq!(&out[4..], &[128, 128]);
    }

    #[test]
    fn an_odd_size_is_padded_by_its_edge() {
        let rgba = [0u8, 0, 0, 255].repeat(3 * 3);
        let mut out = Vec::new();
        rgba_to_i420(&rgba, 3, 3, &mut out);
        assert_eq!(out.len(), 4 * 4 + 2 * 2 * 2);
        assert!(out[..16].iter().all(|&y| y == 16));
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
