//! ComputerService: screenshots, pointer and keyboard input in every
//! coordinate space, the cursor, the displays and the clipboard.
//!
//! Input runs as session input steps on the window it lands in, answered
//! once the app has read it and drawn what it caused.

use std::sync::Arc;
use std::time::Duration;

use tonic::{Code, Request, Response, Status};
use wayrig_cua_proto::v1;
use wayrig_cua_proto::v1::computer_service_server::ComputerService;
use wayrig_host::{Button, DisplayInfo, InputEvent, InputOptions, Mods, WindowInfo};
use wayrig_services::{Session, Step, WindowPick};

use crate::convert::{answered, detail_with, display, display_id, handle_of};
use crate::errors::{from_session, invalid, known, status, unsupported};
use crate::keys::{key_input, key_name, modifiers, mods};
use wayrig_services::session::{display_of, primary_display};

/// Points one wheel line scrolls (what the host sends for one click).
const LINE_POINTS: f64 = 15.0;
/// Steps a second of a timed gesture: one per frame of a 60 Hz output.
const STEPS_PER_SECOND: f64 = 60.0;
/// The longest gesture or typing delay taken.
const LONGEST: Duration = Duration::from_secs(60);
/// A drag without a duration lasts this long, as the proto says.
const DRAG_DEFAULT: Duration = Duration::from_millis(300);

pub struct Computer {
    pub session: Arc<Session>,
}

/// Where input goes: the window, and how it is delivered.
struct Aim {
    window: WindowInfo,
    options: InputOptions,
}

/// A point of the request, resolved: the window it lands in and where in
/// that window's content.
struct Spot {
    window: WindowInfo,
    x: f64,
    y: f64,
}

fn options(target: &v1::InputTarget) -> Result<InputOptions, Status> {
    let d: v1::Delivery = known(target.delivery, "delivery")?;
    Ok(match d {
        v1::Delivery::Background => InputOptions::background(),
        _ => InputOptions::default(),
    })
}

fn button(b: i32) -> Result<Button, Status> {
    match known::<v1::MouseButton>(b, "button")? {
        v1::MouseButton::Unspecified | v1::MouseButton::Left => Ok(Button::Left),
        v1::MouseButton::Right => Ok(Button::Right),
        v1::MouseButton::Middle => Ok(Button::Middle),
        v1::MouseButton::Back | v1::MouseButton::Forward => Err(unsupported(
            Code::FailedPrecondition,
            "pointer.back_forward",
            "the session's pointer has left, right and middle buttons; use \
             KEY_BROWSER_BACK or KEY_BROWSER_FORWARD for navigation",
        )),
    }
}

fn point(p: Option<&v1::Point>, field: &str) -> Result<(f64, f64), Status> {
    let p = p.ok_or_else(|| invalid(format!("{field} is required")))?;
    if !p.x.is_finite() || !p.y.is_finite() {
        return Err(invalid(format!("{field} must be finite")));
    }
    Ok((p.x, p.y))
}

/// A duration field: unset or zero is `None`; negative or over a minute is refused.
fn duration(d: Option<&prost_types::Duration>, field: &str) -> Result<Option<Duration>, Status> {
    let Some(d) = d else { return Ok(None) };
    if d.seconds < 0 || d.nanos < 0 {
        return Err(invalid(format!("{field} is negative")));
    }
    let d = Duration::from_secs(d.seconds as u64) + Duration::from_nanos(d.nanos as u64);
    if d > LONGEST {
        return Err(invalid(format!(
            "{field} is {d:?}; at most {LONGEST:?} is taken"
        )));
    }
    Ok((!d.is_zero()).then_some(d))
}

/// How many steps a gesture over `d` takes: one a frame, at least one.
fn steps_over(d: Duration) -> usize {
    (d.as_secs_f64() * STEPS_PER_SECOND).ceil().max(1.0) as usize
}

