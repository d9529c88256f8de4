//! The windows: the registry of toplevels and popups with what Smithay knows of
//! them, the space they are shown in, and their geometry, placement and announcements.

use std::collections::HashMap;

use smithay::backend::renderer::utils::with_renderer_surface_state;
use smithay::desktop::utils::bbox_from_surface_tree;
use smithay::desktop::{find_popup_root_surface, PopupKind, PopupManager, Space, Window};
use smithay::output::Output;
use smithay::reexports::wayland_protocols::xdg::decoration::zv1::server::zxdg_toplevel_decoration_v1::Mode as DecorationMode;
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::Resource;
use smithay::utils::{Logical, Point, Rectangle, Size};
use smithay::wayland::compositor::{
    get_parent, with_states, with_surface_tree_downward, SurfaceAttributes, TraversalAction,
};
use smithay::wayland::shell::xdg::{
    PopupSurface, ShellClient, ToplevelSurface, XdgToplevelSurfaceData,
};
use tokio::sync::broadcast;
use wayrig_host::{
    Damage, HostError, HostResult, Rect, WindowEvent, WindowHandle, WindowInfo, WindowKind,
};

use crate::config::{Config, Decorations};
use crate::registry::{self, Lookup, Registry};
use crate::rig::clients::Clients;
use crate::rig::damage::DamageLog;
use crate::rig::pixels::Tiles;
use crate::settle::Activity;

/// The surface behind a registry record.
#[derive(Debug, Clone)]
pub enum Surface {
    Toplevel(Window),
    Popup(Box<PopupKind>),
}

impl Surface {
    pub fn wl_surface(&self) -> WlSurface {
        match self {
            Surface::Toplevel(w) => w.toplevel().expect("wayland window").wl_surface().clone(),
            Surface::Popup(p) => p.wl_surface().clone(),
        }
    }

    /// The xdg_wm_base of the client this surface belongs to.
    pub fn shell_client(&self) -> Option<ShellClient> {
        match self {
            Surface::Toplevel(w) => w.toplevel().map(|t| t.client()),
            Surface::Popup(p) => match &**p {
                PopupKind::Xdg(x) => Some(x.client()),
                _ => None,
            },
        }
    }
}

/// Per-window state the registry does not know about: frames, settle, restore size.
#[derive(Debug)]
pub struct WindowData {
    pub surface: Surface,
    pub activity: Activity,
    /// Menus grab input; popups without a grab are tooltips.
    pub grabbed: bool,
    /// Content size to return to when leaving maximized or fullscreen.
    pub restore_size: Option<Size<i32, Logical>>,
    /// A configure to fit the output was sent for the current map.
    pub fitted: bool,
    /// Changes to what a toplevel shows: its commits, its popups' commits and
    /// its popups going away. Only ever goes up.
    pub shown_changes: u64,
    /// Where each of those changes damaged the toplevel.
    pub damage: DamageLog,
    /// The tiles of the toplevel's buffer when its damage was last asked
    /// for, with the change count then.
    pub looked: Option<(u64, Tiles)>,
}

impl WindowData {
    pub fn new(surface: Surface) -> Self {
        WindowData {
            surface,
            activity: Default::default(),
            grabbed: false,
            restore_size: None,
            fitted: false,
            shown_changes: 0,
            damage: DamageLog::default(),
            looked: None,
        }
    }
}

/// What a commit did to whether a toplevel is shown.
pub enum Mapping {
    Unchanged,
    Mapped,
    Unmapped,
}

/// The xdg-decoration mode every toplevel gets, whatever it asks for.
pub fn decoration_mode(decorations: Decorations) -> DecorationMode {
    match decorations {
        Decorations::Client => DecorationMode::ClientSide,
        Decorations::Server => DecorationMode::ServerSide,
    }
}

/// The root (toplevel or popup) surface a subsurface belongs to.
pub fn root_surface(surface: &WlSurface) -> WlSurface {
    let mut root = surface.clone();
    while let Some(parent) = get_parent(&root) {
        root = parent;
    }
    root
}

