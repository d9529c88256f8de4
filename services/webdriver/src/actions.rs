//! W3C actions: input sources' actions taken tick by tick (the i-th action of
//! every source together), each tick one step of input that waits for the
//! frame it causes, spread over its duration; and releasing what is held.
//!
//! Pointer positions are in the current window's content points (WebDriver's
//! viewport); an element origin is the middle of what shows of it.

use std::time::Duration;

use serde_json::{Map, Value};
use wayrig_host::{Button, InputEvent, Mods};
use wayrig_services::Step;

use crate::error::WdError;
use crate::locate::{ElementId, ELEMENT_KEY};

/// The longest pause or move one action may ask for.
const ACTION_LIMIT: Duration = Duration::from_secs(60);

/// What a source's actions leave held, released by Release Actions.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Held {
    pub pointer: (f64, f64),
    pub buttons: Vec<Button>,
    pub keys: Vec<String>,
}

/// Where a pointer move goes, before elements are placed.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Viewport,
    Pointer,
    Element(ElementId),
}

/// One action of one source.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    Pause(Duration),
    Move {
        origin: Origin,
        x: f64,
        y: f64,
        duration: Duration,
    },
    Down(Button),
    Up(Button),
    KeyDown(String),
    KeyUp(String),
    Scroll {
        origin: Origin,
        x: f64,
        y: f64,
        dx: f64,
        dy: f64,
    },
}

/// The actions of a Perform Actions request, as ticks.
pub fn ticks(p: &Map<String, Value>) -> Result<Vec<Vec<Act>>, WdError> {
    let sources = p
        .get("actions")
        .and_then(Value::as_array)
        .ok_or_else(|| WdError::invalid("actions must be an array of input sources"))?;
    let mut ticks: Vec<Vec<Act>> = Vec::new();
    for source in sources {
        let kind = source
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| WdError::invalid("each input source has a type"))?;
        if kind == "pointer" {
            let pointer_type = source
                .get("parameters")
                .and_then(|p| p.get("pointerType"))
                .and_then(Value::as_str)
                .unwrap_or("mouse");
            if pointer_type != "mouse" && pointer_type != "pen" {
                return Err(WdError::new(
                    "unsupported operation",
                    format!("pointerType {pointer_type:?}: Wayrig's seat has a mouse"),
                ));
            }
        }
        let actions = source
            .get("actions")
            .and_then(Value::as_array)
            .ok_or_else(|| WdError::invalid("each input source has an array of actions"))?;
        for (i, a) in actions.iter().enumerate() {
            let act = action(kind, a)?;
            if ticks.len() <= i {
                ticks.push(Vec::new());
            }
            ticks[i].push(act);
        }
    }
    Ok(ticks)
}

fn number(a: &Value, key: &str) -> Result<f64, WdError> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(0.0),
        Some(v) => v
            .as_f64()
            .filter(|n| n.is_finite() && n.abs() <= 1e7)
            .ok_or_else(|| WdError::invalid(format!("{key} must be a finite number"))),
    }
}

fn duration(a: &Value) -> Result<Duration, WdError> {
    match a.get("duration") {
        None | Some(Value::Null) => Ok(Duration::ZERO),
        Some(v) => v
            .as_u64()
            .map(Duration::from_millis)
            .filter(|d| *d <= ACTION_LIMIT)
            .ok_or_else(|| {
                WdError::invalid(format!(
                    "duration is whole milliseconds up to {}",
                    ACTION_LIMIT.as_millis()
                ))
            }),
    }
}

fn origin(a: &Value) -> Result<Origin, WdError> {
    match a.get("origin") {
        None | Some(Value::Null) => Ok(Origin::Viewport),
        Some(Value::String(s)) if s == "viewport" => Ok(Origin::Viewport),
        Some(Value::String(s)) if s == "pointer" => Ok(Origin::Pointer),
        Some(Value::Object(o)) => match o.get(ELEMENT_KEY).and_then(Value::as_str) {
            Some(id) => Ok(Origin::Element(ElementId::parse(id)?)),
            None => Err(WdError::invalid(
                "an origin object must be an element reference",
            )),
        },
        Some(_) => Err(WdError::invalid(
            "origin is viewport, pointer or an element",
        )),
    }
}