/// Points along a path through `points`, `n` of them after the first,
/// evenly spread by length, each waypoint among them; the last is the end.
fn along(points: &[(f64, f64)], n: usize) -> Vec<(f64, f64)> {
    let segments: Vec<((f64, f64), (f64, f64))> = points.windows(2).map(|w| (w[0], w[1])).collect();
    let length = |((x0, y0), (x1, y1)): &((f64, f64), (f64, f64))| (x1 - x0).hypot(y1 - y0);
    let total: f64 = segments.iter().map(length).sum();
    let n = n.max(segments.len());
    let mut out = Vec::with_capacity(n);
    let mut given = 0;
    for (i, seg) in segments.iter().enumerate() {
        // Each segment's share of the steps by its length, at least one; the
        // last takes what is left.
        let share = if i + 1 == segments.len() {
            n - given
        } else if total > 0.0 {
            ((length(seg) / total * n as f64).round() as usize)
                .clamp(1, n - given - (segments.len() - i - 1))
        } else {
            1
        };
        let ((x0, y0), (x1, y1)) = *seg;
        for k in 1..=share {
            let t = k as f64 / share as f64;
            out.push((x0 + (x1 - x0) * t, y0 + (y1 - y0) * t));
        }
        given += share;
    }
    out
}

impl Computer {
    fn err(&self, feature: &'static str) -> impl Fn(wayrig_services::Error) -> Status {
        move |e| from_session(e, feature)
    }

    async fn displays(&self) -> Result<Vec<DisplayInfo>, Status> {
        self.session.displays().await.map_err(self.err("displays"))
    }

    async fn target_window(&self, target: &v1::InputTarget) -> Result<Option<WindowInfo>, Status> {
        match &target.window {
            None => Ok(None),
            r => {
                let handle = handle_of(r.as_ref())?;
                Ok(Some(
                    self.session
                        .window(&WindowPick::Handle(handle))
                        .await
                        .map_err(self.err("windows"))?,
                ))
            }
        }
    }

    /// A request's point as a global point, in the target's coordinate space.
    async fn global(
        &self,
        target: &v1::InputTarget,
        window: Option<&WindowInfo>,
        (x, y): (f64, f64),
    ) -> Result<(f64, f64), Status> {
        let space: v1::CoordinateSpace = known(target.space, "space")?;
        Ok(match space {
            v1::CoordinateSpace::Unspecified | v1::CoordinateSpace::Screen => (x, y),
            v1::CoordinateSpace::Window => {
                let w =
                    window.ok_or_else(|| invalid("COORDINATE_SPACE_WINDOW needs target.window"))?;
                (w.content.x as f64 + x, w.content.y as f64 + y)
            }
            v1::CoordinateSpace::Screenshot => {
                if target.screenshot_id.is_empty() {
                    return Err(invalid(
                        "COORDINATE_SPACE_SCREENSHOT needs target.screenshot_id",
                    ));
                }
                self.session
                    .screenshot_point(&target.screenshot_id, x, y)
                    .await
                    .map_err(self.err("screenshot"))?
            }
            v1::CoordinateSpace::Normalized => {
                if !(0.0..=1.0).contains(&x) || !(0.0..=1.0).contains(&y) {
                    return Err(invalid(format!(
                        "normalized coordinates are between 0 and 1, not ({x}, {y})"
                    )));
                }
                let area = match window {
                    Some(w) => w.content,
                    None => self.display(&target.display_id).await?.bounds,
                };
                (
                    area.x as f64 + x * area.width as f64,
                    area.y as f64 + y * area.height as f64,
                )
            }
        })
    }

    async fn display(&self, id: &str) -> Result<DisplayInfo, Status> {
        let displays = self.displays().await?;
        let found = if id.is_empty() || id == "primary" {
            primary_display(&displays)
        } else {
            displays.iter().find(|d| display_id(d) == id)
        };
        found.cloned().ok_or_else(|| {
            status(
                Code::NotFound,
                v1::ErrorReason::TargetUnavailable,
                format!("no display {id:?}; ListDisplays names them"),
            )
        })
    }

    /// Where a point of the request lands: the target window, else the
    /// frontmost window under it.
    async fn spot(&self, target: &v1::InputTarget, p: (f64, f64)) -> Result<Spot, Status> {
        let window = self.target_window(target).await?;
        let global = self.global(target, window.as_ref(), p).await?;
        self.spot_global(window, global)
    }

    /// The request's point, or where the pointer is when it gives none (an
    /// unset position acts where the pointer is).
    async fn spot_or_pointer(
        &self,
        target: &v1::InputTarget,
        p: Option<&v1::Point>,
        field: &str,
    ) -> Result<Spot, Status> {
        match p {
            Some(p) => self.spot(target, point(Some(p), field)?).await,
            None => {
                let at = self.session.pointer().await.map_err(self.err("pointer"))?;
                let window = self.target_window(target).await?;
                self.spot_global(window, (at.x, at.y))
            }
        }
    }

