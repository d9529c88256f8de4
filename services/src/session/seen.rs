//! A window as a person sees it: which elements show (hidden, unsized,
//! scrolled out of view are offscreen), and what names a control whose name says nothing.
//!
//! Applied to every tree the session reads, so every face tells the same.

use std::collections::{HashMap, HashSet};

use wayrig_host::{Rect, WindowInfo};

use super::elements::{is_control, is_hidden};
use crate::model::{ancestors, positions, LabelFallback, LabelSource, Node, Role, Tree};
use wayrig_model::reading::{reading_order, Placement};

/// How far a label may sit from the field it names, in points: left of it on
/// the same row, or above it.
const BESIDE_GAP: i32 = 120;
const ABOVE_GAP: i32 = 40;

/// Mark what does not show as offscreen, and give each control whose name
/// says nothing the words a person would use for it. `popups`: where the
/// popups (menus, popovers) open over the window now lie, in the window's
/// content coordinates; what lies in them shows, past the window's edges too.
pub(crate) fn as_seen(tree: &mut Tree, popups: &[Rect]) {
    gizmo_tabs_are_tabs(tree);
    chosen_items_are_values(tree);
    mark_offscreen(tree, popups);
    for n in &mut tree.nodes {
        if let Some(plain) = plain_text(&n.name) {
            n.name = plain;
        }
    }
    named_once(tree);
    let reading = Reading::of(tree);
    let fallbacks: Vec<(usize, LabelFallback, Option<String>)> = tree
        .nodes
        .iter()
        .enumerate()
        // A control, or anything else that takes the keyboard focus (GTK
        // 3's calendar is a focusable grid).
        .filter(|(_, n)| n.label().is_none() && (is_control(n) || n.states.focusable))
        .filter_map(|(i, n)| match n.role {
            Role::PopUpButton if n.value.is_none() => {
                let (name, shows) = dropdown_naming(tree, &reading, i)?;
                Some((i, name, shows))
            }
            _ => Some((i, label_fallback(tree, &reading, i)?, None)),
        })
        .collect();
    for (i, fallback, value) in fallbacks {
        tree.nodes[i].label_fallback = Some(fallback);
        if value.is_some() {
            tree.nodes[i].value = value;
        }
    }
}

/// A drop-down is named by the label beside it or its description, and its
/// chosen item is its value ("Character Encoding:" showing "Automatically
/// Detected"); with neither, it is read by the item it shows.
fn dropdown_naming(
    tree: &Tree,
    reading: &Reading,
    at: usize,
) -> Option<(LabelFallback, Option<String>)> {
    let n = &tree.nodes[at];
    let shows = held_text(tree, n).filter(|t| !t.trim().is_empty());
    let beside = row_label(tree, n)
        .or_else(|| label_before(tree, reading, at))
        .map(|t| {
            (
                LabelSource::Beside,
                t.trim().trim_end_matches(':').to_string(),
            )
        })
        .or_else(|| {
            let d = n.description.trim();
            (!d.is_empty()).then(|| (LabelSource::Description, d.to_string()))
        });
    match (beside, shows) {
        (Some((source, text)), shows) if !text.is_empty() => {
            Some((LabelFallback { source, text }, shows))
        }
        (_, Some(text)) => Some((
            LabelFallback {
                source: LabelSource::Content,
                text,
            },
            None,
        )),
        _ => None,
    }
}

/// A drop-down with no value of its own shows the item chosen in its list:
/// that item's name is its value. Chromium's `<select>` gives its text as an
/// object mark (U+FFFC) and marks the chosen option selected. A drop-down
/// named by its chosen item already (GTK 3's combo box) is left as it is.
fn chosen_items_are_values(tree: &mut Tree) {
    let chosen: Vec<(usize, String)> = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n.role, Role::PopUpButton | Role::ComboBox))
        .filter(|(_, n)| {
            n.value
                .as_deref()
                .is_none_or(|v| v.trim_matches(['\u{fffc}', ' ']).is_empty())
        })
        .filter_map(|(i, n)| {
            let mut items = tree
                .descendants(n)
                .filter(|d| matches!(d.role, Role::MenuItem | Role::ListItem) && d.states.selected);
            let item = items.next()?;
            let name = item.label()?.to_string();
            (items.next().is_none() && n.label() != Some(name.as_str())).then_some((i, name))
        })
        .collect();
    for (i, name) in chosen {
        tree.nodes[i].value = Some(name);
    }
}

/// libadwaita 1.2 (Debian 12's) builds its tab bar of gizmos: each tab is a
/// focusable `AdwGizmo` in an `AdwTabBox`, a group with no name, action or
/// role of a tab. Such a gizmo is a tab: pressed at what shows of it, and
/// read by the title it holds (later libadwaita says so itself).
fn gizmo_tabs_are_tabs(tree: &mut Tree) {
    let index = positions(&tree.nodes);
    let in_tab_box = |n: &Node| {
        n.parent
            .and_then(|p| index.get(&p))
            .is_some_and(|i| tree.nodes[*i].name_is_stand_in && tree.nodes[*i].name == "AdwTabBox")
    };
    let tabs: Vec<usize> = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.name_is_stand_in && n.name == "AdwGizmo" && n.states.focusable && in_tab_box(n)
        })
        .map(|(i, _)| i)
        .collect();
    for i in tabs {
        tree.nodes[i].role = Role::Tab;
    }
}

/// A name that is a child's name said twice is that name once: GTK 4 names
/// a button after the label it holds, and in some apps (gnome-calculator's
/// keys, gnome-text-editor's Save) the name reads the label twice ("7 7").
fn named_once(tree: &mut Tree) {
    let index = positions(&tree.nodes);
    let once: Vec<(usize, String)> = tree
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let half = said_twice(&n.name)?;
            n.children
                .iter()
                .filter_map(|c| index.get(c).map(|&j| &tree.nodes[j]))
                .any(|c| c.name == half)
                .then(|| (i, half.to_string()))
        })
        .collect();
    for (i, name) in once {
        tree.nodes[i].name = name;
    }
}

