//! The window registry: the compositor's authority on which windows exist, their
//! stable handles (id + epoch), their stacking order and what was last announced.
//!
//! Pure bookkeeping, generic over the surface payload so it is tested without a
//! Wayland connection; `rig/windows.rs` fills in geometry and focus from Smithay.

use wayrig_host::{Rect, WindowEvent, WindowHandle, WindowInfo};

/// One window the registry tracks, mapped or not yet.
#[derive(Debug)]
pub struct Record<T> {
    pub id: u64,
    pub epoch: u32,
    pub surface: T,
    /// The client has a buffer on the surface (xdg: after its first commit with one).
    pub mapped: bool,
    /// The compositor's own minimized state.
    pub minimized: bool,
    /// Global position of the content's top-left corner (logical points).
    pub location: (i32, i32),
    /// Was ever mapped: a later map starts a new epoch.
    ever_mapped: bool,
    /// What the event stream last said about this window.
    announced: Option<WindowInfo>,
}

impl<T> Record<T> {
    pub fn handle(&self) -> WindowHandle {
        WindowHandle {
            id: self.id,
            epoch: self.epoch,
        }
    }

    /// Announced and not closed since: the window a client may address.
    pub fn is_live(&self) -> bool {
        self.announced.is_some()
    }

    /// What the event stream last said of this window, while it is live.
    pub fn announced(&self) -> Option<&WindowInfo> {
        self.announced.as_ref()
    }
}

/// Windows in stacking order, front-most first.
#[derive(Debug)]
pub struct Registry<T> {
    records: Vec<Record<T>>,
    next_id: u64,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            records: Vec::new(),
            next_id: 1,
        }
    }
}

/// Why a handle does not name a live window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Unknown,
    /// The id is known but lives in another epoch now.
    Stale {
        current: u32,
    },
}

