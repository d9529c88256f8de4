//! Acting on elements: through the accessibility interfaces where they do the
//! job at once, else through the compositor's input, as a person would.
//!
//! Press is a real pointer click at the element's visible centre: GTK 4 applies
//! an AT-SPI click only after GtkButton's 250 ms activate delay, so a read after
//! settle would not see it, while a pointer click takes effect in the same frame.
//!
//! This file chooses each action's path; pointer: clicks and scrolling into
//! view; keyboard: focus, the focus chain, carets and typing.

mod keyboard;
mod pointer;

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use wayrig_host::{Button, InputEvent, InputOptions, WindowHandle};

use keyboard::SELECT_LIMIT;
pub(super) use pointer::{centre, in_view};

use super::elements::{is_selectable_cell, offered, Offered, Query};
use super::snapshots::still_shown;
use super::windows::WindowOp;
use super::Session;
use crate::access::Interfaces;
use crate::model::{is_text_field, Error, Node, Range, Role, Tree};

/// How long an element may take to report the effect of an accessibility
/// request (an action that changes nothing waits this long).
const EFFECT_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Refuse an element no person could reach: what a page, tab or popover
/// conceals (its actions would run unseen, and a click would land on what is
/// there) and, for what `operates` on it, a disabled control (a click would
/// do nothing and answer as if it had worked).
pub(super) fn refuse_unreachable(node: &Node, operates: bool) -> Result<(), Error> {
    if node.states.concealed {
        return Err(super::hit::concealed(node));
    }
    if operates && node.states.disabled {
        return Err(Error::InvalidRequest(format!(
            "element {} ({:?} {:?}) is disabled; wait until the app enables it",
            node.id, node.role, node.name
        )));
    }
    Ok(())
}

/// The element an action is for: its window, its node as last read, the
/// interfaces its object offers, and how input reaches it.
struct Target<'a> {
    window: WindowHandle,
    /// The read the element was found in.
    tree: &'a Tree,
    node: &'a Node,
    ifaces: Interfaces,
    delivery: &'a Delivered,
}

impl<'a> Target<'a> {
    /// The same target as a later read shows it (scrolled into view).
    fn shown<'b>(&self, tree: &'b Tree, node: &'b Node) -> Target<'b>
    where
        'a: 'b,
    {
        Target {
            window: self.window,
            tree,
            node,
            ifaces: self.ifaces,
            delivery: self.delivery,
        }
    }
}

/// Which element an action is for.
#[derive(Debug, Clone, PartialEq)]
pub enum ElementRef {
    /// By id, in the window's tree as it is now.
    Id(u64),
    /// By id, as an earlier read named it: it acts only while it shows
    /// unchanged, else `StaleElement`.
    InSnapshot { snapshot: String, id: u64 },
    /// The one element a query means.
    Query(Box<Query>),
}

/// How an action's input reaches a window that is not in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Delivery {
    /// As a person would: input raises and focuses the window; accessibility
    /// actions leave it where it is.
    #[default]
    Auto,
    /// Never raise or focus the window (input gets keyboard focus only).
    Background,
    /// Raise and focus the window first, whatever the path.
    Foreground,
}

/// How to act.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ActOptions {
    pub delivery: Delivery,
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActReport {
    /// The element acted on.
    pub element: u64,
    pub path: Path,
    /// The window was raised and focused for it.
    pub activated: bool,
    /// Keyboard focus moved to another window or element.
    pub focus_changed: bool,
    /// The pointer moved.
    pub pointer_moved: bool,
    /// Why the window had not settled when the answer's wait for the
    /// effect ran out (`None`: it settled, the effect shows).
    pub unsettled: Option<String>,
}

/// What the input of one action did, noted as it is sent.
#[derive(Default)]
struct Delivered {
    background: bool,
    activated: AtomicBool,
    pointer_moved: AtomicBool,
    focus_requested: AtomicBool,
}

/// What can be done to an element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Action {
    Press,
    Focus,
    SetValue {
        text: String,
    },
    InsertText {
        text: String,
    },
    SelectText {
        from: i32,
        to: i32,
    },
    Increment,
    Decrement,
    ScrollIntoView,
    Expand,
    Collapse,
    /// Select an item of a list, tree, tab list or combo box.
    Select,
    /// Open the element's context menu.
    ShowMenu,
    /// A toolkit action by its own name (AT-SPI's action names: "click").
    Custom {
        name: String,
    },
}

/// The path an action took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Path {
    /// An accessibility interface of the element did it.
    Accessibility,
    /// Pointer input at the element's centre.
    Pointer,
    /// Focus, then keys and text.
    Keyboard,
}

/// Action names that press an element, as toolkits name them (a browser's
/// link "jump"s).
pub(crate) const PRESS_ACTIONS: [&str; 5] = ["click", "activate", "press", "toggle", "jump"];
/// The same for an option of a drop-down, which may offer only its choice
/// (Chromium's options of a closed `<select>`: "select").
const OPTION_PRESS_ACTIONS: [&str; 6] = ["click", "activate", "press", "toggle", "jump", "select"];

/// The action names that press `node`.
fn press_actions(tree: &Tree, node: &Node) -> &'static [&'static str] {
    match dropdown_of(tree, node) {
        Some(_) => &OPTION_PRESS_ACTIONS,
        None => &PRESS_ACTIONS,
    }
}

