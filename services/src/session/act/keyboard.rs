//! Acting by keyboard: focus (asked, by a click on a field, or along the
//! focus chain with arrows and Tab), carets, selections and typing.

use std::sync::atomic::Ordering;

use wayrig_host::{Button, FrameWait, InputEvent, Rect};

use super::{in_view, Path, Target};
use crate::model::{is_text_field, Error, Node, Role, Tree};
use crate::session::Session;

/// How long a focus request may take to show as a focus event.
const FOCUS_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Tab presses at most while looking for an element along the focus chain.
const TAB_LIMIT: usize = 400;

/// Arrow presses at most to put a caret where its toolkit would not: an
/// app's text (and the offsets it reports) can be of any length.
const CARET_STEPS_MOST: i32 = 10_000;

/// The caret of a field its toolkit would not place lies too far in to
/// step to by keys.
fn caret_too_far(node: &Node) -> Error {
    Error::Unsupported(format!(
        "the app would not keep the caret of element {} where it was, and it lies more \
         than {CARET_STEPS_MOST} characters in: focus the field and place its caret \
         first, then insert",
        node.id
    ))
}

/// How long a toolkit may take to answer a text selection request.
pub(super) const SELECT_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Where a click focuses a text field and does nothing else: near the
/// start of its text, clear of the buttons a field holds (a spin button's
/// − and +, whose middle is its − in GTK 4; an entry's clear icon).
fn focus_point(tree: &Tree, node: &Node, b: Rect) -> (f64, f64) {
    let y = b.y as f64 + b.height as f64 / 2.0;
    let inset = (b.width / 4).clamp(1, 12);
    let buttons: Vec<Rect> = tree
        .descendants(node)
        .filter(|d| matches!(d.role, Role::Button | Role::ToggleButton | Role::MenuButton))
        .filter_map(|d| d.bounds)
        .collect();
    [b.x + inset, b.x + b.width / 4, b.x + b.width / 2]
        .into_iter()
        .map(|x| (x as f64, y))
        .find(|(x, y)| !buttons.iter().any(|r| r.contains_point(*x, *y)))
        .unwrap_or((f64::from(b.x + inset), y))
}

impl Session {
    pub(super) async fn focus(&self, target: &Target<'_>) -> Result<Path, Error> {
        let Target {
            node,
            ifaces,
            delivery,
            ..
        } = *target;
        delivery.focus_requested.store(true, Ordering::Relaxed);
        // Already focused, as accessibility reports: a grab would bring no
        // focus event to wait for, and a click could move the caret.
        if node.states.focused {
            return Ok(Path::Accessibility);
        }
        if ifaces.component {
            let since = self.a11y()?.changes();
            // GTK 3 grabs focus this way, at once; GTK 4 answers false.
            // AccessKit answers true and hands the request to the app's next
            // frame, unordered with the keys that may follow: its focus event
            // says when it is done. A text field that does not report focus
            // in time is clicked instead, which is ordered with later keys.
            if self.a11y()?.grab_focus(node.id).await? {
                let reported = self.a11y()?.wait_focus(node.id, since, FOCUS_LIMIT).await;
                tracing::debug!(node = node.id, reported, "focus granted");
                if reported || !is_text_field(node.role) {
                    return Ok(Path::Accessibility);
                }
            }
        }
        match node.bounds {
            // Clicking a text field focuses it without side effects. The app
            // may take the click in the same frame as keys sent right after
            // (egui does): its focus event says the click was taken alone.
            Some(b) if is_text_field(node.role) => {
                let since = self.a11y()?.changes();
                let (x, y) = focus_point(target.tree, node, b);
                let path = self.click_at(target, x, y, Button::Left).await?;
                let reported = self.a11y()?.wait_focus(node.id, since, FOCUS_LIMIT).await;
                tracing::debug!(node = node.id, reported, "focused by a click");
                Ok(path)
            }
            // A click would press anything else: go along the focus chain.
            // A list takes the focus at its selected row (GTK), so an item
            // is selected first, as the arrow keys that reach it would.
            _ => {
                if node.role.is_item() {
                    let tree = self.tree(target.window).await?;
                    if let Some(path) = self.focus_by_arrows(target, &tree).await? {
                        return Ok(path);
                    }
                    if !node.states.selected {
                        self.select_in_container(&tree, node).await?;
                    }
                }
                self.focus_by_tab(target).await
            }
        }
    }

    /// An item whose list has the focus on another of its items: the arrow
    /// keys move it there, row by row, as a keyboard user does (Tab would
    /// leave the list and come back to the row it left). `None` when no
    /// other item of its list has the focus.
    pub(super) async fn focus_by_arrows(
        &self,
        target: &Target<'_>,
        tree: &Tree,
    ) -> Result<Option<Path>, Error> {
        let node = target.node;
        let Some(siblings) = node.parent.and_then(|p| tree.node(p)).map(|p| &p.children) else {
            return Ok(None);
        };
        let place = |id: u64| siblings.iter().position(|c| *c == id);
        let Some(want) = place(node.id) else {
            return Ok(None);
        };
        let Some(mut at) = tree
            .nodes
            .iter()
            .find(|n| n.states.focused)
            .and_then(|n| place(n.id))
        else {
            return Ok(None);
        };
        let a11y = self.a11y()?;
        while at != want {
            let key = if want > at { "Down" } else { "Up" };
            let since = a11y.changes();
            self.deliver(target, vec![InputEvent::Key { key: key.into() }])
                .await?;
            let moved = a11y
                .wait_any_focus(since, FOCUS_LIMIT)
                .await
                .and_then(place);
            match moved {
                // Each press moves one item nearer; anything else (a row
                // that takes no focus, a list laid out sideways) stops here.
                Some(now) if now.abs_diff(want) < at.abs_diff(want) => at = now,
                _ => {
                    return Err(Error::Unsupported(format!(
                        "element {} ({:?} {:?}) cannot be focused: {key} moves the focus no nearer",
                        node.id, node.role, node.name
                    )))
                }
            }
        }
        Ok(Some(Path::Keyboard))
    }