/// A name written in rich text (Qt's labels: `x<sup>y</sup>`) as a person
/// reads it: `xʸ`, superscripts and subscripts as such characters where
/// every one has one, else after `^` and `_`; other inline tags dropped,
/// entities read. `None` for a name with no markup: one with no closing tag
/// of these is plain text, `<` and all.
fn plain_text(name: &str) -> Option<String> {
    const INLINE: [&str; 9] = ["sup", "sub", "small", "b", "i", "u", "span", "font", "big"];
    let tag_of = |tag: &str| {
        let tag = tag.trim_start_matches('/');
        let end = tag.find([' ', '/']).unwrap_or(tag.len());
        tag[..end].to_ascii_lowercase()
    };
    let closes = INLINE.iter().any(|t| name.contains(&format!("</{t}>")));
    if !closes {
        return None;
    }
    let mut out = String::new();
    let mut inner: Option<(bool, String)> = None;
    let mut rest = name;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        match &mut inner {
            Some((_, held)) => held.push_str(text),
            None => out.push_str(text),
        }
        let Some(close) = rest[open..].find('>') else {
            rest = &rest[open..];
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name = tag_of(tag);
        match (tag.starts_with('/'), name.as_str()) {
            (false, "sup" | "sub") => inner = Some((name == "sup", String::new())),
            (true, "sup" | "sub") => {
                if let Some((up, held)) = inner.take() {
                    out.push_str(&script(&entities(&held), up));
                }
            }
            (_, n) if INLINE.contains(&n) || n == "br" => {}
            _ => out.push_str(&rest[open..=open + close]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Some(entities(&out))
}

/// Text as superscript (`up`) or subscript characters, where each has one.
fn script(text: &str, up: bool) -> String {
    const DIGITS_UP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    const DIGITS_DOWN: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    let one = |c: char| -> Option<char> {
        if let Some(d) = c.to_digit(10) {
            let digits = if up { DIGITS_UP } else { DIGITS_DOWN };
            return Some(digits[d as usize]);
        }
        let (from, to) = if up {
            ("+-=()nixy", "⁺⁻⁼⁽⁾ⁿⁱˣʸ")
        } else {
            ("+-=()aeoxhklmnpst", "₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜ")
        };
        from.chars()
            .position(|f| f == c)
            .and_then(|i| to.chars().nth(i))
    };
    match text.chars().map(one).collect::<Option<String>>() {
        Some(scripted) => scripted,
        None => format!("{}{text}", if up { '^' } else { '_' }),
    }
}

/// HTML's entities of plain text, read.
fn entities(text: &str) -> String {
    text.replace("&nbsp;", "\u{a0}")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// `"A A"` is `A` said twice.
fn said_twice(name: &str) -> Option<&str> {
    let half = name.len().checked_sub(1)? / 2;
    let (first, rest) = (name.get(..half)?, name.get(half..)?);
    (!first.is_empty() && rest.strip_prefix(' ') == Some(first)).then_some(first)
}

/// Offscreen: what the toolkit says is, what has no size or lies outside
/// the window, what lies wholly outside a scrolled view around it, and what
/// is concealed: on a stack's page another page covers (the read marks
/// those), on the panel of a tab that is not selected, and in a popover
/// while no popup shows (GTK 4 keeps a popover's last layout once it
/// closed).
fn mark_offscreen(tree: &mut Tree, popups: &[Rect]) {
    let window = tree.window.content;
    let shown: Vec<Rect> = std::iter::once(Rect::new(0, 0, window.width, window.height))
        .chain(popups.iter().copied())
        .collect();
    let popup_open = !popups.is_empty();
    let index = positions(&tree.nodes);
    // What lies inside what the toolkit says does not show does not show
    // (GTK 3 keeps a hidden page's table cells their places).
    for i in 0..tree.nodes.len() {
        let parent = tree.nodes[i].parent.and_then(|p| index.get(&p).copied());
        if parent.is_some_and(|p| p < i && tree.nodes[p].states.offscreen) {
            tree.nodes[i].states.offscreen = true;
        }
    }
    let unselected = unselected_panels(&tree.nodes, &index);
    let concealed: Vec<bool> = tree
        .nodes
        .iter()
        .map(|n| {
            n.states.concealed
                || on_a_panel(&tree.nodes, &index, n, &unselected)
                || (!popup_open && in_popover(tree, &index, n))
        })
        .collect();
    let hidden: Vec<bool> = tree
        .nodes
        .iter()
        .zip(&concealed)
        .map(|(n, concealed)| {
            *concealed
                || is_hidden(n)
                || n.bounds
                    .is_some_and(|b| !shown.iter().any(|s| s.intersects(&b)))
                || scrolled_away(tree, &index, n)
                || outside_its_container(tree, &index, n)
        })
        .collect();
    for ((n, hidden), concealed) in tree.nodes.iter_mut().zip(hidden).zip(concealed) {
        n.states.offscreen = hidden;
        n.states.concealed = concealed;
    }
}

/// The items of an open drop-down's list that lie outside every popup the
/// app shows are not drawn: Chromium's `<select>` list draws twenty options
/// on its popup and places the rest below it, on the page, where a click
/// would land on the page. `popups`: where every popup of the window lies,
/// grabbing or not, in the window's content coordinates.
pub(super) fn hide_list_items_off_their_popup(tree: &mut Tree, popups: &[Rect]) {
    if popups.is_empty() {
        return;
    }
    let index = positions(&tree.nodes);
    let off: Vec<usize> = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n.role, Role::MenuItem | Role::ListItem) && !n.states.offscreen)
        .filter(|(_, n)| in_open_combo_menu(&tree.nodes, &index, n))
        .filter(|(_, n)| {
            n.bounds.is_some_and(|b| {
                let (x, y) = (
                    b.x as f64 + b.width as f64 / 2.0,
                    b.y as f64 + b.height as f64 / 2.0,
                );
                !popups.iter().any(|p| p.contains_point(x, y))
            })
        })
        .map(|(i, _)| i)
        .collect();
    for i in off {
        tree.nodes[i].states.offscreen = true;
    }
}

/// The element is in the menu of a combo box that is expanded (open).
fn in_open_combo_menu(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    ancestors(nodes, index, n)
        .find(|p| is_combo_menu(nodes, index, p))
        .and_then(|menu| menu.parent)
        .and_then(|d| index.get(&d))
        .is_some_and(|d| nodes[*d].states.expanded)
}

/// The panels (by id) of tabs that are not selected while a tab beside
/// them is: only the selected tab's panel shows. A tab names its panel by
/// its controls relation (ARIA's aria-controls, AT-SPI's controller-for),
/// as GTK 4 gives a stack switcher's and a notebook's tabs. Neither size
/// nor states tell a page that was shown and is no more: GTK 4.8 keeps its
/// last layout, says `visible` of every page and `showing` of none.
pub(super) fn unselected_panels(nodes: &[Node], index: &HashMap<u64, usize>) -> HashSet<u64> {
    let is_tab = |id: &u64| {
        index
            .get(id)
            .map(|i| &nodes[*i])
            .filter(|t| t.role == Role::Tab)
    };
    let tab_lists_with_a_choice: HashSet<u64> = nodes
        .iter()
        .filter(|n| {
            n.children
                .iter()
                .filter_map(is_tab)
                .any(|t| t.states.selected)
        })
        .map(|n| n.id)
        .collect();
    let lists = &tab_lists_with_a_choice;
    let panels = |selected: bool| {
        nodes
            .iter()
            .filter(move |t| {
                t.role == Role::Tab
                    && t.states.selected == selected
                    && t.parent.is_some_and(|p| lists.contains(&p))
            })
            .flat_map(|t| t.relations.controls.iter().copied())
    };
    let shown: HashSet<u64> = panels(true).collect();
    panels(false).filter(|p| !shown.contains(p)).collect()
}

/// The element is one of `panels`, or lies on one.
pub(super) fn on_a_panel(
    nodes: &[Node],
    index: &HashMap<u64, usize>,
    n: &Node,
    panels: &HashSet<u64>,
) -> bool {
    !panels.is_empty()
        && std::iter::once(n)
            .chain(ancestors(nodes, index, n))
            .any(|node| panels.contains(&node.id))
}

/// The element lies wholly outside a scrolled view it is in.
fn scrolled_away(tree: &Tree, index: &HashMap<u64, usize>, n: &Node) -> bool {
    let Some(bounds) = n.bounds else {
        return false;
    };
    clipping_views(n, |id| index.get(&id).map(|i| &tree.nodes[*i]))
        .iter()
        .any(|view| !bounds.intersects(view))
}

/// The element lies wholly outside an element around it, or inside one
/// of no size: a revealer that slid shut keeps its child laid out beside it
/// (gnome-text-editor's closed search bar lies above the page that holds
/// it). The walk ends at what has no bounds and a name (a stack's page, a
/// popover's root: measured apart), at a popup (a popover's content too) or
/// window, and at a web document, whose content may lie anywhere around the
/// boxes that hold it.
fn outside_its_container(tree: &Tree, index: &HashMap<u64, usize>, n: &Node) -> bool {
    let Some(bounds) = n.bounds.filter(|b| !b.is_empty()) else {
        return false;
    };
    for p in ancestors(&tree.nodes, index, n) {
        let measured_apart = matches!(
            p.role,
            Role::Menu | Role::Window | Role::Dialog | Role::Alert | Role::Tooltip | Role::Document
        ) || is_popover_content(p)
            || is_gtk3_popover(&tree.nodes, index, p);
        if measured_apart {
            return false;
        }
        match p.bounds {
            // A box of no size holds nothing that shows (a revealer shut).
            Some(around) if !bounds.intersects(&around) => return true,
            Some(_) => {}
            // A nameless box with no bounds only lays out what it holds
            // (GTK 4.8 gives a shut revealer none): what is around it
            // still clips.
            None if p.name.is_empty() && matches!(p.role, Role::Panel | Role::Group) => {}
            None => return false,
        }
    }
    false
}

/// GTK 3's popover: a panel held by the button that opens it. GTK 3 makes
/// the button its parent (the button's own children do not list it), and
/// shows it on a subsurface of the window, measured from its own corner.
pub(super) fn is_gtk3_popover(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    n.native_role == "panel"
        && n.parent.and_then(|p| index.get(&p)).is_some_and(|i| {
            matches!(
                nodes[*i].role,
                Role::Button | Role::ToggleButton | Role::MenuButton
            )
        })
}

/// The GTK 3 popover the element is on, if any. Asked what lies at a
/// point, GTK 3's window names what the popover covers, the popover what
/// it shows.
pub(super) fn gtk3_popover_of(
    nodes: &[Node],
    index: &HashMap<u64, usize>,
    n: &Node,
) -> Option<u64> {
    ancestors(nodes, index, n)
        .find(|p| is_gtk3_popover(nodes, index, p))
        .map(|p| p.id)
}

/// The bounds of the scrolled views around an element, which clip what it
/// shows: those of scroll views, and an item's list (GTK 4's list view is
/// a scrolled view of its own). A popup (menu, popover, tooltip) is a
/// surface of its own, measured apart: the views around where it was
/// opened do not clip it.
pub(super) fn clipping_views<'t>(n: &Node, node: impl Fn(u64) -> Option<&'t Node>) -> Vec<Rect> {
    let mut views = Vec::new();
    if n.role.is_item() {
        let list = n.parent.and_then(&node).and_then(|list| list.bounds);
        views.extend(list.filter(|v| !v.is_empty()));
    }
    let mut parent = n.parent;
    while let Some(p) = parent.and_then(&node) {
        if is_popover_content(p) {
            break;
        }
        match p.role {
            Role::Menu | Role::Window | Role::Dialog | Role::Alert | Role::Tooltip => break,
            Role::ScrollView => views.extend(p.bounds.filter(|v| !v.is_empty())),
            _ => {}
        }
        parent = p.parent;
    }
    views
}

/// The element is in a popover: below a menu that is not laid out in the
/// window (GTK 4's popover root reports no size, open or closed) and that
/// GTK made, which names it or its content after their class
/// (`GtkPopoverContent`). A menu an app draws in its window (egui's menu bar
/// and open menus) has no size either, but exists only while it shows.
fn in_popover(tree: &Tree, index: &HashMap<u64, usize>, n: &Node) -> bool {
    popover_of(&tree.nodes, index, n).is_some_and(|p| p.bounds.is_none())
}

/// Place the elements of each open popover (and GTK 3 combo box and menu
/// bar menu) where its popup shows them: GTK 4.8 measures them from the
/// popover's own surface, then adds where the popover sits in its window's
/// layout, not where the compositor put its popup; GTK 3 a combo box's menu
/// from the popup's content, a menu bar's menu (its items, not its title in
/// the bar) from the popup's surface. A menu popover is matched to a popup
/// of its window by size, a menu bar's menu to the one popup whose content
/// its items fill; a popover that is no menu, to the one popup left that
/// holds it where it says it lies. A popover that cannot be placed is taken
/// for closed: where it would be clicked is not known (so is a menu bar
/// menu's, whose items are left unplaced). Answers the nodes placed.
pub(super) fn place_popovers(tree: &mut Tree, popups: &[&WindowInfo]) -> HashSet<u64> {
    let index = positions(&tree.nodes);
    let content = tree.window.content;
    let mut claimed = HashSet::new();
    let mut shifts: HashMap<u64, (i32, i32)> = HashMap::new();
    for n in &tree.nodes {
        let on_popup =
            is_menu_popover(&tree.nodes, &index, n) || is_combo_menu(&tree.nodes, &index, n);
        let Some(b) = n.bounds.filter(|_| on_popup) else {
            continue;
        };
        // GTK 4 measures a popover from its popup's surface, GTK 3 a combo
        // box's menu from its popup's content (inside the shadow).
        let sized = |r: &Rect| (r.width, r.height) == (b.width, b.height);
        let popup = popups
            .iter()
            .filter(|w| !claimed.contains(&w.handle))
            .find_map(|w| {
                let area = [w.surface, w.content].into_iter().find(sized)?;
                Some((w.handle, area))
            });
        if let Some((handle, area)) = popup {
            claimed.insert(handle);
            let x = area.x - content.x - b.x;
            let y = area.y - content.y - b.y;
            shifts.insert(n.id, (x, y));
        }
    }
    for menu in tree
        .nodes
        .iter()
        .filter(|n| opened_from_menu_bar(&tree.nodes, &index, n))
    {
        let items: Vec<&Node> = menu
            .children
            .iter()
            .filter_map(|c| index.get(c).map(|i| &tree.nodes[*i]))
            .filter(|c| c.bounds.is_some())
            .collect();
        let Some(filled) = items
            .iter()
            .filter_map(|c| c.bounds.filter(|b| !b.is_empty()))
            .reduce(|a, b| a.union(&b))
        else {
            continue;
        };
        let mut filling = popups.iter().filter(|w| {
            !claimed.contains(&w.handle)
                && (w.content.width, w.content.height) == (filled.width, filled.height)
        });
        let (Some(popup), None) = (filling.next(), filling.next()) else {
            continue;
        };
        claimed.insert(popup.handle);
        let x = popup.content.x - content.x - filled.x;
        let y = popup.content.y - content.y - filled.y;
        for item in items {
            shifts.insert(item.id, (x, y));
        }
    }
    let mut closed: HashSet<u64> = HashSet::new();
    for n in tree
        .nodes
        .iter()
        .filter(|n| is_bare_popover(&tree.nodes, &index, n))
    {
        match bare_popover_place(&tree.nodes, &index, n, popups, &claimed) {
            Some((w, from)) => {
                claimed.insert(w.handle);
                let x = w.surface.x - content.x - from.x;
                let y = w.surface.y - content.y - from.y;
                shifts.insert(n.id, (x, y));
            }
            None => {
                closed.insert(n.id);
            }
        }
    }
    // A parent comes before its children: each takes its popover's shift,
    // or its closing.
    for n in tree.nodes.iter_mut() {
        if closed.contains(&n.id) || n.parent.is_some_and(|p| closed.contains(&p)) {
            closed.insert(n.id);
            n.states.offscreen = true;
            n.states.concealed = true;
            continue;
        }
        let inherited = n.parent.and_then(|p| shifts.get(&p).copied());
        let Some(shift) = shifts.get(&n.id).copied().or(inherited) else {
            continue;
        };
        shifts.insert(n.id, shift);
        n.bounds = n
            .bounds
            .map(|b| Rect::new(b.x + shift.0, b.y + shift.1, b.width, b.height));
    }
    shifts.into_keys().collect()
}

/// Where a popover that is no menu shows: the one popup not `claimed` that
/// holds it at the place it says it lies on its surface (its bounds less
/// those of the widget it was opened from), with that widget's bounds.
/// None when no popup or several do.
fn bare_popover_place<'w>(
    nodes: &[Node],
    index: &HashMap<u64, usize>,
    n: &Node,
    popups: &[&'w WindowInfo],
    claimed: &HashSet<wayrig_host::WindowHandle>,
) -> Option<(&'w WindowInfo, Rect)> {
    let b = n.bounds?;
    let from = nodes[*index.get(&n.parent?)?].bounds?;
    let on_surface = Rect::new(b.x - from.x, b.y - from.y, b.width, b.height);
    let mut holding = popups.iter().filter(|w| {
        !claimed.contains(&w.handle)
            && Rect::new(0, 0, w.surface.width, w.surface.height).contains_rect(&on_surface)
    });
    match (holding.next(), holding.next()) {
        (Some(w), None) => Some((*w, from)),
        _ => None,
    }
}

/// A popover: a menu GTK made for one, or one that is no menu.
fn is_popover(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    is_menu_popover(nodes, index, n) || is_bare_popover(nodes, index, n)
}

/// A menu GTK made for a popover: named, or holding what is named, after
/// its class (`GtkPopoverMenu`, `GtkPopoverContent`).
fn is_menu_popover(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    let class_named = |id: &u64| index.get(id).is_some_and(|i| nodes[*i].name_is_stand_in);
    n.role == Role::Menu && (n.name_is_stand_in || n.children.iter().any(class_named))
}

/// A popover that is no menu (GTK 4's `GtkPopover` holding widgets, as
/// gtk4-demo's Drag-and-Drop context menu of buttons): its content, named
/// after its class, in the widget it was opened from. GTK keeps it in the
/// tree, laid out as last shown, once it closed.
fn is_bare_popover(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    let in_menu_popover = n
        .parent
        .and_then(|p| index.get(&p))
        .is_some_and(|i| is_menu_popover(nodes, index, &nodes[*i]));
    is_popover_content(n) && !in_menu_popover
}

/// What GTK 4 shows on a popover's surface, named after its class: a popup
/// of its own, measured apart from where it was opened.
fn is_popover_content(n: &Node) -> bool {
    n.name_is_stand_in && n.name == "GtkPopoverContent"
}

/// The menu of a combo box: GTK 3 shows it on a popup and measures it from
/// there; toolkits that draw it in the window (egui) have no popup to match.
fn is_combo_menu(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    n.role == Role::Menu
        && n.parent
            .and_then(|p| index.get(&p))
            .is_some_and(|i| matches!(nodes[*i].role, Role::PopUpButton | Role::ComboBox))
}

/// A menu opened from a menu bar, or from an item of such a menu (a
/// submenu), that is no popover: GTK 3 shows it on a popup of its own and
/// measures its items from there; egui draws it in its window.
fn opened_from_menu_bar(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    let mut at = n;
    while at.role == Role::Menu && !is_menu_popover(nodes, index, at) {
        match at.parent.and_then(|p| index.get(&p)).map(|i| &nodes[*i]) {
            Some(p) if p.role == Role::MenuBar => return true,
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

/// The element is on a menu a menu bar opens (see `opened_from_menu_bar`).
pub(super) fn in_menu_bar_menu(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    ancestors(nodes, index, n).any(|p| opened_from_menu_bar(nodes, index, p))
}

/// The popover menu GTK made that the element is in, if any: a menu named,
/// or holding what is named, after its class (`GtkPopoverContent`).
fn popover_of<'t>(nodes: &'t [Node], index: &HashMap<u64, usize>, n: &Node) -> Option<&'t Node> {
    ancestors(nodes, index, n).find(|p| is_popover(nodes, index, p))
}

/// The element is in the menu of a combo box, which GTK 3 shows on a popup
/// (placed there when one is open) and egui draws in its window.
pub(super) fn in_combo_menu(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    ancestors(nodes, index, n).any(|p| is_combo_menu(nodes, index, p))
}

/// The element is in a popover, which shows on a popup surface of its
/// own while open (GTK 4 keeps its elements in its window's tree).
pub(super) fn in_popup(nodes: &[Node], index: &HashMap<u64, usize>, n: &Node) -> bool {
    popover_of(nodes, index, n).is_some()
}

/// The element shows on the popup of an open popover, which may reach past
/// its window's edges.
pub(super) fn shows_on_popup(tree: &Tree, n: &Node) -> bool {
    !n.states.offscreen && in_popup(&tree.nodes, &positions(&tree.nodes), n)
}

/// A tree's nodes in reading order, and each node's place in it.
struct Reading {
    /// Indices of nodes as a person reads them.
    order: Vec<usize>,
    /// By node index: its place in `order`.
    ranks: Vec<usize>,
}

impl Reading {
    /// The session's reading order of the tree; what does not show is
    /// placed nowhere.
    fn of(tree: &Tree) -> Reading {
        let index = positions(&tree.nodes);
        let placements: Vec<Placement> = tree
            .nodes
            .iter()
            .map(|n| Placement {
                parent: n.parent.and_then(|p| index.get(&p).copied()),
                bounds: n.bounds.filter(|_| !n.states.offscreen),
            })
            .collect();
        let order = reading_order(&placements);
        let mut ranks = vec![0; tree.nodes.len()];
        for (rank, i) in order.iter().enumerate() {
            ranks[*i] = rank;
        }
        Reading { order, ranks }
    }
}

/// The words that name a control (the node at `at`) whose name says
/// nothing: the text its labelled-by relation points at, the text a tab
/// holds, its description
/// (GTK's tooltip), the name of the icon it shows, else the label just
/// before it in `reading`.
fn label_fallback(tree: &Tree, reading: &Reading, at: usize) -> Option<LabelFallback> {
    let n = &tree.nodes[at];
    let found = |source, text: &str| {
        let text = text.trim();
        (!text.is_empty()).then(|| LabelFallback {
            source,
            text: text.to_string(),
        })
    };
    let labelled_by = n
        .relations
        .labelled_by
        .iter()
        .filter_map(|id| tree.node(*id))
        .find_map(|l| l.label().or(l.value.as_deref()));
    if let Some(f) = labelled_by.and_then(|t| found(LabelSource::LabelledBy, t)) {
        return Some(f);
    }
    // A caption of a sign or two ("π", "x2" for x²) says less than the
    // description beside it ("Pi [Ctrl+P]").
    let held = held_text(tree, n);
    let sign = held
        .as_deref()
        .is_some_and(|t| t.trim().chars().count() <= 2);
    if !sign || n.description.trim().is_empty() {
        if let Some(f) = held.and_then(|t| found(LabelSource::Content, &t)) {
            return Some(f);
        }
    }
    if let Some(f) = found(LabelSource::Description, &n.description) {
        return Some(f);
    }
    if let Some(f) = icon_name(tree, n).and_then(|t| found(LabelSource::Icon, &t)) {
        return Some(f);
    }
    let beside = row_label(tree, n).or_else(|| label_before(tree, reading, at));
    if let Some(f) = beside.and_then(|t| found(LabelSource::Beside, t)) {
        return Some(f);
    }
    let hint = n.annotations.placeholder.as_deref().unwrap_or_default();
    found(LabelSource::Placeholder, hint)
}

/// The text a control shows inside it: a tab's or a list row's labels'
/// words in order (GTK 4.8 gives a notebook tab's caption as a label inside
/// the tab, the tab itself named "Tab"), a drop-down's chosen item, or the
/// name of the one button a button wraps (GTK 4's menu button holds a
/// toggle button with its text).
fn held_text(tree: &Tree, n: &Node) -> Option<String> {
    match n.role {
        // A drop-down shows its chosen item: its value, else its text.
        Role::PopUpButton | Role::ComboBox if n.value.as_deref().is_some_and(|v| !v.is_empty()) => {
            n.value.clone()
        }
        // A table's row is read by its first cell, as a person names it
        // ("restore-session" of a settings table).
        Role::Row
            if n.children
                .first()
                .and_then(|c| tree.node(*c))
                .is_some_and(|c| c.role == Role::Cell) =>
        {
            let first = tree.node(n.children[0])?;
            let words: Vec<&str> = std::iter::once(first)
                .chain(tree.descendants(first))
                .filter(|d| !d.states.offscreen)
                .filter_map(|d| match d.role {
                    Role::Label | Role::Cell => d.label(),
                    _ => None,
                })
                .collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        Role::Tab | Role::ListItem | Role::TreeItem | Role::Row | Role::PopUpButton => {
            // What shows: a drop-down keeps its placeholder on a hidden page.
            // A label GTK 4.8 names nothing reads by the text it shows.
            let words: Vec<&str> = tree
                .descendants(n)
                .filter(|d| d.role == Role::Label && !d.states.offscreen)
                .filter_map(Node::shown_label)
                .collect();
            // A row of a few words is read by them; a row of many is a
            // form of its own, read by its parts.
            (!words.is_empty() && words.len() <= 3).then(|| words.join(" "))
        }
        Role::Button | Role::ToggleButton | Role::MenuButton | Role::Disclosure => {
            let inner: Vec<&Node> = n
                .children
                .iter()
                .filter_map(|c| tree.node(*c))
                .filter(|c| super::elements::is_control(c))
                .collect();
            if let [one] = inner.as_slice() {
                if let Some(label) = one.label() {
                    return Some(label.to_string());
                }
            }
            let words = caption(tree, n);
            (!words.is_empty() && words.len() <= 3).then(|| words.join(" "))
        }
        _ => None,
    }
}

/// The labels a button or an expander shows as its caption, in tree order:
/// those that show, outside the controls and scrolled views it holds (an
/// expander's content).
fn caption<'t>(tree: &'t Tree, n: &Node) -> Vec<&'t str> {
    let mut words = Vec::new();
    let mut stack: Vec<u64> = n.children.iter().rev().copied().collect();
    while let Some(d) = stack.pop().and_then(|id| tree.node(id)) {
        if is_control(d) || d.role == Role::ScrollView || d.states.offscreen {
            continue;
        }
        if d.role == Role::Label && d.bounds.is_some() {
            words.extend(d.label());
        }
        stack.extend(d.children.iter().rev());
    }
    words
}

/// The name of the icon a button shows: an image inside it that says what
/// it shows (GTK 4.8 names none, but gives a colour swatch its colour).
fn icon_name(tree: &Tree, n: &Node) -> Option<String> {
    if !matches!(n.role, Role::Button | Role::ToggleButton | Role::MenuButton) {
        return None;
    }
    tree.descendants(n)
        .filter(|d| d.role == Role::Image)
        .map(|d| d.label().unwrap_or(d.description.as_str()))
        .find(|text| !text.is_empty())
        .map(str::to_string)
}

/// The text of the label nearest before the element (the node at `at`) as
/// a person reads: on its row and left of it, else just above it and over
/// it, with no other control read between them. A label inside another
/// control is that control's (a list row's label names what the row holds
/// too); a value (digits, a time) or a label between two controls alike
/// (a calendar's month between its arrows) names none.
fn label_before<'t>(tree: &'t Tree, reading: &Reading, at: usize) -> Option<&'t str> {
    let n = &tree.nodes[at];
    let field = n.bounds.filter(|_| !n.states.offscreen)?;
    let labels = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, l)| l.role == Role::Label && !l.states.offscreen && l.label().is_some());
    let mut left: Option<(i32, &Node)> = None;
    let mut above: Option<(i32, &Node)> = None;
    for (i, l) in labels {
        let Some(b) = l.bounds else { continue };
        if l.label().is_some_and(reads_as_a_value) {
            continue;
        }
        let same_row = b.y < bottom(&field) && bottom(&b) > field.y;
        let same_column = b.x < right(&field) && right(&b) > field.x;
        let gap_left = field.x - right(&b);
        let gap_above = field.y - bottom(&b);
        let beside = same_row
            && (0..=BESIDE_GAP).contains(&gap_left)
            && left.is_none_or(|(g, _)| gap_left < g);
        let over = same_column
            && (0..=ABOVE_GAP).contains(&gap_above)
            && above.is_none_or(|(g, _)| gap_above < g);
        // Text of its own (a button's caption, a slider's value) names no
        // other. Asked last: these walk the tree.
        if !(beside || over)
            || inside_another_control(tree, l, n)
            || (beside && between_twins(tree, &b, n, &field))
            || !reads_just_before(tree, reading, i, at)
        {
            continue;
        }
        if beside {
            left = Some((gap_left, l));
        } else {
            above = Some((gap_above, l));
        }
    }
    left.or(above).and_then(|(_, l)| l.label())
}

