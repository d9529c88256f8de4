//! Screenshots: a display or a window as an image, cropped, scaled down and
//! encoded as asked, each kept with its source's geometry to map pixels back.

use std::collections::VecDeque;
use std::fmt;
use std::time::SystemTime;

use image::{ImageBuffer, Rgba, RgbaImage};
use wayrig_host::{Capture, DisplayInfo, Rect, WindowHandle, WindowInfo};

use super::windows::CATCH_UP_LIMIT;
use super::{Session, WindowPick};
use crate::model::Error;

/// The JPEG quality a face uses when its caller leaves it open.
pub const DEFAULT_JPEG_QUALITY: u8 = 80;
/// Screenshots whose pixels can be mapped back; older ones are forgotten.
pub const KEPT_SHOTS: usize = 16;

/// A rectangle in logical points, fractional.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LogicalRect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl fmt::Display for LogicalRect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{} at {},{}", self.width, self.height, self.x, self.y)
    }
}

/// What a screenshot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShotSource {
    /// A display by id; `None` is the primary one.
    Display(Option<u32>),
    /// A window's own surfaces over its content rectangle, covered or not.
    Window(WindowHandle),
}

impl Default for ShotSource {
    fn default() -> Self {
        ShotSource::Display(None)
    }
}

/// How a screenshot is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageFormat {
    #[default]
    Png,
    /// Quality 1 to 100.
    Jpeg { quality: u8 },
    /// Lossless WebP.
    Webp,
}

/// A screenshot as asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShotRequest {
    pub source: ShotSource,
    /// The part to show, logical points relative to the source's top-left
    /// corner; clamped to the source. `None` shows all of it.
    pub region: Option<LogicalRect>,
    pub format: ImageFormat,
    /// Scale down (never up) so the longer side is at most this many pixels.
    pub max_dimension: Option<u32>,
    /// Draw the pointer where it is, when it is over what the image shows.
    pub include_cursor: bool,
}

/// A screenshot taken: its image and where its pixels are.
#[derive(Clone, PartialEq)]
pub struct Screenshot {
    /// Names this screenshot to `Session::screenshot_point`.
    pub id: String,
    pub image: Vec<u8>,
    pub format: ImageFormat,
    /// The image's size in pixels.
    pub width: u32,
    pub height: u32,
    /// The size of what the image shows in the source's own device pixels,
    /// before any scaling down.
    pub native_width: u32,
    pub native_height: u32,
    /// Image pixels per logical point: global = `logical_bounds` origin + pixel / scale.
    pub scale: f64,
    /// What the image shows, global logical points.
    pub logical_bounds: LogicalRect,
    /// The display shown, or the one showing most of the window.
    pub display_id: u32,
    pub captured_at: SystemTime,
}

impl fmt::Debug for Screenshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Screenshot")
            .field("id", &self.id)
            .field("image_bytes", &self.image.len())
            .field("format", &self.format)
            .field("size", &(self.width, self.height))
            .field("native_size", &(self.native_width, self.native_height))
            .field("scale", &self.scale)
            .field("logical_bounds", &self.logical_bounds)
            .field("display_id", &self.display_id)
            .finish()
    }
}

/// Where a source was when it was captured: a shot's pixels map to global
/// points only while this holds.
#[derive(Debug, Clone, PartialEq)]
enum SourceGeometry {
    Window {
        handle: WindowHandle,
        content: Rect,
        scale: f64,
    },
    Display {
        id: u32,
        bounds: Rect,
        scale: f64,
    },
}

impl SourceGeometry {
    fn origin(&self) -> (f64, f64) {
        let (Self::Window { content: r, .. } | Self::Display { bounds: r, .. }) = self;
        (f64::from(r.x), f64::from(r.y))
    }

    fn scale(&self) -> f64 {
        let (Self::Window { scale, .. } | Self::Display { scale, .. }) = self;
        *scale
    }
}

fn describe(r: &Rect) -> String {
    format!("{}x{} at {},{}", r.width, r.height, r.x, r.y)
}

/// A crop of a capture, in its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PixelRect {
    x: u32,
    y: u32,
    width: u32,
    height: u32,
}

/// Which pixels of a capture a shot shows, at what size, and where they are.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Framing {
    crop: PixelRect,
    /// The image's size after scaling down.
    width: u32,
    height: u32,
    /// Image pixels per logical point.
    scale: f64,
    /// What the image shows, global logical points.
    bounds: LogicalRect,
}

/// A value a float product puts a hair off a whole pixel, put on it.
fn snap(v: f64) -> f64 {
    if (v - v.round()).abs() < 1e-6 {
        v.round()
    } else {
        v
    }
}