fn button(a: &Value) -> Result<Button, WdError> {
    match a.get("button").and_then(Value::as_u64).unwrap_or(0) {
        0 => Ok(Button::Left),
        1 => Ok(Button::Middle),
        2 => Ok(Button::Right),
        b => Err(WdError::invalid(format!(
            "button {b}: Wayrig's mouse has buttons 0, 1 and 2"
        ))),
    }
}

/// A key action's value as the key Wayrig sends: a WebDriver key code's
/// key, else the chord that makes the character on the session's US layout
/// (`A` is Shift+a), else the character (a key of no layout is refused when
/// sent, saying so).
fn key(a: &Value) -> Result<String, WdError> {
    let value = a
        .get("value")
        .and_then(Value::as_str)
        .filter(|v| v.chars().count() == 1)
        .ok_or_else(|| WdError::invalid("a key action's value is one character"))?;
    let c = value.chars().next().unwrap_or_default();
    Ok(match crate::keys::key_of(c) {
        Some((keysym, _)) => keysym.to_string(),
        None => wayrig_keys::chord_for_char(c).unwrap_or_else(|| value.to_string()),
    })
}

fn action(kind: &str, a: &Value) -> Result<Act, WdError> {
    let t = a
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| WdError::invalid("each action has a type"))?;
    Ok(match (kind, t) {
        (_, "pause") => Act::Pause(duration(a)?),
        ("pointer", "pointerMove") => Act::Move {
            origin: origin(a)?,
            x: number(a, "x")?,
            y: number(a, "y")?,
            duration: duration(a)?,
        },
        ("pointer", "pointerDown") => Act::Down(button(a)?),
        ("pointer", "pointerUp") => Act::Up(button(a)?),
        ("pointer", "pointerCancel") => {
            return Err(WdError::new(
                "unsupported operation",
                "pointerCancel is not supported",
            ))
        }
        ("key", "keyDown") => Act::KeyDown(key(a)?),
        ("key", "keyUp") => Act::KeyUp(key(a)?),
        ("wheel", "scroll") => Act::Scroll {
            origin: origin(a)?,
            x: number(a, "x")?,
            y: number(a, "y")?,
            dx: number(a, "deltaX")?,
            dy: number(a, "deltaY")?,
        },
        (kind, t) => {
            return Err(WdError::invalid(format!(
                "{t:?} is no action of a {kind:?} input source"
            )))
        }
    })
}

/// The elements the ticks' moves and scrolls start from.
pub fn element_origins(ticks: &[Vec<Act>]) -> Vec<ElementId> {
    let mut out: Vec<ElementId> = Vec::new();
    for act in ticks.iter().flatten() {
        if let Act::Move {
            origin: Origin::Element(e),
            ..
        }
        | Act::Scroll {
            origin: Origin::Element(e),
            ..
        } = act
        {
            if !out.contains(e) {
                out.push(*e);
            }
        }
    }
    out
}

/// Where an element's middle shows, in the window's content points.
pub type Placer<'a> = dyn Fn(&ElementId) -> Result<(f64, f64), WdError> + 'a;

