//! Capture through zwlr_screencopy_manager_v1: the output, or a region of it,
//! and the output's damage, which is how the portal sees the screen go quiet.

use std::time::Duration;

use tokio::sync::mpsc;
use wayland_client::Proxy;
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1;
use wayrig_host::{Capture, HostError, HostResult, Rect};

use crate::wayland::{FrameEvent, Output, Pixels, ShmTarget, Wayland};

/// What one copy produced; its pixels are read only when asked for.
pub struct Copied {
    target: ShmTarget,
    y_inverted: bool,
    /// Damage since the previous copy, in the output's pixels (copy_with_damage only).
    pub damage: Vec<Rect>,
}

impl Copied {
    pub fn pixels(&self) -> HostResult<Pixels> {
        self.target.read(self.y_inverted).map_err(HostError::Failed)
    }
}

fn screencopy(wayland: &Wayland) -> HostResult<&ZwlrScreencopyManagerV1> {
    wayland.globals.screencopy.as_ref().ok_or_else(|| {
        HostError::Unsupported(
            "capture: the compositor offers neither ext-image-copy-capture-v1 nor \
             zwlr_screencopy_manager_v1; on GNOME or KDE use their ScreenCast portal"
                .into(),
        )
    })
}

/// Whether the compositor's screencopy tells where the output changed.
pub fn damage_offered(wayland: &Wayland) -> HostResult<()> {
    if screencopy(wayland)?.version() < 2 {
        return Err(HostError::Unsupported(
            "settle: the compositor's screencopy (version 1) reports no damage".into(),
        ));
    }
    Ok(())
}

/// Copy the output (or `region` of it, in logical points global) into memory.
/// With `with_damage`, the copy waits for the output to change, at most `wait`.
/// `Ok(None)` means nothing changed within `wait`.
pub async fn copy(
    wayland: &Wayland,
    output: &Output,
    region: Option<Rect>,
    with_damage: bool,
    wait: Duration,
) -> HostResult<Option<Copied>> {
    let manager = screencopy(wayland)?;
    if with_damage {
        damage_offered(wayland)?;
    }
    let (sink, mut events) = mpsc::unbounded_channel();
    let frame = match region {
        None => manager.capture_output(0, &output.proxy, &wayland.queue, sink),
        Some(r) => manager.capture_output_region(
            0,
            &output.proxy,
            r.x - output.x,
            r.y - output.y,
            r.width,
            r.height,
            &wayland.queue,
            sink,
        ),
    };
    let result = run_copy(wayland, &frame, &mut events, with_damage, wait).await;
    frame.destroy();
    let _ = wayland.flush();
    result
}

async fn run_copy(
    wayland: &Wayland,
    frame: &wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1,
    events: &mut mpsc::UnboundedReceiver<FrameEvent>,
    with_damage: bool,
    wait: Duration,
) -> HostResult<Option<Copied>> {
    wayland.flush().map_err(HostError::Failed)?;
    let gone = || HostError::Failed("the compositor stopped answering a screencopy".into());
    let answer = Duration::from_secs(5);
    // The shm buffer offered first; version 3 lists dmabuf ones too, then says done.
    let mut shm = None;
    loop {
        let event = tokio::time::timeout(answer, events.recv())
            .await
            .map_err(|_| gone())?
            .ok_or_else(gone)?;
        match event {
            FrameEvent::Buffer {
                format,
                width,
                height,
                stride,
            } => {
                if shm.is_none() {
                    shm = Some((format, width, height, stride));
                }
                if frame.version() < 3 {
                    break;
                }
            }
            FrameEvent::BufferDone => break,
            FrameEvent::Failed => {
                return Err(HostError::Failed(
                    "the compositor refused to copy the output".into(),
                ))
            }
            _ => {}
        }
    }
    let (format, width, height, stride) = shm.ok_or_else(|| {
        HostError::Unsupported("capture: the compositor offers no shared-memory frames".into())
    })?;
    let target =
        ShmTarget::new(wayland, format, width, height, stride).map_err(HostError::Failed)?;
    if with_damage {
        frame.copy_with_damage(&target.buffer);
    } else {
        frame.copy(&target.buffer);
    }
    wayland.flush().map_err(HostError::Failed)?;
    let mut y_inverted = false;
    let mut damage = Vec::new();
    let limit = if with_damage { wait } else { answer };
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let event = match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(event)) => event,
            Ok(None) => return Err(gone()),
            Err(_) if with_damage => return Ok(None),
            Err(_) => return Err(gone()),
        };
        match event {
            FrameEvent::YInverted => y_inverted = true,
            FrameEvent::Damage(r) => damage.push(r),
            FrameEvent::Ready => break,
            FrameEvent::Failed => {
                return Err(HostError::Failed(
                    "the compositor failed to copy the output".into(),
                ))
            }
            _ => {}
        }
    }
    Ok(Some(Copied {
        target,
        y_inverted,
        damage,
    }))
}

/// The pixels as a capture crosses the host boundary.
pub fn into_capture(pixels: Pixels) -> Capture {
    Capture {
        width: pixels.width,
        height: pixels.height,
        rgba: pixels.rgba,
    }
}
