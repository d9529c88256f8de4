//! Where an app's coordinates lie in its window's content: an offset for the
//! whole app, one for each frame the app measures from its own origin, and,
//! for a page an app measures in device pixels, a map onto the place the
//! app gives that page in points.
//!
//! Chromium at a fractional scale measures its browser's controls in points
//! but its pages in device pixels, from an origin of its own: a document's
//! places are scaled onto its container's, which Chromium measures in points.
//! Chromium's in-window dialogs (print preview) are frames inside the
//! window's frame, measured from their own corner: only the app's screen
//! places tell where they lie in the window.

use std::collections::{HashMap, HashSet};

use wayrig_host::Rect;

use super::seen::is_gtk3_popover;
use crate::model::{positions, Node};

/// How a document's size may differ from its container's before it is taken
/// for one measured in device pixels: more than any rounding.
const SCALED_AT_LEAST: f64 = 1.05;
/// How far a document's height may scale apart from its width: both scale
/// alike when the document is its container measured in device pixels.
const SAME_SCALE_SLACK: f64 = 0.05;

/// How an app's places map onto the window's content.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Placing {
    /// Added to every place the app gives (see `surface_offset`).
    offset: (i32, i32),
    pages: Vec<ScaledPage>,
    frames: Vec<InnerFrame>,
    /// Frames read in beside the window's because a popup of the window
    /// shows them (Chromium's context menu): what they hold lies on the
    /// popup, over the window.
    on_popups: HashSet<u64>,
}

/// A frame inside the window's frame that its app measures from its own
/// corner: its elements, and what to add to their places to have them
/// measured as the window's frame is.
#[derive(Debug, Clone, PartialEq)]
struct InnerFrame {
    elements: HashSet<u64>,
    shift: (i32, i32),
}

/// A document measured in device pixels: its elements, its place as the
/// app gives it, and its container's place, which it fills.
#[derive(Debug, Clone, PartialEq)]
struct ScaledPage {
    elements: HashSet<u64>,
    measured: Rect,
    shown: Rect,
}

impl ScaledPage {
    /// Device pixels per point, across and down.
    fn scale(&self) -> (f64, f64) {
        (
            f64::from(self.measured.width) / f64::from(self.shown.width),
            f64::from(self.measured.height) / f64::from(self.shown.height),
        )
    }
}

impl Placing {
    /// The frames inside the window's frame, with the frame itself first,
    /// whose screen places `of` needs; none when there are none.
    pub fn frames_to_ask(nodes: &[Node]) -> Vec<u64> {
        let inner: Vec<u64> = inner_frames(nodes).map(|n| n.id).collect();
        match nodes.first() {
            Some(root) if !inner.is_empty() => std::iter::once(root.id).chain(inner).collect(),
            _ => Vec::new(),
        }
    }

    /// The placing of a read whose app measures from `offset`:
    /// - frames inside the window's frame whose places (in `screen`, the
    ///   app's screen places of `frames_to_ask`) lie apart from the
    ///   window's frame otherwise than their window places do are measured
    ///   from their own corner, they and all they hold;
    /// - documents (`document web`) whose place is their container's
    ///   scaled alike both ways are measured in device pixels, they and all
    ///   they hold.
    pub fn of(nodes: &[Node], offset: (i32, i32), screen: &HashMap<u64, Rect>) -> Placing {
        let by_id: HashMap<u64, &Node> = nodes.iter().map(|n| (n.id, n)).collect();
        let pages = nodes
            .iter()
            .filter(|n| n.native_role == "document web")
            .filter_map(|page| {
                let measured = page.bounds?;
                let shown = by_id.get(&page.parent?)?.bounds?;
                let across = f64::from(measured.width) / f64::from(shown.width);
                let down = f64::from(measured.height) / f64::from(shown.height);
                (across >= SCALED_AT_LEAST && (across - down).abs() <= SAME_SCALE_SLACK).then(
                    || ScaledPage {
                        elements: held_by(page.id, &by_id),
                        measured,
                        shown,
                    },
                )
            })
            .collect();
        let root = nodes
            .first()
            .and_then(|r| Some((r.bounds?, *screen.get(&r.id)?)));
        let mut frames: Vec<InnerFrame> = inner_frames(nodes)
            .filter_map(|frame| {
                let ((root_window, root_screen), window, on_screen) =
                    (root?, frame.bounds?, screen.get(&frame.id)?);
                let shift = (
                    (on_screen.x - root_screen.x) - (window.x - root_window.x),
                    (on_screen.y - root_screen.y) - (window.y - root_window.y),
                );
                (shift != (0, 0)).then(|| InnerFrame {
                    elements: held_by(frame.id, &by_id),
                    shift,
                })
            })
            .collect();
        // The innermost frame holding an element is the one it is measured in.
        frames.sort_by_key(|f| f.elements.len());
        Placing {
            offset,
            pages,
            frames,
            on_popups: HashSet::new(),
        }
    }

