//! What a run of pointer input amounted to, as the compositor sees it: which
//! element was clicked, dragged or hovered, pass by pass, from the events
//! the seat delivered and the elements' bounds (egui's verdicts, derived).

use wayrig_host::InputEvent;

use super::elements::is_control;
use super::input::StepReport;
use crate::model::Tree;

/// How far (points) the pointer may move between press and release for the
/// release to still click: egui's `max_click_dist`, near GTK's and Qt's
/// drag thresholds.
pub const CLICK_DISTANCE: f64 = 6.0;

/// One pass's verdicts; elements by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassVerdicts {
    pub clicked: Option<u64>,
    pub drag_started: Option<u64>,
    pub dragged: Option<u64>,
    pub drag_stopped: Option<u64>,
    /// The innermost control under the pointer (a button, not its label),
    /// else the innermost element.
    pub hovered: Option<u64>,
    /// Every element under the pointer, outermost first.
    pub contains_pointer: Vec<u64>,
    /// A button is down and the pointer moved too far since the press for
    /// its release to click.
    pub no_longer_a_click: bool,
}

/// The press in progress across passes.
struct Press {
    at: (f64, f64),
    on: Option<u64>,
    moved_far: bool,
}

/// The verdicts of each pass of a request's input, in window points; `tree`
/// gives where the elements are (the window's read after the input).
pub fn verdicts(reports: &[StepReport], tree: &Tree) -> Vec<PassVerdicts> {
    let under = |x: f64, y: f64| elements_at(tree, x, y);
    // The widget a person means at a point: the innermost control there.
    let widget = |found: &[u64]| {
        found
            .iter()
            .rev()
            .copied()
            .find(|id| tree.node(*id).is_some_and(is_control))
            .or(found.last().copied())
    };
    let innermost = |x: f64, y: f64| widget(&under(x, y));
    let mut press: Option<Press> = None;
    let mut last = None;
    reports
        .iter()
        .map(|report| {
            let mut pass = PassVerdicts::default();
            for event in &report.events {
                match event {
                    InputEvent::PointerMove { x, y, .. } => {
                        last = Some((*x, *y));
                        if let Some(p) = press.as_mut() {
                            let far = (x - p.at.0).hypot(y - p.at.1) > CLICK_DISTANCE;
                            if far && !p.moved_far {
                                p.moved_far = true;
                                pass.drag_started = p.on;
                            }
                            if p.moved_far {
                                pass.dragged = p.on;
                            }
                        }
                    }
                    InputEvent::PointerDown { x, y, .. } => {
                        last = Some((*x, *y));
                        press = Some(Press {
                            at: (*x, *y),
                            on: innermost(*x, *y),
                            moved_far: false,
                        });
                    }
                    InputEvent::PointerUp { x, y, .. } => {
                        last = Some((*x, *y));
                        if let Some(p) = press.take() {
                            if p.moved_far {
                                pass.drag_stopped = p.on;
                            } else if innermost(*x, *y) == p.on {
                                pass.clicked = p.on;
                            }
                        }
                    }
                    InputEvent::Click { x, y, .. } => {
                        last = Some((*x, *y));
                        press = None;
                        pass.clicked = innermost(*x, *y);
                    }
                    InputEvent::Wheel { x, y, .. } => last = Some((*x, *y)),
                    _ => {}
                }
            }
            if let Some((x, y)) = last {
                pass.contains_pointer = under(x, y);
                pass.hovered = widget(&pass.contains_pointer);
            }
            pass.no_longer_a_click = press.as_ref().is_some_and(|p| p.moved_far);
            pass
        })
        .collect()
}