/// The drop-down whose list holds `option`, if it is an option of one.
fn dropdown_of<'t>(tree: &'t Tree, option: &Node) -> Option<&'t Node> {
    if !matches!(option.role, Role::MenuItem | Role::ListItem) {
        return None;
    }
    tree.ancestors(option)
        .find(|a| matches!(a.role, Role::PopUpButton | Role::ComboBox))
}

impl Session {
    /// Do `action` to an element of `window`: the window, its tree and the
    /// element are resolved once, and input takes one trip to the host.
    pub async fn act(
        &self,
        window: WindowHandle,
        element: ElementRef,
        action: Action,
        options: ActOptions,
    ) -> Result<ActReport, Error> {
        self.refuse_if_blocked(window).await?;
        // The whole act in the window's turn: no other face's input lands
        // between its focus and its keys.
        self.in_turn(
            window,
            Box::pin(self.act_in_turn(window, element, action, options)),
        )
        .await
    }

    async fn act_in_turn(
        &self,
        window: WindowHandle,
        element: ElementRef,
        action: Action,
        options: ActOptions,
    ) -> Result<ActReport, Error> {
        let info = self.window(&super::WindowPick::Handle(window)).await?;
        let tree = self.tree(window).await?;
        let named = self.resolve(&tree, &element)?;
        // A group that is a list item's whole content (gtk4-demo's sidebar
        // rows) is pressed as its item, which a press selects.
        let node = match action {
            Action::Press => super::elements::item_shown_by(&tree, named).unwrap_or(named),
            _ => named,
        }
        .clone();
        let operates = !matches!(action, Action::Focus | Action::ScrollIntoView);
        refuse_unreachable(&node, operates)?;
        // Pressing what cannot be pressed (a plain label) would click
        // whatever lies under it: refused, as the element offers no press.
        if action == Action::Press && !offered(&node).contains(&Offered::Press) {
            return Err(Error::Unsupported(format!(
                "element {} ({:?} {:?}) cannot be pressed; it offers {:?}",
                node.id,
                node.role,
                node.name,
                offered(&node)
            )));
        }
        let activated = match options.delivery {
            Delivery::Foreground if !info.focused => {
                self.window_op(window, WindowOp::Activate).await?;
                true
            }
            _ => false,
        };
        let delivered = Delivered {
            background: options.delivery == Delivery::Background,
            activated: AtomicBool::new(activated),
            ..Delivered::default()
        };
        if node.role == wayrig_model::Role::PasswordInput {
            if let Action::SetValue { text } | Action::InsertText { text } = &action {
                self.trace_secret(text);
            }
        }
        let act = serde_json::json!({
            "element": {"id": node.id.to_string(), "role": node.role, "name": node.name},
            "do": action,
        });
        self.record_act(window, act).await;
        let since = self.a11y()?.changes();
        self.count_act();
        let answer = self
            .act_once(&tree, &node, action.clone(), &delivered)
            .await;
        // GTK answers an accessibility request after applying it; AccessKit
        // hands it to the app's next frame, out of the settle's sight. The
        // element's own event says it was applied.
        let waits = !matches!(action, Action::Focus | Action::ScrollIntoView);
        if waits && matches!(answer, Ok(Path::Accessibility)) {
            let seen = self.a11y()?.wait_event(node.id, since, EFFECT_LIMIT).await;
            tracing::debug!(id = node.id, seen, "waited for the element's event");
        }
        tracing::debug!(window = window.id, id = node.id, ?action, ?answer, "acted");
        let path = answer?;
        // The answer comes once the app shows what the act did (a result a
        // worker computes, a switch that slides), so a read right after it
        // shows the effect; an app that never settles answers after the
        // effect wait, saying so.
        let unsettled = self.settle_effect(window, info.pid).await;
        let activated = delivered.activated.load(Ordering::Relaxed);
        Ok(ActReport {
            unsettled,
            element: node.id,
            path,
            activated,
            focus_changed: activated
                || (delivered.focus_requested.load(Ordering::Relaxed) && !node.states.focused),
            pointer_moved: delivered.pointer_moved.load(Ordering::Relaxed),
        })
    }