    /// This placing, with `frames` read in as shown on popups.
    pub fn with_frames_on_popups(self, frames: HashSet<u64>) -> Placing {
        Placing {
            on_popups: frames,
            ..self
        }
    }

    /// Whether frame `id` was read in as shown on a popup of the window.
    pub fn on_a_popup(&self, id: u64) -> bool {
        self.on_popups.contains(&id)
    }

    /// What to add to element `id`'s place, once a page's scale is undone,
    /// to have it in the window's content.
    fn offset_of(&self, id: u64) -> (i32, i32) {
        let (dx, dy) = self
            .frames
            .iter()
            .find(|f| f.elements.contains(&id))
            .map_or((0, 0), |f| f.shift);
        (self.offset.0 + dx, self.offset.1 + dy)
    }

    fn page_of(&self, id: u64) -> Option<&ScaledPage> {
        self.pages.iter().find(|p| p.elements.contains(&id))
    }

    /// Where element `id`, placed at `place` by its app, lies in the
    /// window's content.
    pub fn to_window(&self, id: u64, place: Rect) -> Rect {
        let (dx, dy) = self.offset_of(id);
        let Some(page) = self.page_of(id) else {
            return Rect::new(place.x + dx, place.y + dy, place.width, place.height);
        };
        let (sx, sy) = page.scale();
        let x = f64::from(page.shown.x) + f64::from(place.x - page.measured.x) / sx;
        let y = f64::from(page.shown.y) + f64::from(place.y - page.measured.y) / sy;
        let right =
            f64::from(page.shown.x) + f64::from(place.x + place.width - page.measured.x) / sx;
        let bottom =
            f64::from(page.shown.y) + f64::from(place.y + place.height - page.measured.y) / sy;
        let (x0, y0) = (x.round() as i32, y.round() as i32);
        Rect::new(
            x0 + dx,
            y0 + dy,
            (right.round() as i32 - x0).max(1),
            (bottom.round() as i32 - y0).max(1),
        )
    }

    /// Where element `id`, lying at `placed` in the window's content, is
    /// placed by its app: `to_window` undone.
    pub fn to_app(&self, id: u64, placed: Rect) -> Rect {
        let (x, y) = self.point_to_app(id, f64::from(placed.x), f64::from(placed.y));
        if self.page_of(id).is_none() {
            return Rect::new(x, y, placed.width, placed.height);
        }
        let (right, bottom) = self.point_to_app(
            id,
            f64::from(placed.x + placed.width),
            f64::from(placed.y + placed.height),
        );
        Rect::new(x, y, (right - x).max(1), (bottom - y).max(1))
    }

    /// A point of the window's content, aimed at element `id`, as its app
    /// places it.
    pub fn point_to_app(&self, id: u64, x: f64, y: f64) -> (i32, i32) {
        let (dx, dy) = self.offset_of(id);
        let (x, y) = (x - f64::from(dx), y - f64::from(dy));
        let Some(page) = self.page_of(id) else {
            return (x.floor() as i32, y.floor() as i32);
        };
        let (sx, sy) = page.scale();
        (
            (f64::from(page.measured.x) + (x - f64::from(page.shown.x)) * sx).round() as i32,
            (f64::from(page.measured.y) + (y - f64::from(page.shown.y)) * sy).round() as i32,
        )
    }
}

