//! Joining the compositor's toplevels (titles, app ids, states) with sway's
//! views (rectangles, pids, focus) into the host's window list.

use wayrig_host::{Rect, WindowHandle, WindowInfo, WindowKind};

use crate::sway::SwayView;

/// A toplevel as the foreign-toplevel protocol told it, in plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct ToplevelFacts {
    pub id: u64,
    pub title: String,
    pub app_id: String,
    pub maximized: bool,
    pub minimized: bool,
    pub activated: bool,
    pub fullscreen: bool,
}

/// Whether a toplevel and a view may be the same window.
type Pairing = dyn Fn(&ToplevelFacts, &SwayView) -> bool;

/// A window and the sway container it was matched with.
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    pub info: WindowInfo,
    pub con_id: Option<i64>,
}

/// Match each toplevel (in announcement order) to a sway view: same app id and
/// title first, then the same app id alone (a title changing between the two
/// reports); views are taken in container order, oldest first.
pub fn join(toplevels: &[ToplevelFacts], views: &[SwayView], scale: f64) -> Vec<Joined> {
    let mut views: Vec<&SwayView> = views.iter().collect();
    views.sort_by_key(|v| v.con_id);
    let mut taken = vec![false; views.len()];
    let mut matched: Vec<Option<usize>> = vec![None; toplevels.len()];
    let passes: [&Pairing; 2] = [
        &|t, v| t.app_id == v.app_id && t.title == v.title,
        &|t, v| t.app_id == v.app_id,
    ];
    for same in passes {
        for (ti, toplevel) in toplevels.iter().enumerate() {
            if matched[ti].is_some() {
                continue;
            }
            if let Some(vi) = (0..views.len()).find(|&vi| !taken[vi] && same(toplevel, views[vi])) {
                taken[vi] = true;
                matched[ti] = Some(vi);
            }
        }
    }
    let mut joined: Vec<Joined> = toplevels
        .iter()
        .zip(matched)
        .map(|(t, vi)| {
            let view = vi.map(|i| views[i]);
            let content = view.map_or(Rect::default(), |v| v.content);
            let frame = view.map_or(Rect::default(), |v| v.frame);
            Joined {
                con_id: view.map(|v| v.con_id),
                info: WindowInfo {
                    handle: WindowHandle { id: t.id, epoch: 0 },
                    title: t.title.clone(),
                    app_id: t.app_id.clone(),
                    pid: view.and_then(|v| v.pid),
                    kind: WindowKind::Normal,
                    parent: None,
                    frame,
                    surface: content,
                    content,
                    maximized: t.maximized,
                    fullscreen: t.fullscreen || view.is_some_and(|v| v.fullscreen),
                    configuring: false,
                    minimized: t.minimized || view.is_some_and(|v| v.in_scratchpad),
                    focused: view.map_or(t.activated, |v| v.focused),
                    on_screen: view.map_or(!t.minimized, |v| v.visible),
                    z: 0,
                    scale,
                },
            }
        })
        .collect();
    // Front to back: the focused window, then those on screen, then the rest.
    joined.sort_by_key(|j| (!j.info.focused, !j.info.on_screen, j.info.handle.id));
    for (z, j) in joined.iter_mut().enumerate() {
        j.info.z = z as u32;
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toplevel(id: u64, app_id: &str, title: &str) -> ToplevelFacts {
        ToplevelFacts {
            id,
            title: title.into(),
            app_id: app_id.into(),
            maximized: false,
            minimized: false,
            activated: false,
            fullscreen: false,
        }
    }

    fn view(con_id: i64, app_id: &str, title: &str, focused: bool) -> SwayView {
        SwayView {
            con_id,
            app_id: app_id.into(),
            title: title.into(),
            pid: Some(100 + con_id as u32),
            frame: Rect::new(0, 0, 10, 10),
            content: Rect::new(con_id as i32, 0, 10, 10),
            focused,
            visible: true,
            fullscreen: false,
            in_scratchpad: false,
        }
    }

    #[test]
    fn same_titles_pair_in_order_and_the_focused_comes_first() {
        let toplevels = [
            toplevel(1, "foot", "foot"),
            toplevel(2, "foot", "foot"),
            toplevel(3, "org.gtk.WidgetFactory4", "Widget Factory"),
        ];
        let views = [
            view(7, "org.gtk.WidgetFactory4", "Widget Factory", true),
            view(5, "foot", "foot", false),
            view(6, "foot", "foot", false),
        ];
        let joined = join(&toplevels, &views, 1.0);
        let ids: Vec<(u64, Option<i64>)> = joined
            .iter()
            .map(|j| (j.info.handle.id, j.con_id))
            .collect();
        assert_eq!(ids, vec![(3, Some(7)), (1, Some(5)), (2, Some(6))]);
        assert_eq!(joined[0].info.pid, Some(107));
        assert_eq!(joined[0].info.z, 0);
        assert!(joined[0].info.focused);
    }

    #[test]
    fn a_title_changing_still_matches_by_app_id() {
        let joined = join(
            &[toplevel(1, "foot", "new title")],
            &[view(4, "foot", "old title", false)],
            1.0,
        );
        assert_eq!(joined[0].con_id, Some(4));
    }

    #[test]
    fn without_sway_geometry_and_pid_are_unknown() {
        let joined = join(&[toplevel(1, "foot", "foot")], &[], 1.0);
        assert_eq!(joined[0].info.pid, None);
        assert!(joined[0].info.content.is_empty());
    }
}
