//! Where a toplevel's pixels changed, change by change: the rectangles each
//! commit damaged, remembered for a while so a reader can ask what changed since.

use std::collections::VecDeque;

use wayrig_host::{Damage, Rect};

/// How many changes are remembered; a reader asking about older ones is
/// told anything may have changed.
const REMEMBERED: usize = 1024;

/// The damage of a toplevel's latest changes, each numbered by the change
/// count it made (the window's `shown_changes`).
#[derive(Debug, Default)]
pub struct DamageLog {
    /// (change count, its rectangles; `None` when it could be anywhere).
    changes: VecDeque<(u64, Option<Vec<Rect>>)>,
    /// The rectangles of the commit being handled, until its change is counted.
    pending: Option<Vec<Rect>>,
    /// The content's place in the surface and the buffer scale at the last
    /// commit: when they change, every element may have moved.
    layout: Option<(Rect, i32)>,
    /// The last change that could have moved anything (a new layout, a
    /// popup's or subsurface's commit); remembered however old.
    moved_all_at: u64,
}

impl DamageLog {
    /// The toplevel's own surface committed, damaging `rects` with its
    /// content at `content` (in surface coordinates) drawn at `scale`;
    /// `None` when the damage cannot be placed.
    pub fn committed(&mut self, rects: Option<Vec<Rect>>, content: Rect, scale: i32) {
        let same_layout = self.layout.replace((content, scale)) == Some((content, scale));
        self.pending = rects.filter(|_| same_layout);
    }

    /// Change number `change` was counted: it damaged what the commit before
    /// it said, or anything when no commit of the toplevel's own surface did.
    pub fn counted(&mut self, change: u64) {
        let damaged = self.pending.take();
        if damaged.is_none() {
            self.moved_all_at = change;
        }
        self.changes.push_back((change, damaged));
        if self.changes.len() > REMEMBERED {
            self.changes.pop_front();
        }
    }

    /// Rectangles of the buffer (in pixels) in the content's coordinates
    /// (points), rounded outwards; `None` before the first commit.
    pub fn in_content(&self, pixels: &[Rect]) -> Option<Vec<Rect>> {
        let (content, scale) = self.layout?;
        let placed = pixels.iter().map(|r| {
            let (x, y) = (r.x.div_euclid(scale), r.y.div_euclid(scale));
            let right = (r.x + r.width + scale - 1).div_euclid(scale);
            let bottom = (r.y + r.height + scale - 1).div_euclid(scale);
            Rect::new(x - content.x, y - content.y, right - x, bottom - y)
        });
        Some(placed.collect())
    }

    /// Where the pixels may have changed after change number `since`, up to
    /// `now`. Where the changes are no longer remembered but none of them
    /// moved everything, that is anywhere in the content, still laid out
    /// as it was.
    pub fn since(&self, since: u64, now: u64) -> Damage {
        if since == now {
            return Damage::Within(Vec::new());
        }
        if self.moved_all_at > since || since > now {
            return Damage::Anywhere;
        }
        // Each change from since + 1 to now must be remembered.
        match (self.changes.front(), self.layout) {
            (Some((first, _)), _) if *first <= since + 1 => {}
            (_, Some((content, _))) => {
                return Damage::Within(vec![Rect::new(0, 0, content.width, content.height)])
            }
            _ => return Damage::Anywhere,
        }
        let mut rects = Vec::new();
        for (_, damaged) in self.changes.iter().filter(|(n, _)| *n > since) {
            match damaged {
                Some(r) => rects.extend_from_slice(r),
                None => return Damage::Anywhere,
            }
        }
        Damage::Within(rects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(log: &mut DamageLog, n: u64, rects: Option<Vec<Rect>>, content: Rect) {
        log.committed(rects, content, 1);
        log.counted(n);
    }

    #[test]
    fn damage_since_a_change_is_the_union_of_later_commits() {
        let content = Rect::new(0, 0, 800, 600);
        let mut log = DamageLog::default();
        let (a, b) = (Rect::new(1, 2, 3, 4), Rect::new(10, 20, 30, 40));
        commit(&mut log, 1, Some(vec![]), content);
        commit(&mut log, 2, Some(vec![a]), content);
        commit(&mut log, 3, Some(vec![b]), content);
        assert_eq!(log.since(3, 3), Damage::Within(vec![]));
        assert_eq!(log.since(2, 3), Damage::Within(vec![b]));
        assert_eq!(log.since(1, 3), Damage::Within(vec![a, b]));
        // The very first commit laid the window out: anything changed then.
        assert_eq!(log.since(0, 3), Damage::Anywhere);
    }

    #[test]
    fn a_resize_a_popup_or_forgotten_changes_mean_anywhere() {
        let mut log = DamageLog::default();
        let small = Rect::new(0, 0, 800, 600);
        commit(&mut log, 1, Some(vec![]), small);
        commit(&mut log, 2, Some(vec![]), small);
        commit(&mut log, 3, Some(vec![]), Rect::new(0, 0, 900, 600));
        assert_eq!(log.since(2, 3), Damage::Anywhere, "resized");
        commit(&mut log, 4, Some(vec![]), Rect::new(0, 0, 900, 600));
        assert_eq!(log.since(3, 4), Damage::Within(vec![]));
        // A change that was no commit of its own surface (a popup's).
        log.counted(5);
        assert_eq!(log.since(4, 5), Damage::Anywhere);
        for n in 6..6 + REMEMBERED as u64 {
            commit(&mut log, n, Some(vec![]), Rect::new(0, 0, 900, 600));
        }
        let now = 5 + REMEMBERED as u64;
        assert_eq!(log.since(now - 1, now), Damage::Within(vec![]));
        assert_eq!(log.since(4, now), Damage::Anywhere, "the popup's change");
    }

    #[test]
    fn forgotten_changes_damage_the_whole_content_but_move_nothing() {
        let mut log = DamageLog::default();
        let content = Rect::new(10, 20, 800, 600);
        for n in 1..=REMEMBERED as u64 + 10 {
            commit(&mut log, n, Some(vec![Rect::new(0, 0, 5, 5)]), content);
        }
        let now = REMEMBERED as u64 + 10;
        assert_eq!(
            log.since(2, now),
            Damage::Within(vec![Rect::new(0, 0, 800, 600)]),
            "forgotten, but nothing was laid out again"
        );
        assert_eq!(log.since(0, now), Damage::Anywhere, "the first layout");
    }
}