/// The elements whose bounds hold a window point, outermost first; the
/// window itself is not one.
fn elements_at(tree: &Tree, x: f64, y: f64) -> Vec<u64> {
    let Some(root) = tree.nodes.first() else {
        return Vec::new();
    };
    let holds = |id: u64| {
        tree.node(id).is_some_and(|n| {
            !n.states.offscreen && n.bounds.is_some_and(|b| b.contains_point(x, y))
        })
    };
    let mut found = Vec::new();
    let mut level = root.children.clone();
    // Down the tree through what holds the point; among siblings the last
    // drawn (the frontmost) is taken.
    while let Some(next) = level.iter().rev().copied().find(|id| holds(*id)) {
        found.push(next);
        level = tree
            .node(next)
            .map(|n| n.children.clone())
            .unwrap_or_default();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::session::elements::tests::{node, tree_of};
    use std::time::Duration;
    use wayrig_host::{Button, Mods, PointerState, Rect};

    fn tree() -> Tree {
        let mut panel = node(2, Some(1), Role::Panel, "");
        panel.bounds = Some(Rect::new(0, 0, 200, 100));
        panel.children = vec![3, 4];
        let mut button = node(3, Some(2), Role::Button, "Go");
        button.bounds = Some(Rect::new(10, 10, 50, 20));
        button.children = vec![5];
        let mut label = node(5, Some(3), Role::Label, "Go");
        label.bounds = Some(Rect::new(15, 12, 40, 16));
        let mut slider = node(4, Some(2), Role::Slider, "Level");
        slider.bounds = Some(Rect::new(10, 50, 150, 20));
        let mut root = node(1, None, Role::Window, "Main");
        root.children = vec![2];
        tree_of(vec![root, panel, button, slider, label])
    }

    fn pass(events: Vec<InputEvent>) -> StepReport {
        StepReport {
            events,
            commits: 1,
            waited: Duration::ZERO,
            at: Duration::ZERO,
            window_closed: false,
            pointer: PointerState {
                x: 0.0,
                y: 0.0,
                buttons: vec![],
                window: None,
            },
            unsettled: None,
        }
    }

    fn at(x: f64, y: f64) -> InputEvent {
        InputEvent::PointerMove {
            x,
            y,
            mods: Mods::default(),
        }
    }

    fn down(x: f64, y: f64) -> InputEvent {
        InputEvent::PointerDown {
            x,
            y,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        }
    }

    fn up(x: f64, y: f64) -> InputEvent {
        InputEvent::PointerUp {
            x,
            y,
            button: Button::Left,
            clicks: 1,
            mods: Mods::default(),
        }
    }

    #[test]
    fn a_press_and_release_on_one_element_clicks_it_and_hovers_it() {
        let passes = verdicts(
            &[
                pass(vec![at(20.0, 20.0)]),
                pass(vec![down(20.0, 20.0), up(21.0, 20.0)]),
            ],
            &tree(),
        );
        assert_eq!(passes[0].hovered, Some(3));
        assert_eq!(passes[0].contains_pointer, [2, 3, 5]);
        assert_eq!(passes[0].clicked, None);
        assert_eq!(passes[1].clicked, Some(3));
    }

    #[test]
    fn moving_past_the_click_distance_drags_instead() {
        let passes = verdicts(
            &[
                pass(vec![down(20.0, 60.0)]),
                pass(vec![at(24.0, 60.0)]),
                pass(vec![at(60.0, 60.0)]),
                pass(vec![at(90.0, 60.0)]),
                pass(vec![up(90.0, 60.0)]),
            ],
            &tree(),
        );
        assert!(!passes[1].no_longer_a_click, "within the click distance");
        assert_eq!(passes[1].drag_started, None);
        assert_eq!(passes[2].drag_started, Some(4));
        assert!(passes[2].no_longer_a_click);
        assert_eq!((passes[3].drag_started, passes[3].dragged), (None, Some(4)));
        assert_eq!(passes[4].drag_stopped, Some(4));
        assert_eq!(passes[4].clicked, None, "a drag's release clicks nothing");
    }

    #[test]
    fn a_release_off_the_pressed_element_clicks_nothing() {
        let passes = verdicts(&[pass(vec![down(20.0, 20.0), up(20.0, 24.0)])], &tree());
        assert_eq!(passes[0].clicked, Some(3));
        let off = verdicts(&[pass(vec![down(58.0, 20.0), up(62.0, 20.0)])], &tree());
        assert_eq!(off[0].clicked, None, "released beside the button");
        assert_eq!(off[0].hovered, Some(2));
    }
}