/// Every window, toplevel or popup, and the space the shown toplevels are in.
pub struct Windows {
    pub registry: Registry<WindowData>,
    pub space: Space<Window>,
    pub popups: PopupManager,
    pub events: broadcast::Sender<WindowEvent>,
    /// The output in logical points.
    output_area: Rect,
    /// Device pixels per logical point, as every window reports it.
    scale: f64,
    decorations: Decorations,
}

impl Windows {
    pub fn new(config: &Config, output: &Output) -> Self {
        let mut space = Space::default();
        space.map_output(output, (0, 0));
        let (events, _) = broadcast::channel(1024);
        Windows {
            registry: Registry::default(),
            space,
            popups: PopupManager::default(),
            events,
            output_area: Rect::new(0, 0, config.width, config.height),
            scale: config.scale,
            decorations: config.decorations,
        }
    }

    /// The output in logical points.
    pub fn output_rect(&self) -> Rect {
        self.output_area
    }

    /// The record whose root surface is `surface` (toplevel or popup).
    pub fn id_for_surface(&self, surface: &WlSurface) -> Option<u64> {
        self.registry
            .find(|d| d.surface.wl_surface() == *surface)
            .map(|r| r.id)
    }

    /// Changes to what a window shows, with its popups: what it shows cannot
    /// have changed while this stays the same.
    pub fn tree_commits(&self, id: u64) -> u64 {
        self.registry.get(id).map_or(0, |r| r.surface.shown_changes)
    }

    /// Where a window's pixels changed since its change count was `since`,
    /// and the change count now. Where the damage the app gave can be
    /// checked against the buffer as it was at `since` (its damage was
    /// asked for then), only the tiles whose pixels differ count.
    pub fn damage_since(&mut self, id: u64, since: u64) -> (Damage, u64) {
        let Some(rec) = self.registry.get_mut(id) else {
            return (Damage::Anywhere, 0);
        };
        let data = &mut rec.surface;
        let now = data.shown_changes;
        let declared = data.damage.since(since, now);
        let tiles = Tiles::of(&data.surface.wl_surface());
        let damage = match (&declared, &data.looked, &tiles) {
            (Damage::Within(_), Some((at, before)), Some(tiles)) if *at == since => tiles
                .changed_since(before)
                .and_then(|pixels| data.damage.in_content(&pixels))
                .map_or(declared, Damage::Within),
            _ => declared,
        };
        data.looked = tiles.map(|t| (now, t));
        (damage, now)
    }

    /// Count a change to what record `id` shows on the toplevel that shows it.
    pub fn note_shown_change(&mut self, id: u64) {
        let owner = match self.registry.get(id).map(|r| &r.surface.surface) {
            Some(Surface::Popup(p)) => self.popup_root_window(p),
            Some(Surface::Toplevel(_)) => Some(id),
            None => None,
        };
        if let Some(rec) = owner.and_then(|owner| self.registry.get_mut(owner)) {
            rec.surface.shown_changes += 1;
            rec.surface.damage.counted(rec.surface.shown_changes);
        }
    }

    /// The record of the toplevel a popup is attached to, through any popup chain.
    fn popup_root_window(&self, popup: &PopupKind) -> Option<u64> {
        let root = find_popup_root_surface(popup).ok()?;
        self.id_for_surface(&root)
    }

    /// Content rectangle (global, logical) of a record as it stands now.
    pub fn content_rect(&self, id: u64) -> Option<Rect> {
        let rec = self.registry.get(id)?;
        match &rec.surface.surface {
            Surface::Toplevel(w) => {
                let g = w.geometry();
                Some(Rect::new(
                    rec.location.0,
                    rec.location.1,
                    g.size.w,
                    g.size.h,
                ))
            }
            Surface::Popup(p) => {
                let root_id = self.popup_root_window(p)?;
                let root = self.registry.get(root_id)?;
                let Surface::Toplevel(w) = &root.surface.surface else {
                    return None;
                };
                let root_surface = w.toplevel()?.wl_surface().clone();
                let offset = PopupManager::popups_for_surface(&root_surface)
                    .find(|(pk, _)| pk.wl_surface() == p.wl_surface())
                    .map(|(_, off)| off)?;
                let g = p.geometry();
                Some(Rect::new(
                    root.location.0 + offset.x,
                    root.location.1 + offset.y,
                    g.size.w,
                    g.size.h,
                ))
            }
        }
    }

