//! Where a toplevel's pixels really changed between two looks: a hash per
//! tile of its shm buffer, compared, since toolkits damage more than they draw.

use smithay::backend::renderer::utils::RendererSurfaceStateUserData;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::wayland::compositor::with_states;
use wayrig_host::Rect;

/// A tile's side, in buffer pixels.
const TILE: usize = 32;

/// A hash of each tile of one buffer, row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tiles {
    /// The buffer's size in pixels.
    width: usize,
    height: usize,
    hashes: Vec<u64>,
}

impl Tiles {
    /// The tiles of the buffer a surface shows now; `None` when it has none
    /// that is ours to read (not shm, or not 4 bytes a pixel).
    pub fn of(surface: &WlSurface) -> Option<Tiles> {
        with_states(surface, |states| {
            let state = states.data_map.get::<RendererSurfaceStateUserData>()?;
            let state = state.lock().unwrap();
            let buffer = state.buffer()?;
            smithay::wayland::shm::with_buffer_contents(buffer, |ptr, len, data| {
                let (width, height) = (data.width as usize, data.height as usize);
                let (offset, stride) = (data.offset as usize, data.stride as usize);
                if stride < width * 4 || offset + stride * height > len {
                    return None;
                }
                // SAFETY: smithay maps the pool for the duration of this call and
                // the range was checked to lie inside it; the client does not
                // write a buffer the compositor holds until it is released.
                let bytes = unsafe { std::slice::from_raw_parts(ptr.add(offset), stride * height) };
                Some(Tiles::hash(bytes, width, height, stride))
            })
            .ok()
            .flatten()
        })
    }

    /// Hash the tiles of pixels `bytes` (4 bytes each, rows `stride` apart).
    pub(crate) fn hash(bytes: &[u8], width: usize, height: usize, stride: usize) -> Tiles {
        let across = width.div_ceil(TILE);
        let mut hashes = vec![0u64; across * height.div_ceil(TILE)];
        for y in 0..height {
            let row = &bytes[y * stride..y * stride + width * 4];
            let tiles = &mut hashes[(y / TILE) * across..][..across];
            for (tile, chunk) in tiles.iter_mut().zip(row.chunks(TILE * 4)) {
                *tile = fold(*tile, chunk);
            }
        }
        Tiles {
            width,
            height,
            hashes,
        }
    }

    /// How many tiles the buffer has.
    pub fn count(&self) -> usize {
        self.hashes.len()
    }

    /// For each tile, whether it differs from `before`; `None` when the
    /// buffers differ in size.
    pub fn changed(&self, before: &Tiles) -> Option<Vec<bool>> {
        ((self.width, self.height) == (before.width, before.height)).then(|| {
            self.hashes
                .iter()
                .zip(&before.hashes)
                .map(|(now, was)| now != was)
                .collect()
        })
    }

    /// The rectangles, in buffer pixels, whose tiles differ from `before`;
    /// `None` when the buffers differ in size and cannot be compared.
    pub fn changed_since(&self, before: &Tiles) -> Option<Vec<Rect>> {
        if (self.width, self.height) != (before.width, before.height) {
            return None;
        }
        let across = self.width.div_ceil(TILE);
        let mut rects: Vec<Rect> = Vec::new();
        for (i, (now, was)) in self.hashes.iter().zip(&before.hashes).enumerate() {
            if now == was {
                continue;
            }
            let (x, y) = ((i % across) * TILE, (i / across) * TILE);
            let w = TILE.min(self.width - x);
            let h = TILE.min(self.height - y);
            let tile = Rect::new(x as i32, y as i32, w as i32, h as i32);
            // Runs of changed tiles along a row make one rectangle.
            match rects.last_mut() {
                Some(last) if last.y == tile.y && last.x + last.width == tile.x => {
                    last.width += tile.width
                }
                _ => rects.push(tile),
            }
        }
        Some(rects)
    }
}

/// Fold a run of bytes into a tile's running hash, through their CRC-32 (a
/// changed pixel always changes it).
fn fold(hash: u64, bytes: &[u8]) -> u64 {
    let crc = u64::from(crc32fast::hash(bytes));
    (hash.rotate_left(5) ^ crc).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(width: usize, height: usize, dot: Option<(usize, usize)>) -> Vec<u8> {
        let mut bytes = vec![0x80u8; width * height * 4];
        if let Some((x, y)) = dot {
            bytes[(y * width + x) * 4] = 0xff;
        }
        bytes
    }

    #[test]
    fn one_changed_pixel_is_found_in_its_tile_and_nowhere_else() {
        let (w, h) = (100, 70);
        let before = Tiles::hash(&image(w, h, None), w, h, w * 4);
        assert_eq!(
            Tiles::hash(&image(w, h, None), w, h, w * 4).changed_since(&before),
            Some(vec![])
        );
        let after = Tiles::hash(&image(w, h, Some((99, 69))), w, h, w * 4);
        // The last tile of the last row is cut short by the buffer's edge.
        assert_eq!(
            after.changed_since(&before),
            Some(vec![Rect::new(96, 64, 4, 6)])
        );
        let other = Tiles::hash(&image(w, h + 1, None), w, h + 1, w * 4);
        assert_eq!(other.changed_since(&before), None, "another size");
    }

    #[test]
    fn neighbouring_changed_tiles_on_a_row_make_one_rectangle() {
        let (w, h) = (128, 32);
        let mut bytes = image(w, h, None);
        for x in [0, 40, 70] {
            bytes[x * 4 + 1] = 0;
        }
        let before = Tiles::hash(&image(w, h, None), w, h, w * 4);
        let after = Tiles::hash(&bytes, w, h, w * 4);
        assert_eq!(
            after.changed_since(&before),
            Some(vec![Rect::new(0, 0, 96, 32)])
        );
    }
}
