//! Offscreen captures with the pixman renderer: a window's surface tree (covered
//! or minimized alike), a popup's, or the whole output, as raw pixels.

use smithay::backend::renderer::damage::OutputDamageTracker;
use smithay::backend::renderer::element::surface::{
    render_elements_from_surface_tree, WaylandSurfaceRenderElement,
};
use smithay::backend::renderer::element::{AsRenderElements, Kind};
use smithay::backend::renderer::pixman::PixmanRenderer;
use smithay::backend::renderer::Bind;
use smithay::desktop::{Space, Window};
use smithay::output::Output;
use smithay::reexports::pixman;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Physical, Point, Rectangle, Scale, Size, Transform};
use wayrig_host::Capture;

/// Grey behind transparent pixels, so every captured pixel is opaque.
const BACKGROUND: [f32; 4] = [0.18, 0.18, 0.18, 1.0];
/// The most pixels a capture holds (8192 x 8192, 256 MiB): a window's size
/// is the app's to say, and one past any display is refused, not allocated.
const CAPTURE_PIXELS_MOST: u64 = 1 << 26;

/// Opaque pixels, row-major without padding, one word per pixel holding the
/// bytes R, G, B, A in memory order (pixman's A8B8G8R8 on a little-endian machine).
#[derive(Debug, Clone)]
pub struct Pixels {
    pub width: u32,
    pub height: u32,
    words: Vec<u32>,
}

impl Pixels {
    pub fn rgba(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }

    /// The pixels as a capture crosses the host boundary.
    pub fn into_capture(self) -> Capture {
        Capture {
            width: self.width,
            height: self.height,
            rgba: self.rgba().to_vec(),
        }
    }
}

type Element = WaylandSurfaceRenderElement<PixmanRenderer>;

/// A window's content rectangle with its subsurfaces and popups.
pub fn render_window(
    renderer: &mut PixmanRenderer,
    window: &Window,
    scale: f64,
) -> Result<Pixels, String> {
    let geo = window.geometry();
    let scale = Scale::from(scale);
    let elements: Vec<Element> =
        window.render_elements(renderer, origin_for(geo.loc, scale), scale, 1.0);
    render(renderer, &elements, physical_size(geo.size, scale), scale)
}

/// A single surface tree (a popup) over its window geometry.
pub fn render_surface(
    renderer: &mut PixmanRenderer,
    surface: &WlSurface,
    geometry: Rectangle<i32, Logical>,
    scale: f64,
) -> Result<Pixels, String> {
    let scale = Scale::from(scale);
    let origin = origin_for(geometry.loc, scale);
    let elements: Vec<Element> =
        render_elements_from_surface_tree(renderer, surface, origin, scale, 1.0, Kind::Unspecified);
    render(
        renderer,
        &elements,
        physical_size(geometry.size, scale),
        scale,
    )
}

/// The output as it is shown: windows in stacking order over the background.
pub fn render_output(
    renderer: &mut PixmanRenderer,
    space: &Space<Window>,
    output: &Output,
) -> Result<Pixels, String> {
    let mode = output.current_mode().ok_or("the output has no mode")?;
    let scale = Scale::from(output.current_scale().fractional_scale());
    let elements = space
        .render_elements_for_output(renderer, output, 1.0)
        .map_err(|e| format!("cannot collect the output's elements: {e:?}"))?;
    render(renderer, &elements, mode.size, scale)
}

/// The output drawn again and again into one buffer, repainting only what
/// changed since the last draw (a recording's frames: a spinner costs its
/// own pixels, not the whole output's).
pub struct OutputCanvas {
    words: Vec<u32>,
    size: Size<i32, Physical>,
    damage: OutputDamageTracker,
    /// Whether `words` holds the last draw (the tracker repaints only damage).
    drawn: bool,
}

impl OutputCanvas {
    /// A canvas for `output` as its mode and scale are now.
    pub fn new(output: &Output) -> Result<OutputCanvas, String> {
        let mode = output.current_mode().ok_or("the output has no mode")?;
        let scale = Scale::from(output.current_scale().fractional_scale());
        Ok(OutputCanvas {
            words: vec![0; (mode.size.w * mode.size.h).max(0) as usize],
            size: mode.size,
            damage: OutputDamageTracker::new(mode.size, scale, Transform::Normal),
            drawn: false,
        })
    }