    /// Everything the record draws, shadows included, and its own surface,
    /// subsurfaces left out (both global, logical).
    fn frame_and_surface_rects(&self, id: u64, content: Rect) -> (Rect, Rect) {
        let Some(rec) = self.registry.get(id) else {
            return (content, content);
        };
        let (geo, bbox) = match &rec.surface.surface {
            Surface::Toplevel(w) => (w.geometry(), w.bbox()),
            Surface::Popup(p) => (p.geometry(), bbox_from_surface_tree(p.wl_surface(), (0, 0))),
        };
        let wl = rec.surface.surface.wl_surface();
        let size = with_renderer_surface_state(&wl, |s| s.surface_size())
            .flatten()
            .unwrap_or_default();
        // Both are in the surface's coordinates, where the content starts at the
        // window geometry's corner.
        let place = |r: Rectangle<i32, Logical>| {
            Rect::new(
                content.x + r.loc.x - geo.loc.x,
                content.y + r.loc.y - geo.loc.y,
                r.size.w,
                r.size.h,
            )
        };
        (place(bbox), place(Rectangle::from_size(size)))
    }

    /// Recompute every window's state, announce what changed, keep the space in
    /// step with the registry's stacking. Runs after every dispatch.
    pub fn refresh(&mut self, focus: Option<&WlSurface>, clients: &Clients) {
        self.popups.cleanup();
        // Stacking: popups sit directly in front of the window they belong to.
        let order: Vec<u64> = self.stacking_order();
        let rects: Vec<Option<Rect>> = order
            .iter()
            .map(|&id| {
                let rec = self.registry.get(id)?;
                (rec.mapped && !rec.minimized)
                    .then(|| self.content_rect(id))
                    .flatten()
            })
            .collect();
        let visible = registry::visibility(&rects, self.output_rect());
        let mut infos: HashMap<u64, WindowInfo> = HashMap::new();
        for (z, &id) in order.iter().enumerate() {
            if let Some(info) = self.window_info(id, z as u32, visible[z], focus, clients) {
                infos.insert(id, info);
            }
        }
        let events = self.registry.diff(|rec| infos.remove(&rec.id));
        for ev in events {
            tracing::debug!(?ev, "window event");
            let _ = self.events.send(ev);
        }
        self.space.refresh();
    }

    /// Record ids front to back, popups in front of their window.
    pub fn stacking_order(&self) -> Vec<u64> {
        let mut order = Vec::new();
        for rec in self.registry.iter() {
            if let Surface::Toplevel(w) = &rec.surface.surface {
                let Some(top) = w.toplevel() else { continue };
                let root = top.wl_surface().clone();
                let mut popups: Vec<u64> = PopupManager::popups_for_surface(&root)
                    .filter_map(|(p, _)| self.id_for_surface(p.wl_surface()))
                    .collect();
                // Later popups (children) are in front of earlier ones.
                popups.reverse();
                order.extend(popups);
                order.push(rec.id);
            }
        }
        order
    }

