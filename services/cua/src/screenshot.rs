//! Screenshot: the session's screenshots in cua's terms, a display or a
//! window (covered or not), cropped, scaled down and encoded as asked.

use tonic::{Code, Response, Status};
use wayrig_cua_proto::v1;
use wayrig_services::session::DEFAULT_JPEG_QUALITY;
use wayrig_services::{ImageFormat, LogicalRect, Session, ShotRequest, ShotSource};

use crate::convert::handle_of;
use crate::errors::{from_session, invalid, known, status};

/// An unknown display is NOT_FOUND, as in an input target.
fn unknown_display(id: &str) -> Status {
    status(
        Code::NotFound,
        v1::ErrorReason::TargetUnavailable,
        format!("no display {id:?}; ListDisplays names them"),
    )
}

fn source(s: Option<v1::screenshot_request::Source>) -> Result<ShotSource, Status> {
    use v1::screenshot_request::Source;
    Ok(match s {
        None => ShotSource::Display(None),
        Some(Source::DisplayId(id)) if id.is_empty() || id == "primary" => {
            ShotSource::Display(None)
        }
        Some(Source::DisplayId(id)) => {
            ShotSource::Display(Some(id.parse().map_err(|_| unknown_display(&id))?))
        }
        Some(Source::Window(w)) => ShotSource::Window(handle_of(Some(&w))?),
    })
}

fn format(format: i32, quality: u32) -> Result<(ImageFormat, v1::ImageFormat), Status> {
    let asked: v1::ImageFormat = known(format, "format")?;
    let quality = match quality {
        0 => DEFAULT_JPEG_QUALITY,
        1..=100 => quality as u8,
        q => return Err(invalid(format!("quality is 1 to 100, not {q}"))),
    };
    Ok(match asked {
        v1::ImageFormat::Unspecified | v1::ImageFormat::Png => {
            (ImageFormat::Png, v1::ImageFormat::Png)
        }
        v1::ImageFormat::Jpeg => (ImageFormat::Jpeg { quality }, v1::ImageFormat::Jpeg),
        v1::ImageFormat::Webp => (ImageFormat::Webp, v1::ImageFormat::Webp),
    })
}

fn region(r: Option<v1::Rect>) -> Result<Option<LogicalRect>, Status> {
    let Some(r) = r else { return Ok(None) };
    if [r.x, r.y, r.width, r.height].iter().any(|v| !v.is_finite()) {
        return Err(invalid("region must be finite"));
    }
    Ok(Some(LogicalRect {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    }))
}

fn size(width: u32, height: u32) -> v1::PixelSize {
    v1::PixelSize { width, height }
}

pub async fn screenshot(
    session: &Session,
    r: v1::ScreenshotRequest,
) -> Result<Response<v1::ScreenshotResponse>, Status> {
    let (format, wire_format) = format(r.format, r.quality)?;
    if let Some(v1::screenshot_request::Source::DisplayId(id)) = &r.source {
        let displays = session.displays().await.unwrap_or_default();
        let known = id.is_empty()
            || id == "primary"
            || displays
                .iter()
                .any(|d| crate::convert::display_id(d) == *id);
        if !known {
            return Err(unknown_display(id));
        }
    }
    let request = ShotRequest {
        source: source(r.source)?,
        region: region(r.region)?,
        format,
        max_dimension: (r.max_dimension != 0).then_some(r.max_dimension),
        include_cursor: r.include_cursor,
    };
    let shot = session
        .screenshot(&request)
        .await
        .map_err(|e| from_session(e, "screenshot"))?;
    let at = shot
        .captured_at
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let b = shot.logical_bounds;
    Ok(Response::new(v1::ScreenshotResponse {
        image: shot.image,
        format: wire_format as i32,
        image_size: Some(size(shot.width, shot.height)),
        native_size: Some(size(shot.native_width, shot.native_height)),
        scale: shot.scale,
        logical_bounds: Some(v1::Rect {
            x: b.x,
            y: b.y,
            width: b.width,
            height: b.height,
        }),
        screenshot_id: shot.id,
        display_id: shot.display_id.to_string(),
        captured_at: Some(prost_types::Timestamp {
            seconds: at.as_secs() as i64,
            nanos: at.subsec_nanos() as i32,
        }),
    }))
}