/// Turn ticks into steps, given where elements' middles are (`place`) and
/// what is held; each step is sent no earlier than the ticks before it took.
pub fn steps(
    ticks: &[Vec<Act>],
    held: &mut Held,
    place: &Placer<'_>,
) -> Result<Vec<Step>, WdError> {
    let mut steps = Vec::new();
    let mut at = Duration::ZERO;
    let mods = Mods::default();
    for tick in ticks {
        let mut events = Vec::new();
        for act in tick {
            match act {
                Act::Pause(_) => {}
                Act::Move { origin, x, y, .. } => {
                    let (ox, oy) = match origin {
                        Origin::Viewport => (0.0, 0.0),
                        Origin::Pointer => held.pointer,
                        Origin::Element(e) => place(e)?,
                    };
                    held.pointer = (ox + x, oy + y);
                    events.push(InputEvent::PointerMove {
                        x: held.pointer.0,
                        y: held.pointer.1,
                        mods,
                    });
                }
                // A button held already is not pressed again (W3C: the
                // action does nothing).
                Act::Down(b) if held.buttons.contains(b) => {}
                Act::Down(b) => {
                    events.push(InputEvent::PointerDown {
                        x: held.pointer.0,
                        y: held.pointer.1,
                        button: *b,
                        clicks: 1,
                        mods,
                    });
                    held.buttons.push(*b);
                }
                Act::Up(b) => {
                    events.push(InputEvent::PointerUp {
                        x: held.pointer.0,
                        y: held.pointer.1,
                        button: *b,
                        clicks: 1,
                        mods,
                    });
                    held.buttons.retain(|h| h != b);
                }
                // A key pressed again repeats; it is held once (the W3C
                // input state's pressed keys are a set).
                Act::KeyDown(k) => {
                    events.push(InputEvent::KeyDown { key: k.clone() });
                    if !held.keys.contains(k) {
                        held.keys.push(k.clone());
                    }
                }
                Act::KeyUp(k) => {
                    events.push(InputEvent::KeyUp { key: k.clone() });
                    held.keys.retain(|h| h != k);
                }
                Act::Scroll {
                    origin,
                    x,
                    y,
                    dx,
                    dy,
                } => {
                    let (ox, oy) = match origin {
                        Origin::Element(e) => place(e)?,
                        _ => (0.0, 0.0),
                    };
                    events.push(InputEvent::Wheel {
                        x: ox + x,
                        y: oy + y,
                        dx: *dx,
                        dy: *dy,
                        precise: true,
                        mods,
                    });
                }
            }
        }
        if !events.is_empty() {
            steps.push(Step::drawn(events).at(at));
        }
        at += tick_lasts(tick);
    }
    Ok(steps)
}

/// How long a tick lasts: its longest pause or move.
fn tick_lasts(tick: &[Act]) -> Duration {
    tick.iter()
        .map(|act| match act {
            Act::Pause(d) | Act::Move { duration: d, .. } => *d,
            _ => Duration::ZERO,
        })
        .max()
        .unwrap_or_default()
}

/// How long ticks last, one after another.
pub fn lasting(ticks: &[Vec<Act>]) -> Duration {
    ticks.iter().map(|tick| tick_lasts(tick)).sum()
}

/// The ticks in runs, each run from a tick that starts at an element (but
/// the first) to the next: an element is placed when its run comes, once
/// the ticks before it ran.
pub fn runs_placing_elements(ticks: &[Vec<Act>]) -> Vec<&[Vec<Act>]> {
    let mut runs = Vec::new();
    let mut rest = ticks;
    while !rest.is_empty() {
        let len = rest
            .iter()
            .skip(1)
            .position(|tick| !element_origins(std::slice::from_ref(tick)).is_empty())
            .map_or(rest.len(), |at| at + 1);
        let (run, later) = rest.split_at(len);
        runs.push(run);
        rest = later;
    }
    runs
}

