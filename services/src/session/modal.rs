//! A window a modal window of its app blocks: its toolkit drops the input
//! it gets (GTK), so an action there would do nothing; it is refused instead.

use std::time::Duration;

use wayrig_host::{WindowHandle, WindowInfo};

use super::tree::{frame_heads, pick_frame};
use super::windows::{is_top_level, parents_of, top_level_of};
use super::Session;
use crate::access::Read;
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
        let mut items = Vec::new();
        for app in &apps {
            items.push(a11y.read_items(app, Read::Bulk).await?);
        }
        let heads = frame_heads(&items);
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