    /// Where a global point lands: in `window`, else the frontmost one under it.
    fn spot_global(
        &self,
        window: Option<WindowInfo>,
        (gx, gy): (f64, f64),
    ) -> Result<Spot, Status> {
        let window = match window {
            Some(w) => w,
            None => self.session.window_at(gx, gy).ok_or_else(|| {
                status(
                    Code::NotFound,
                    v1::ErrorReason::TargetUnavailable,
                    format!("no window is at ({gx}, {gy}); ListWindows says where they are"),
                )
            })?,
        };
        Ok(Spot {
            x: gx - window.content.x as f64,
            y: gy - window.content.y as f64,
            window,
        })
    }

    /// Where keys go: the target window, else the focused one (else the frontmost).
    async fn keyboard_aim(&self, target: &v1::InputTarget) -> Result<Aim, Status> {
        let window = match self.target_window(target).await? {
            Some(w) => w,
            None => self
                .session
                .window(&WindowPick::Default)
                .await
                .map_err(self.err("windows"))?,
        };
        Ok(Aim {
            window,
            options: options(target)?,
        })
    }

    /// Run steps and report what was delivered, and why the window had not
    /// settled when the answer's wait for the effect ran out.
    async fn run(
        &self,
        aim: &Aim,
        steps: Vec<Step>,
        pointer: bool,
    ) -> Result<(v1::DeliveryReport, Option<String>), Status> {
        let was_focused = aim.window.focused;
        let reports = self
            .session
            .input_steps(aim.window.handle, steps, aim.options)
            .await
            .map_err(self.err("input"))?;
        let last = reports.last();
        let focused_now = self
            .session
            .window(&WindowPick::Handle(aim.window.handle))
            .await
            .is_ok_and(|w| w.focused);
        let unsettled = last.and_then(|r| r.unsettled.clone());
        let report = v1::DeliveryReport {
            delivery: if aim.options.activate {
                v1::Delivery::Foreground
            } else {
                v1::Delivery::Background
            } as i32,
            focus_changed: !was_focused && focused_now,
            // Background input puts the pointer back where it was.
            pointer_moved: pointer && !aim.options.leave_focus,
            detail: detail_with(
                format!(
                    "delivered to window {} in {} step(s){}",
                    aim.window.handle,
                    reports.len(),
                    last.map_or(String::new(), |r| format!(", {} frame(s) drawn", r.commits))
                ),
                unsettled.as_deref(),
            ),
        };
        Ok((report, unsettled))
    }

    /// A glide from where the pointer is to the spot, one move a frame over
    /// `over`; from outside the spot's window it starts at the window's edge.
    async fn glide(&self, spot: &Spot, over: Duration) -> Result<Vec<Step>, Status> {
        let now = self.session.pointer().await.map_err(self.err("pointer"))?;
        let content = spot.window.content;
        let (w, h) = (
            f64::from(content.width.max(1)) - 1.0,
            f64::from(content.height.max(1)) - 1.0,
        );
        let start = (
            (now.x - content.x as f64).clamp(0.0, w),
            (now.y - content.y as f64).clamp(0.0, h),
        );
        let moves = along(&[start, (spot.x, spot.y)], steps_over(over));
        let count = moves.len();
        Ok(moves
            .into_iter()
            .enumerate()
            .map(|(i, (x, y))| {
                Step::drawn(vec![InputEvent::PointerMove {
                    x,
                    y,
                    mods: Mods::default(),
                }])
                .at(over.mul_f64((i + 1) as f64 / count as f64))
            })
            .collect())
    }

    /// A move to where no window is: the pointer leaves the windows.
    async fn move_over_desktop(
        &self,
        x: f64,
        y: f64,
    ) -> Result<Response<v1::PointerResponse>, Status> {
        let at = self
            .session
            .move_pointer_to_desktop(x, y)
            .await
            .map_err(self.err("input"))?;
        Ok(Response::new(v1::PointerResponse {
            report: Some(v1::DeliveryReport {
                delivery: v1::Delivery::Foreground as i32,
                focus_changed: false,
                pointer_moved: true,
                detail: format!("moved to ({x}, {y}), over the desktop: no window is there"),
            }),
            cursor_position: Some(v1::Point { x: at.x, y: at.y }),
        }))
    }

    async fn cursor(&self) -> Option<v1::Point> {
        let p = self.session.pointer().await.ok()?;
        Some(v1::Point { x: p.x, y: p.y })
    }
}

fn check_count(count: u32) -> Result<u32, Status> {
    match count {
        0 => Ok(1),
        1..=3 => Ok(count),
        n => Err(invalid(format!("click count is 1, 2 or 3, not {n}"))),
    }
}

