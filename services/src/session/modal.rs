//! A window a modal window of its app blocks: its toolkit drops the input
//! it gets (GTK), so an action there would do nothing; it is refused instead.

use std::time::Duration;

use wayrig_host::{WindowHandle, WindowInfo};

use super::tree::pick_frame;
use super::windows::{is_top_level, top_level_of};
use super::Session;
use crate::access::{FrameHead, Read};
use crate::model::Error;

impl Session {
    /// Refuse to act on `window` while another top-level window of its app
    /// that its toolkit marks modal is open, unless that one is a parent of
    /// `window` (a modal dialog's own dialog takes input). The refusal names
    /// the modal window. Costs nothing for an app with one top-level window.
    pub(crate) async fn refuse_if_blocked(&self, window: WindowHandle) -> Result<(), Error> {
        let windows = self.windows();
        let top = top_level_of(window, &windows);
        let Some(pid) = windows.iter().find(|w| w.handle == top).and_then(|w| w.pid) else {
            return Ok(());
        };
        let mut siblings: Vec<&WindowInfo> = windows
            .iter()
            .filter(|w| w.pid == Some(pid) && is_top_level(w))
            .collect();
        siblings.sort_by_key(|w| w.handle.id);
        let above = parents_of(top, &windows);
        let others: Vec<&WindowInfo> = siblings
            .iter()
            .copied()
            .filter(|w| w.handle != top && !above.contains(&w.handle))
            .collect();
        if others.is_empty() {
            return Ok(());
        }
        let Ok(a11y) = self.a11y() else {
            return Ok(());
        };
        // Not waited for: an app not on the accessibility bus now (or
        // never, with accessibility off) marks no window modal, and its
        // every act would wait.
        let Ok(apps) = a11y.wait_for_app(pid, Duration::ZERO).await else {
            return Ok(());
        };
        let mut heads: Vec<(usize, FrameHead)> = Vec::new();
        for (i, app) in apps.iter().enumerate() {
            let items = a11y.read_items(app, Read::Bulk).await?;
            heads.extend(items.frames.into_iter().map(|head| (i, head)));
        }
        let modal = others
            .into_iter()
            .find(|w| pick_frame(heads.clone(), w, &siblings).is_some_and(|(_, head)| head.modal));
        match modal {
            Some(m) => Err(Error::InvalidRequest(format!(
                "window {window} takes no input while window {} {:?}, a modal window of its \
                 app, is open: act there, or close it first",
                m.handle, m.title
            ))),
            None => Ok(()),
        }
    }
}

/// The windows `window` is transient for, its parent first, then theirs.
fn parents_of(window: WindowHandle, windows: &[WindowInfo]) -> Vec<WindowHandle> {
    let mut found: Vec<WindowHandle> = Vec::new();
    let mut at = window;
    while let Some(parent) = windows
        .iter()
        .find(|w| w.handle == at)
        .and_then(|w| w.parent)
    {
        // A loop in a broken list is walked once.
        if found.contains(&parent) {
            break;
        }
        found.push(parent);
        at = parent;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::windows::tests::window;
    use wayrig_host::WindowKind;

    #[test]
    fn a_window_is_above_the_windows_it_is_transient_for() {
        let hangs = |mut w: WindowInfo, parent: u64| {
            w.parent = Some(WindowHandle {
                id: parent,
                epoch: 1,
            });
            w
        };
        let list = vec![
            window(1, "Main", WindowKind::Normal, 2),
            hangs(window(2, "Prefs", WindowKind::Dialog, 1), 1),
            hangs(window(3, "Pick a file", WindowKind::Dialog, 0), 2),
        ];
        let ids = |id: u64| -> Vec<u64> {
            parents_of(WindowHandle { id, epoch: 1 }, &list)
                .iter()
                .map(|h| h.id)
                .collect()
        };
        assert_eq!(ids(3), [2, 1]);
        assert_eq!(ids(1), Vec::<u64>::new());
    }
}