    /// The element `element` names in `tree`, the window's latest read.
    pub(super) fn resolve<'t>(
        &self,
        tree: &'t Tree,
        element: &ElementRef,
    ) -> Result<&'t Node, Error> {
        let window = tree.window.handle;
        match element {
            ElementRef::Id(id) => tree
                .node(*id)
                .ok_or_else(|| Error::NoElement(format!("{id} in window {window}"))),
            ElementRef::InSnapshot { snapshot, id } => {
                let then = self.snapshot_tree(snapshot)?;
                if then.window.handle != window {
                    return Err(Error::InvalidRequest(format!(
                        "snapshot {snapshot} is of window {}, not {window}",
                        then.window.handle
                    )));
                }
                still_shown(&then, tree, *id)
            }
            ElementRef::Query(q) => q.find_one(tree),
        }
    }

    /// The interfaces of an element read before; stale when it never was.
    fn interfaces_of(&self, id: u64) -> Result<Interfaces, Error> {
        self.a11y()?.interfaces(id).ok_or_else(|| {
            Error::StaleElement(format!("element {id} is stale: read the tree again"))
        })
    }

    /// Send input for an action, noting what it did.
    async fn deliver(&self, target: &Target<'_>, events: Vec<InputEvent>) -> Result<(), Error> {
        let d = target.delivery;
        if events.iter().any(|e| {
            matches!(
                e,
                InputEvent::Click { .. }
                    | InputEvent::PointerMove { .. }
                    | InputEvent::PointerDown { .. }
                    | InputEvent::Wheel { .. }
            )
        }) && !d.background
        {
            // Background input puts the pointer back where it was.
            d.pointer_moved.store(true, Ordering::Relaxed);
        }
        let options = match d.background {
            true => InputOptions::background(),
            false => InputOptions::default(),
        };
        let report = self.input(target.window, events, options).await?;
        if report.activated {
            d.activated.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    async fn act_once(
        &self,
        tree: &Tree,
        node: &Node,
        action: Action,
        delivered: &Delivered,
    ) -> Result<Path, Error> {
        let id = node.id;
        let window = tree.window.handle;
        let a11y = self.a11y()?;
        let ifaces = self.interfaces_of(id)?;
        let target = Target {
            window,
            tree,
            node,
            ifaces,
            delivery: delivered,
        };
        match action {
            // A click where it shows; an element scrolled out of the window (or
            // never laid out) gets its own action instead.
            // An element with no such action (a GTK 4 list row) is scrolled
            // into view and clicked, as a person activates it.
            Action::Press => match in_view(tree, node) {
                // The toolkit says it does not show, yet its place lies in
                // the window (Chromium gives a closed <select>'s options the
                // select's own box): its own action, not a click on what is
                // there; a click only where it has none, checked to land.
                Some(b) if node.states.offscreen && dropdown_of(tree, node).is_some() => {
                    match self.do_named_action(id, &OPTION_PRESS_ACTIONS).await {
                        Ok(path) => self.chosen(tree, node).await.map(|_| path),
                        Err(_) => self.click(&target, b).await,
                    }
                }
                Some(b) => self.click(&target, b).await,
                // A cell or row a click selects is clicked wherever it is:
                // its own actions activate its row, as a double click does
                // (GTK 3's "activate" runs a tree view's row).
                // Clicked as the read made once it shows reads it: what
                // came into view with it is known to the check where it lands.
                None if is_selectable_cell(node) => {
                    let (shown_in, shown, b) = self.bring_into_view(&target, tree).await?;
                    self.click(&target.shown(&shown_in, &shown), b).await
                }
                None => match self.do_named_action(id, press_actions(tree, node)).await {
                    Ok(path) => self.chosen(tree, node).await.map(|_| path),
                    Err(named) => match self.bring_into_view(&target, tree).await {
                        Ok((shown_in, shown, b)) => {
                            self.click(&target.shown(&shown_in, &shown), b).await
                        }
                        Err(_) => Err(named),
                    },
                },
            },
            Action::Custom { name } => self.do_named_action(id, &[&name]).await,
            // An item of a list or tree takes the focus once it shows: the
            // focus chain passes through the rows a list shows.
            Action::Focus if node.role.is_item() && in_view(tree, node).is_none() => {
                let (shown_in, shown, _) = self.bring_into_view(&target, tree).await?;
                self.focus(&target.shown(&shown_in, &shown)).await
            }
            Action::Focus => self.focus(&target).await,
            Action::SetValue { text } => {
                // A number into anything with a value (sliders, spin buttons).
                // "NaN" and "inf" parse, but no app holds them as a value.
                let number = text.trim().parse::<f64>().ok().filter(|n| n.is_finite());
                if let (true, Some(value)) = (ifaces.value, number) {
                    a11y.set_value(id, value).await?;
                    return Ok(Path::Accessibility);
                }
                if !is_text_field(node.role) && ifaces.value {
                    return Err(Error::InvalidRequest(format!(
                        "{text:?} is not a finite number"
                    )));
                }
                // A spin button reading its value from text ("01:30") takes
                // it as a person gives it: typed, then committed by leaving
                // the field (text set alone would leave its value as was).
                if ifaces.value {
                    self.type_into(&target, true, text).await?;
                    let leave = InputEvent::Key { key: "Tab".into() };
                    self.deliver(&target, vec![leave]).await?;
                    return Ok(Path::Keyboard);
                }
                if ifaces.editable_text && a11y.set_text(id, &text).await? {
                    return Ok(Path::Accessibility);
                }
                // GTK 4 offers EditableText only to a focused field; AccessKit none.
                self.type_into(&target, true, text).await
            }
            Action::InsertText { text } => self.type_into(&target, false, text).await,
            Action::SelectText { from, to } => {
                if from < 0 || to < from {
                    return Err(Error::InvalidRequest(format!(
                        "cannot select characters {from} to {to}"
                    )));
                }
                if !ifaces.text {
                    return Err(Error::Unsupported(format!(
                        "element {id} has no text to select"
                    )));
                }
                let count = a11y.text_length(id).await?;
                if to > count {
                    return Err(Error::InvalidRequest(format!(
                        "cannot select characters {from} to {to}: the text has {count}"
                    )));
                }
                // GTK 4.8's text view applies AddSelection but never answers
                // it: a short wait, then the keyboard.
                let set = tokio::time::timeout(SELECT_LIMIT, a11y.select_text(id, from, to)).await;
                match set {
                    Ok(Ok(true)) => Ok(Path::Accessibility),
                    _ => self.select_by_keys(&target, from, to).await,
                }
            }
            Action::ScrollIntoView => {
                if in_view(tree, node).is_some() {
                    return Ok(Path::Accessibility);
                }
                if !ifaces.component {
                    return Err(Error::Unsupported(format!(
                        "element {id} cannot be scrolled to"
                    )));
                }
                match a11y.scroll_to(id).await {
                    Ok(true) => Ok(Path::Accessibility),
                    // GTK 4.8 has no ScrollTo: scroll the viewport with the wheel.
                    Ok(false) | Err(_) => {
                        self.scroll_by_wheel(&target).await.map(|_| Path::Pointer)
                    }
                }
            }
            Action::Expand | Action::Collapse => {
                let expand = action == Action::Expand;
                if !node.states.expandable && !node.states.expanded {
                    return Err(Error::Unsupported(format!("element {id} does not expand")));
                }
                if node.states.expanded == expand {
                    return Ok(Path::Accessibility);
                }
                // An item of a tree or table toggles its selection with
                // "toggle" or a click (Qt): only its expand actions will do,
                // else the keys a person uses on a selected item. A disclosure
                // widget (GTK's expander, egui's header) opens when activated.
                let item = node.role.is_item();
                let names: &[&str] = match (expand, item) {
                    (true, true) => &["expand", "expand or contract"],
                    (false, true) => &["collapse", "expand or contract"],
                    (true, false) => &["expand", "activate", "toggle", "click"],
                    (false, false) => &["collapse", "activate", "toggle", "click"],
                };
                if let Ok(path) = self.do_named_action(id, names).await {
                    return Ok(path);
                }
                let Some(b) = in_view(tree, node) else {
                    return Err(Error::Unsupported(format!(
                        "element {id} has no way to expand"
                    )));
                };
                self.click(&target, b).await?;
                if !item {
                    return Ok(Path::Pointer);
                }
                let key = if expand { "Right" } else { "Left" };
                self.deliver(&target, vec![InputEvent::Key { key: key.into() }])
                    .await?;
                Ok(Path::Keyboard)
            }
            Action::Select => {
                if !is_selectable(node) {
                    return Err(Error::Unsupported(format!(
                        "select is for an item of a list, tree, table, tab list or menu; \
                         element {id} is a {:?}: press it instead",
                        node.role
                    )));
                }
                if node.states.selected {
                    return Ok(Path::Accessibility);
                }
                if self.select_in_container(tree, node).await? {
                    return Ok(Path::Accessibility);
                }
                match in_view(tree, node) {
                    Some(b) => self.click(&target, b).await,
                    None => {
                        self.do_named_action(id, &["select", "activate", "click"])
                            .await
                    }
                }
            }
            Action::ShowMenu => {
                let named = self
                    .do_named_action(id, &["showmenu", "show menu", "menu", "popup"])
                    .await;
                match (named, in_view(tree, node)) {
                    (Ok(path), _) => Ok(path),
                    (Err(_), Some(b)) => self.click_with(&target, b, Button::Right).await,
                    // Off screen: focus it, then the keyboard's menu key.
                    (Err(_), None) => {
                        self.focus(&target).await?;
                        let key = InputEvent::Key {
                            key: "Shift+F10".into(),
                        };
                        self.deliver(&target, vec![key]).await?;
                        Ok(Path::Keyboard)
                    }
                }
            }
            Action::Increment | Action::Decrement => {
                if !ifaces.value {
                    return Err(Error::Unsupported(format!(
                        "element {id} has no value to step"
                    )));
                }
                let range = a11y.value(id).await?;
                let next = stepped(range, action == Action::Increment).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "element {id} reports a value range its app got wrong (minimum {}, \
                         maximum {}, now {}): no step within it can be taken; set a value instead",
                        range.min, range.max, range.now
                    ))
                })?;
                a11y.set_value(id, next).await?;
                Ok(Path::Accessibility)
            }
        }
    }

    /// Select an item through its container's Selection, by its place among
    /// the container's children; answers whether the container took it.
    async fn select_in_container(&self, tree: &Tree, node: &Node) -> Result<bool, Error> {
        let a11y = self.a11y()?;
        let Some(parent) = node.parent.and_then(|p| tree.node(p)) else {
            return Ok(false);
        };
        let selects = a11y.interfaces(parent.id).is_some_and(|i| i.selection);
        let index = parent.children.iter().position(|c| *c == node.id);
        let (true, Some(index)) = (selects, index) else {
            return Ok(false);
        };
        a11y.select_child(parent.id, index).await
    }

    /// After an option of a closed drop-down was pressed through its own
    /// action: the drop-down shows it chosen, or the press failed. Firefox
    /// answers the action and chooses nothing until its list is open.
    async fn chosen(&self, tree: &Tree, option: &Node) -> Result<(), Error> {
        let Some(dropdown) = dropdown_of(tree, option).map(|d| d.id) else {
            return Ok(());
        };
        let Some(label) = option.label().map(str::to_string) else {
            return Ok(());
        };
        let shows_it = |tree: &Tree| {
            tree.node(dropdown)
                .filter(|d| {
                    d.value.as_deref() == Some(label.as_str()) || d.label() == Some(label.as_str())
                })
                .map(|_| ())
        };
        let window = tree.window.handle;
        match self.wait_until(window, EFFECT_LIMIT, shows_it).await? {
            // Chromium leaves an open list drawn after choosing through
            // an option's action: closed, as a choice by hand closes it.
            Some(()) => self.close_popups(&self.tree(window).await?).await,
            None => Err(Error::Failed(format!(
                "the app took the press of option {:?} of a closed list and did not choose it; \
                 open the list first (press the drop-down), then press the option",
                label
            ))),
        }
    }

    /// Do the first of the element's actions named in `names` that the app
    /// does.
    pub(crate) async fn do_named_action(&self, id: u64, names: &[&str]) -> Result<Path, Error> {
        if !self.interfaces_of(id)?.action {
            return Err(Error::Unsupported(
                "the element is not on screen and has no actions".into(),
            ));
        }
        let a11y = self.a11y()?;
        let offered = a11y.action_names(id).await?;
        // In the order asked: the first is the one preferred (Firefox's
        // options offer "select", which chooses without telling the page,
        // before "click", which tells it).
        for name in names {
            let Some(i) = offered.iter().position(|o| o.eq_ignore_ascii_case(name)) else {
                continue;
            };
            if a11y.do_action(id, i).await? {
                return Ok(Path::Accessibility);
            }
        }
        Err(Error::Unsupported(format!(
            "the element has none of the actions {names:?} (it offers {offered:?})"
        )))
    }
}