#[tonic::async_trait]
impl ComputerService for Computer {
    async fn screenshot(
        &self,
        request: Request<v1::ScreenshotRequest>,
    ) -> Result<Response<v1::ScreenshotResponse>, Status> {
        crate::screenshot::screenshot(&self.session, request.into_inner()).await
    }

    async fn pointer(
        &self,
        request: Request<v1::PointerRequest>,
    ) -> Result<Response<v1::PointerResponse>, Status> {
        use v1::pointer_request::Action;
        let r = request.into_inner();
        let target = r.target.unwrap_or_default();
        let options = options(&target)?;
        let action = r
            .action
            .ok_or_else(|| invalid("action is required: click, move, down, up, drag or scroll"))?;
        let (at, steps) = match action {
            Action::Click(c) => {
                let spot = self
                    .spot_or_pointer(&target, c.position.as_ref(), "position")
                    .await?;
                let event = InputEvent::Click {
                    x: spot.x,
                    y: spot.y,
                    button: button(c.button)?,
                    clicks: check_count(c.count)?,
                    mods: mods(&c.modifiers)?,
                };
                (spot.window, vec![Step::drawn(vec![event])])
            }
            Action::Move(m) => {
                let glide = duration(m.duration.as_ref(), "duration")?;
                let to = point(m.position.as_ref(), "position")?;
                let window = self.target_window(&target).await?;
                let (gx, gy) = self.global(&target, window.as_ref(), to).await?;
                if window.is_none() && self.session.window_at(gx, gy).is_none() {
                    return self.move_over_desktop(gx, gy).await;
                }
                let spot = self.spot_global(window, (gx, gy))?;
                let steps = match glide {
                    None => vec![Step::drawn(vec![InputEvent::PointerMove {
                        x: spot.x,
                        y: spot.y,
                        mods: Mods::default(),
                    }])],
                    Some(glide) => self.glide(&spot, glide).await?,
                };
                (spot.window, steps)
            }
            Action::Down(d) => {
                let spot = self
                    .spot_or_pointer(&target, d.position.as_ref(), "position")
                    .await?;
                let event = InputEvent::PointerDown {
                    x: spot.x,
                    y: spot.y,
                    button: button(d.button)?,
                    clicks: 1,
                    mods: Mods::default(),
                };
                (spot.window, vec![Step::drawn(vec![event])])
            }
            Action::Up(u) => {
                let spot = self
                    .spot_or_pointer(&target, u.position.as_ref(), "position")
                    .await?;
                let event = InputEvent::PointerUp {
                    x: spot.x,
                    y: spot.y,
                    button: button(u.button)?,
                    clicks: 1,
                    mods: Mods::default(),
                };
                (spot.window, vec![Step::drawn(vec![event])])
            }
            Action::Drag(d) => {
                let from = self.spot(&target, point(d.from.as_ref(), "from")?).await?;
                let b = button(d.button)?;
                let m = mods(&d.modifiers)?;
                let mut steps = vec![Step::drawn(vec![
                    InputEvent::PointerMove {
                        x: from.x,
                        y: from.y,
                        mods: m,
                    },
                    InputEvent::PointerDown {
                        x: from.x,
                        y: from.y,
                        button: b,
                        clicks: 1,
                        mods: m,
                    },
                ])];
                // Every point of the path, then the end, in the window the
                // drag started in: the grab keeps the pointer there. The
                // moves are spread over the drag's duration, a frame apart.
                let over = duration(d.duration.as_ref(), "duration")?.unwrap_or(DRAG_DEFAULT);
                let mut through = vec![(from.x, from.y)];
                for p in d.path.iter().map(Some).chain([d.to.as_ref()]) {
                    let field = if p == d.to.as_ref() { "to" } else { "path" };
                    let (gx, gy) = self
                        .global(&target, Some(&from.window), point(p, field)?)
                        .await?;
                    through.push((
                        gx - from.window.content.x as f64,
                        gy - from.window.content.y as f64,
                    ));
                }
                let moves = along(&through, steps_over(over));
                let count = moves.len();
                for (i, (x, y)) in moves.into_iter().enumerate() {
                    let mut events = vec![InputEvent::PointerMove { x, y, mods: m }];
                    if i + 1 == count {
                        events.push(InputEvent::PointerUp {
                            x,
                            y,
                            button: b,
                            clicks: 1,
                            mods: m,
                        });
                    }
                    steps.push(Step::drawn(events).at(over.mul_f64((i + 1) as f64 / count as f64)));
                }
                (from.window, steps)
            }
            Action::Scroll(s) => {
                let spot = self
                    .spot_or_pointer(&target, s.position.as_ref(), "position")
                    .await?;
                if !s.delta_x.is_finite() || !s.delta_y.is_finite() {
                    return Err(invalid("scroll deltas must be finite"));
                }
                let per = match known::<v1::ScrollUnit>(s.unit, "unit")? {
                    v1::ScrollUnit::Unspecified | v1::ScrollUnit::Line => LINE_POINTS,
                    v1::ScrollUnit::Pixel => 1.0,
                };
                let event = InputEvent::Wheel {
                    x: spot.x,
                    y: spot.y,
                    dx: s.delta_x * per,
                    dy: s.delta_y * per,
                    precise: false,
                    mods: Mods::default(),
                };
                (spot.window, vec![Step::drawn(vec![event])])
            }
        };
        let aim = Aim {
            window: at,
            options,
        };
        let (report, unsettled) = self.run(&aim, steps, true).await?;
        Ok(answered(
            v1::PointerResponse {
                report: Some(report),
                cursor_position: self.cursor().await,
            },
            unsettled.as_deref(),
        ))
    }