    fn window_info(
        &self,
        id: u64,
        z: u32,
        on_screen: bool,
        focus: Option<&WlSurface>,
        clients: &Clients,
    ) -> Option<WindowInfo> {
        let rec = self.registry.get(id)?;
        let content = self.content_rect(id)?;
        let (frame, surface) = self.frame_and_surface_rects(id, content);
        let wl = rec.surface.surface.wl_surface();
        let pid = clients.of_surface(&wl).and_then(|c| c.pid);
        let mut configuring = false;
        let (title, app_id, kind, parent, maximized, fullscreen) = match &rec.surface.surface {
            Surface::Toplevel(w) => {
                let top = w.toplevel()?;
                let (title, app_id, asked) = with_states(top.wl_surface(), |states| {
                    let data = states.data_map.get::<XdgToplevelSurfaceData>()?;
                    let data = data.lock().ok()?;
                    // Asked and not yet drawn: a configure the app has not
                    // acknowledged, or one acknowledged but not committed.
                    let asked = !data.pending_configures().is_empty()
                        || data.configure_serial != data.current_serial;
                    Some((
                        data.title.clone().unwrap_or_default(),
                        data.app_id.clone().unwrap_or_default(),
                        asked,
                    ))
                })?;
                configuring = asked;
                let parent = top
                    .parent()
                    .and_then(|p| self.id_for_surface(&p))
                    .and_then(|pid| self.registry.get(pid))
                    .map(|r| r.handle());
                let current = top.current_state();
                let kind = if parent.is_some() {
                    WindowKind::Dialog
                } else {
                    WindowKind::Normal
                };
                (
                    title,
                    app_id,
                    kind,
                    parent,
                    current.states.contains(xdg_toplevel::State::Maximized),
                    current.states.contains(xdg_toplevel::State::Fullscreen),
                )
            }
            Surface::Popup(p) => {
                let parent = match &**p {
                    PopupKind::Xdg(x) => x.get_parent_surface(),
                    _ => None,
                }
                .and_then(|s| self.id_for_surface(&s))
                .and_then(|pid| self.registry.get(pid))
                .map(|r| r.handle());
                let kind = if rec.surface.grabbed {
                    WindowKind::Menu
                } else {
                    WindowKind::Tooltip
                };
                (String::new(), String::new(), kind, parent, false, false)
            }
        };
        Some(WindowInfo {
            handle: rec.handle(),
            title,
            app_id,
            pid,
            kind,
            parent,
            frame,
            surface,
            content,
            maximized,
            fullscreen,
            configuring,
            minimized: rec.minimized,
            focused: focus.is_some_and(|f| *f == wl),
            on_screen,
            z,
            scale: self.scale,
        })
    }

    /// Put mapped, not minimized toplevels into the space in registry order.
    pub fn sync_space(&mut self) {
        let shown: Vec<(Window, (i32, i32))> = self
            .registry
            .iter()
            .filter(|r| r.mapped && !r.minimized)
            .filter_map(|r| match &r.surface.surface {
                Surface::Toplevel(w) => Some((w.clone(), r.location)),
                Surface::Popup(_) => None,
            })
            .collect();
        let hidden: Vec<Window> = self
            .space
            .elements()
            .filter(|w| !shown.iter().any(|(s, _)| s == *w))
            .cloned()
            .collect();
        for w in hidden {
            self.space.unmap_elem(&w);
        }
        // Back to front: each map raises, so the front-most ends on top.
        for (w, loc) in shown.into_iter().rev() {
            self.space.map_element(w, loc, false);
        }
    }

    /// Where a newly mapped toplevel goes: centred on its parent or the output.
    fn placement(&self, id: u64) -> (i32, i32) {
        let Some(rec) = self.registry.get(id) else {
            return (0, 0);
        };
        let Surface::Toplevel(w) = &rec.surface.surface else {
            return (0, 0);
        };
        let size = w.geometry().size;
        let area = w
            .toplevel()
            .and_then(|t| t.parent())
            .and_then(|p| self.id_for_surface(&p))
            .and_then(|pid| self.content_rect(pid))
            .unwrap_or_else(|| self.output_rect());
        let x = area.x + (area.width - size.w) / 2;
        let y = area.y + (area.height - size.h) / 2;
        (x.max(0), y.max(0))
    }

    /// Where a toplevel of `size` goes when centred on the output.
    pub fn placement_for_size(&self, size: Size<i32, Logical>) -> (i32, i32) {
        let out = self.output_rect();
        (
            ((out.width - size.w) / 2).max(0),
            ((out.height - size.h) / 2).max(0),
        )
    }

