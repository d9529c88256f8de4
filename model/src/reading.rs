//! Reading order: a tree's elements as a person reads them, each container's
//! children cut into bands top to bottom and each band into columns left to right.

use wayrig_host::Rect;

/// An element as reading order sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The index of its parent in the same list; none at the top.
    pub parent: Option<usize>,
    /// Where it shows; none for what does not show (offscreen, unsized).
    pub bounds: Option<Rect>,
}

/// The indices of `elements` (in pre-order, a parent before its children)
/// in reading order, each element followed by its subtree.
///
/// Toolkits list children in the order they were added or drawn (GTK 4 puts
/// a window's menu bar and header bar last, a tree view's column headers
/// right to left), and GTK 4 leaves out the boxes that lay a page out, so a
/// page's columns are siblings of one parent rather than subtrees. Cutting
/// along the gaps between siblings (an XY cut) keeps such columns whole
/// where sorting by position would read across them.
///
/// Siblings are cut apart along the gaps between them: into bands top to
/// bottom, each band into columns left to right, and again within each part;
/// siblings that no gap parts (an overlay's layers) keep the toolkit's
/// order. An element without bounds of its own reads where its content
/// shows; siblings that do not show at all follow those that do, in the
/// toolkit's order.
pub fn reading_order(elements: &[Placement]) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); elements.len()];
    let mut tops = Vec::new();
    for (i, e) in elements.iter().enumerate() {
        // A parent listed after its child is no parent: pre-order, or the top.
        match e.parent.filter(|p| *p < i) {
            Some(p) => children[p].push(i),
            None => tops.push(i),
        }
    }
    // Children come after their parent: walking back, a child is done first.
    let mut extents: Vec<Option<Extent>> = vec![None; elements.len()];
    for i in (0..elements.len()).rev() {
        extents[i] = elements[i]
            .bounds
            .filter(|b| !b.is_empty())
            .map(Extent::of)
            .or_else(|| {
                children[i]
                    .iter()
                    .filter_map(|c| extents[*c])
                    .reduce(Extent::union)
            });
    }
    let mut order = Vec::with_capacity(elements.len());
    let mut stack: Vec<usize> = siblings_in_order(&tops, &extents);
    stack.reverse();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(siblings_in_order(&children[i], &extents).into_iter().rev());
    }
    order
}

/// A rectangle by its edges: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extent {
    left: i32,
    top: i32,
    right: i32,
    bottom: i32,
}

impl Extent {
    fn of(r: Rect) -> Extent {
        Extent {
            left: r.x,
            top: r.y,
            right: r.x + r.width,
            bottom: r.y + r.height,
        }
    }