    /// Draw the output; the rows that changed since the last draw (from,
    /// to: `to` not included), or `None` when nothing did.
    pub fn draw(
        &mut self,
        renderer: &mut PixmanRenderer,
        space: &Space<Window>,
        output: &Output,
    ) -> Result<Option<(u32, u32)>, String> {
        let elements = space
            .render_elements_for_output(renderer, output, 1.0)
            .map_err(|e| format!("cannot collect the output's elements: {e:?}"))?;
        let (w, h) = (self.size.w as usize, self.size.h as usize);
        let changed = {
            // SAFETY: `words` outlives `image`, dropped at the end of this
            // block, and nothing else touches that memory while it lives.
            let mut image = unsafe {
                pixman::Image::from_raw_mut(
                    pixman::FormatCode::A8B8G8R8,
                    w,
                    h,
                    self.words.as_mut_ptr(),
                    w * 4,
                    false,
                )
            }
            .map_err(|_| format!("cannot make a {w}x{h} image"))?;
            let mut framebuffer = renderer
                .bind(&mut image)
                .map_err(|e| format!("cannot bind: {e}"))?;
            let age = if self.drawn { 1 } else { 0 };
            let result = self
                .damage
                .render_output(renderer, &mut framebuffer, age, &elements, BACKGROUND)
                .map_err(|e| format!("rendering failed: {e:?}"))?;
            match (self.drawn, result.damage) {
                (false, _) => Some((0, h as u32)),
                (true, Some(rects)) if !rects.is_empty() => {
                    let from = rects.iter().map(|r| r.loc.y).min().unwrap_or(0);
                    let to = rects.iter().map(|r| r.loc.y + r.size.h).max().unwrap_or(0);
                    Some((from.max(0) as u32, (to.max(0) as u32).min(h as u32)))
                }
                _ => None,
            }
        };
        self.drawn = true;
        Ok(changed)
    }

    /// A copy of what the canvas shows.
    pub fn pixels(&self) -> Pixels {
        Pixels {
            width: self.size.w as u32,
            height: self.size.h as u32,
            words: self.words.clone(),
        }
    }
}

/// Where to draw a surface so that its window geometry starts at the image's origin.
fn origin_for(geometry_loc: Point<i32, Logical>, scale: Scale<f64>) -> Point<i32, Physical> {
    let loc = geometry_loc.to_f64().to_physical(scale);
    Point::<f64, Physical>::from((-loc.x, -loc.y)).to_i32_round()
}

fn physical_size(size: Size<i32, Logical>, scale: Scale<f64>) -> Size<i32, Physical> {
    size.to_f64().to_physical(scale).to_i32_round()
}

fn render<E>(
    renderer: &mut PixmanRenderer,
    elements: &[E],
    size: Size<i32, Physical>,
    scale: Scale<f64>,
) -> Result<Pixels, String>
where
    E: smithay::backend::renderer::element::RenderElement<PixmanRenderer>,
{
    if size.w <= 0 || size.h <= 0 {
        return Err(format!(
            "nothing to capture: the surface is {}x{}",
            size.w, size.h
        ));
    }
    if size.w as u64 * size.h as u64 > CAPTURE_PIXELS_MOST {
        return Err(format!(
            "the surface is {}x{} pixels, more than a capture holds ({CAPTURE_PIXELS_MOST} pixels)",
            size.w, size.h
        ));
    }
    let (w, h) = (size.w as usize, size.h as usize);
    // Rendered straight into memory we own and hand on: no read-back, no copy.
    let mut words = vec![0u32; w * h];
    {
        // SAFETY: `words` outlives `image`, which is dropped at the end of this
        // block, and nothing else touches that memory while the image lives.
        let mut image = unsafe {
            pixman::Image::from_raw_mut(
                pixman::FormatCode::A8B8G8R8,
                w,
                h,
                words.as_mut_ptr(),
                w * 4,
                false,
            )
        }
        .map_err(|_| format!("cannot make a {w}x{h} image"))?;
        let mut damage = OutputDamageTracker::new(size, scale, Transform::Normal);
        let mut framebuffer = renderer
            .bind(&mut image)
            .map_err(|e| format!("cannot bind: {e}"))?;
        damage
            .render_output(renderer, &mut framebuffer, 0, elements, BACKGROUND)
            .map_err(|e| format!("rendering failed: {e:?}"))?;
    }
    Ok(Pixels {
        width: size.w as u32,
        height: size.h as u32,
        words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_surface_larger_than_a_capture_holds_is_refused_before_memory_is_taken() {
        let mut renderer = PixmanRenderer::new().expect("a pixman renderer");
        let none: &[Element] = &[];
        // What an app that sets a window geometry of i32::MAX would ask.
        let huge = Size::from((i32::MAX, i32::MAX));
        let refused = render(&mut renderer, none, huge, Scale::from(1.0));
        assert!(
            refused
                .as_ref()
                .is_err_and(|why| why.contains("more than a capture holds")),
            "{:?}",
            refused.map(|p| (p.width, p.height))
        );
        let small = render(&mut renderer, none, Size::from((4, 3)), Scale::from(1.0))
            .expect("a 4x3 capture");
        assert_eq!((small.width, small.height), (4, 3));
    }
}