/// The framing of a `capture`-sized image of a source at `origin` (global
/// points) and `source_scale` (device pixels per point): the region's
/// whole pixels (never less than asked, clamped to the source), scaled down
/// to `max_dimension`.
fn frame(
    origin: (f64, f64),
    source_scale: f64,
    capture: (u32, u32),
    region: Option<LogicalRect>,
    max_dimension: Option<u32>,
) -> Result<Framing, Error> {
    let (cw, ch) = capture;
    let crop = match region {
        None => PixelRect {
            x: 0,
            y: 0,
            width: cw,
            height: ch,
        },
        Some(r) => {
            let edge = |v: f64, round: fn(f64) -> f64, limit: u32| {
                round(snap(v * source_scale)).clamp(0.0, f64::from(limit)) as u32
            };
            let (x0, x1) = (
                edge(r.x, f64::floor, cw),
                edge(r.x + r.width, f64::ceil, cw),
            );
            let (y0, y1) = (
                edge(r.y, f64::floor, ch),
                edge(r.y + r.height, f64::ceil, ch),
            );
            if x1 <= x0 || y1 <= y0 {
                return Err(Error::InvalidRequest(format!(
                    "region {r} lies outside the source, which spans {}x{} points from 0,0; \
                     give a region relative to the source's top-left corner",
                    f64::from(cw) / source_scale,
                    f64::from(ch) / source_scale
                )));
            }
            PixelRect {
                x: x0,
                y: y0,
                width: x1 - x0,
                height: y1 - y0,
            }
        }
    };
    let longer = crop.width.max(crop.height);
    let factor = match max_dimension {
        Some(max) if longer > max => f64::from(max) / f64::from(longer),
        _ => 1.0,
    };
    let fit = |side: u32| ((f64::from(side) * factor).round() as u32).max(1);
    Ok(Framing {
        crop,
        width: fit(crop.width),
        height: fit(crop.height),
        scale: source_scale * factor,
        bounds: LogicalRect {
            x: origin.0 + f64::from(crop.x) / source_scale,
            y: origin.1 + f64::from(crop.y) / source_scale,
            width: f64::from(crop.width) / source_scale,
            height: f64::from(crop.height) / source_scale,
        },
    })
}

impl Framing {
    /// The whole capture at its own size.
    fn is_whole(&self, capture: &Capture) -> bool {
        self.crop
            == PixelRect {
                x: 0,
                y: 0,
                width: capture.width,
                height: capture.height,
            }
            && (self.width, self.height) == (capture.width, capture.height)
    }

    /// Where a global point falls in the image, if it falls inside it.
    fn pixel_of(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let b = &self.bounds;
        (x >= b.x && y >= b.y && x < b.x + b.width && y < b.y + b.height)
            .then_some(((x - b.x) * self.scale, (y - b.y) * self.scale))
    }
}

/// A kept screenshot: enough to map its pixels back and to tell when it went stale.
#[derive(Debug, Clone, PartialEq)]
struct KeptShot {
    id: String,
    geometry: SourceGeometry,
    framing: Framing,
}

/// The latest screenshots, oldest first.
#[derive(Default)]
pub(crate) struct ShotHistory {
    next: u64,
    kept: VecDeque<KeptShot>,
}

impl ShotHistory {
    fn record(&mut self, geometry: SourceGeometry, framing: Framing) -> String {
        self.next += 1;
        let id = format!("shot-{}", self.next);
        if self.kept.len() == KEPT_SHOTS {
            self.kept.pop_front();
        }
        self.kept.push_back(KeptShot {
            id: id.clone(),
            geometry,
            framing,
        });
        id
    }

    fn find(&self, id: &str) -> Option<&KeptShot> {
        self.kept.iter().find(|shot| shot.id == id)
    }
}

/// A window's content at its scale, in device pixels, as the host renders it.
fn device_size(content: &Rect, scale: f64) -> (u32, u32) {
    let side = |points: i32| (f64::from(points) * scale).round().max(0.0) as u32;
    (side(content.width), side(content.height))
}

/// The grey a capture shows where nothing is drawn (the compositor's).
const NOTHING_DRAWN: [u8; 4] = [46, 46, 46, 255];

/// How far right and down of a window's origin its image grows to hold its
/// popups, in pixels: a popup the app places further (a display is smaller)
/// is cut there rather than drawn into an image of any size it asks.
const POPUP_REACH_MOST: i64 = 8192;

/// `layers` drawn over `base`, each at its place (pixels from the base's
/// origin): the image grows right and down to hold them, up to
/// `POPUP_REACH_MOST`; what lies left of or above the origin is cut.
fn over(base: Capture, layers: &[((i64, i64), Capture)]) -> Capture {
    if layers.is_empty() {
        return base;
    }
    let reach = |along: fn(&Capture) -> u32, place: fn(&(i64, i64)) -> i64| {
        let own = i64::from(along(&base));
        layers
            .iter()
            .map(|(at, l)| place(at).saturating_add(i64::from(along(l))))
            .fold(own, i64::max)
            .min(own.max(POPUP_REACH_MOST))
    };
    let width = reach(|c| c.width, |at| at.0);
    let height = reach(|c| c.height, |at| at.1);
    let (w, h) = (width as usize, height as usize);
    let mut rgba = NOTHING_DRAWN.repeat(w * h);
    let mut blit = |at: (i64, i64), image: &Capture| {
        let (iw, ih) = (image.width as i64, image.height as i64);
        for y in at.1.max(0)..at.1.saturating_add(ih).min(height) {
            let from_x = at.0.max(0);
            let to_x = at.0.saturating_add(iw).min(width);
            if from_x >= to_x {
                continue;
            }
            let src = (((y - at.1) * iw + (from_x - at.0)) * 4) as usize;
            let dst = ((y * width + from_x) * 4) as usize;
            let len = ((to_x - from_x) * 4) as usize;
            rgba[dst..dst + len].copy_from_slice(&image.rgba[src..src + len]);
        }
    };
    blit((0, 0), &base);
    for (at, layer) in layers {
        blit(*at, layer);
    }
    Capture {
        width: width as u32,
        height: height as u32,
        rgba,
    }
}