    /// Tab along the window's focus chain until the element has the focus,
    /// as a keyboard user does: each press waits for the focus event it
    /// brings. Out of a text view, whose Tab types a tab, Ctrl+Tab moves on.
    pub(super) async fn focus_by_tab(&self, target: &Target<'_>) -> Result<Path, Error> {
        let node = target.node;
        let refused = |why: &str| {
            Error::Unsupported(format!(
                "element {} ({:?} {:?}) cannot be focused: {why}",
                node.id, node.role, node.name
            ))
        };
        let a11y = self.a11y()?;
        let tree = self.tree(target.window).await?;
        // GTK 4 leaves a row scrolled into view marked offscreen: where it
        // is laid out says it shows.
        let shown = tree
            .node(node.id)
            .is_some_and(|n| in_view(&tree, n).is_some());
        if node.states.offscreen && !shown {
            return Err(refused("it is not shown"));
        }
        let types_tab = |id: Option<u64>| {
            id.and_then(|id| tree.node(id))
                .is_some_and(|n| n.states.multiline && n.states.editable)
        };
        let mut focused = tree.nodes.iter().find(|n| n.states.focused).map(|n| n.id);
        let mut first = None;
        for _ in 0..TAB_LIMIT {
            let key = if types_tab(focused) {
                "Ctrl+Tab"
            } else {
                "Tab"
            };
            let since = a11y.changes();
            self.deliver(target, vec![InputEvent::Key { key: key.into() }])
                .await?;
            let Some(now) = a11y.wait_any_focus(since, FOCUS_LIMIT).await else {
                return Err(refused("Tab moves the focus no further"));
            };
            if now == node.id {
                return Ok(Path::Keyboard);
            }
            if first == Some(now) {
                break;
            }
            first.get_or_insert(now);
            focused = Some(now);
        }
        Err(refused("it is not on the window's focus chain"))
    }

    /// Where a text field has its caret, when it tells.
    pub(super) async fn caret(&self, target: &Target<'_>) -> Option<i32> {
        if !target.ifaces.text {
            return None;
        }
        let caret = self.a11y().ok()?.caret(target.node.id).await;
        caret.ok().filter(|at| *at >= 0)
    }

    /// Put a text field's caret at `at` through its Text interface; whether
    /// the toolkit did.
    pub(super) async fn put_caret(&self, target: &Target<'_>, at: i32) -> bool {
        let Ok(a11y) = self.a11y() else {
            return false;
        };
        let put = tokio::time::timeout(SELECT_LIMIT, a11y.set_caret(target.node.id, at)).await;
        tracing::debug!(id = target.node.id, at, ?put, "caret put back");
        matches!(put, Ok(Ok(true)))
    }

    /// Select characters `from..to` as a person would: focus the field, go to
    /// its start, step right to `from`, then extend with Shift.
    pub(super) async fn select_by_keys(
        &self,
        target: &Target<'_>,
        from: i32,
        to: i32,
    ) -> Result<Path, Error> {
        if to > CARET_STEPS_MOST {
            return Err(Error::Unsupported(format!(
                "the app would not select characters {from} to {to}, and stepping there by \
                 keys takes more than {CARET_STEPS_MOST} presses; select fewer, nearer the start"
            )));
        }
        self.focus(target).await?;
        let key = |key: &str| InputEvent::Key { key: key.into() };
        let events: Vec<InputEvent> = std::iter::once(key("Ctrl+Home"))
            .chain((0..from).map(|_| key("Right")))
            .chain((from..to).map(|_| key("Shift+Right")))
            .collect();
        self.deliver(target, events).await?;
        Ok(Path::Keyboard)
    }

    /// Focus a text field, optionally select all of it, and type. Typing
    /// goes where the field had its caret: focusing by a click moves the caret
    /// under the pointer, so it is put back, through the Text interface or
    /// else with the keys a person would use.
    pub(super) async fn type_into(
        &self,
        target: &Target<'_>,
        replace: bool,
        text: String,
    ) -> Result<Path, Error> {
        let mut events = Vec::new();
        if !target.node.states.focused {
            let caret = match replace {
                true => None,
                false => self.caret(target).await,
            };
            // Too far to step to by keys: the toolkit must place it, as
            // asked before anything is sent.
            if let Some(at) = caret.filter(|at| *at > CARET_STEPS_MOST) {
                if !self.put_caret(target, at).await {
                    return Err(caret_too_far(target.node));
                }
            }
            self.focus(target).await?;
            self.host
                .wait_frames(
                    target.window,
                    FrameWait::Drawn,
                    crate::session::waits::DRAWN_LIMIT,
                )
                .await?;
            if let Some(at) = caret {
                if !self.put_caret(target, at).await {
                    if at > CARET_STEPS_MOST {
                        return Err(caret_too_far(target.node));
                    }
                    let key = |key: &str| InputEvent::Key { key: key.into() };
                    events.push(key("Ctrl+Home"));
                    events.extend((0..at).map(|_| key("Right")));
                }
            }
        }
        if replace {
            events.push(InputEvent::Key {
                key: "Ctrl+A".into(),
            });
        }
        if text.is_empty() {
            events.push(InputEvent::Key {
                key: "BackSpace".into(),
            });
        } else {
            events.push(InputEvent::Text { text });
        }
        self.deliver(target, events).await?;
        Ok(Path::Keyboard)
    }
}