/// The one label of the list row a control is the one control of (a
/// settings row: "Row 1" and its switch), however far apart they sit.
fn row_label<'t>(tree: &'t Tree, n: &Node) -> Option<&'t str> {
    let row = tree
        .ancestors(n)
        .find(|p| matches!(p.role, Role::ListItem | Role::Row))?;
    let mut controls = tree.descendants(row).filter(|d| is_control(d));
    if controls.next().map(|c| c.id) != Some(n.id) || controls.next().is_some() {
        return None;
    }
    let mut labels = tree.descendants(row).filter(|d| {
        d.role == Role::Label
            && !d.states.offscreen
            && d.label().is_some_and(|t| !reads_as_a_value(t))
            && !holds(tree, n.id, d)
    });
    match (labels.next(), labels.next()) {
        (Some(one), None) => one.label(),
        _ => None,
    }
}

/// Whether the node at `label` reads before the one at `field` with no
/// control that shows read between them, other than those holding the
/// field (a combo box around its entry).
fn reads_just_before(tree: &Tree, reading: &Reading, label: usize, field: usize) -> bool {
    let (from, to) = (reading.ranks[label], reading.ranks[field]);
    from < to
        && !reading.order[from + 1..to].iter().any(|i| {
            let c = &tree.nodes[*i];
            is_control(c) && !c.states.offscreen && !holds(tree, c.id, &tree.nodes[field])
        })
}