fn overlap(a: &Rect, b: &Rect) -> i64 {
    let w = (a.x + a.width).min(b.x + b.width) - a.x.max(b.x);
    let h = (a.y + a.height).min(b.y + b.height) - a.y.max(b.y);
    i64::from(w.max(0)) * i64::from(h.max(0))
}

/// The primary display, else the first.
pub fn primary_display(displays: &[DisplayInfo]) -> Option<&DisplayInfo> {
    displays
        .iter()
        .find(|d| d.primary)
        .or_else(|| displays.first())
}

/// The display an area is mostly on: the one it overlaps most (the primary
/// on a tie), else the primary.
pub fn display_of<'d>(area: &Rect, displays: &'d [DisplayInfo]) -> Option<&'d DisplayInfo> {
    displays
        .iter()
        .max_by_key(|d| (overlap(&d.bounds, area), d.primary))
        .filter(|d| overlap(&d.bounds, area) > 0)
        .or_else(|| primary_display(displays))
}

fn check_request(request: &ShotRequest) -> Result<(), Error> {
    if let ImageFormat::Jpeg { quality } = request.format {
        if !(1..=100).contains(&quality) {
            return Err(Error::InvalidRequest(format!(
                "JPEG quality {quality} is out of range: give 1 to 100"
            )));
        }
    }
    if request.max_dimension == Some(0) {
        return Err(Error::InvalidRequest(
            "max_dimension 0 leaves no pixel: give a positive size, or none for the native size"
                .into(),
        ));
    }
    if let Some(r) = request.region {
        let finite = [r.x, r.y, r.width, r.height].iter().all(|v| v.is_finite());
        if !finite || r.width <= 0.0 || r.height <= 0.0 {
            return Err(Error::InvalidRequest(format!(
                "region {r} is empty: give a positive width and height, or no region for all of the source"
            )));
        }
    }
    Ok(())
}

impl Session {
    /// Capture a display or a window as asked, and keep it (the latest
    /// `KEPT_SHOTS`) so its pixels can be mapped to global points later.
    pub async fn screenshot(&self, request: &ShotRequest) -> Result<Screenshot, Error> {
        check_request(request)?;
        let displays = self.host.displays().await?;
        let (capture, geometry) = match request.source {
            ShotSource::Window(handle) => self.capture_as_kept(handle).await?,
            ShotSource::Display(id) => self.capture_display(id, &displays).await?,
        };
        let captured_at = SystemTime::now();
        let framing = frame(
            geometry.origin(),
            geometry.scale(),
            (capture.width, capture.height),
            request.region,
            request.max_dimension,
        )?;
        // The host's captures draw no pointer: it is drawn here.
        let cursor = if request.include_cursor {
            let pointer = self.host.pointer().await?;
            framing.pixel_of(pointer.x, pointer.y)
        } else {
            None
        };
        let display_id = match &geometry {
            SourceGeometry::Display { id, .. } => *id,
            SourceGeometry::Window { content, .. } => {
                display_of(content, &displays).map_or(0, |d| d.id)
            }
        };
        let format = request.format;
        // Resampling and encoding a 1280x800 output take 3 to 13 ms: not on
        // the runtime's workers.
        let image = tokio::task::spawn_blocking(move || render(capture, &framing, cursor, format))
            .await
            .map_err(|e| Error::Failed(format!("rendering the screenshot failed: {e}")))??;
        let id = self.shots.lock().unwrap().record(geometry, framing);
        Ok(Screenshot {
            id,
            image,
            format: request.format,
            width: framing.width,
            height: framing.height,
            native_width: framing.crop.width,
            native_height: framing.crop.height,
            scale: framing.scale,
            logical_bounds: framing.bounds,
            display_id,
            captured_at,
        })
    }

    /// The global point (logical points) at pixel `x`, `y` of a kept
    /// screenshot, while its source shows where it was captured.
    pub async fn screenshot_point(&self, id: &str, x: f64, y: f64) -> Result<(f64, f64), Error> {
        let shot = self.shots.lock().unwrap().find(id).cloned();
        let shot = shot.ok_or_else(|| {
            Error::InvalidRequest(format!(
                "screenshot {id:?} is unknown or no longer kept (the {KEPT_SHOTS} latest are); \
                 take a new screenshot"
            ))
        })?;
        let f = &shot.framing;
        let inside = x.is_finite()
            && y.is_finite()
            && (0.0..=f64::from(f.width)).contains(&x)
            && (0.0..=f64::from(f.height)).contains(&y);
        if !inside {
            return Err(Error::InvalidRequest(format!(
                "{x}, {y} lies outside screenshot {id}, which is {}x{} pixels",
                f.width, f.height
            )));
        }
        self.check_unchanged(&shot).await?;
        Ok((f.bounds.x + x / f.scale, f.bounds.y + y / f.scale))
    }