/// The frames (`frame`) inside the window's frame, the first node, and
/// the frames read in beside it (alerts, popups' frames); and GTK 3's
/// popovers, a panel held by the button that opens it, drawn on a
/// subsurface of the window and measured from its corner.
fn inner_frames(nodes: &[Node]) -> impl Iterator<Item = &Node> {
    let index = positions(nodes);
    nodes.iter().skip(1).filter(move |n| {
        (matches!(n.native_role.as_str(), "frame" | "alert") && n.parent.is_some())
            || is_gtk3_popover(nodes, &index, n)
    })
}

/// `root` and every element it holds.
fn held_by(root: u64, by_id: &HashMap<u64, &Node>) -> HashSet<u64> {
    let mut held = HashSet::from([root]);
    let mut next = vec![root];
    while let Some(id) = next.pop() {
        for child in by_id.get(&id).map_or(&[][..], |n| &n.children[..]) {
            if held.insert(*child) {
                next.push(*child);
            }
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, parent: Option<u64>, children: Vec<u64>, role: &str, b: Rect) -> Node {
        let mut n =
            crate::session::elements::tests::node(id, parent, crate::model::Role::Group, "");
        n.children = children;
        n.native_role = role.into();
        n.bounds = Some(b);
        n
    }

    /// Chromium at 1.5, as measured here: its page's container at (16,
    /// 131) 1018x617 in points, the document at (29, 201) 1527x926, the
    /// page's heading at (41, 233) 1503x56.
    fn chromium_at_one_and_a_half() -> Vec<Node> {
        vec![
            node(1, None, vec![2], "frame", Rect::new(0, 0, 1050, 780)),
            node(
                2,
                Some(1),
                vec![3, 5],
                "panel",
                Rect::new(16, 131, 1018, 617),
            ),
            node(
                3,
                Some(2),
                vec![4],
                "document web",
                Rect::new(29, 201, 1527, 926),
            ),
            node(4, Some(3), vec![], "heading", Rect::new(41, 233, 1503, 56)),
            node(5, Some(2), vec![], "push button", Rect::new(94, 55, 34, 34)),
        ]
    }

    #[test]
    fn a_page_measured_in_device_pixels_is_placed_in_points_in_its_container() {
        let nodes = chromium_at_one_and_a_half();
        let placing = Placing::of(&nodes, (-16, -10), &HashMap::new());
        // The heading: 8 points in from the page's left (the body's
        // margin), 21 down (its own), 1002 points wide.
        let heading = placing.to_window(4, Rect::new(41, 233, 1503, 56));
        assert_eq!(heading, Rect::new(8, 142, 1002, 38));
        // The document fills its container.
        assert_eq!(
            placing.to_window(3, Rect::new(29, 201, 1527, 926)),
            Rect::new(0, 121, 1018, 617)
        );
        // The browser's own controls are in points already.
        assert_eq!(
            placing.to_window(5, Rect::new(94, 55, 34, 34)),
            Rect::new(78, 45, 34, 34)
        );
        // And back: a point aimed at the heading, and its place.
        assert_eq!(placing.point_to_app(4, 8.0, 142.0), (41, 233));
        let back = placing.to_app(4, heading);
        assert!(
            (back.x - 41).abs() <= 1 && (back.width - 1503).abs() <= 2,
            "{back:?}"
        );
        assert_eq!(
            placing.to_app(5, Rect::new(78, 45, 34, 34)),
            Rect::new(94, 55, 34, 34)
        );
    }

    #[test]
    fn a_page_measured_in_points_is_left_as_it_is() {
        // Firefox, and Chromium at scale 1: the document is its container.
        let mut nodes = chromium_at_one_and_a_half();
        nodes[2].bounds = Some(Rect::new(16, 131, 1018, 617));
        let placing = Placing::of(&nodes, (-16, -10), &HashMap::new());
        assert_eq!(
            placing.to_window(4, Rect::new(41, 233, 100, 20)),
            Rect::new(25, 223, 100, 20)
        );
        // A page scrolled wider than its container but no taller is not
        // scaled either: both ways must agree.
        nodes[2].bounds = Some(Rect::new(16, 131, 2036, 617));
        let placing = Placing::of(&nodes, (0, 0), &HashMap::new());
        assert_eq!(placing.pages.len(), 0);
    }

    /// Chromium's print preview, as measured here: a frame inside the
    /// window's frame, at (0, 0) 982x644 in window places, its Save button
    /// at (884, 575); on the app's screen the window's frame is at (10, 10)
    /// and the preview at (44, 98). Save shows at (902, 653) in the content.
    #[test]
    fn a_frame_measured_from_its_own_corner_is_placed_where_the_screen_says() {
        let nodes = vec![
            node(1, None, vec![2, 4], "frame", Rect::new(0, 0, 1050, 780)),
            node(2, Some(1), vec![3], "frame", Rect::new(0, 0, 982, 644)),
            node(
                3,
                Some(2),
                vec![],
                "push button",
                Rect::new(884, 575, 67, 36),
            ),
            node(4, Some(1), vec![], "push button", Rect::new(94, 55, 34, 34)),
        ];
        assert_eq!(Placing::frames_to_ask(&nodes), vec![1, 2]);
        let screen = HashMap::from([
            (1, Rect::new(10, 10, 1050, 780)),
            (2, Rect::new(44, 98, 982, 644)),
        ]);
        let placing = Placing::of(&nodes, (-16, -10), &screen);
        let save = placing.to_window(3, Rect::new(884, 575, 67, 36));
        assert_eq!(save, Rect::new(902, 653, 67, 36));
        assert_eq!(placing.point_to_app(3, 935.0, 670.0), (917, 592));
        assert_eq!(placing.to_app(3, save), Rect::new(884, 575, 67, 36));
        // The window's own controls are where they were.
        assert_eq!(
            placing.to_window(4, Rect::new(94, 55, 34, 34)),
            Rect::new(78, 45, 34, 34)
        );
        // Without a frame inside, nothing is asked; a frame whose window
        // place agrees with the screen (a toolkit measuring it from the
        // window's corner) is left as it is.
        assert!(Placing::frames_to_ask(&nodes[..1]).is_empty());
        let agreeing = HashMap::from([
            (1, Rect::new(10, 10, 1050, 780)),
            (2, Rect::new(10, 10, 982, 644)),
        ]);
        assert!(Placing::of(&nodes, (0, 0), &agreeing).frames.is_empty());
    }

    #[test]
    fn a_gtk3_popover_held_by_its_button_is_placed_where_the_screen_says() {
        // gtk3-widget-factory's primary menu: GTK 3 gives the popover (a
        // panel) its button as parent and measures it from its subsurface
        // in window coordinates; its screen place is the window's.
        let mut button = node(
            2,
            Some(1),
            vec![3],
            "toggle button",
            Rect::new(1298, 23, 36, 46),
        );
        button.role = crate::model::Role::ToggleButton;
        let nodes = vec![
            node(1, None, vec![2], "frame", Rect::new(0, 0, 1413, 792)),
            button,
            node(3, Some(2), vec![4], "panel", Rect::new(0, 0, 200, 213)),
            node(
                4,
                Some(3),
                vec![],
                "push button",
                Rect::new(25, 25, 150, 26),
            ),
        ];
        assert_eq!(Placing::frames_to_ask(&nodes), vec![1, 3]);
        let screen = HashMap::from([
            (1, Rect::new(0, 0, 1413, 792)),
            (3, Rect::new(1187, 69, 200, 213)),
        ]);
        let placing = Placing::of(&nodes, (-26, -23), &screen);
        let get_busy = placing.to_window(4, Rect::new(25, 25, 150, 26));
        assert_eq!(get_busy, Rect::new(1186, 71, 150, 26));
        assert_eq!(placing.point_to_app(4, 1261.0, 84.0), (100, 38));
        // A panel that is no button's (a box of the window) is not asked.
        let mut boxed = nodes.clone();
        boxed[2].parent = Some(1);
        assert_eq!(Placing::frames_to_ask(&boxed), Vec::<u64>::new());
    }
}