/// Whether the node `holder` is an ancestor of `n`.
fn holds(tree: &Tree, holder: u64, n: &Node) -> bool {
    tree.ancestors(n).any(|p| p.id == holder)
}

/// Whether a control that does not hold `field` holds the label.
fn inside_another_control(tree: &Tree, label: &Node, field: &Node) -> bool {
    tree.ancestors(label)
        .any(|p| is_control(p) && !holds(tree, p.id, field))
}

/// Text that is a value rather than a name: digits with the signs numbers,
/// times and dates are written with ("3", "0:00", "2026", "-1.5 %").
fn reads_as_a_value(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_whitespace() || ":.,%+-−/".contains(c))
}

/// Whether the label (at `b`, left of `field`) has, just left of it, an
/// unnamed control of the field's role and size: the two step what the
/// label shows (a calendar's "December" between its arrows).
fn between_twins(tree: &Tree, b: &Rect, field_node: &Node, field: &Rect) -> bool {
    const NEAR: i32 = 12;
    tree.nodes.iter().any(|c| {
        c.id != field_node.id
            && c.role == field_node.role
            && c.label().is_none()
            && !c.states.offscreen
            && c.bounds.is_some_and(|cb| {
                (cb.width, cb.height) == (field.width, field.height)
                    && cb.y < bottom(b)
                    && bottom(&cb) > b.y
                    && (0..=NEAR).contains(&(b.x - right(&cb)))
            })
    }) && (0..=NEAR).contains(&(field.x - right(b)))
}