    fn union(self, other: Extent) -> Extent {
        Extent {
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }

    /// Its span across `axis`: top to bottom, or left to right.
    fn span(&self, axis: Axis) -> (i32, i32) {
        match axis {
            Axis::Down => (self.top, self.bottom),
            Axis::Across => (self.left, self.right),
        }
    }
}

/// Which way siblings are cut apart: into bands one below another, or
/// into columns side by side.
#[derive(Debug, Clone, Copy)]
enum Axis {
    Down,
    Across,
}

/// A sibling that shows: its index, and where it and its subtree show.
type Shown = (usize, Extent);

/// Siblings in reading order: those that show cut apart, then the rest.
fn siblings_in_order(siblings: &[usize], extents: &[Option<Extent>]) -> Vec<usize> {
    let (shown, unshown): (Vec<usize>, Vec<usize>) =
        siblings.iter().partition(|i| extents[**i].is_some());
    let shown: Vec<Shown> = shown
        .into_iter()
        .filter_map(|i| Some((i, extents[i]?)))
        .collect();
    let mut order = Vec::with_capacity(siblings.len());
    cut(shown, &mut order);
    order.extend(unshown);
    order
}

/// Cut `shown` (in the toolkit's order) into bands, else columns, and
/// each of those again; what no gap parts stays in the toolkit's order.
fn cut(shown: Vec<Shown>, order: &mut Vec<usize>) {
    if shown.len() > 1 {
        for axis in [Axis::Down, Axis::Across] {
            let parts = parts_along(&shown, axis);
            if parts.len() > 1 {
                for part in parts {
                    cut(part, order);
                }
                return;
            }
        }
    }
    order.extend(shown.into_iter().map(|(i, _)| i));
}

/// Siblings no gap along an axis parts, and the span they cover along it.
struct Part {
    from: i32,
    to: i32,
    members: Vec<Shown>,
}

/// The groups of `shown` that gaps along `axis` part, in the order they
/// come along it, each in the toolkit's order. Neighbours that overlap by
/// a quarter of the smaller one or less (a border, a focus ring, a row
/// set a little lower) are parted still.
fn parts_along(shown: &[Shown], axis: Axis) -> Vec<Vec<Shown>> {
    let mut by_start = shown.to_vec();
    by_start.sort_by_key(|(_, e)| e.span(axis));
    let mut parts: Vec<Part> = Vec::new();
    for (i, e) in by_start {
        let (start, end) = e.span(axis);
        match parts.last_mut() {
            Some(part) if overlap_much(part.from, part.to, start, end) => {
                part.to = part.to.max(end);
                part.members.push((i, e));
            }
            _ => parts.push(Part {
                from: start,
                to: end,
                members: vec![(i, e)],
            }),
        }
    }
    parts
        .into_iter()
        .map(|mut part| {
            // Pre-order indices of siblings rise in the toolkit's order.
            part.members.sort_by_key(|(i, _)| *i);
            part.members
        })
        .collect()
}

/// Whether the span `start..end` overlaps `from..to` by more than a quarter
/// of the smaller of the two.
fn overlap_much(from: i32, to: i32, start: i32, end: i32) -> bool {
    let overlap = to.min(end) - from.max(start);
    let smaller = (to - from).min(end - start);
    overlap > 0 && overlap * 4 > smaller
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element that shows at x, y, of width by height.
    fn at(parent: Option<usize>, x: i32, y: i32, width: i32, height: i32) -> Placement {
        Placement {
            parent,
            bounds: Some(Rect::new(x, y, width, height)),
        }
    }

    /// An element that does not show.
    fn nowhere(parent: Option<usize>) -> Placement {
        Placement {
            parent,
            bounds: None,
        }
    }

    #[test]
    fn a_label_left_of_its_field_reads_before_it() {
        // A form whose fields the toolkit lists before their labels.
        let form = vec![
            at(None, 0, 0, 400, 100),
            at(Some(0), 100, 10, 200, 32), // Name field
            at(Some(0), 10, 16, 60, 20),   // "Name"
            at(Some(0), 100, 50, 200, 32), // Address field
            at(Some(0), 10, 56, 80, 20),   // "Address"
        ];
        assert_eq!(reading_order(&form), [0, 2, 1, 4, 3]);
    }

    #[test]
    fn columns_read_whole_as_subtrees_and_as_siblings() {
        // Two columns, each a subtree of three rows.
        let subtrees = vec![
            at(None, 0, 0, 400, 100),
            at(Some(0), 200, 0, 200, 100), // right column, listed first
            at(Some(1), 200, 0, 200, 20),
            at(Some(1), 200, 30, 200, 20),
            at(Some(0), 0, 0, 190, 100), // left column
            at(Some(4), 0, 0, 190, 20),
            at(Some(4), 0, 30, 190, 20),
        ];
        assert_eq!(reading_order(&subtrees), [0, 4, 5, 6, 1, 2, 3]);
        // GTK 4 leaves the boxes out: a header bar (listed last, drawn on
        // top), a column of short rows, and beside it a tall text view.
        // Sorted into rows, the text view would read between the entries.
        let flat = vec![
            at(None, 0, 0, 400, 300),
            at(Some(0), 0, 50, 190, 30),    // entry
            at(Some(0), 0, 90, 190, 30),    // entry
            at(Some(0), 0, 130, 190, 30),   // check box
            at(Some(0), 200, 50, 200, 250), // text view
            at(Some(0), 0, 0, 400, 40),     // header bar
        ];
        assert_eq!(reading_order(&flat), [0, 5, 1, 2, 3, 4]);
    }

    #[test]
    fn a_toolbar_reads_left_to_right() {
        // GTK lists a tree view's column headers right to left; a button a
        // pixel higher or lower is on the same row.
        let toolbar = vec![
            at(None, 0, 0, 300, 30),
            at(Some(0), 240, 2, 50, 24), // Nick
            at(Some(0), 160, 2, 60, 24), // Name
            at(Some(0), 80, 3, 60, 24),  // Icon
            at(Some(0), 0, 1, 60, 24),   // Cool
        ];
        assert_eq!(reading_order(&toolbar), [0, 4, 3, 2, 1]);
    }

    #[test]
    fn a_child_drawn_above_reads_first_with_its_subtree() {
        // GTK 4 lists a window's menu bar after its content.
        let window = vec![
            at(None, 0, 0, 500, 560),
            at(Some(0), 0, 27, 500, 32), // "First" field
            at(Some(0), 0, 67, 500, 32), // "Second" field
            at(Some(0), 0, 0, 500, 26),  // menu bar
            at(Some(3), 48, 4, 26, 18),  // Edit, listed first
            at(Some(3), 8, 4, 24, 18),   // File
        ];
        assert_eq!(reading_order(&window), [0, 3, 5, 4, 1, 2]);
    }

    #[test]
    fn what_does_not_show_follows_in_the_toolkits_order() {
        let window = vec![
            at(None, 0, 0, 300, 100),
            nowhere(Some(0)),            // a closed popover
            nowhere(Some(1)),            // its item
            at(Some(0), 0, 50, 100, 20), // a button below
            at(Some(0), 0, 0, 0, 0),     // an unsized (hidden) page
            nowhere(Some(0)),            // a box of no size of its own
            at(Some(5), 0, 10, 100, 20), // whose button is on top
        ];
        assert_eq!(reading_order(&window), [0, 5, 6, 3, 1, 2, 4]);
    }

    #[test]
    fn layers_no_gap_parts_keep_the_toolkits_order() {
        // A video's overlay: the picture, an icon on it, controls over its foot.
        let overlay = vec![
            at(None, 0, 0, 200, 64),
            at(Some(0), 0, 0, 200, 64),
            at(Some(0), 70, 0, 64, 64),
            at(Some(0), 0, 30, 200, 34),
        ];
        assert_eq!(reading_order(&overlay), [0, 1, 2, 3]);
        // A parent listed after its child (no pre-order) is no parent.
        let odd = vec![at(Some(1), 0, 50, 10, 10), at(None, 0, 0, 10, 10)];
        assert_eq!(reading_order(&odd), [1, 0]);
    }
}