/// An element a selection holds: an item of a list, tree, table, tab list or
/// menu, or one the toolkit says it can select.
fn is_selectable(node: &Node) -> bool {
    node.states.selectable
        || matches!(
            node.role,
            Role::ListItem
                | Role::TreeItem
                | Role::Tab
                | Role::Row
                | Role::Cell
                | Role::MenuItem
                | Role::CheckMenuItem
                | Role::RadioMenuItem
        )
}

/// The value one step up (or down) from where `range` reads, kept within
/// it; a bound that is not a number is no bound (Firefox's number field
/// with no limits). `None` when the app reports a range no step can be
/// kept within: its minimum above its maximum, or its value not a number.
fn stepped(range: Range, up: bool) -> Option<f64> {
    let Range {
        min,
        max,
        now,
        step,
    } = range;
    let min = if min.is_nan() { f64::NEG_INFINITY } else { min };
    let max = if max.is_nan() { f64::INFINITY } else { max };
    if !now.is_finite() || min > max {
        return None;
    }
    let step = if step > 0.0 && step.is_finite() {
        step
    } else {
        1.0
    };
    let next = if up { now + step } else { now - step };
    Some(next.clamp(min, max)).filter(|next| next.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::elements::tests::node;
    use wayrig_host::{Mods, Rect};

    fn at(mut n: Node, x: i32, y: i32, w: i32, h: i32) -> Node {
        n.bounds = Some(Rect::new(x, y, w, h));
        n
    }

    /// Unit tests of which path an action takes, over a fake app and host.
    mod paths {
        use std::sync::Arc;

        use super::*;
        use crate::access::Interfaces;
        use crate::model::Range;
        use crate::session::fake_access::{id, FakeAccess};
        use crate::session::fake_host::{window, FakeHost, Temper};
        use wayrig_host::{InputEvent, WindowHandle};

        const WINDOW: WindowHandle = WindowHandle { id: 1, epoch: 1 };

        /// A text field's interfaces: its text, replaceable whole.
        const EDITABLE: Interfaces = Interfaces {
            action: false,
            component: true,
            editable_text: true,
            selection: false,
            text: true,
            value: false,
        };

        /// A window (1) holding a button (2), an entry (3), a slider (4), a
        /// list (5) whose row 6 shows and row 7 lies scrolled out of the
        /// window, and a disabled button (8).
        fn app() -> FakeAccess {
            let mut entry = at(node(3, Some(1), Role::TextInput, "Name"), 10, 50, 200, 30);
            entry.states.editable = true;
            let mut disabled = at(node(8, Some(1), Role::Button, "Later"), 300, 10, 80, 30);
            disabled.states.disabled = true;
            FakeAccess::new(vec![
                at(node(1, None, Role::Window, "Main"), 0, 0, 400, 300),
                at(node(2, Some(1), Role::Button, "Save"), 10, 10, 80, 30),
                entry,
                at(node(4, Some(1), Role::Slider, "Volume"), 10, 90, 200, 20),
                at(node(5, Some(1), Role::List, ""), 10, 120, 200, 170),
                at(node(6, Some(5), Role::ListItem, "Row 1"), 10, 120, 200, 20),
                at(node(7, Some(5), Role::ListItem, "Row 40"), 10, 900, 200, 20),
                disabled,
            ])
            .with_actions(2, &["click"])
            .with_actions(7, &["activate"])
        }

        async fn session(app: FakeAccess) -> (Session, FakeHost, Arc<FakeAccess>) {
            let host = FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 16).with_input();
            session_on(host, app).await
        }

        async fn session_on(
            host: FakeHost,
            app: FakeAccess,
        ) -> (Session, FakeHost, Arc<FakeAccess>) {
            let app = Arc::new(app);
            let session = Session::with_accessibility(Arc::new(host.clone()), app.clone())
                .await
                .unwrap();
            (session, host, app)
        }

        async fn act(session: &Session, number: u64, action: Action) -> Result<Path, Error> {
            let element = ElementRef::Id(id(number));
            let report = session
                .act(WINDOW, element, action, ActOptions::default())
                .await?;
            Ok(report.path)
        }

        fn click_at(x: f64, y: f64) -> InputEvent {
            InputEvent::Click {
                x,
                y,
                button: Button::Left,
                clicks: 1,
                mods: Mods::default(),
            }
        }

        #[tokio::test(start_paused = true)]
        async fn a_button_that_shows_is_clicked_at_its_centre_not_through_its_action() {
            let (session, host, app) = session(app()).await;
            assert_eq!(act(&session, 2, Action::Press).await, Ok(Path::Pointer));
            assert_eq!(host.sent(), [click_at(50.0, 25.0)]);
            assert!(app.asked().is_empty(), "no action asked: {:?}", app.asked());
        }

        #[tokio::test(start_paused = true)]
        async fn a_row_scrolled_out_of_the_window_is_pressed_through_its_action() {
            let (session, host, app) = session(app()).await;
            assert_eq!(
                act(&session, 7, Action::Press).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(app.asked(), ["activate 7"]);
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        /// A drop-down (2) whose closed list's option (3) the app says does
        /// not show, placed on the drop-down's own box (Chromium's `<select>`).
        fn closed_select() -> FakeAccess {
            let mut option = at(node(3, Some(2), Role::MenuItem, "Blue"), 10, 10, 80, 20);
            option.states.offscreen = true;
            FakeAccess::new(vec![
                at(node(1, None, Role::Window, "Main"), 0, 0, 400, 300),
                at(
                    node(2, Some(1), Role::PopUpButton, "Colour"),
                    10,
                    10,
                    80,
                    20,
                ),
                option,
            ])
        }

        #[tokio::test(start_paused = true)]
        async fn an_option_of_a_closed_list_is_chosen_through_its_action_not_clicked() {
            let (session, host, app) = session(closed_select().with_actions(3, &["select"])).await;
            assert_eq!(
                act(&session, 3, Action::Press).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(app.asked(), ["select 3"]);
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn an_option_the_app_does_not_choose_is_a_failed_press() {
            // The app offers "click" and it chooses nothing while closed.
            let (session, host, _) = session(closed_select().with_actions(3, &["click"])).await;
            let refused = act(&session, 3, Action::Press).await;
            assert!(
                matches!(&refused, Err(Error::Failed(why)) if why.contains("open the list first")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn an_option_with_no_action_is_not_clicked_on_the_list_around_it() {
            // The app names the drop-down at the option's place.
            let (session, host, _) = session(closed_select().covered_by(2)).await;
            let refused = act(&session, 3, Action::Press).await;
            assert!(
                matches!(&refused, Err(Error::NotShown(why)) if why.contains("does not show")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn a_press_where_the_app_names_another_element_is_refused_unsent() {
            // A row of the list is drawn over the button.
            let (session, host, _) = session(app().covered_by(6)).await;
            let refused = act(&session, 2, Action::Press).await;
            assert!(
                matches!(&refused, Err(Error::NotShown(why)) if why.contains("not at (50, 25)")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn a_press_where_the_app_names_an_object_come_since_the_read_is_refused() {
            // A dialog's button the read did not hold, in the window, lies
            // over the button: its parents reach the window, not the button.
            let app = app()
                .with_unread(node(9, Some(1), Role::Button, "Discard"))
                .covered_by(9);
            let (session, host, _) = session(app).await;
            let refused = act(&session, 2, Action::Press).await;
            assert!(
                matches!(&refused, Err(Error::NotShown(why))
                    if why.contains("something the tree does not hold, inside Window \"Main\", is there")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn a_press_where_the_app_names_an_unread_part_of_the_element_lands() {
            // GTK 4's text inside an entry: left out of the read, its
            // parent the element itself.
            let app = app()
                .with_unread(node(9, Some(2), Role::Label, "Save"))
                .covered_by(9);
            let (session, host, _) = session(app).await;
            assert_eq!(act(&session, 2, Action::Press).await, Ok(Path::Pointer));
            assert_eq!(host.sent(), [click_at(50.0, 25.0)]);
        }

        #[tokio::test(start_paused = true)]
        async fn a_press_where_the_app_names_the_element_anew_lands() {
            // Qt names a cell of its tree view at a point by an object made
            // for the asking: its parent the view, its role and name the cell's.
            let app = app()
                .with_unread(node(9, Some(5), Role::ListItem, "Row 1"))
                .covered_by(9);
            let (session, host, _) = session(app).await;
            assert_eq!(act(&session, 6, Action::Press).await, Ok(Path::Pointer));
            assert_eq!(host.sent(), [click_at(110.0, 130.0)]);
        }

        #[tokio::test(start_paused = true)]
        async fn a_disabled_button_is_refused_before_anything_is_sent() {
            let (session, host, app) = session(app()).await;
            let refused = act(&session, 8, Action::Press).await;
            assert!(
                matches!(refused, Err(Error::InvalidRequest(_))),
                "{refused:?}"
            );
            assert!(host.sent().is_empty() && app.asked().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn a_label_is_never_pressed_by_a_click_on_what_lies_under_it() {
            let app = FakeAccess::new(vec![
                at(node(1, None, Role::Window, "Main"), 0, 0, 400, 300),
                at(node(2, Some(1), Role::Label, "Status"), 10, 10, 80, 30),
            ]);
            let (session, host, _) = session(app).await;
            let refused = act(&session, 2, Action::Press).await;
            assert!(matches!(refused, Err(Error::Unsupported(_))), "{refused:?}");
            assert!(host.sent().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn an_act_whose_app_draws_nothing_in_answer_says_so() {
            // A host without frame pacing waits for one frame drawn only.
            let range = Range {
                min: 0.0,
                max: 100.0,
                now: 10.0,
                step: 1.0,
            };
            let host =
                FakeHost::new(vec![window(1, "Main")], Temper::Stubborn, 16).drawing_nothing();
            let (session, _, _) = session_on(host, app().with_value(4, range)).await;
            let set = Action::SetValue { text: "42".into() };
            let report = session
                .act(WINDOW, ElementRef::Id(id(4)), set, ActOptions::default())
                .await
                .unwrap();
            assert!(
                report
                    .unsettled
                    .as_deref()
                    .is_some_and(|why| why.contains("for a frame drawn in answer")),
                "{:?}",
                report.unsettled
            );
        }

        #[tokio::test(start_paused = true)]
        async fn a_number_goes_into_a_slider_through_its_value() {
            let range = Range {
                min: 0.0,
                max: 100.0,
                now: 10.0,
                step: 1.0,
            };
            let (session, host, app) = session(app().with_value(4, range)).await;
            let set = Action::SetValue { text: "42".into() };
            assert_eq!(act(&session, 4, set).await, Ok(Path::Accessibility));
            assert_eq!(app.asked(), ["set value 42 4"]);
            assert!(host.sent().is_empty());
            let words = Action::SetValue {
                text: "loud".into(),
            };
            let refused = act(&session, 4, words).await;
            assert!(
                matches!(refused, Err(Error::InvalidRequest(_))),
                "{refused:?}"
            );
        }

        #[tokio::test(start_paused = true)]
        async fn a_time_into_a_spin_button_is_typed_and_committed() {
            let range = Range {
                min: 0.0,
                max: 1440.0,
                now: 0.0,
                step: 15.0,
            };
            let app = app()
                .offers(3, EDITABLE)
                .setting_text()
                .with_value(3, range)
                .granting_focus();
            let (session, host, app) = session(app).await;
            let set = Action::SetValue {
                text: "01:30".into(),
            };
            assert_eq!(act(&session, 3, set).await, Ok(Path::Keyboard));
            assert_eq!(app.asked(), ["focus 3"]);
            let key = |key: &str| InputEvent::Key { key: key.into() };
            let typed = [
                key("Ctrl+A"),
                InputEvent::Text {
                    text: "01:30".into(),
                },
                key("Tab"),
            ];
            assert_eq!(host.sent(), typed);
        }

        #[tokio::test(start_paused = true)]
        async fn a_step_stays_within_the_sliders_bounds() {
            let range = Range {
                min: 0.0,
                max: 10.0,
                now: 9.5,
                step: 2.0,
            };
            let (session, _, app) = session(app().with_value(4, range)).await;
            assert_eq!(
                act(&session, 4, Action::Increment).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(
                act(&session, 4, Action::Decrement).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(app.asked(), ["set value 10 4", "set value 8 4"]);
        }

        #[tokio::test(start_paused = true)]
        async fn a_step_on_a_range_the_app_got_wrong_is_refused_and_nothing_is_set() {
            // A web page can say aria-valuemin="10" aria-valuemax="0".
            let upside_down = Range {
                min: 10.0,
                max: 0.0,
                now: 5.0,
                step: 1.0,
            };
            let no_value = Range {
                min: 0.0,
                max: 10.0,
                now: f64::NAN,
                step: 1.0,
            };
            for range in [upside_down, no_value] {
                let (session, host, app) = session(app().with_value(4, range)).await;
                let refused = act(&session, 4, Action::Increment).await;
                assert!(
                    matches!(&refused, Err(Error::Unsupported(why)) if why.contains("set a value instead")),
                    "{range:?}: {refused:?}"
                );
                assert!(app.asked().is_empty(), "{range:?}: {:?}", app.asked());
                assert!(host.sent().is_empty());
            }
        }

        #[tokio::test(start_paused = true)]
        async fn a_bound_that_is_not_a_number_is_no_bound() {
            let unbounded = Range {
                min: f64::NAN,
                max: f64::NAN,
                now: 5.0,
                step: 0.0,
            };
            let (session, _, app) = session(app().with_value(4, unbounded)).await;
            assert_eq!(
                act(&session, 4, Action::Increment).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(app.asked(), ["set value 6 4"]);
        }

        #[tokio::test(start_paused = true)]
        async fn a_value_that_is_not_a_finite_number_is_refused_unsent() {
            let range = Range {
                min: 0.0,
                max: 100.0,
                now: 10.0,
                step: 1.0,
            };
            for text in ["NaN", "inf", "-infinity"] {
                let (session, host, app) = session(app().with_value(4, range)).await;
                let set = Action::SetValue { text: text.into() };
                let refused = act(&session, 4, set).await;
                assert!(
                    matches!(&refused, Err(Error::InvalidRequest(why)) if why.contains("finite")),
                    "{text}: {refused:?}"
                );
                assert!(app.asked().is_empty(), "{text}: {:?}", app.asked());
                assert!(host.sent().is_empty());
            }
        }

        #[tokio::test(start_paused = true)]
        async fn text_the_app_takes_whole_is_set_without_typing() {
            let app = app().offers(3, EDITABLE).setting_text();
            let (session, host, app) = session(app).await;
            let set = Action::SetValue { text: "Ada".into() };
            assert_eq!(act(&session, 3, set).await, Ok(Path::Accessibility));
            assert_eq!(app.asked(), ["set text \"Ada\" 3"]);
            assert!(host.sent().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn text_the_app_will_not_set_is_typed_once_a_click_focuses_the_field() {
            // GTK 4: EditableText refuses an unfocused field and grab_focus
            // answers false, so the field is clicked near its start.
            let (session, host, app) = session(app().offers(3, EDITABLE)).await;
            let set = Action::SetValue { text: "Ada".into() };
            assert_eq!(act(&session, 3, set).await, Ok(Path::Keyboard));
            assert_eq!(app.asked(), ["set text \"Ada\" 3", "focus 3"]);
            let typed = [
                click_at(22.0, 65.0),
                InputEvent::Key {
                    key: "Ctrl+A".into(),
                },
                InputEvent::Text { text: "Ada".into() },
            ];
            assert_eq!(host.sent(), typed);
        }

        #[tokio::test(start_paused = true)]
        async fn a_field_the_app_focuses_when_asked_is_not_clicked() {
            let (session, host, app) = session(app().granting_focus()).await;
            let insert = Action::InsertText { text: "x".into() };
            assert_eq!(act(&session, 3, insert).await, Ok(Path::Keyboard));
            assert_eq!(app.asked(), ["focus 3"]);
            assert_eq!(host.sent(), [InputEvent::Text { text: "x".into() }]);
        }

        /// A text field holding 25,000 characters whose app will not place
        /// its caret nor select when asked.
        fn long_text_refusing_offsets() -> FakeAccess {
            let mut entry = at(node(3, Some(1), Role::TextInput, "Notes"), 10, 50, 200, 30);
            entry.states.editable = true;
            entry.value = Some("x".repeat(25_000));
            let text = Interfaces {
                component: true,
                text: true,
                ..Interfaces::default()
            };
            FakeAccess::new(vec![
                at(node(1, None, Role::Window, "Main"), 0, 0, 400, 300),
                entry,
            ])
            .offers(3, text)
            .refusing_offsets()
        }

        #[tokio::test(start_paused = true)]
        async fn a_selection_too_far_to_step_to_by_keys_is_refused_unsent() {
            let (session, host, _) = session(long_text_refusing_offsets()).await;
            let select = Action::SelectText {
                from: 0,
                to: 20_000,
            };
            let refused = act(&session, 3, select).await;
            assert!(
                matches!(&refused, Err(Error::Unsupported(why)) if why.contains("more than 10000")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn an_insert_whose_caret_is_too_far_to_step_back_to_is_refused_unsent() {
            let (session, host, _) = session(long_text_refusing_offsets()).await;
            let insert = Action::InsertText { text: "y".into() };
            let refused = act(&session, 3, insert).await;
            assert!(
                matches!(&refused, Err(Error::Unsupported(why)) if why.contains("place its caret first")),
                "{refused:?}"
            );
            assert!(host.sent().is_empty(), "no input: {:?}", host.sent());
        }

        #[tokio::test(start_paused = true)]
        async fn select_asks_the_lists_selection_for_the_rows_place() {
            let selects = Interfaces {
                component: true,
                selection: true,
                ..Interfaces::default()
            };
            let (session, host, app) = session(app().offers(5, selects)).await;
            assert_eq!(
                act(&session, 7, Action::Select).await,
                Ok(Path::Accessibility)
            );
            assert_eq!(app.asked(), ["select child 1 of 5"]);
            assert!(host.sent().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn select_without_a_selection_clicks_the_row_that_shows() {
            let (session, host, app) = session(app()).await;
            assert_eq!(act(&session, 6, Action::Select).await, Ok(Path::Pointer));
            assert_eq!(host.sent(), [click_at(110.0, 130.0)]);
            assert!(app.asked().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn an_action_the_element_lacks_is_unsupported_and_nothing_runs() {
            let (session, host, app) = session(app()).await;
            let custom = Action::Custom {
                name: "expand".into(),
            };
            let refused = act(&session, 2, custom).await;
            assert!(matches!(refused, Err(Error::Unsupported(_))), "{refused:?}");
            assert!(host.sent().is_empty() && app.asked().is_empty());
        }

        #[tokio::test(start_paused = true)]
        async fn an_element_the_window_does_not_hold_is_refused_unsent() {
            let (session, host, _) = session(app()).await;
            let refused = session
                .act(
                    WINDOW,
                    ElementRef::Id(99),
                    Action::Press,
                    ActOptions::default(),
                )
                .await;
            assert!(matches!(refused, Err(Error::NoElement(_))), "{refused:?}");
            assert!(host.sent().is_empty());
        }
    }
}