impl<T> Registry<T> {
    /// Track a new surface; it stays out of every listing until mapped.
    /// New windows go to the front.
    pub fn insert(&mut self, surface: T) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.records.insert(
            0,
            Record {
                id,
                epoch: 0,
                surface,
                mapped: false,
                minimized: false,
                location: (0, 0),
                ever_mapped: false,
                announced: None,
            },
        );
        id
    }

    pub fn iter(&self) -> impl Iterator<Item = &Record<T>> {
        self.records.iter()
    }

    pub fn get(&self, id: u64) -> Option<&Record<T>> {
        self.records.iter().find(|r| r.id == id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut Record<T>> {
        self.records.iter_mut().find(|r| r.id == id)
    }

    pub fn find(&self, pred: impl Fn(&T) -> bool) -> Option<&Record<T>> {
        self.records.iter().find(|r| pred(&r.surface))
    }

    /// The live record a handle names, or why there is none.
    pub fn resolve(&self, handle: WindowHandle) -> Result<&Record<T>, Lookup> {
        match self.get(handle.id) {
            Some(r) if r.is_live() && r.epoch == handle.epoch => Ok(r),
            Some(r) if r.is_live() => Err(Lookup::Stale { current: r.epoch }),
            _ => Err(Lookup::Unknown),
        }
    }

    /// Mark mapped; a surface mapped again after an unmap starts a new epoch.
    pub fn set_mapped(&mut self, id: u64, mapped: bool) {
        if let Some(r) = self.get_mut(id) {
            if mapped && !r.mapped {
                r.epoch = if r.ever_mapped { r.epoch + 1 } else { 1 };
                r.ever_mapped = true;
            }
            r.mapped = mapped;
        }
    }

    /// Move a window to the front of the stack.
    pub fn raise(&mut self, id: u64) {
        if let Some(pos) = self.records.iter().position(|r| r.id == id) {
            let rec = self.records.remove(pos);
            self.records.insert(0, rec);
        }
    }

    /// Move a window to the back of the stack.
    pub fn lower(&mut self, id: u64) {
        if let Some(pos) = self.records.iter().position(|r| r.id == id) {
            let rec = self.records.remove(pos);
            self.records.push(rec);
        }
    }

    /// Forget a destroyed surface; its closing is announced by the next `diff`.
    pub fn remove(&mut self, id: u64) -> Option<Record<T>> {
        let pos = self.records.iter().position(|r| r.id == id)?;
        Some(self.records.remove(pos))
    }

    /// Compare what each window is now (`current`, `None` for an unmapped one)
    /// with what was last announced, record it, and return the events.
    pub fn diff(
        &mut self,
        mut current: impl FnMut(&Record<T>) -> Option<WindowInfo>,
    ) -> Vec<WindowEvent> {
        let mut events = Vec::new();
        for rec in self.records.iter_mut() {
            let now = if rec.mapped { current(rec) } else { None };
            match (&rec.announced, now) {
                (None, Some(info)) => {
                    events.push(WindowEvent::Created(info.clone()));
                    rec.announced = Some(info);
                }
                (Some(old), Some(info)) => {
                    if old.handle != info.handle {
                        events.push(WindowEvent::Closed(old.handle));
                        events.push(WindowEvent::Created(info.clone()));
                    } else if *old != info {
                        events.push(WindowEvent::Updated(info.clone()));
                    }
                    rec.announced = Some(info);
                }
                (Some(old), None) => {
                    events.push(WindowEvent::Closed(old.handle));
                    rec.announced = None;
                }
                (None, None) => {}
            }
        }
        events
    }

    /// Announce the closing of a record that is being removed.
    pub fn closing_event(rec: &Record<T>) -> Option<WindowEvent> {
        rec.announced
            .as_ref()
            .map(|info| WindowEvent::Closed(info.handle))
    }

    /// What was last announced, front to back.
    pub fn announced(&self) -> Vec<WindowInfo> {
        self.records
            .iter()
            .filter_map(|r| r.announced.clone())
            .collect()
    }
}

/// For windows front to back (`None` for one not shown at all), whether any part
/// of each remains visible on the output once the windows in front are drawn.
pub fn visibility(front_to_back: &[Option<Rect>], output: Rect) -> Vec<bool> {
    let mut covering: Vec<Rect> = Vec::new();
    front_to_back
        .iter()
        .map(|rect| {
            let Some(rect) = rect else { return false };
            let mut remaining: Vec<Rect> = intersection(rect, &output).into_iter().collect();
            for cover in &covering {
                if remaining.is_empty() {
                    break;
                }
                remaining = remaining.iter().flat_map(|r| r.subtract(cover)).collect();
            }
            covering.push(*rect);
            !remaining.is_empty()
        })
        .collect()
}

fn intersection(a: &Rect, b: &Rect) -> Option<Rect> {
    let x1 = a.x.max(b.x);
    let y1 = a.y.max(b.y);
    let x2 = a.x.saturating_add(a.width).min(b.x.saturating_add(b.width));
    let y2 =
        a.y.saturating_add(a.height)
            .min(b.y.saturating_add(b.height));
    (x2 > x1 && y2 > y1).then(|| Rect::new(x1, y1, x2 - x1, y2 - y1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wayrig_host::WindowKind;

    fn info(rec: &Record<&'static str>) -> Option<WindowInfo> {
        Some(WindowInfo {
            handle: rec.handle(),
            title: rec.surface.to_string(),
            app_id: String::new(),
            pid: None,
            kind: WindowKind::Normal,
            parent: None,
            frame: Rect::default(),
            surface: Rect::default(),
            content: Rect::new(rec.location.0, rec.location.1, 10, 10),
            maximized: false,
            fullscreen: false,
            configuring: false,
            minimized: rec.minimized,
            focused: false,
            on_screen: true,
            z: 0,
            scale: 1.0,
        })
    }

    #[test]
    fn unmapped_windows_are_not_announced() {
        let mut reg = Registry::default();
        reg.insert("a");
        assert!(reg.diff(info).is_empty());
        assert!(reg.announced().is_empty());
    }

    #[test]
    fn map_update_unmap_remap_changes_epoch() {
        let mut reg = Registry::default();
        let id = reg.insert("a");
        reg.set_mapped(id, true);
        let ev = reg.diff(info);
        assert!(
            matches!(&ev[..], [WindowEvent::Created(i)] if i.handle == WindowHandle { id, epoch: 1 })
        );
        assert!(reg.diff(info).is_empty(), "nothing changed, nothing said");

        reg.get_mut(id).unwrap().location = (5, 5);
        let ev = reg.diff(info);
        assert!(matches!(&ev[..], [WindowEvent::Updated(i)] if i.content.x == 5));

        reg.set_mapped(id, false);
        let ev = reg.diff(info);
        assert_eq!(ev, vec![WindowEvent::Closed(WindowHandle { id, epoch: 1 })]);
        assert_eq!(
            reg.resolve(WindowHandle { id, epoch: 1 }).unwrap_err(),
            Lookup::Unknown
        );

        reg.set_mapped(id, true);
        let ev = reg.diff(info);
        assert!(
            matches!(&ev[..], [WindowEvent::Created(i)] if i.handle == WindowHandle { id, epoch: 2 })
        );
        assert_eq!(
            reg.resolve(WindowHandle { id, epoch: 1 }).unwrap_err(),
            Lookup::Stale { current: 2 }
        );
        assert!(reg.resolve(WindowHandle { id, epoch: 2 }).is_ok());
    }

    #[test]
    fn remap_within_one_diff_closes_then_creates() {
        let mut reg = Registry::default();
        let id = reg.insert("a");
        reg.set_mapped(id, true);
        reg.diff(info);
        reg.set_mapped(id, false);
        reg.set_mapped(id, true);
        let ev = reg.diff(info);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0], WindowEvent::Closed(WindowHandle { id, epoch: 1 }));
        assert!(matches!(&ev[1], WindowEvent::Created(i) if i.handle.epoch == 2));
    }

    #[test]
    fn ids_are_never_reused_and_new_windows_are_in_front() {
        let mut reg = Registry::default();
        let a = reg.insert("a");
        let b = reg.insert("b");
        assert_ne!(a, b);
        assert_eq!(reg.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
        reg.raise(a);
        assert_eq!(reg.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b]);
        reg.remove(a);
        let c = reg.insert("c");
        assert!(c > b);
    }

    #[test]
    fn removed_window_announces_close() {
        let mut reg = Registry::default();
        let id = reg.insert("a");
        reg.set_mapped(id, true);
        reg.diff(info);
        let rec = reg.remove(id).unwrap();
        assert_eq!(
            Registry::closing_event(&rec),
            Some(WindowEvent::Closed(WindowHandle { id, epoch: 1 }))
        );
        assert!(reg.announced().is_empty());
    }

    #[test]
    fn covered_and_offscreen_windows_are_not_visible() {
        let out = Rect::new(0, 0, 100, 100);
        let v = visibility(
            &[
                Some(Rect::new(0, 0, 50, 50)),     // front
                Some(Rect::new(10, 10, 20, 20)),   // fully under the front one
                Some(Rect::new(40, 40, 30, 30)),   // partly covered
                None,                              // minimized
                Some(Rect::new(200, 200, 10, 10)), // off the output
            ],
            out,
        );
        assert_eq!(v, vec![true, false, true, false, false]);
    }

    #[test]
    fn two_windows_together_cover_a_third() {
        let out = Rect::new(0, 0, 100, 100);
        let v = visibility(
            &[
                Some(Rect::new(0, 0, 50, 100)),
                Some(Rect::new(50, 0, 50, 100)),
                Some(Rect::new(25, 25, 50, 50)),
            ],
            out,
        );
        assert_eq!(v, vec![true, true, false]);
    }
}