    /// Called on each commit of a toplevel's root surface; `None` when the
    /// commit needs nothing more (no such toplevel, or its first configure was
    /// only now sent).
    pub fn toplevel_committed(&mut self, id: u64) -> Option<Mapping> {
        let rec = self.registry.get(id)?;
        let Surface::Toplevel(window) = rec.surface.surface.clone() else {
            return None;
        };
        window.on_commit();
        let top = window.toplevel().cloned()?;
        if !top.is_initial_configure_sent() {
            let (w, h) = (self.output_area.width, self.output_area.height);
            let mode = decoration_mode(self.decorations);
            top.with_pending_state(|s| {
                s.bounds = Some((w, h).into());
                s.decoration_mode = Some(mode);
            });
            top.send_configure();
            return None;
        }
        let has_buffer = with_renderer_surface_state(top.wl_surface(), |s| s.buffer().is_some())
            .unwrap_or(false);
        let was_mapped = rec.mapped;
        if has_buffer && !was_mapped {
            self.registry.set_mapped(id, true);
            let loc = self.placement(id);
            if let Some(rec) = self.registry.get_mut(id) {
                rec.location = loc;
                rec.surface.fitted = false;
            }
            self.fit_to_output(id, &top);
            Some(Mapping::Mapped)
        } else if !has_buffer && was_mapped {
            self.registry.set_mapped(id, false);
            Some(Mapping::Unmapped)
        } else {
            Some(Mapping::Unchanged)
        }
    }

    /// Called on each commit of a popup's root surface.
    pub fn popup_committed(&mut self, id: u64, popup: &PopupKind) {
        let PopupKind::Xdg(xdg) = popup else { return };
        if !xdg.is_initial_configure_sent() {
            if let Err(e) = xdg.send_configure() {
                tracing::debug!(?e, "initial popup configure failed");
            }
            return;
        }
        let has_buffer = with_renderer_surface_state(xdg.wl_surface(), |s| s.buffer().is_some())
            .unwrap_or(false);
        let mapped = self.registry.get(id).is_some_and(|r| r.mapped);
        if has_buffer != mapped {
            self.registry.set_mapped(id, has_buffer);
        }
    }

    /// Ask a window larger than the output to fit it, once per map.
    fn fit_to_output(&mut self, id: u64, top: &ToplevelSurface) {
        let (ow, oh) = (self.output_area.width, self.output_area.height);
        let Some(rec) = self.registry.get_mut(id) else {
            return;
        };
        let Surface::Toplevel(w) = &rec.surface.surface else {
            return;
        };
        let size = w.geometry().size;
        if rec.surface.fitted || (size.w <= ow && size.h <= oh) {
            return;
        }
        rec.surface.fitted = true;
        rec.location = (0, 0);
        top.with_pending_state(|s| s.size = Some((size.w.min(ow), size.h.min(oh)).into()));
        top.send_pending_configure();
    }

    /// Raise a toplevel and mark it alone activated; returns it, for the
    /// keyboard focus, or `None` for a popup.
    pub fn activate(&mut self, id: u64) -> Option<Window> {
        let rec = self.registry.get_mut(id)?;
        rec.minimized = false;
        let Surface::Toplevel(window) = rec.surface.surface.clone() else {
            return None;
        };
        self.registry.raise(id);
        let mut changed = Vec::new();
        for rec in self.registry.iter() {
            if let Surface::Toplevel(w) = &rec.surface.surface {
                if w.set_activated(rec.id == id) {
                    changed.push(w.clone());
                }
            }
        }
        for w in changed {
            if let Some(t) = w.toplevel() {
                if t.is_initial_configure_sent() {
                    t.send_pending_configure();
                }
            }
        }
        Some(window)
    }

    /// The front-most shown toplevel.
    pub fn front_toplevel(&self) -> Option<u64> {
        self.registry
            .iter()
            .find(|r| r.mapped && !r.minimized && matches!(r.surface.surface, Surface::Toplevel(_)))
            .map(|r| r.id)
    }