    async fn keyboard(
        &self,
        request: Request<v1::KeyboardRequest>,
    ) -> Result<Response<v1::KeyboardResponse>, Status> {
        use v1::keyboard_request::Action;
        let r = request.into_inner();
        let target = r.target.unwrap_or_default();
        let action = r
            .action
            .ok_or_else(|| invalid("action is required: type, press, hotkey, down or up"))?;
        let steps = match action {
            Action::Type(t) => {
                known::<v1::TextEntryMode>(t.mode, "mode")?;
                if t.text.is_empty() {
                    return Err(invalid("text is empty: there is nothing to type"));
                }
                match duration(t.delay.as_ref(), "delay")? {
                    None => typed(&t.text, false),
                    Some(delay) => typed(&t.text, true)
                        .into_iter()
                        .enumerate()
                        .map(|(i, step)| step.at(delay * i as u32))
                        .collect(),
                }
            }
            Action::Press(p) => {
                let chord = format!("{}{}", modifiers(&p.modifiers)?, key_input(p.key.as_ref())?);
                let times = p.repeat.max(1);
                if times > 1000 {
                    return Err(invalid(format!("repeat is at most 1000, not {times}")));
                }
                let events = (0..times)
                    .map(|_| InputEvent::Key { key: chord.clone() })
                    .collect();
                vec![Step::drawn(events)]
            }
            Action::Hotkey(h) => {
                if h.keys.is_empty() {
                    return Err(invalid("hotkey needs keys"));
                }
                let names = h
                    .keys
                    .iter()
                    .map(|k| key_input(Some(k)))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut events: Vec<InputEvent> = names
                    .iter()
                    .map(|k| InputEvent::KeyDown { key: k.clone() })
                    .collect();
                events.extend(
                    names
                        .iter()
                        .rev()
                        .map(|k| InputEvent::KeyUp { key: k.clone() }),
                );
                vec![Step::drawn(events)]
            }
            Action::Down(d) => vec![Step::drawn(vec![InputEvent::KeyDown {
                key: key_input(d.key.as_ref())?,
            }])],
            Action::Up(u) => vec![Step::drawn(vec![InputEvent::KeyUp {
                key: key_input(u.key.as_ref())?,
            }])],
        };
        let aim = self.keyboard_aim(&target).await?;
        let (report, unsettled) = self.run(&aim, steps, false).await?;
        Ok(answered(
            v1::KeyboardResponse {
                report: Some(report),
            },
            unsettled.as_deref(),
        ))
    }

    async fn get_clipboard(
        &self,
        _request: Request<v1::GetClipboardRequest>,
    ) -> Result<Response<v1::GetClipboardResponse>, Status> {
        let clip = self
            .session
            .clipboard()
            .await
            .map_err(self.err("clipboard.text"))?;
        Ok(Response::new(v1::GetClipboardResponse {
            content: Some(v1::ClipboardContent {
                text: clip.text,
                file_paths: Vec::new(),
                image_png: None,
            }),
            generation: clip.generation,
        }))
    }