/// The events that release everything `held` holds, keys last pressed first.
pub fn release(held: &mut Held) -> Vec<InputEvent> {
    let (x, y) = held.pointer;
    let mut events: Vec<InputEvent> = held
        .keys
        .drain(..)
        .rev()
        .map(|key| InputEvent::KeyUp { key })
        .collect();
    events.extend(
        held.buttons
            .drain(..)
            .rev()
            .map(|button| InputEvent::PointerUp {
                x,
                y,
                button,
                clicks: 1,
                mods: Mods::default(),
            }),
    );
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn sources_are_taken_tick_by_tick_and_held_input_is_released() {
        let p = of(json!({"actions": [
            {"type": "pointer", "id": "mouse", "actions": [
                {"type": "pointerMove", "x": 10, "y": 20, "duration": 100},
                {"type": "pointerDown", "button": 0},
                {"type": "pointerMove", "origin": "pointer", "x": 5, "y": 0},
            ]},
            {"type": "key", "id": "kb", "actions": [
                {"type": "keyDown", "value": "\u{E008}"},
                {"type": "pause"},
                {"type": "keyDown", "value": "A"},
            ]},
        ]}));
        let ticks = ticks(&p).unwrap();
        assert_eq!(ticks.len(), 3);
        let mut held = Held::default();
        let steps = steps(&ticks, &mut held, &|_| unreachable!()).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(
            steps[1].at,
            Some(Duration::from_millis(100)),
            "after the move's 100 ms"
        );
        assert_eq!(held.pointer, (15.0, 20.0));
        assert_eq!(held.buttons, [Button::Left]);
        assert_eq!(held.keys, ["Shift_L", "Shift+a"], "A is made with Shift");
        let released = release(&mut held);
        let up = |key: &str| InputEvent::KeyUp { key: key.into() };
        assert_eq!(released[..2], [up("Shift+a"), up("Shift_L")]);
        assert!(matches!(released[2], InputEvent::PointerUp { x: 15.0, .. }));
        assert_eq!(
            held,
            Held {
                pointer: (15.0, 20.0),
                ..Held::default()
            }
        );
    }

    #[test]
    fn elements_are_placed_as_their_ticks_come_and_pauses_last_between() {
        let element = |node| ElementId {
            window: wayrig_host::WindowHandle { id: 1, epoch: 1 },
            node,
        };
        let to = |node| Act::Move {
            origin: Origin::Element(element(node)),
            x: 0.0,
            y: 0.0,
            duration: Duration::ZERO,
        };
        let ticks = vec![
            vec![Act::Pause(Duration::from_millis(50))],
            vec![to(1)],
            vec![Act::Down(Button::Left)],
            vec![Act::Up(Button::Left)],
            vec![Act::Pause(Duration::from_millis(300))],
            vec![to(2), Act::KeyDown("a".into())],
            vec![Act::Down(Button::Left)],
        ];
        let runs = runs_placing_elements(&ticks);
        let lens: Vec<usize> = runs.iter().map(|r| r.len()).collect();
        assert_eq!(lens, [1, 4, 2]);
        assert_eq!(element_origins(runs[1]), [element(1)]);
        assert_eq!(element_origins(runs[2]), [element(2)]);
        assert_eq!(lasting(runs[0]), Duration::from_millis(50));
        assert_eq!(lasting(runs[1]), Duration::from_millis(300));
        assert!(runs_placing_elements(&[]).is_empty());
    }

    #[test]
    fn a_key_pressed_again_and_again_is_held_once() {
        let down = json!({"type": "keyDown", "value": "a"});
        let p = of(json!({"actions": [
            {"type": "key", "id": "kb", "actions": [down, down, down]},
        ]}));
        let mut held = Held::default();
        let sent = steps(&ticks(&p).unwrap(), &mut held, &|_| unreachable!()).unwrap();
        assert_eq!(sent.len(), 3, "each press is sent: it repeats");
        assert_eq!(held.keys, ["a"]);
        let released = release(&mut held);
        assert_eq!(released, [InputEvent::KeyUp { key: "a".into() }]);
        let pressed_twice = of(json!({"actions": [
            {"type": "pointer", "id": "mouse", "actions": [
                {"type": "pointerDown", "button": 0},
                {"type": "pointerDown", "button": 0},
            ]},
        ]}));
        let sent = steps(
            &ticks(&pressed_twice).unwrap(),
            &mut held,
            &|_| unreachable!(),
        )
        .unwrap();
        let downs = sent
            .iter()
            .flat_map(|s| &s.events)
            .filter(|e| matches!(e, InputEvent::PointerDown { .. }))
            .count();
        assert_eq!((downs, held.buttons.as_slice()), (1, &[Button::Left][..]));
    }

    #[test]
    fn malformed_actions_are_invalid_arguments() {
        for p in [
            json!({}),
            json!({"actions": [{"actions": []}]}),
            json!({"actions": [{"type": "key", "actions": [{"type": "keyDown", "value": "ab"}]}]}),
            json!({"actions": [{"type": "pointer", "actions": [{"type": "pointerDown", "button": 9}]}]}),
            json!({"actions": [{"type": "pointer", "actions": [{"type": "pointerMove", "x": "1"}]}]}),
            json!({"actions": [{"type": "none", "actions": [{"type": "pause", "duration": -1}]}]}),
            json!({"actions": [{"type": "key", "actions": [{"type": "pointerDown"}]}]}),
        ] {
            let e = ticks(&of(p.clone())).unwrap_err();
            assert_eq!(e.code, "invalid argument", "{p}: {e:?}");
        }
    }
}