fn right(r: &Rect) -> i32 {
    r.x + r.width
}

fn bottom(r: &Rect) -> i32 {
    r.y + r.height
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::elements::tests::{node, tree_of};

    fn at(mut n: Node, x: i32, y: i32, w: i32, h: i32) -> Node {
        n.bounds = Some(Rect::new(x, y, w, h));
        n
    }

    /// gtk4-demo's Drag-and-Drop context menu: a popover of buttons in the
    /// canvas it was opened from, measured from its popup's surface plus
    /// where the canvas sits.
    fn canvas_with_popover() -> Tree {
        let mut content = at(
            node(3, Some(2), Role::Group, "GtkPopoverContent"),
            12,
            48,
            77,
            116,
        );
        content.name_is_stand_in = true;
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Drag-and-Drop"),
            at(node(2, Some(1), Role::Group, "canvas"), 0, 37, 200, 60),
            content,
            at(node(4, Some(3), Role::Button, "New"), 29, 53, 43, 24),
        ]);
        tree.window.content = Rect::new(320, 160, 200, 100);
        tree
    }

    #[test]
    fn a_popover_of_widgets_is_placed_on_the_one_popup_that_holds_it() {
        use crate::session::windows::tests::window;
        let popup = |id, x, y, w, h| {
            let mut p = window(id, "", wayrig_host::WindowKind::Menu, 0);
            p.surface = Rect::new(x, y, w, h);
            p
        };
        // Its surface-relative place (12, 11) lies on the 101x140 popup.
        let open = popup(7, 570, 279, 101, 140);
        let mut tree = canvas_with_popover();
        let placed = place_popovers(&mut tree, &[&open]);
        assert_eq!(placed, HashSet::from([3, 4]));
        let new = tree.node(4).unwrap();
        assert_eq!(new.bounds, Some(Rect::new(279, 135, 43, 24)));
        assert!(!new.states.concealed);

        // No popup, or two that could hold it: where it shows is not
        // known, and it is taken for closed.
        let small = popup(8, 0, 0, 40, 40);
        let other = popup(9, 10, 10, 120, 160);
        for popups in [vec![], vec![&small], vec![&open, &other]] {
            let mut tree = canvas_with_popover();
            assert!(place_popovers(&mut tree, &popups).is_empty());
            let new = tree.node(4).unwrap();
            assert!(new.states.concealed && new.states.offscreen, "{popups:?}");
            assert_eq!(new.bounds, Some(Rect::new(29, 53, 43, 24)), "left as read");
        }
    }

    /// gtk3-widget-factory's View menu, open, as read: its title in the
    /// menu bar placed in the window, its items measured from their popup's
    /// surface (6, 5 inside it, where the shadow ends) less the window's
    /// shadow inset (26, 23).
    fn menu_bar_with_view_open() -> Tree {
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "gtk3-widget-factory"),
            at(node(2, Some(1), Role::MenuBar, ""), 296, 64, 809, 27),
            at(node(3, Some(2), Role::Menu, "View"), 378, 64, 48, 27),
            at(
                node(4, Some(3), Role::CheckMenuItem, "Toolbar"),
                -20,
                -18,
                224,
                27,
            ),
            at(
                node(5, Some(3), Role::CheckMenuItem, "Statusbar"),
                -20,
                9,
                224,
                27,
            ),
            at(node(6, Some(2), Role::Menu, "Help"), 426, 64, 47, 27),
            node(7, Some(6), Role::MenuItem, "About"),
        ]);
        tree.window.content = Rect::new(0, 0, 1361, 740);
        tree
    }

    #[test]
    fn a_gtk3_menu_bar_menus_items_are_placed_on_the_popup_they_fill() {
        use crate::session::windows::tests::window;
        let popup = |id, surface: Rect, content: Rect| {
            let mut p = window(id, "", wayrig_host::WindowKind::Menu, 0);
            (p.surface, p.content) = (surface, content);
            p
        };
        // The popup the compositor put below View: its content is 224x54,
        // as much as the items fill.
        let open = popup(7, Rect::new(372, 86, 236, 66), Rect::new(378, 91, 224, 54));
        let mut tree = menu_bar_with_view_open();
        let placed = place_popovers(&mut tree, &[&open]);
        assert_eq!(placed, HashSet::from([4, 5]), "the items, not View");
        assert_eq!(
            tree.node(3).unwrap().bounds,
            Some(Rect::new(378, 64, 48, 27))
        );
        assert_eq!(
            tree.node(5).unwrap().bounds,
            Some(Rect::new(378, 118, 224, 27))
        );
        assert!(in_menu_bar_menu(
            &tree.nodes,
            &positions(&tree.nodes),
            tree.node(5).unwrap()
        ));

        // A popup its items do not fill, or two that they do: where they
        // show is not known, and they are left as read.
        let other = popup(8, Rect::new(0, 0, 236, 66), Rect::new(6, 5, 224, 54));
        let combo = popup(9, Rect::new(0, 0, 100, 100), Rect::new(6, 5, 90, 90));
        for popups in [vec![&combo], vec![&open, &other]] {
            let mut tree = menu_bar_with_view_open();
            assert!(place_popovers(&mut tree, &popups).is_empty());
            assert_eq!(
                tree.node(5).unwrap().bounds,
                Some(Rect::new(-20, 9, 224, 27))
            );
        }
    }

    #[test]
    fn a_gtk3_popover_is_the_child_of_its_button_that_holds_what_lies_outside_it() {
        // gtk3-widget-factory's menu button and the popover it opens, GTK 3
        // making the button its parent; and a button's own caption.
        let mut popover = node(3, Some(2), Role::Panel, "");
        popover.native_role = "panel".into();
        let tree = tree_of(vec![
            node(1, None, Role::Window, "gtk3-widget-factory"),
            at(
                node(2, Some(1), Role::ToggleButton, "Menu"),
                1272,
                0,
                36,
                46,
            ),
            at(popover, 1161, 46, 200, 213),
            at(node(4, Some(3), Role::Panel, ""), 1186, 71, 150, 163),
            at(
                node(5, Some(4), Role::Button, "Get Busy"),
                1186,
                71,
                150,
                26,
            ),
            at(node(6, Some(1), Role::Button, "Close"), 1321, 8, 34, 30),
            at(
                node(7, Some(6), Role::Image, "window-close"),
                1329,
                15,
                16,
                16,
            ),
        ]);
        let index = positions(&tree.nodes);
        let of = |id| gtk3_popover_of(&tree.nodes, &index, tree.node(id).unwrap());
        assert_eq!(of(5), Some(3));
        assert_eq!(of(4), Some(3));
        assert_eq!(of(7), None, "a caption inside its button");
        assert_eq!(of(2), None, "nothing holds the button");
        assert!(!outside_its_container(&tree, &index, tree.node(5).unwrap()));
    }

    #[test]
    fn a_name_that_says_its_childs_name_twice_says_it_once() {
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Calculator"),
            node(2, Some(1), Role::Button, "× ×"),
            node(3, Some(2), Role::Label, "×"),
            node(4, Some(1), Role::Button, "Replace All Replace All"),
            node(5, Some(4), Role::Label, "Replace All"),
            // Said twice, but no child says it: left as the app gave it.
            node(6, Some(1), Role::Button, "Go Go"),
            node(7, Some(6), Role::Label, "Stop"),
        ]);
        as_seen(&mut tree, &[]);
        let name = |id| tree.node(id).unwrap().name.clone();
        assert_eq!(name(2), "×");
        assert_eq!(name(4), "Replace All");
        assert_eq!(name(6), "Go Go");
        assert_eq!(said_twice("a"), None);
        assert_eq!(said_twice(" "), None);
        assert_eq!(said_twice("ab ab"), Some("ab"));
        assert_eq!(said_twice("ab abc"), None);
    }

    #[test]
    fn a_select_shows_its_chosen_option_as_its_value() {
        let selected = |mut n: Node| {
            n.states.selected = true;
            n
        };
        let mut select = node(2, Some(1), Role::PopUpButton, "Colour");
        select.value = Some("\u{fffc}".into());
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Form"),
            select,
            node(3, Some(2), Role::Menu, ""),
            node(4, Some(3), Role::MenuItem, "Red"),
            selected(node(5, Some(3), Role::MenuItem, "Green")),
            // Named by its chosen item already: nothing to add.
            node(6, Some(1), Role::ComboBox, "Left"),
            selected(node(7, Some(6), Role::MenuItem, "Left")),
            // Nothing chosen: no value made up.
            node(8, Some(1), Role::PopUpButton, "Size"),
            node(9, Some(8), Role::MenuItem, "Small"),
        ]);
        as_seen(&mut tree, &[]);
        let value = |id| tree.node(id).unwrap().value.clone();
        assert_eq!(value(2).as_deref(), Some("Green"));
        assert_eq!(value(6), None);
        assert_eq!(value(8), None);
    }

    #[test]
    fn options_an_open_list_places_off_its_popup_do_not_show() {
        let mut select = at(node(2, Some(1), Role::PopUpButton, "Pick"), 10, 10, 60, 20);
        select.states.expanded = true;
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Page"), 0, 0, 400, 600),
            select,
            at(node(3, Some(2), Role::Menu, ""), 10, 10, 60, 11),
            at(node(4, Some(3), Role::MenuItem, "Option 0"), 10, 30, 60, 20),
            at(
                node(5, Some(3), Role::MenuItem, "Option 20"),
                10,
                430,
                60,
                20,
            ),
        ]);
        let popup = [Rect::new(10, 30, 60, 400)];
        as_seen(&mut tree, &popup);
        hide_list_items_off_their_popup(&mut tree, &popup);
        let offscreen = |id| tree.node(id).unwrap().states.offscreen;
        assert!(!offscreen(4), "drawn on the popup");
        assert!(offscreen(5), "placed below it, on the page");
        // With no popup open, nothing is decided here.
        let mut closed = tree.clone();
        closed.nodes[4].states.offscreen = false;
        hide_list_items_off_their_popup(&mut closed, &[]);
        assert!(!closed.node(5).unwrap().states.offscreen);
    }

    fn sizeless(mut n: Node) -> Node {
        n.bounds = None;
        n
    }

    #[test]
    fn libadwaitas_tab_gizmos_are_tabs_read_by_their_titles() {
        let stand_in = |mut n: Node| {
            n.name_is_stand_in = true;
            n
        };
        let focusable = |mut n: Node| {
            n.states.focusable = true;
            n
        };
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Editor"), 0, 0, 700, 520),
            at(
                stand_in(node(2, Some(1), Role::Panel, "AdwTabBox")),
                0,
                47,
                700,
                44,
            ),
            at(
                focusable(stand_in(node(3, Some(2), Role::Panel, "AdwGizmo"))),
                5,
                52,
                342,
                34,
            ),
            at(
                stand_in(node(4, Some(3), Role::Panel, "AdwTab")),
                9,
                56,
                334,
                26,
            ),
            at(node(5, Some(4), Role::Label, "first doc"), 160, 56, 53, 26),
            // A gizmo elsewhere, or one that takes no focus, is no tab.
            at(
                stand_in(node(6, Some(2), Role::Panel, "AdwGizmo")),
                350,
                52,
                10,
                34,
            ),
            at(
                focusable(stand_in(node(7, Some(1), Role::Panel, "AdwGizmo"))),
                0,
                100,
                10,
                10,
            ),
        ]);
        as_seen(&mut tree, &[]);
        let n = |id| tree.node(id).unwrap();
        assert_eq!(n(3).role, Role::Tab);
        assert_eq!(n(3).label_fallback.as_ref().unwrap().text, "first doc");
        assert_eq!(n(6).role, Role::Panel);
        assert_eq!(n(7).role, Role::Panel);
    }

    #[test]
    fn what_lies_wholly_outside_the_element_around_it_is_offscreen() {
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Editor"), 0, 0, 700, 520),
            at(node(2, Some(1), Role::Group, "GtkOverlay"), 0, 47, 700, 473),
            // A revealer slid shut keeps its bar above the page.
            at(
                node(3, Some(2), Role::Group, "EditorSearchBar"),
                17,
                -13,
                426,
                34,
            ),
            at(
                node(4, Some(3), Role::Button, "Close search"),
                413,
                -8,
                24,
                24,
            ),
            // Half out is still partly shown.
            at(node(5, Some(2), Role::Button, "Half"), 0, 30, 40, 40),
            // A revealer shut to no height: what it holds does not show.
            at(node(8, Some(2), Role::Panel, ""), 234, 141, 460, 0),
            at(node(9, Some(8), Role::Button, "Find"), 251, 141, 40, 20),
            // Or with no bounds at all: its bar lies where GTK last put it.
            sizeless(node(10, Some(2), Role::Panel, "")),
            at(
                node(11, Some(10), Role::Group, "EditorSearchBar"),
                17,
                0,
                426,
                34,
            ),
            // A popover is measured apart: its root has no size.
            sizeless(node(6, Some(2), Role::Group, "GtkPopover")),
            at(
                node(7, Some(6), Role::Button, "In the popover"),
                0,
                0,
                40,
                20,
            ),
        ]);
        as_seen(&mut tree, &[Rect::new(0, 0, 1, 1)]);
        let offscreen = |id| tree.node(id).unwrap().states.offscreen;
        assert!(offscreen(3), "above its overlay");
        assert!(offscreen(4), "inside the bar, but outside the overlay");
        assert!(!offscreen(5));
        assert!(!offscreen(7));
        assert!(offscreen(9), "in a revealer shut");
        assert!(
            offscreen(11),
            "in a revealer with no bounds, outside the overlay"
        );
    }

    #[test]
    fn hidden_pages_and_scrolled_out_rows_are_offscreen() {
        let mut page = node(3, Some(1), Role::Button, "On a hidden page");
        page.bounds = Some(Rect::new(10, 57, 0, 0));
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            at(node(2, Some(1), Role::ScrollView, ""), 0, 0, 200, 50),
            page,
            at(
                node(4, Some(2), Role::ListItem, "Shown row"),
                0,
                10,
                200,
                20,
            ),
            at(
                node(5, Some(2), Role::ListItem, "Row below"),
                0,
                70,
                200,
                20,
            ),
            at(node(6, Some(2), Role::Menu, ""), 0, 60, 100, 40),
            at(
                node(7, Some(6), Role::MenuItem, "In a popover"),
                0,
                70,
                100,
                20,
            ),
        ]);
        let mut closed = tree.clone();
        as_seen(&mut tree, &[Rect::new(0, 0, 1, 1)]);
        let offscreen = |id| tree.node(id).unwrap().states.offscreen;
        assert!(offscreen(3), "unsized: a hidden page");
        assert!(!offscreen(4));
        assert!(offscreen(5), "scrolled out of its view");
        assert!(
            !offscreen(7),
            "a popup is not clipped by the view it opened from"
        );
        // A popover that closed keeps its layout: no popup shows, so neither does it.
        closed.nodes[5].bounds = None;
        let mut drawn = closed.clone();
        // GTK's popover root holds its content, named after its class.
        let mut content = at(
            node(8, Some(6), Role::Group, "GtkPopoverContent"),
            0,
            60,
            100,
            40,
        );
        content.name_is_stand_in = true;
        closed.nodes.push(content);
        closed.nodes[5].children.push(8);
        closed.nodes[6].parent = Some(8);
        as_seen(&mut closed, &[]);
        assert!(closed.node(7).unwrap().states.offscreen);
        assert!(!closed.node(4).unwrap().states.offscreen);
        // A menu the app draws in its window (egui) is no popover: it shows.
        as_seen(&mut drawn, &[]);
        assert!(!drawn.node(7).unwrap().states.offscreen);
    }

    #[test]
    fn only_the_selected_tabs_panel_shows() {
        // GTK 4.8's stack after a switch: both pages keep a layout, and
        // the states of neither tell which shows.
        let mut first = at(node(2, Some(1), Role::Tab, "Page 1"), 0, 0, 50, 20);
        first.relations.controls = vec![10];
        let mut second = at(node(3, Some(1), Role::Tab, "Page 2"), 50, 0, 50, 20);
        second.relations.controls = vec![20];
        second.states.selected = true;
        // A tab list where no tab is selected hides no panel.
        let mut loose = at(node(5, Some(4), Role::Tab, "Loose"), 0, 30, 50, 20);
        loose.relations.controls = vec![30];
        let panel = |id, name| {
            let mut p = node(id, Some(1), Role::Group, name);
            p.bounds = None;
            p
        };
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            first,
            second,
            at(node(4, Some(1), Role::TabList, ""), 0, 30, 100, 20),
            loose,
            panel(10, "Page 1"),
            at(node(11, Some(10), Role::Group, ""), 0, 50, 200, 50),
            at(
                node(12, Some(11), Role::CheckBox, "On page 1"),
                0,
                50,
                50,
                20,
            ),
            panel(20, "Page 2"),
            at(node(21, Some(20), Role::Group, ""), 0, 50, 200, 50),
            at(node(22, Some(21), Role::Button, "On page 2"), 0, 50, 50, 20),
            panel(30, "Loose"),
            at(node(31, Some(30), Role::Button, "Loose"), 100, 50, 50, 20),
        ]);
        let mut back = tree.clone();
        as_seen(&mut tree, &[]);
        let offscreen = |tree: &Tree, id| tree.node(id).unwrap().states.offscreen;
        assert!(offscreen(&tree, 12), "on the page left");
        assert!(offscreen(&tree, 11));
        assert!(!offscreen(&tree, 22), "on the page shown");
        assert!(!offscreen(&tree, 21));
        assert!(!offscreen(&tree, 2), "the tabs show");
        assert!(!offscreen(&tree, 31), "no tab of its list is selected");
        // And back again.
        back.nodes[1].states.selected = true;
        back.nodes[2].states.selected = false;
        as_seen(&mut back, &[]);
        assert!(!offscreen(&back, 12));
        assert!(offscreen(&back, 22));
    }

    #[test]
    fn a_control_named_after_its_class_is_read_by_what_a_person_sees() {
        let mut tooltip = at(node(2, Some(1), Role::Button, "GtkButton"), 0, 0, 20, 20);
        tooltip.name_is_stand_in = true;
        tooltip.description = "Primary menu".into();
        let mut icon = at(node(3, Some(1), Role::Button, ""), 30, 0, 20, 20);
        icon.children = vec![4];
        let mut image = node(4, Some(3), Role::Image, "");
        image.description = "edit-clear".into();
        let field = at(node(6, Some(1), Role::TextInput, ""), 60, 40, 100, 20);
        let above = at(node(8, Some(1), Role::TextInput, ""), 0, 82, 100, 16);
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            tooltip,
            icon,
            image,
            at(node(5, Some(1), Role::Label, "Name"), 0, 40, 50, 20),
            field,
            at(node(7, Some(1), Role::Label, "Address"), 0, 64, 80, 16),
            above,
            at(
                node(9, Some(1), Role::ToggleButton, "Caption"),
                200,
                0,
                40,
                20,
            ),
            at(node(10, Some(9), Role::Label, "Caption"), 200, 0, 40, 20),
            at(node(11, Some(1), Role::ComboBox, ""), 200, 30, 40, 20),
        ]);
        // tree_of pushes children again: keep the image once.
        tree.nodes[2].children = vec![4];
        as_seen(&mut tree, &[]);
        let fallback = |id| {
            let f = tree.node(id).unwrap().label_fallback.clone().unwrap();
            (f.source, f.text)
        };
        assert_eq!(
            fallback(2),
            (LabelSource::Description, "Primary menu".into())
        );
        assert_eq!(fallback(3), (LabelSource::Icon, "edit-clear".into()));
        assert_eq!(fallback(6), (LabelSource::Beside, "Name".into()));
        assert_eq!(fallback(8), (LabelSource::Beside, "Address".into()));
        assert!(tree.node(5).unwrap().label_fallback.is_none());
        // A button's own caption names nothing below it.
        assert!(tree.node(11).unwrap().label_fallback.is_none());
    }

    #[test]
    fn a_tab_gtk_named_tab_is_read_by_the_caption_it_holds() {
        // GTK 4.8's notebook: each tab named "Tab", its caption a label
        // inside it; a label left of the tab is not its caption.
        let mut tab = at(node(3, Some(2), Role::Tab, "Tab"), 60, 0, 40, 20);
        tab.name_is_stand_in = true;
        let mut bare = at(node(5, Some(2), Role::Tab, "Tab"), 110, 0, 40, 20);
        bare.name_is_stand_in = true;
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            at(node(2, Some(1), Role::TabList, ""), 60, 0, 100, 20),
            tab,
            at(node(4, Some(3), Role::Label, "Sunset"), 62, 2, 36, 16),
            bare,
            at(node(6, Some(1), Role::Label, "Photos"), 0, 0, 50, 20),
        ]);
        as_seen(&mut tree, &[]);
        let fallback = |id| {
            let f = tree.node(id).unwrap().label_fallback.clone()?;
            Some((f.source, f.text))
        };
        assert_eq!(fallback(3), Some((LabelSource::Content, "Sunset".into())));
        assert_ne!(
            fallback(5).map(|(source, _)| source),
            Some(LabelSource::Content),
            "a tab holding no text has no caption"
        );
    }

    #[test]
    fn a_menu_button_is_read_by_the_button_it_wraps_not_the_text_above() {
        // GTK 4's GtkMenuButton: named after its class, it holds a toggle
        // button with the text; the label above it is another control's.
        let mut outer = at(
            node(3, Some(1), Role::MenuButton, "GtkMenuButton"),
            0,
            24,
            80,
            34,
        );
        outer.name_is_stand_in = true;
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            at(node(2, Some(1), Role::Label, "keys:"), 0, 0, 320, 18),
            outer,
            at(node(4, Some(3), Role::ToggleButton, "Mode"), 10, 28, 60, 24),
        ]);
        as_seen(&mut tree, &[]);
        let f = tree.node(3).unwrap().label_fallback.clone().unwrap();
        assert_eq!((f.source, f.text.as_str()), (LabelSource::Content, "Mode"));
    }

    #[test]
    fn rows_drop_downs_and_bare_fields_are_read_by_what_they_show() {
        let row = at(node(3, Some(2), Role::ListItem, ""), 0, 0, 200, 20);
        let chosen = at(node(5, Some(1), Role::PopUpButton, ""), 0, 40, 120, 30);
        let mut field = at(node(7, Some(1), Role::TextInput, ""), 0, 300, 120, 30);
        field.annotations.placeholder = Some("Search".into());
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            at(node(2, Some(1), Role::List, ""), 0, 0, 200, 20),
            row,
            at(node(4, Some(3), Role::Label, "Row 3"), 2, 2, 60, 16),
            chosen,
            at(node(6, Some(5), Role::Label, "Small"), 4, 44, 60, 20),
            field,
        ]);
        as_seen(&mut tree, &[]);
        let fallback = |id| {
            let f = tree.node(id).unwrap().label_fallback.clone().unwrap();
            (f.source, f.text)
        };
        assert_eq!(fallback(3), (LabelSource::Content, "Row 3".into()));
        assert_eq!(fallback(5), (LabelSource::Content, "Small".into()));
        assert_eq!(fallback(7), (LabelSource::Placeholder, "Search".into()));
    }

    #[test]
    fn a_label_names_only_the_control_read_just_after_it() {
        // A video's controls: a caption, the seek slider beside it, and
        // past the slider the volume button, near enough to the caption to
        // pass for its field; then a column whose last label is left of a
        // text view in the next column, a list's header button read between
        // them.
        let mut tree = tree_of(vec![
            node(1, None, Role::Window, "Main"),
            at(node(2, Some(1), Role::Label, "Seek"), 40, 0, 30, 30),
            at(node(3, Some(1), Role::Slider, ""), 80, 10, 60, 10),
            at(node(4, Some(1), Role::Button, ""), 160, 0, 30, 30),
            at(node(5, Some(1), Role::Group, ""), 0, 40, 100, 100),
            at(node(6, Some(5), Role::Label, "Heading"), 0, 120, 90, 20),
            at(node(7, Some(1), Role::Group, ""), 110, 40, 100, 200),
            at(node(8, Some(7), Role::Button, "Cool"), 110, 40, 40, 20),
            at(node(9, Some(7), Role::TextArea, ""), 110, 110, 100, 130),
        ]);
        as_seen(&mut tree, &[]);
        let fallback = |id| tree.node(id).unwrap().label_fallback.clone();
        assert_eq!(fallback(3).unwrap().text, "Seek");
        assert_eq!(fallback(4), None, "the slider is read between");
        assert_eq!(fallback(9), None, "the header button is read between");
    }

    #[test]
    fn a_button_is_read_by_the_caption_it_shows_not_the_text_above() {
        // gnome-calculator's About: the version button under the subtitle;
        // gtk4-widget-factory's Expander under a calendar's last day.
        let mut version = at(node(3, Some(1), Role::Button, "GtkButton"), 150, 60, 40, 24);
        version.name_is_stand_in = true;
        let mut expander = at(
            node(6, Some(1), Role::Disclosure, "GtkExpander"),
            0,
            120,
            250,
            200,
        );
        expander.name_is_stand_in = true;
        let mut pi = at(node(10, Some(1), Role::Button, "GtkButton"), 300, 0, 40, 24);
        pi.name_is_stand_in = true;
        pi.description = "Pi [Ctrl+P]".into();
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "About"), 0, 0, 400, 400),
            at(
                node(2, Some(1), Role::Label, "The GNOME Project"),
                0,
                30,
                340,
                18,
            ),
            version,
            at(node(4, Some(3), Role::Label, "43.0.1"), 150, 60, 40, 24),
            at(node(5, Some(1), Role::Label, "3"), 4, 90, 30, 18),
            expander,
            at(node(7, Some(6), Role::Label, "Expander"), 16, 120, 60, 18),
            at(node(8, Some(6), Role::ScrollView, ""), 0, 140, 250, 180),
            at(node(9, Some(8), Role::Label, "Inside"), 10, 150, 60, 18),
            pi,
            at(node(11, Some(10), Role::Label, "π"), 310, 0, 20, 24),
        ]);
        tree.window.content = Rect::new(0, 0, 400, 400);
        as_seen(&mut tree, &[]);
        let fallback = |id| {
            let f = tree.node(id).unwrap().label_fallback.clone().unwrap();
            (f.source, f.text)
        };
        assert_eq!(fallback(3), (LabelSource::Content, "43.0.1".into()));
        assert_eq!(fallback(6), (LabelSource::Content, "Expander".into()));
        assert_eq!(
            fallback(10),
            (LabelSource::Description, "Pi [Ctrl+P]".into())
        );
    }

    #[test]
    fn a_rows_label_names_its_switch_and_values_name_nothing() {
        let mut prev = at(node(6, Some(1), Role::Button, ""), 0, 100, 24, 24);
        prev.children = vec![];
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Factory"), 0, 0, 400, 400),
            at(node(2, Some(1), Role::List, ""), 0, 0, 240, 40),
            at(node(3, Some(2), Role::ListItem, ""), 0, 0, 240, 34),
            at(node(4, Some(3), Role::Label, "Row 1"), 8, 8, 40, 18),
            at(node(5, Some(3), Role::Switch, ""), 190, 5, 48, 24),
            // A calendar's month between its arrows; a time left of a slider.
            prev,
            at(node(7, Some(1), Role::Label, "December"), 29, 100, 70, 24),
            at(node(8, Some(1), Role::Button, ""), 104, 100, 24, 24),
            at(node(9, Some(1), Role::Label, "0:00"), 0, 200, 30, 18),
            at(node(10, Some(1), Role::Slider, ""), 40, 204, 100, 10),
        ]);
        tree.window.content = Rect::new(0, 0, 400, 400);
        as_seen(&mut tree, &[]);
        let fallback = |id| tree.node(id).unwrap().label_fallback.clone();
        assert_eq!(fallback(5).unwrap().text, "Row 1");
        assert_eq!(fallback(8), None, "the month is the arrows' value");
        assert_eq!(fallback(10), None, "a time is a value");
    }

    #[test]
    fn rich_text_names_read_as_a_person_reads_them() {
        assert_eq!(plain_text("x<sup>2</sup>").as_deref(), Some("x²"));
        assert_eq!(plain_text("x<sup>y</sup>").as_deref(), Some("xʸ"));
        assert_eq!(
            plain_text("x<small>·10</small><sup>y</sup>").as_deref(),
            Some("x·10ʸ")
        );
        assert_eq!(plain_text("σ<sub>N</sub>").as_deref(), Some("σ_N"));
        assert_eq!(
            plain_text("<b>Bold</b> &amp; more").as_deref(),
            Some("Bold & more")
        );
        assert_eq!(plain_text("a < b"), None);
        assert_eq!(plain_text("<sup>unclosed"), None);
        assert_eq!(plain_text("<tag>x</tag>"), None);
    }

    #[test]
    fn what_lies_in_what_the_toolkit_hides_is_hidden() {
        let mut table = at(node(2, Some(1), Role::Table, ""), 0, 0, 100, 100);
        table.states.offscreen = true;
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Factory"), 0, 0, 400, 400),
            table,
            at(node(3, Some(2), Role::Cell, "Andrea"), 10, 10, 40, 20),
            at(node(4, Some(1), Role::Cell, "Otto"), 10, 40, 40, 20),
        ]);
        tree.window.content = Rect::new(0, 0, 400, 400);
        as_seen(&mut tree, &[]);
        assert!(tree.node(3).unwrap().states.offscreen);
        assert!(!tree.node(4).unwrap().states.offscreen);
    }

    #[test]
    fn a_table_row_is_read_by_its_first_cell() {
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Settings"), 0, 0, 400, 400),
            at(node(2, Some(1), Role::Table, ""), 0, 0, 400, 100),
            at(node(3, Some(2), Role::Row, ""), 0, 0, 400, 20),
            at(node(4, Some(3), Role::Cell, ""), 0, 0, 100, 20),
            at(
                node(5, Some(4), Role::Label, "restore-session"),
                0,
                0,
                100,
                20,
            ),
            at(node(6, Some(3), Role::Cell, ""), 100, 0, 100, 20),
            at(node(7, Some(6), Role::Label, "true"), 100, 0, 40, 20),
            at(node(8, Some(3), Role::Cell, ""), 200, 0, 100, 20),
            at(node(9, Some(8), Role::Label, "b"), 200, 0, 20, 20),
            at(node(10, Some(3), Role::Cell, ""), 300, 0, 100, 20),
            at(node(11, Some(10), Role::Label, "true"), 300, 0, 40, 20),
        ]);
        tree.window.content = Rect::new(0, 0, 400, 400);
        tree.nodes[2].states.focusable = true;
        as_seen(&mut tree, &[]);
        let f = tree.node(3).unwrap().label_fallback.clone().unwrap();
        assert_eq!(
            (f.source, f.text.as_str()),
            (LabelSource::Content, "restore-session")
        );
    }

    #[test]
    fn a_drop_down_is_named_by_its_label_and_shows_its_item_as_value() {
        let mut tree = tree_of(vec![
            at(node(1, None, Role::Window, "Save As"), 0, 0, 400, 400),
            at(
                node(2, Some(1), Role::Label, "Character Encoding:"),
                0,
                10,
                130,
                20,
            ),
            at(node(3, Some(1), Role::PopUpButton, ""), 140, 5, 200, 30),
            at(node(4, Some(3), Role::Label, "(None)"), 150, 10, 60, 20),
            at(
                node(5, Some(3), Role::Label, "Automatically Detected"),
                150,
                10,
                160,
                20,
            ),
            at(node(6, Some(1), Role::PopUpButton, ""), 140, 100, 200, 30),
            at(node(7, Some(6), Role::Label, "Small"), 150, 105, 60, 20),
        ]);
        tree.window.content = Rect::new(0, 0, 400, 400);
        // A placeholder on a hidden page is not what it shows.
        tree.nodes[3].states.offscreen = true;
        as_seen(&mut tree, &[]);
        let n = tree.node(3).unwrap();
        let f = n.label_fallback.clone().unwrap();
        assert_eq!(
            (f.source, f.text.as_str()),
            (LabelSource::Beside, "Character Encoding")
        );
        assert_eq!(n.value.as_deref(), Some("Automatically Detected"));
        let alone = tree.node(6).unwrap();
        let f = alone.label_fallback.clone().unwrap();
        assert_eq!((f.source, f.text.as_str()), (LabelSource::Content, "Small"));
        assert_eq!(alone.value, None);
    }
}