    async fn set_clipboard(
        &self,
        request: Request<v1::SetClipboardRequest>,
    ) -> Result<Response<v1::SetClipboardResponse>, Status> {
        let content = request.into_inner().content.unwrap_or_default();
        if !content.file_paths.is_empty() {
            return Err(unsupported(
                Code::FailedPrecondition,
                "clipboard.files",
                "Wayrig's clipboard carries text; set file paths as text instead",
            ));
        }
        if content.image_png.is_some() {
            return Err(unsupported(
                Code::FailedPrecondition,
                "clipboard.image",
                "Wayrig's clipboard carries text; set text instead",
            ));
        }
        // No flavor at all clears the clipboard.
        let text = content.text.unwrap_or_default();
        let generation = self
            .session
            .set_clipboard(text)
            .await
            .map_err(self.err("clipboard.text"))?;
        Ok(Response::new(v1::SetClipboardResponse { generation }))
    }

    async fn get_cursor_position(
        &self,
        _request: Request<v1::GetCursorPositionRequest>,
    ) -> Result<Response<v1::GetCursorPositionResponse>, Status> {
        let p = self.session.pointer().await.map_err(self.err("pointer"))?;
        let displays = self.displays().await?;
        let at = wayrig_host::Rect::new(p.x.floor() as i32, p.y.floor() as i32, 1, 1);
        Ok(Response::new(v1::GetCursorPositionResponse {
            position: Some(v1::Point { x: p.x, y: p.y }),
            display_id: display_of(&at, &displays)
                .map(display_id)
                .unwrap_or_default(),
        }))
    }

    async fn list_displays(
        &self,
        _request: Request<v1::ListDisplaysRequest>,
    ) -> Result<Response<v1::ListDisplaysResponse>, Status> {
        let mut displays = self.displays().await?;
        displays.sort_by_key(|d| !d.primary);
        Ok(Response::new(v1::ListDisplaysResponse {
            displays: displays.iter().map(display).collect(),
        }))
    }
}

/// Text as steps: newlines are Enter; with a delay, one character a step.
fn typed(text: &str, one_by_one: bool) -> Vec<Step> {
    let mut events = Vec::new();
    let mut run = String::new();
    let flush = |run: &mut String, events: &mut Vec<InputEvent>| {
        if !run.is_empty() {
            events.push(InputEvent::Text {
                text: std::mem::take(run),
            });
        }
    };
    for c in text.chars() {
        if c == '\n' {
            flush(&mut run, &mut events);
            events.push(InputEvent::Key {
                key: key_name(v1::Key::Enter as i32).expect("Enter has a name"),
            });
        } else {
            run.push(c);
            if one_by_one {
                flush(&mut run, &mut events);
            }
        }
    }
    flush(&mut run, &mut events);
    if one_by_one {
        events.into_iter().map(|e| Step::drawn(vec![e])).collect()
    } else {
        vec![Step::drawn(events)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_are_enter_and_a_delay_types_one_character_a_step() {
        let steps = typed("ab\ncd", false);
        assert_eq!(steps.len(), 1);
        assert_eq!(
            steps[0].events,
            vec![
                InputEvent::Text { text: "ab".into() },
                InputEvent::Key {
                    key: "Return".into()
                },
                InputEvent::Text { text: "cd".into() },
            ]
        );
        assert_eq!(typed("ab\nc", true).len(), 4);
    }

    #[test]
    fn a_path_is_walked_evenly_through_every_waypoint_to_its_end() {
        let moves = along(&[(0.0, 0.0), (10.0, 0.0), (10.0, 30.0)], 4);
        assert_eq!(moves.len(), 4);
        assert!(moves.contains(&(10.0, 0.0)), "the waypoint: {moves:?}");
        assert_eq!(moves.last(), Some(&(10.0, 30.0)));
        // Fewer steps than segments: one a segment still.
        assert_eq!(along(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)], 1).len(), 2);
        assert_eq!(steps_over(Duration::from_millis(300)), 18);
    }

    #[test]
    fn durations_are_refused_negative_or_over_a_minute() {
        let d = |seconds, nanos| prost_types::Duration { seconds, nanos };
        assert_eq!(duration(None, "duration").unwrap(), None);
        assert_eq!(duration(Some(&d(0, 0)), "duration").unwrap(), None);
        assert_eq!(
            duration(Some(&d(1, 500_000_000)), "duration").unwrap(),
            Some(Duration::from_millis(1500))
        );
        assert!(duration(Some(&d(-1, 0)), "duration").is_err());
        assert!(duration(Some(&d(0, -5)), "duration").is_err());
        assert!(duration(Some(&d(1 << 62, 0)), "duration").is_err());
    }
}