    /// A toplevel or popup surface was destroyed: drop its record, announce its
    /// closing and take it out of the space. Returns the record's id.
    pub fn forget(&mut self, surface: &WlSurface) -> Option<u64> {
        let id = self.id_for_surface(surface)?;
        // A popup going away changes what its toplevel shows.
        self.note_shown_change(id);
        if let Some(rec) = self.registry.remove(id) {
            if let Some(ev) = Registry::closing_event(&rec) {
                let _ = self.events.send(ev);
            }
            if let Surface::Toplevel(w) = &rec.surface.surface {
                self.space.unmap_elem(w);
            }
        }
        Some(id)
    }

    /// Resolve a handle to a live record id or the error a caller should see.
    pub fn resolve(&self, handle: WindowHandle) -> HostResult<u64> {
        match self.registry.resolve(handle) {
            Ok(r) => Ok(r.id),
            Err(Lookup::Stale { current }) => Err(HostError::StaleWindow(handle, current)),
            Err(Lookup::Unknown) => Err(HostError::NoWindow(handle)),
        }
    }

    /// A live window's record id and surface.
    pub fn resolve_surface(&self, handle: WindowHandle) -> HostResult<(u64, Surface)> {
        let id = self.resolve(handle)?;
        let surface = self
            .registry
            .get(id)
            .map(|r| r.surface.surface.clone())
            .ok_or(HostError::NoWindow(handle))?;
        Ok((id, surface))
    }

    /// Whether any surface in a window's tree (popups included) waits for a frame callback.
    pub fn wants_frame(&self, id: u64) -> bool {
        let Some(rec) = self.registry.get(id) else {
            return false;
        };
        let root = rec.surface.surface.wl_surface();
        let mut wants = surface_tree_wants_frame(&root);
        if let Surface::Toplevel(_) = rec.surface.surface {
            for (popup, _) in PopupManager::popups_for_surface(&root) {
                wants |= surface_tree_wants_frame(popup.wl_surface());
            }
        }
        wants
    }

    /// The xdg_wm_base of the client that owns `surface`, through any of its windows.
    pub fn shell_client_of(&self, surface: &WlSurface) -> Option<ShellClient> {
        let client = surface.client()?.id();
        self.registry.iter().find_map(|r| {
            let same = r
                .surface
                .surface
                .wl_surface()
                .client()
                .is_some_and(|c| c.id() == client);
            if !same {
                return None;
            }
            r.surface.surface.shell_client()
        })
    }

    /// The client whose xdg_wm_base is `shell`, through any of its windows.
    pub fn client_of_shell(&self, shell: &ShellClient) -> Option<ClientId> {
        self.registry.iter().find_map(|r| {
            let owner = r.surface.surface.shell_client();
            (owner.as_ref() == Some(shell))
                .then(|| r.surface.surface.wl_surface().client().map(|c| c.id()))
                .flatten()
        })
    }

    /// Make popups fit the output.
    pub fn unconstrain_popup(&self, popup: &PopupSurface) {
        let kind = PopupKind::Xdg(popup.clone());
        let Some(root_id) = self.popup_root_window(&kind) else {
            return;
        };
        let Some(root) = self.registry.get(root_id) else {
            return;
        };
        let toplevel_offset = smithay::desktop::get_popup_toplevel_coords(&kind);
        let mut target: Rectangle<i32, Logical> =
            Rectangle::from_size((self.output_area.width, self.output_area.height).into());
        target.loc -= Point::from(root.location);
        target.loc -= toplevel_offset;
        popup.with_pending_state(|state| {
            state.geometry = state.positioner.get_unconstrained_geometry(target);
        });
    }
}

fn surface_tree_wants_frame(root: &WlSurface) -> bool {
    let wants = std::cell::Cell::new(false);
    with_surface_tree_downward(
        root,
        (),
        |_, _, _| TraversalAction::DoChildren(()),
        |_, states, _| {
            if !states
                .cached_state
                .get::<SurfaceAttributes>()
                .current()
                .frame_callbacks
                .is_empty()
            {
                wants.set(true);
            }
        },
        |_, _, _| !wants.get(),
    );
    wants.get()
}
