//! A pointer click on an element, for faces whose verb is a click (the Bus's
//! `ui.click`): found, brought into view, aimed, checked to land, then clicked.
//!
//! It runs in the window's turn at input, as steps: the pointer moves in one
//! frame, presses and releases in the next, and the answer waits for the effect.

use wayrig_host::{Button, Capability, InputEvent, InputOptions, Mods, WindowHandle};

use super::act::{centre, in_view, refuse_unreachable, ElementRef};
use super::input::{Step, StepReport};
use super::Session;
use crate::model::Error;

/// How to click an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElementClick {
    pub button: Button,
    /// 1 for a click, 2 for a double-click.
    pub count: u32,
}

/// What a click on an element did.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementClicked {
    /// The element clicked.
    pub element: u64,
    /// Where, in the window's content points.
    pub at: (f64, f64),
    /// The steps: the pointer's move, then the press and release.
    pub steps: Vec<StepReport>,
}

impl Session {
    /// Click `element` of the window with the pointer where it shows, after
    /// the input queued before; an element scrolled out of view is scrolled
    /// to first. Refused, clicking nothing, when it is concealed, disabled,
    /// or something else lies where it would be clicked.
    pub async fn click_element(
        &self,
        window: WindowHandle,
        element: ElementRef,
        click: ElementClick,
    ) -> Result<ElementClicked, Error> {
        self.require(Capability::Input, "input")?;
        if !(1..=2).contains(&click.count) {
            return Err(Error::InvalidRequest(format!(
                "a click is single or double, not {} clicks",
                click.count
            )));
        }
        self.refuse_if_blocked(window).await?;
        let cancels = self.input_queues.cancels_of(window);
        self.in_turn(
            window,
            Box::pin(async move {
                self.window(&super::WindowPick::Handle(window)).await?;
                let mut tree = self.tree(window).await?;
                let node = self.resolve(&tree, &element)?.clone();
                refuse_unreachable(&node, true)?;
                if in_view(&tree, &node).is_none() {
                    self.scroll_for_click(&tree, &node).await?;
                    tree = self.tree(window).await?;
                }
                let node = tree
                    .node(node.id)
                    .ok_or_else(|| Error::NoElement(format!("{} went away", node.id)))?;
                let bounds = in_view(&tree, node).ok_or_else(|| {
                    Error::NotShown(format!(
                        "{} ({:?} {:?}) has no place in the window to click: it is not laid \
                         out, or lies outside the window or its scrolled view",
                        node.id, node.role, node.name
                    ))
                })?;
                let (x, y) = centre(bounds);
                self.check_hit(&tree, node, x, y).await?;
                let steps = self
                    .run_steps(
                        window,
                        click_steps(x, y, click),
                        InputOptions::default(),
                        cancels,
                    )
                    .await?;
                Ok(ElementClicked {
                    element: node.id,
                    at: (x, y),
                    steps,
                })
            }),
        )
        .await
    }
}

/// The pointer moved to `(x, y)` in one frame; pressed and released there,
/// once or twice, in the next.
fn click_steps(x: f64, y: f64, click: ElementClick) -> Vec<Step> {
    let (button, mods) = (click.button, Mods::default());
    let press = (1..=click.count)
        .flat_map(|clicks| {
            [
                InputEvent::PointerDown {
                    x,
                    y,
                    button,
                    clicks,
                    mods,
                },
                InputEvent::PointerUp {
                    x,
                    y,
                    button,
                    clicks,
                    mods,
                },
            ]
        })
        .collect();
    vec![
        Step::drawn(vec![InputEvent::PointerMove { x, y, mods }]),
        Step::drawn(press),
    ]
}