    /// `StaleGeometry` unless the shot's source is where it was captured.
    async fn check_unchanged(&self, shot: &KeptShot) -> Result<(), Error> {
        let stale = |why: String| {
            Err(Error::StaleGeometry(format!(
                "{why} since screenshot {}; take a new screenshot",
                shot.id
            )))
        };
        match &shot.geometry {
            SourceGeometry::Window {
                handle,
                content,
                scale,
            } => {
                let list = self.windows.now();
                match list.iter().find(|w| w.handle.id == handle.id) {
                    None => stale(format!("window {handle} closed")),
                    Some(w) if w.handle != *handle => {
                        stale(format!("window {handle} was mapped again as {}", w.handle))
                    }
                    Some(w) if w.content != *content || w.scale != *scale => stale(format!(
                        "window {handle} moved or resized from {} to {}",
                        describe(content),
                        describe(&w.content)
                    )),
                    Some(_) => Ok(()),
                }
            }
            SourceGeometry::Display { id, bounds, scale } => {
                let displays = self.host.displays().await?;
                match displays.iter().find(|d| d.id == *id) {
                    None => stale(format!("display {id} went")),
                    Some(d) if d.bounds != *bounds || d.scale != *scale => stale(format!(
                        "display {id} changed from {} at scale {scale} to {} at scale {}",
                        describe(bounds),
                        describe(&d.bounds),
                        d.scale
                    )),
                    Some(_) => Ok(()),
                }
            }
        }
    }

    /// A window's capture with the geometry it was captured at: the host
    /// sends a window's changes before it answers, so the kept list comes to
    /// show the window at the capture's size.
    async fn capture_as_kept(
        &self,
        handle: WindowHandle,
    ) -> Result<(Capture, SourceGeometry), Error> {
        self.window(&WindowPick::Handle(handle)).await?;
        let (capture, size) = self.capture_with_popups(handle).await?;
        let drawn = |w: &WindowInfo| w.handle == handle && device_size(&w.content, w.scale) == size;
        let waited = self
            .windows
            .wait_for(CATCH_UP_LIMIT, |list| list.iter().any(drawn))
            .await;
        let window = waited
            .ok()
            .and_then(|list| list.iter().find(|w| drawn(w)).cloned())
            .ok_or_else(|| {
                Error::Failed(format!(
                    "window {handle} was captured at {}x{} pixels, a size its kept state never \
                     showed: it changed while captured; take the screenshot again",
                    size.0, size.1
                ))
            })?;
        Ok((
            capture,
            SourceGeometry::Window {
                handle,
                content: window.content,
                scale: window.scale,
            },
        ))
    }

    /// A window as a person sees it: with the popups it shows (a menu, a
    /// combo box's list) drawn over it, the image grown to the right and
    /// down where they reach past its edges, so that its origin stays the
    /// window content's (a popup's part above or left of the window is cut).
    /// Answers the window's own size in pixels too.
    pub(crate) async fn capture_with_popups(
        &self,
        handle: WindowHandle,
    ) -> Result<(Capture, (u32, u32)), Error> {
        let capture = self.host.capture_window(handle).await?;
        let own = (capture.width, capture.height);
        let windows = self.windows.now();
        let Some(window) = windows.iter().find(|w| w.handle == handle) else {
            return Ok((capture, own));
        };
        let mut popups = self.popups_of(handle);
        // Back to front.
        popups.sort_by_key(|w| std::cmp::Reverse(w.z));
        let mut layers = Vec::new();
        for popup in popups {
            // A popup that closed since it was listed is no longer shown.
            let Ok(pixels) = self.host.capture_window(popup.handle).await else {
                continue;
            };
            let at = |p: i32, w: i32| ((f64::from(p) - f64::from(w)) * window.scale).round() as i64;
            let place = (
                at(popup.content.x, window.content.x),
                at(popup.content.y, window.content.y),
            );
            layers.push((place, pixels));
        }
        Ok((over(capture, &layers), own))
    }

    /// The host's output capture as the display it shows.
    async fn capture_display(
        &self,
        id: Option<u32>,
        displays: &[DisplayInfo],
    ) -> Result<(Capture, SourceGeometry), Error> {
        let primary = primary_display(displays).ok_or_else(|| {
            Error::Unsupported(
                "screenshots of displays: the host lists no display; capture a window".into(),
            )
        })?;
        let display = match id {
            None => primary,
            Some(id) => displays.iter().find(|d| d.id == id).ok_or_else(|| {
                let ids: Vec<String> = displays.iter().map(|d| d.id.to_string()).collect();
                Error::InvalidRequest(format!(
                    "no display {id}; the displays are {}",
                    ids.join(", ")
                ))
            })?,
        };
        if display.id != primary.id {
            return Err(Error::Unsupported(format!(
                "a screenshot of display {}: this host captures its primary display ({}) only; \
                 ask for that one, or for a window",
                display.id, primary.id
            )));
        }
        let capture = self.host.capture_output().await?;
        if (capture.width, capture.height) != (display.pixel_width, display.pixel_height) {
            return Err(Error::Failed(format!(
                "the output was captured at {}x{} pixels but display {} is {}x{}: its mode \
                 changed while captured; take the screenshot again",
                capture.width,
                capture.height,
                display.id,
                display.pixel_width,
                display.pixel_height
            )));
        }
        Ok((
            capture,
            SourceGeometry::Display {
                id: display.id,
                bounds: display.bounds,
                scale: display.scale,
            },
        ))
    }
}

/// Crop, scale down, draw the pointer and encode.
/// The capture's framing of it, with the pointer drawn when asked, encoded.
fn render(
    capture: Capture,
    framing: &Framing,
    cursor: Option<(f64, f64)>,
    format: ImageFormat,
) -> Result<Vec<u8>, Error> {
    if framing.is_whole(&capture) && cursor.is_none() {
        return encode(capture.width, capture.height, &capture.rgba, format);
    }
    let whole = image_of(capture)?;
    let c = framing.crop;
    let cropped = image::imageops::crop_imm(&whole, c.x, c.y, c.width, c.height).to_image();
    let mut shown = if (framing.width, framing.height) == (c.width, c.height) {
        cropped
    } else {
        // Each pixel the average of the ones it covers: a screenshot only
        // ever shrinks, and this takes a third of a filtered resize's time.
        image::imageops::thumbnail(&cropped, framing.width, framing.height)
    };
    if let Some(tip) = cursor {
        // At least its size at scale 1, however far the image was scaled down.
        draw_arrow(&mut shown, tip, framing.scale.max(1.0));
    }
    encode(shown.width(), shown.height(), shown.as_raw(), format)
}

fn image_of(capture: Capture) -> Result<RgbaImage, Error> {
    ImageBuffer::from_raw(capture.width, capture.height, capture.rgba)
        .ok_or_else(|| Error::Failed("the host's capture is shorter than its size says".into()))
}

/// A capture in a file format, encoded off the runtime's workers: what a
/// face sends when its protocol carries an image of its own.
pub async fn encode_capture(capture: Capture, format: ImageFormat) -> Result<Vec<u8>, Error> {
    tokio::task::spawn_blocking(move || {
        encode(capture.width, capture.height, &capture.rgba, format)
    })
    .await
    .map_err(|e| Error::Failed(format!("encoding the capture failed: {e}")))?
}

/// Pixels (R, G, B, A each, row-major) in a file format.
fn encode(w: u32, h: u32, rgba: &[u8], format: ImageFormat) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let failed = |what: &str, e: String| Error::Failed(format!("{what} encoding failed: {e}"));
    match format {
        ImageFormat::Png => {
            let mut encoder = png::Encoder::new(&mut out, w, h);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_compression(png::Compression::Fast);
            encoder.set_filter(png::Filter::Sub);
            encoder
                .write_header()
                .and_then(|mut writer| writer.write_image_data(rgba))
                .map_err(|e| failed("PNG", e.to_string()))?;
        }
        ImageFormat::Jpeg { quality } => {
            let side = |v: u32| {
                u16::try_from(v).map_err(|_| {
                    Error::InvalidRequest(format!(
                        "a JPEG is at most 65535 pixels a side, not {w}x{h}: ask for PNG or \
                         a max_dimension"
                    ))
                })
            };
            jpeg_encoder::Encoder::new(&mut out, quality)
                .encode(rgba, side(w)?, side(h)?, jpeg_encoder::ColorType::Rgba)
                .map_err(|e| failed("JPEG", e.to_string()))?;
        }
        ImageFormat::Webp => {
            image::codecs::webp::WebPEncoder::new_lossless(&mut out)
                .encode(rgba, w, h, image::ExtendedColorType::Rgba8)
                .map_err(|e| failed("WebP", e.to_string()))?;
        }
    }
    Ok(out)
}

/// The pointer's arrow, its tip at (0, 0), in units of a logical point.
const ARROW: [(f64, f64); 7] = [
    (0.0, 0.0),
    (0.0, 17.0),
    (4.0, 13.0),
    (7.0, 19.5),
    (9.5, 18.5),
    (6.5, 12.0),
    (12.0, 12.0),
];

fn in_arrow(u: f64, v: f64) -> bool {
    // Even-odd rule over the polygon's edges.
    let mut inside = false;
    for (i, &(x1, y1)) in ARROW.iter().enumerate() {
        let (x2, y2) = ARROW[(i + 1) % ARROW.len()];
        if (y1 > v) != (y2 > v) && u < x1 + (v - y1) * (x2 - x1) / (y2 - y1) {
            inside = !inside;
        }
    }
    inside
}

/// A black arrow with a white rim, its tip at `tip` (image pixels), `unit`
/// pixels to a point of its shape.
fn draw_arrow(image: &mut RgbaImage, tip: (f64, f64), unit: f64) {
    let (w, h) = image.dimensions();
    let (x0, y0) = (tip.0.floor().max(0.0) as u32, tip.1.floor().max(0.0) as u32);
    let x1 = ((tip.0 + 13.0 * unit).ceil() as u32).min(w);
    let y1 = ((tip.1 + 20.0 * unit).ceil() as u32).min(h);
    let rim = 1.2;
    for y in y0..y1 {
        for x in x0..x1 {
            let u = (f64::from(x) + 0.5 - tip.0) / unit;
            let v = (f64::from(y) + 0.5 - tip.1) / unit;
            if !in_arrow(u, v) {
                continue;
            }
            let edge = [(-rim, 0.0), (rim, 0.0), (0.0, -rim), (0.0, rim)]
                .iter()
                .any(|(du, dv)| !in_arrow(u + du, v + dv));
            let shade = if edge { 0xff } else { 0x00 };
            image.put_pixel(x, y, Rgba([shade, shade, shade, 0xff]));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn popups_are_drawn_over_their_window_which_grows_to_hold_them() {
        use super::{over, NOTHING_DRAWN};
        use wayrig_host::Capture;
        let solid = |width, height, v: u8| Capture {
            width,
            height,
            rgba: [v, v, v, 255].repeat((width * height) as usize),
        };
        // A 4x3 window; a 3x2 menu from (2, 2) past its corner; a tooltip
        // half above and left of it, cut there.
        let image = over(
            solid(4, 3, 10),
            &[((2, 2), solid(3, 2, 200)), ((-1, -1), solid(2, 2, 90))],
        );
        assert_eq!((image.width, image.height), (5, 4));
        let at = |x: usize, y: usize| image.rgba[(y * 5 + x) * 4];
        assert_eq!(at(0, 0), 90, "the tooltip's part in the window");
        assert_eq!(at(1, 1), 10, "the window");
        assert_eq!((at(2, 2), at(4, 3)), (200, 200), "the menu, grown into");
        assert_eq!(image.rgba[(3 * 5) * 4..(3 * 5) * 4 + 4], NOTHING_DRAWN);
        let alone = over(solid(2, 2, 7), &[]);
        assert_eq!((alone.width, alone.height, alone.rgba[0]), (2, 2, 7));
    }

    #[test]
    fn a_popup_placed_past_any_display_is_cut_not_grown_into() {
        use super::{over, POPUP_REACH_MOST};
        use wayrig_host::Capture;
        let solid = |width, height, v: u8| Capture {
            width,
            height,
            rgba: [v, v, v, 255].repeat((width * height) as usize),
        };
        let most = POPUP_REACH_MOST as u32;
        // A popup an app placed a million pixels to the right, one at i64's
        // end, and one straddling the bound: the image stops at the bound.
        let image = over(
            solid(4, 3, 10),
            &[
                ((1_000_000, 0), solid(1, 1, 200)),
                ((i64::MAX, 0), solid(1, 1, 200)),
                ((POPUP_REACH_MOST - 1, 0), solid(2, 2, 90)),
            ],
        );
        assert_eq!((image.width, image.height), (most, 3));
        let last = (most as usize - 1) * 4;
        assert_eq!(image.rgba[last], 90, "the straddling popup's first column");
        assert_eq!(image.rgba[0], 10, "the window");
        // And down.
        let tall = over(solid(4, 3, 10), &[((0, i64::MAX), solid(1, 1, 200))]);
        assert_eq!((tall.width, tall.height), (4, most));
        // A window wider than the bound keeps its own size.
        let wide = over(solid(most + 2, 1, 10), &[((0, 0), solid(1, 1, 90))]);
        assert_eq!((wide.width, wide.height), (most + 2, 1));
    }

    use super::*;

    fn rect(x: f64, y: f64, width: f64, height: f64) -> LogicalRect {
        LogicalRect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn a_region_is_cropped_to_whole_pixels_never_less_than_asked() {
        // A 400x300 point window at 100,50, scale 1.5: 600x450 pixels.
        let f = frame(
            (100.0, 50.0),
            1.5,
            (600, 450),
            Some(rect(10.0, 20.0, 101.0, 40.0)),
            None,
        )
        .unwrap();
        assert_eq!(
            f.crop,
            PixelRect {
                x: 15,
                y: 30,
                width: 152,
                height: 60
            },
            "151.5 pixels wide is 152 whole ones"
        );
        assert_eq!((f.width, f.height), (152, 60));
        assert_eq!(f.scale, 1.5);
        assert_eq!(f.bounds.x, 110.0);
        assert_eq!(f.bounds.y, 70.0);
        assert!((f.bounds.width - 152.0 / 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_region_past_the_edge_is_clamped_and_one_wholly_outside_refused() {
        let f = frame(
            (0.0, 0.0),
            1.0,
            (400, 300),
            Some(rect(-50.0, 250.0, 100.0, 100.0)),
            None,
        )
        .unwrap();
        assert_eq!(
            f.crop,
            PixelRect {
                x: 0,
                y: 250,
                width: 50,
                height: 50
            }
        );
        let outside = frame(
            (0.0, 0.0),
            1.0,
            (400, 300),
            Some(rect(400.0, 0.0, 10.0, 10.0)),
            None,
        );
        match outside {
            Err(Error::InvalidRequest(why)) => assert!(why.contains("400x300 points"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn max_dimension_scales_the_longer_side_down_keeping_the_aspect_never_up() {
        let f = frame((10.0, 20.0), 2.0, (1600, 900), None, Some(400)).unwrap();
        assert_eq!((f.width, f.height), (400, 225));
        assert_eq!(f.scale, 0.5, "2 pixels a point, scaled by a quarter");
        assert_eq!(f.bounds, rect(10.0, 20.0, 800.0, 450.0));
        let f = frame((0.0, 0.0), 1.0, (300, 200), None, Some(1000)).unwrap();
        assert_eq!((f.width, f.height, f.scale), (300, 200, 1.0));
        // A sliver keeps at least one pixel.
        let f = frame((0.0, 0.0), 1.0, (1000, 2), None, Some(100)).unwrap();
        assert_eq!((f.width, f.height), (100, 1));
    }

    #[test]
    fn a_pixel_maps_back_to_the_global_point_it_shows() {
        let f = frame(
            (100.0, 50.0),
            2.0,
            (800, 600),
            Some(rect(100.0, 100.0, 200.0, 100.0)),
            Some(200),
        )
        .unwrap();
        assert_eq!((f.width, f.height), (200, 100));
        // The image's centre is the region's centre, globally.
        let (x, y) = (f.bounds.x + 100.0 / f.scale, f.bounds.y + 50.0 / f.scale);
        assert_eq!((x, y), (300.0, 200.0));
        assert_eq!(f.pixel_of(300.0, 200.0), Some((100.0, 50.0)));
        assert_eq!(f.pixel_of(99.0, 200.0), None);
    }

    #[test]
    fn requests_out_of_range_are_refused_saying_what_to_give() {
        let bad = [
            ShotRequest {
                format: ImageFormat::Jpeg { quality: 0 },
                ..ShotRequest::default()
            },
            ShotRequest {
                max_dimension: Some(0),
                ..ShotRequest::default()
            },
            ShotRequest {
                region: Some(rect(0.0, 0.0, 0.0, 10.0)),
                ..ShotRequest::default()
            },
            ShotRequest {
                region: Some(rect(f64::NAN, 0.0, 10.0, 10.0)),
                ..ShotRequest::default()
            },
        ];
        for request in bad {
            match check_request(&request) {
                Err(Error::InvalidRequest(why)) => assert!(why.contains("give"), "{why}"),
                other => panic!("{request:?}: {other:?}"),
            }
        }
        assert!(check_request(&ShotRequest::default()).is_ok());
    }

    #[test]
    fn the_history_keeps_the_latest_shots_only() {
        let geometry = SourceGeometry::Display {
            id: 1,
            bounds: Rect::new(0, 0, 10, 10),
            scale: 1.0,
        };
        let framing = frame((0.0, 0.0), 1.0, (10, 10), None, None).unwrap();
        let mut history = ShotHistory::default();
        let first = history.record(geometry.clone(), framing);
        let mut last = first.clone();
        for _ in 0..KEPT_SHOTS {
            last = history.record(geometry.clone(), framing);
        }
        assert!(history.find(&first).is_none(), "the oldest is forgotten");
        assert!(history.find(&last).is_some());
        assert_eq!(history.kept.len(), KEPT_SHOTS);
    }

    #[test]
    fn the_arrow_is_drawn_black_and_white_from_its_tip_and_nowhere_else() {
        let grey = Rgba([0x80, 0x80, 0x80, 0xff]);
        let mut image = RgbaImage::from_pixel(60, 60, grey);
        draw_arrow(&mut image, (20.0, 10.0), 2.0);
        assert_ne!(*image.get_pixel(20, 11), grey, "at the tip");
        assert_eq!(*image.get_pixel(19, 10), grey, "left of the tip");
        assert_eq!(*image.get_pixel(45, 45), grey, "past its end");
        let shades: std::collections::HashSet<u8> = image
            .pixels()
            .filter(|p| **p != grey)
            .map(|p| p[0])
            .collect();
        assert_eq!(shades, [0x00, 0xff].into(), "a black body with a white rim");
        // Near the right edge, it is cut, not wrapped or out of bounds.
        draw_arrow(&mut image, (58.5, 55.0), 2.0);
        assert_ne!(*image.get_pixel(59, 56), grey);
    }

    mod with_a_host {
        use std::sync::Arc;

        use super::super::super::fake_host::{window, FakeHost, Temper};
        use super::*;
        use crate::session::WindowOp;

        async fn session() -> (Session, FakeHost, WindowHandle) {
            let host = FakeHost::new(
                vec![window(1, "Main"), window(2, "Prefs")],
                Temper::Willing(std::time::Duration::from_millis(10)),
                64,
            );
            let session = Session::without_accessibility(Arc::new(host.clone()))
                .await
                .unwrap();
            let handle = session.window(&WindowPick::Id(1)).await.unwrap().handle;
            (session, host, handle)
        }

        fn decoded(shot: &Screenshot) -> RgbaImage {
            let format = match shot.format {
                ImageFormat::Png => image::ImageFormat::Png,
                ImageFormat::Jpeg { .. } => image::ImageFormat::Jpeg,
                ImageFormat::Webp => image::ImageFormat::WebP,
            };
            image::load_from_memory_with_format(&shot.image, format)
                .unwrap()
                .to_rgba8()
        }

        #[tokio::test(start_paused = true)]
        async fn a_window_region_shows_those_pixels_and_maps_back() {
            let (session, _host, handle) = session().await;
            let shot = session
                .screenshot(&ShotRequest {
                    source: ShotSource::Window(handle),
                    region: Some(rect(30.0, 40.0, 50.0, 20.0)),
                    ..ShotRequest::default()
                })
                .await
                .unwrap();
            assert_eq!((shot.width, shot.height), (50, 20));
            assert_eq!(shot.logical_bounds, rect(130.0, 140.0, 50.0, 20.0));
            // The fake host's pixels say where they are in the window.
            let image = decoded(&shot);
            assert_eq!(image.get_pixel(0, 0).0[..2], [30, 40]);
            assert_eq!(image.get_pixel(49, 19).0[..2], [79, 59]);
            assert_eq!(
                session
                    .screenshot_point(&shot.id, 25.0, 10.0)
                    .await
                    .unwrap(),
                (155.0, 150.0)
            );
            let outside = session.screenshot_point(&shot.id, 51.0, 0.0).await;
            assert!(
                matches!(outside, Err(Error::InvalidRequest(_))),
                "{outside:?}"
            );
        }

        #[tokio::test(start_paused = true)]
        async fn a_shot_goes_stale_when_its_window_moves_and_unknown_when_evicted() {
            let (session, host, handle) = session().await;
            let window_shot = ShotRequest {
                source: ShotSource::Window(handle),
                ..ShotRequest::default()
            };
            let first = session.screenshot(&window_shot).await.unwrap();
            assert_eq!(
                session.screenshot_point(&first.id, 0.0, 0.0).await.unwrap(),
                (100.0, 100.0)
            );
            let display = session.screenshot(&ShotRequest::default()).await.unwrap();
            host.change(1, |w| w.content.x += 5);
            session
                .windows
                .wait_for(CATCH_UP_LIMIT, |l| l.iter().any(|w| w.content.x == 105))
                .await
                .unwrap();
            match session.screenshot_point(&first.id, 0.0, 0.0).await {
                Err(Error::StaleGeometry(why)) => assert!(why.contains("moved"), "{why}"),
                other => panic!("{other:?}"),
            }
            // The display did not change.
            assert!(session
                .screenshot_point(&display.id, 1.0, 1.0)
                .await
                .is_ok());
            for _ in 0..KEPT_SHOTS {
                session.screenshot(&window_shot).await.unwrap();
            }
            match session.screenshot_point(&display.id, 1.0, 1.0).await {
                Err(Error::InvalidRequest(why)) => assert!(why.contains("no longer kept"), "{why}"),
                other => panic!("{other:?}"),
            }
        }

        #[tokio::test(start_paused = true)]
        async fn a_closed_or_maximized_window_makes_its_shots_stale() {
            let (session, _host, handle) = session().await;
            let window_shot = ShotRequest {
                source: ShotSource::Window(handle),
                ..ShotRequest::default()
            };
            let shot = session.screenshot(&window_shot).await.unwrap();
            session.window_op(handle, WindowOp::Maximize).await.unwrap();
            let stale = session.screenshot_point(&shot.id, 0.0, 0.0).await;
            assert!(matches!(stale, Err(Error::StaleGeometry(_))), "{stale:?}");
            let prefs = session.window(&WindowPick::Id(2)).await.unwrap().handle;
            let shot = session
                .screenshot(&ShotRequest {
                    source: ShotSource::Window(prefs),
                    ..ShotRequest::default()
                })
                .await
                .unwrap();
            session.close(prefs, false).await.unwrap();
            match session.screenshot_point(&shot.id, 0.0, 0.0).await {
                Err(Error::StaleGeometry(why)) => assert!(why.contains("closed"), "{why}"),
                other => panic!("{other:?}"),
            }
        }

        #[tokio::test(start_paused = true)]
        async fn every_format_decodes_to_the_same_picture() {
            let (session, _host, handle) = session().await;
            for format in [
                ImageFormat::Png,
                ImageFormat::Jpeg { quality: 90 },
                ImageFormat::Webp,
            ] {
                let shot = session
                    .screenshot(&ShotRequest {
                        source: ShotSource::Window(handle),
                        format,
                        max_dimension: Some(200),
                        ..ShotRequest::default()
                    })
                    .await
                    .unwrap();
                assert_eq!((shot.width, shot.height), (200, 150), "{format:?}");
                assert_eq!((shot.native_width, shot.native_height), (400, 300));
                assert_eq!(shot.scale, 0.5);
                let image = decoded(&shot);
                assert_eq!(image.dimensions(), (200, 150), "{format:?}");
                // The pattern's blue is constant: it survives scaling and JPEG.
                let blue = image.get_pixel(100, 75).0[2];
                assert!(blue.abs_diff(0x80) <= 4, "{format:?}: {blue}");
            }
        }

        #[tokio::test(start_paused = true)]
        async fn the_cursor_is_drawn_where_the_pointer_is_when_asked() {
            let (session, host, _handle) = session().await;
            host.point_at(200.0, 100.0);
            let plain = session.screenshot(&ShotRequest::default()).await.unwrap();
            let with = session
                .screenshot(&ShotRequest {
                    include_cursor: true,
                    ..ShotRequest::default()
                })
                .await
                .unwrap();
            let (plain, with) = (decoded(&plain), decoded(&with));
            assert_eq!(plain.get_pixel(202, 110).0[..2], [202, 110]);
            assert_ne!(with.get_pixel(202, 110), plain.get_pixel(202, 110));
            assert_eq!(with.get_pixel(199, 100), plain.get_pixel(199, 100));
            // A pointer outside the region leaves the image as it is.
            let away = session
                .screenshot(&ShotRequest {
                    region: Some(rect(0.0, 0.0, 100.0, 100.0)),
                    include_cursor: true,
                    ..ShotRequest::default()
                })
                .await
                .unwrap();
            assert_eq!(
                decoded(&away),
                image::imageops::crop_imm(&plain, 0, 0, 100, 100).to_image()
            );
        }

        #[tokio::test(start_paused = true)]
        async fn only_displays_the_host_lists_and_captures_are_shot() {
            let (session, _host, _handle) = session().await;
            let shot = session.screenshot(&ShotRequest::default()).await.unwrap();
            assert_eq!(shot.display_id, 1);
            assert_eq!((shot.width, shot.height), (1280, 800));
            let unknown = session
                .screenshot(&ShotRequest {
                    source: ShotSource::Display(Some(9)),
                    ..ShotRequest::default()
                })
                .await;
            match unknown {
                Err(Error::InvalidRequest(why)) => assert!(why.contains("are 1"), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
