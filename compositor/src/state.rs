//! The compositor's state on its calloop thread: Smithay's protocol states, the
//! window registry, frame pacing, settle waiters and the host commands that drive them.
//!
//! Everything that touches Smithay lives here and in `handlers/`; the outside
//! world reaches it only through `host::Command`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use smithay::backend::renderer::pixman::PixmanRenderer;
use smithay::backend::renderer::utils::with_renderer_surface_state;
use smithay::desktop::utils::{
    take_presentation_feedback_surface_tree, OutputPresentationFeedback,
};
use smithay::desktop::{find_popup_root_surface, PopupKind, PopupManager, Space, Window};
use smithay::input::{Seat, SeatState};
use smithay::output::{Mode as OutputMode, Output, PhysicalProperties, Scale, Subpixel};
use smithay::reexports::calloop::LoopSignal;
use smithay::reexports::wayland_protocols::wp::presentation_time::server::wp_presentation_feedback;
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::reexports::wayland_server::backend::ClientId;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::reexports::wayland_server::{DisplayHandle, Resource};
use smithay::utils::{
    Clock, Logical, Monotonic, Point, Rectangle, Size, Transform, SERIAL_COUNTER,
};
use smithay::wayland::compositor::{
    get_parent, with_states, with_surface_tree_downward, CompositorState, SurfaceAttributes,
    TraversalAction,
};
use smithay::wayland::cursor_shape::CursorShapeManagerState;
use smithay::wayland::fractional_scale::FractionalScaleManagerState;
use smithay::wayland::input_method::InputMethodManagerState;
use smithay::wayland::output::OutputManagerState;
use smithay::wayland::presentation::{PresentationState, Refresh};
use smithay::wayland::selection::data_device::DataDeviceState;
use smithay::wayland::selection::primary_selection::PrimarySelectionState;
use smithay::wayland::shell::xdg::decoration::XdgDecorationState;
use smithay::wayland::shell::xdg::{
    ShellClient, ToplevelSurface, XdgShellState, XdgToplevelSurfaceData,
};
use smithay::wayland::shm::ShmState;
use smithay::wayland::single_pixel_buffer::SinglePixelBufferState;
use smithay::wayland::text_input::TextInputManagerState;
use smithay::wayland::viewporter::ViewporterState;
use smithay::wayland::xdg_activation::XdgActivationState;
use tokio::sync::{broadcast, oneshot};
use wayrig_host::{
    HostError, HostResult, Pacing, Rect, Settled, Stepped, WindowCommand, WindowEvent,
    WindowHandle, WindowInfo, WindowKind,
};

use crate::capture::{self, Pixels};
use crate::config::Config;
use crate::launch::{self, Apps};
use crate::registry::{self, Lookup, Registry};
use crate::settle::{Activity, SettleCheck};

/// The name of the one virtual output.
pub const OUTPUT_NAME: &str = "WAYRIG-1";

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
}

/// What the compositor knows of one Wayland client.
#[derive(Debug, Default)]
pub struct ClientRecord {
    pub pid: Option<u32>,
    /// Moment of the last input delivered to this client.
    pub last_input: u64,
    /// A ping in flight and the moment it was sent.
    pub ping_in_flight: Option<u64>,
    /// Moment at which the last answered ping had been sent.
    pub answered: u64,
}

/// A caller waiting for a window to settle.
pub struct SettleWaiter {
    pub handle: WindowHandle,
    pub started: Instant,
    pub deadline: Instant,
    pub commits_at_start: u64,
    pub reply: oneshot::Sender<HostResult<Settled>>,
}

/// A step request in progress (step pacing).
pub struct StepJob {
    pub remaining: u32,
    pub frames: u32,
    pub callbacks: u64,
    /// Windows that got a frame this step and have not yet drawn or answered a ping.
    pub awaiting: Vec<u64>,
    pub moment: u64,
    pub deadline: Instant,
    pub reply: oneshot::Sender<HostResult<Stepped>>,
}

pub struct State {
    pub config: Config,
    pub display_handle: DisplayHandle,
    pub loop_signal: LoopSignal,
    pub running: bool,

    pub compositor_state: CompositorState,
    pub xdg_shell_state: XdgShellState,
    pub shm_state: ShmState,
    pub seat_state: SeatState<State>,
    pub data_device_state: DataDeviceState,
    pub primary_selection_state: PrimarySelectionState,
    pub xdg_activation_state: XdgActivationState,
    // Globals that only need to stay alive.
    _output_manager_state: OutputManagerState,
    _xdg_decoration_state: XdgDecorationState,
    _fractional_scale_state: FractionalScaleManagerState,
    _presentation_state: PresentationState,
    _viewporter_state: ViewporterState,
    _single_pixel_buffer_state: SinglePixelBufferState,
    _cursor_shape_state: CursorShapeManagerState,
    _input_method_state: InputMethodManagerState,
    _text_input_state: TextInputManagerState,

    pub seat: Seat<State>,
    pub output: Output,
    pub space: Space<Window>,
    pub popups: PopupManager,
    pub windows: Registry<WindowData>,
    pub clients: HashMap<ClientId, ClientRecord>,
    pub apps: Apps,
    pub events: broadcast::Sender<WindowEvent>,

    pub clock: Clock<Monotonic>,
    /// Increases on every input and ping: orders "after the last input".
    pub moment: u64,
    pub frame_seq: u64,
    /// Time stamp of the last input event sent (ms); input time never goes back.
    pub input_time: u32,
    /// Time stamp of the last button press, to keep click series apart.
    pub last_press_time: Option<u32>,
    /// Pointer buttons pressed and not yet released, in press order.
    pub buttons_down: Vec<u32>,
    pub settle_waiters: Vec<SettleWaiter>,
    pub step_job: Option<StepJob>,
    pub input_jobs: std::collections::VecDeque<crate::input::InputJob>,
    pub capture_renderer: PixmanRenderer,
    /// The session keymap, for finding keys.
    pub keymap: crate::keys::SessionKeymap,
    /// The nested window's renderer and damage, when running nested.
    pub nested: Option<crate::nested::Nested>,
}

impl State {
    pub fn new(
        config: Config,
        display_handle: DisplayHandle,
        loop_signal: LoopSignal,
        app_env: Vec<(String, String)>,
    ) -> Result<Self, String> {
        let dh = &display_handle;
        let compositor_state = CompositorState::new::<State>(dh);
        let xdg_shell_state = XdgShellState::new::<State>(dh);
        let shm_state = ShmState::new::<State>(dh, vec![]);
        let mut seat_state = SeatState::new();
        let data_device_state = DataDeviceState::new::<State>(dh);
        let primary_selection_state = PrimarySelectionState::new::<State>(dh);
        let xdg_activation_state = XdgActivationState::new::<State>(dh);
        let output_manager_state = OutputManagerState::new_with_xdg_output::<State>(dh);
        let xdg_decoration_state = XdgDecorationState::new::<State>(dh);
        let fractional_scale_state = FractionalScaleManagerState::new::<State>(dh);
        let presentation_state = PresentationState::new::<State>(dh, libc::CLOCK_MONOTONIC as u32);
        let viewporter_state = ViewporterState::new::<State>(dh);
        let single_pixel_buffer_state = SinglePixelBufferState::new::<State>(dh);
        let cursor_shape_state = CursorShapeManagerState::new::<State>(dh);
        // Only Wayrig's own input method may bind the input method global.
        let input_method_state = InputMethodManagerState::new::<State, _>(dh, |client| {
            client
                .get_data::<crate::handlers::ClientState>()
                .is_some_and(|c| c.internal)
        });
        let text_input_state = TextInputManagerState::new::<State>(dh);

        let mut seat = seat_state.new_wl_seat(dh, "seat0");
        seat.add_keyboard(crate::keys::session_xkb_config(), 600, 25)
            .map_err(|e| format!("cannot load the keymap (is xkb-data installed?): {e}"))?;
        seat.add_pointer();

        let output = Output::new(
            OUTPUT_NAME.into(),
            PhysicalProperties {
                // As a 96 DPI monitor, so toolkits that read DPI pick the usual sizes.
                size: (
                    (config.width as f64 * 25.4 / 96.0).round() as i32,
                    (config.height as f64 * 25.4 / 96.0).round() as i32,
                )
                    .into(),
                subpixel: Subpixel::Unknown,
                make: "Wayrig".into(),
                model: "Virtual".into(),
            },
        );
        let mode = OutputMode {
            size: (
                (config.width as f64 * config.scale).round() as i32,
                (config.height as f64 * config.scale).round() as i32,
            )
                .into(),
            refresh: config.refresh_mhz as i32,
        };
        output.create_global::<State>(dh);
        output.change_current_state(
            Some(mode),
            Some(Transform::Normal),
            Some(Scale::Fractional(config.scale)),
            Some((0, 0).into()),
        );
        output.set_preferred(mode);
        let mut space = Space::default();
        space.map_output(&output, (0, 0));

        let capture_renderer =
            PixmanRenderer::new().map_err(|e| format!("cannot create the pixman renderer: {e}"))?;
        let (events, _) = broadcast::channel(1024);

        Ok(State {
            config,
            display_handle,
            loop_signal,
            running: true,
            compositor_state,
            xdg_shell_state,
            shm_state,
            seat_state,
            data_device_state,
            primary_selection_state,
            xdg_activation_state,
            _output_manager_state: output_manager_state,
            _xdg_decoration_state: xdg_decoration_state,
            _fractional_scale_state: fractional_scale_state,
            _presentation_state: presentation_state,
            _viewporter_state: viewporter_state,
            _single_pixel_buffer_state: single_pixel_buffer_state,
            _cursor_shape_state: cursor_shape_state,
            _input_method_state: input_method_state,
            _text_input_state: text_input_state,
            seat,
            output,
            space,
            popups: PopupManager::default(),
            windows: Registry::default(),
            clients: HashMap::new(),
            apps: Apps::new(app_env),
            events,
            clock: Clock::new(),
            moment: 0,
            frame_seq: 0,
            input_time: 0,
            last_press_time: None,
            buttons_down: Vec::new(),
            settle_waiters: Vec::new(),
            step_job: None,
            input_jobs: Default::default(),
            capture_renderer,
            keymap: crate::keys::SessionKeymap::new()?,
            nested: None,
        })
    }

    pub fn next_moment(&mut self) -> u64 {
        self.moment += 1;
        self.moment
    }

    /// The output in logical points.
    pub fn output_rect(&self) -> Rect {
        Rect::new(0, 0, self.config.width, self.config.height)
    }

    // ---- windows -------------------------------------------------------

    /// The record whose root surface is `surface` (toplevel or popup).
    pub fn window_id_for_surface(&self, surface: &WlSurface) -> Option<u64> {
        self.windows
            .find(|d| d.surface.wl_surface() == *surface)
            .map(|r| r.id)
    }

    /// The root (toplevel or popup) surface a subsurface belongs to.
    pub fn root_surface(surface: &WlSurface) -> WlSurface {
        let mut root = surface.clone();
        while let Some(parent) = get_parent(&root) {
            root = parent;
        }
        root
    }

    /// Changes to what a window shows, with its popups: what it shows cannot
    /// have changed while this stays the same.
    pub fn tree_commits(&self, id: u64) -> u64 {
        self.windows.get(id).map_or(0, |r| r.surface.shown_changes)
    }

    /// Count a change to what record `id` shows on the toplevel that shows it.
    fn note_shown_change(&mut self, id: u64) {
        let owner = match self.windows.get(id).map(|r| &r.surface.surface) {
            Some(Surface::Popup(p)) => self.popup_root_window(p),
            Some(Surface::Toplevel(_)) => Some(id),
            None => None,
        };
        if let Some(rec) = owner.and_then(|owner| self.windows.get_mut(owner)) {
            rec.surface.shown_changes += 1;
        }
    }

    /// The record of the toplevel a popup is attached to, through any popup chain.
    fn popup_root_window(&self, popup: &PopupKind) -> Option<u64> {
        let root = find_popup_root_surface(popup).ok()?;
        self.window_id_for_surface(&root)
    }

    pub fn client_record(&mut self, surface: &WlSurface) -> Option<&mut ClientRecord> {
        let client = surface.client()?;
        Some(self.clients.entry(client.id()).or_default())
    }

    /// Content rectangle (global, logical) of a record as it stands now.
    pub fn content_rect(&self, id: u64) -> Option<Rect> {
        let rec = self.windows.get(id)?;
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
                let root = self.windows.get(root_id)?;
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
        let Some(rec) = self.windows.get(id) else {
            return (content, content);
        };
        let (geo, bbox) = match &rec.surface.surface {
            Surface::Toplevel(w) => (w.geometry(), w.bbox()),
            Surface::Popup(p) => (
                p.geometry(),
                smithay::desktop::utils::bbox_from_surface_tree(p.wl_surface(), (0, 0)),
            ),
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

    pub fn keyboard_focus(&self) -> Option<WlSurface> {
        self.seat.get_keyboard().and_then(|k| k.current_focus())
    }

    /// Recompute every window's state, announce what changed, keep the space in
    /// step with the registry's stacking. Runs after every dispatch.
    pub fn refresh_windows(&mut self) {
        self.popups.cleanup();
        // Stacking: popups sit directly in front of the window they belong to.
        let order: Vec<u64> = self.stacking_order();
        let rects: Vec<Option<Rect>> = order
            .iter()
            .map(|&id| {
                let rec = self.windows.get(id)?;
                (rec.mapped && !rec.minimized)
                    .then(|| self.content_rect(id))
                    .flatten()
            })
            .collect();
        let visible = registry::visibility(&rects, self.output_rect());
        let focus = self.keyboard_focus();
        let mut infos: HashMap<u64, WindowInfo> = HashMap::new();
        for (z, &id) in order.iter().enumerate() {
            if let Some(info) = self.window_info(id, z as u32, visible[z], focus.as_ref()) {
                infos.insert(id, info);
            }
        }
        let events = self.windows.diff(|rec| infos.remove(&rec.id));
        for ev in events {
            tracing::debug!(?ev, "window event");
            let _ = self.events.send(ev);
        }
        self.space.refresh();
    }

    /// Record ids front to back, popups in front of their window.
    pub fn stacking_order(&self) -> Vec<u64> {
        let mut order = Vec::new();
        for rec in self.windows.iter() {
            if let Surface::Toplevel(w) = &rec.surface.surface {
                let Some(top) = w.toplevel() else { continue };
                let root = top.wl_surface().clone();
                let mut popups: Vec<u64> = PopupManager::popups_for_surface(&root)
                    .filter_map(|(p, _)| self.window_id_for_surface(p.wl_surface()))
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
    ) -> Option<WindowInfo> {
        let rec = self.windows.get(id)?;
        let content = self.content_rect(id)?;
        let (frame, surface) = self.frame_and_surface_rects(id, content);
        let wl = rec.surface.surface.wl_surface();
        let pid = wl
            .client()
            .and_then(|c| self.clients.get(&c.id()))
            .and_then(|c| c.pid);
        let (title, app_id, kind, parent, maximized, fullscreen) = match &rec.surface.surface {
            Surface::Toplevel(w) => {
                let top = w.toplevel()?;
                let (title, app_id) = with_states(top.wl_surface(), |states| {
                    let data = states.data_map.get::<XdgToplevelSurfaceData>()?;
                    let data = data.lock().ok()?;
                    Some((
                        data.title.clone().unwrap_or_default(),
                        data.app_id.clone().unwrap_or_default(),
                    ))
                })?;
                let parent = top
                    .parent()
                    .and_then(|p| self.window_id_for_surface(&p))
                    .and_then(|pid| self.windows.get(pid))
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
                .and_then(|s| self.window_id_for_surface(&s))
                .and_then(|pid| self.windows.get(pid))
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
            minimized: rec.minimized,
            focused: focus.is_some_and(|f| *f == wl),
            on_screen,
            z,
            scale: self.config.scale,
        })
    }

    /// Put mapped, not minimized toplevels into the space in registry order.
    pub fn sync_space(&mut self) {
        let shown: Vec<(Window, (i32, i32))> = self
            .windows
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
        let Some(rec) = self.windows.get(id) else {
            return (0, 0);
        };
        let Surface::Toplevel(w) = &rec.surface.surface else {
            return (0, 0);
        };
        let size = w.geometry().size;
        let area = w
            .toplevel()
            .and_then(|t| t.parent())
            .and_then(|p| self.window_id_for_surface(&p))
            .and_then(|pid| self.content_rect(pid))
            .unwrap_or_else(|| self.output_rect());
        let x = area.x + (area.width - size.w) / 2;
        let y = area.y + (area.height - size.h) / 2;
        (x.max(0), y.max(0))
    }

    /// Called on each commit of a toplevel's root surface.
    pub fn toplevel_committed(&mut self, id: u64) {
        let Some(rec) = self.windows.get(id) else {
            return;
        };
        let Surface::Toplevel(window) = rec.surface.surface.clone() else {
            return;
        };
        window.on_commit();
        let Some(top) = window.toplevel().cloned() else {
            return;
        };
        if !top.is_initial_configure_sent() {
            let (w, h) = (self.config.width, self.config.height);
            top.with_pending_state(|s| {
                s.bounds = Some((w, h).into());
                s.decoration_mode = Some(crate::handlers::decoration_mode(self.config.decorations));
            });
            top.send_configure();
            return;
        }
        let has_buffer = with_renderer_surface_state(top.wl_surface(), |s| s.buffer().is_some())
            .unwrap_or(false);
        let was_mapped = rec.mapped;
        if has_buffer && !was_mapped {
            self.windows.set_mapped(id, true);
            let loc = self.placement(id);
            if let Some(rec) = self.windows.get_mut(id) {
                rec.location = loc;
                rec.surface.fitted = false;
            }
            self.fit_to_output(id, &top);
            self.activate(id);
        } else if !has_buffer && was_mapped {
            self.windows.set_mapped(id, false);
            self.focus_front_window();
        }
        self.sync_space();
    }

    /// Ask a window larger than the output to fit it, once per map.
    fn fit_to_output(&mut self, id: u64, top: &ToplevelSurface) {
        let Some(rec) = self.windows.get_mut(id) else {
            return;
        };
        let Surface::Toplevel(w) = &rec.surface.surface else {
            return;
        };
        let size = w.geometry().size;
        let (ow, oh) = (self.config.width, self.config.height);
        if rec.surface.fitted || (size.w <= ow && size.h <= oh) {
            return;
        }
        rec.surface.fitted = true;
        rec.location = (0, 0);
        top.with_pending_state(|s| s.size = Some((size.w.min(ow), size.h.min(oh)).into()));
        top.send_pending_configure();
    }

    /// Raise a toplevel, give it keyboard focus and mark it activated.
    pub fn activate(&mut self, id: u64) {
        let Some(rec) = self.windows.get_mut(id) else {
            return;
        };
        rec.minimized = false;
        let Surface::Toplevel(window) = rec.surface.surface.clone() else {
            return;
        };
        self.windows.raise(id);
        let mut changed = Vec::new();
        for rec in self.windows.iter() {
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
        let surface = window.toplevel().map(|t| t.wl_surface().clone());
        if let Some(kb) = self.seat.get_keyboard() {
            kb.set_focus(self, surface, SERIAL_COUNTER.next_serial());
        }
        self.sync_space();
    }

    /// Focus the front-most shown toplevel, or nothing.
    pub fn focus_front_window(&mut self) {
        let front = self
            .windows
            .iter()
            .find(|r| r.mapped && !r.minimized && matches!(r.surface.surface, Surface::Toplevel(_)))
            .map(|r| r.id);
        match front {
            Some(id) => self.activate(id),
            None => {
                if let Some(kb) = self.seat.get_keyboard() {
                    kb.set_focus(self, None, SERIAL_COUNTER.next_serial());
                }
            }
        }
    }

    /// A toplevel or popup surface was destroyed.
    pub fn forget_window(&mut self, surface: &WlSurface) {
        let Some(id) = self.window_id_for_surface(surface) else {
            return;
        };
        // A popup going away changes what its toplevel shows.
        self.note_shown_change(id);
        if let Some(rec) = self.windows.remove(id) {
            if let Some(ev) = Registry::closing_event(&rec) {
                let _ = self.events.send(ev);
            }
            if let Surface::Toplevel(w) = &rec.surface.surface {
                self.space.unmap_elem(w);
            }
        }
        for waiter in std::mem::take(&mut self.settle_waiters) {
            if waiter.handle.id == id {
                let _ = waiter.reply.send(Err(HostError::NoWindow(waiter.handle)));
            } else {
                self.settle_waiters.push(waiter);
            }
        }
        if let Some(job) = &mut self.step_job {
            job.awaiting.retain(|w| *w != id);
        }
        let focus_lost = self
            .keyboard_focus()
            .is_none_or(|f| !f.is_alive() || f == *surface);
        if focus_lost {
            self.focus_front_window();
        }
        self.sync_space();
    }

    /// Resolve a handle to a live record id or the error a caller should see.
    pub fn resolve(&self, handle: WindowHandle) -> HostResult<u64> {
        match self.windows.resolve(handle) {
            Ok(r) => Ok(r.id),
            Err(Lookup::Stale { current }) => Err(HostError::StaleWindow(handle, current)),
            Err(Lookup::Unknown) => Err(HostError::NoWindow(handle)),
        }
    }

    /// A live window's record id and surface.
    fn resolve_surface(&self, handle: WindowHandle) -> HostResult<(u64, Surface)> {
        let id = self.resolve(handle)?;
        let surface = self
            .windows
            .get(id)
            .map(|r| r.surface.surface.clone())
            .ok_or(HostError::NoWindow(handle))?;
        Ok((id, surface))
    }

    pub fn window_command(
        &mut self,
        handle: WindowHandle,
        cmd: WindowCommand,
    ) -> HostResult<Option<WindowInfo>> {
        let (id, surface) = self.resolve_surface(handle)?;
        match (&surface, cmd) {
            (_, WindowCommand::ForceClose) => {
                let wl = surface.wl_surface();
                let pid = self.client_record(&wl).and_then(|c| c.pid);
                if let Some(client) = wl.client() {
                    client.kill(
                        &self.display_handle,
                        smithay::reexports::wayland_server::backend::protocol::ProtocolError {
                            code: 0,
                            object_id: 0,
                            object_interface: "wl_display".into(),
                            message: "force-closed by wayrig".into(),
                        },
                    );
                }
                if let Some(pid) = pid.filter(|p| *p != std::process::id()) {
                    launch::signal_process(pid, libc::SIGKILL);
                }
                self.forget_window(&wl);
                return Ok(None);
            }
            (Surface::Popup(p), WindowCommand::Close) => {
                if let PopupKind::Xdg(x) = &**p {
                    x.send_popup_done();
                }
            }
            (Surface::Popup(_), other) => {
                return Err(HostError::InvalidRequest(format!(
                    "{other:?} applies to top-level windows, not to popup {handle}"
                )))
            }
            (Surface::Toplevel(w), cmd) => {
                let top = w.toplevel().cloned().ok_or(HostError::NoWindow(handle))?;
                self.toplevel_command(id, &top, w, cmd)?;
            }
        }
        self.refresh_windows();
        Ok(self.windows.get(id).and_then(|r| r.announced().cloned()))
    }

    fn toplevel_command(
        &mut self,
        id: u64,
        top: &ToplevelSurface,
        window: &Window,
        cmd: WindowCommand,
    ) -> HostResult<()> {
        let (ow, oh) = (self.config.width, self.config.height);
        let current_size = window.geometry().size;
        match cmd {
            WindowCommand::Activate => self.activate(id),
            WindowCommand::Move { x, y } => {
                if let Some(rec) = self.windows.get_mut(id) {
                    rec.location = (x, y);
                }
                self.sync_space();
            }
            WindowCommand::Resize { width, height } => {
                if width <= 0 || height <= 0 {
                    return Err(HostError::InvalidRequest(format!(
                        "resize needs a positive size, got {width}x{height}"
                    )));
                }
                top.with_pending_state(|s| s.size = Some((width, height).into()));
                top.send_pending_configure();
            }
            WindowCommand::Minimize => {
                if let Some(rec) = self.windows.get_mut(id) {
                    rec.minimized = true;
                }
                if self
                    .keyboard_focus()
                    .is_some_and(|f| f == *top.wl_surface())
                {
                    if let Some(kb) = self.seat.get_keyboard() {
                        kb.set_focus(self, None, SERIAL_COUNTER.next_serial());
                    }
                    if window.set_activated(false) {
                        top.send_pending_configure();
                    }
                }
                self.sync_space();
            }
            WindowCommand::Maximize | WindowCommand::Fullscreen => {
                let state = if cmd == WindowCommand::Maximize {
                    xdg_toplevel::State::Maximized
                } else {
                    xdg_toplevel::State::Fullscreen
                };
                if let Some(rec) = self.windows.get_mut(id) {
                    if rec.surface.restore_size.is_none() {
                        rec.surface.restore_size = Some(current_size);
                    }
                    rec.minimized = false;
                    rec.location = (0, 0);
                }
                let output = self.output.clone();
                top.with_pending_state(|s| {
                    s.states.unset(xdg_toplevel::State::Maximized);
                    s.states.unset(xdg_toplevel::State::Fullscreen);
                    s.states.set(state);
                    s.size = Some((ow, oh).into());
                    // A client that is going away has no output to be put on.
                    s.fullscreen_output = (state == xdg_toplevel::State::Fullscreen)
                        .then(|| top.wl_surface().client())
                        .flatten()
                        .and_then(|client| output.client_outputs(&client).next());
                });
                top.send_pending_configure();
                self.activate(id);
            }
            WindowCommand::Restore => {
                let restore = self.windows.get_mut(id).and_then(|rec| {
                    rec.minimized = false;
                    rec.surface.restore_size.take()
                });
                top.with_pending_state(|s| {
                    s.states.unset(xdg_toplevel::State::Maximized);
                    s.states.unset(xdg_toplevel::State::Fullscreen);
                    s.fullscreen_output = None;
                    if let Some(size) = restore {
                        s.size = Some(size);
                    }
                });
                top.send_pending_configure();
                if restore.is_some() {
                    let loc = self.placement_for_size(restore.unwrap_or(current_size));
                    if let Some(rec) = self.windows.get_mut(id) {
                        rec.location = loc;
                    }
                }
                self.activate(id);
            }
            WindowCommand::Close => top.send_close(),
            WindowCommand::ForceClose => unreachable!("handled by window_command"),
        }
        Ok(())
    }

    fn placement_for_size(&self, size: Size<i32, Logical>) -> (i32, i32) {
        let out = self.output_rect();
        (
            ((out.width - size.w) / 2).max(0),
            ((out.height - size.h) / 2).max(0),
        )
    }

    // ---- frames --------------------------------------------------------

    /// Whether any surface in a window's tree (popups included) waits for a frame callback.
    pub fn wants_frame(&self, id: u64) -> bool {
        let Some(rec) = self.windows.get(id) else {
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

    /// Answer the frame callbacks of one record's surface tree; returns how many.
    pub fn send_frames_for(&mut self, id: u64) -> u64 {
        let Some(rec) = self.windows.get(id) else {
            return 0;
        };
        let on_screen = rec.announced().is_some_and(|info| info.on_screen);
        if !self.config.frames_for_hidden && !on_screen {
            return 0;
        }
        let root = rec.surface.surface.wl_surface();
        let now = self.clock.now();
        let time: Duration = now.into();
        let mut sent = 0;
        with_surface_tree_downward(
            &root,
            (),
            |_, _, _| TraversalAction::DoChildren(()),
            |_, states, _| {
                let mut attrs = states.cached_state.get::<SurfaceAttributes>();
                for cb in attrs.current().frame_callbacks.drain(..) {
                    cb.done(time.as_millis() as u32);
                    sent += 1;
                }
            },
            |_, _, _| true,
        );
        if sent > 0 {
            let mut feedback = OutputPresentationFeedback::new(&self.output);
            let output = self.output.clone();
            take_presentation_feedback_surface_tree(
                &root,
                &mut feedback,
                |_, _| Some(output.clone()),
                |_, _| wp_presentation_feedback::Kind::Vsync,
            );
            self.frame_seq += 1;
            feedback.presented(
                now,
                Refresh::fixed(self.config.frame_interval()),
                self.frame_seq,
                wp_presentation_feedback::Kind::Vsync,
            );
        }
        sent
    }

    /// One frame of the virtual output: every window that asked gets its callback.
    /// Returns the windows that got one and the number of callbacks.
    pub fn send_frames_all(&mut self) -> (Vec<u64>, u64) {
        let ids: Vec<u64> = self.windows.iter().map(|r| r.id).collect();
        let mut got = Vec::new();
        let mut total = 0;
        for id in ids {
            let n = self.send_frames_for(id);
            if n > 0 {
                got.push(id);
                total += n;
            }
        }
        (got, total)
    }

    /// The accounting clock: once per output frame, whatever the pacing.
    pub fn tick(&mut self) {
        let ids: Vec<u64> = self.windows.iter().map(|r| r.id).collect();
        let moment = self.moment;
        for id in ids {
            let wants = self.wants_frame(id);
            if let Some(rec) = self.windows.get_mut(id) {
                rec.surface.activity.tick(wants, moment);
            }
        }
        if self.config.pacing == Pacing::Realtime {
            self.send_frames_all();
        }
        if let Some(nested) = self.nested.as_mut() {
            nested.render(&self.space, &self.output);
        }
        self.check_settle_waiters();
        self.check_step_deadline();
        self.check_input_deadline();
    }

    /// A root surface of record `id` committed.
    pub fn note_commit(&mut self, id: u64) {
        if let Some(rec) = self.windows.get_mut(id) {
            rec.surface.activity.committed();
        }
        self.note_shown_change(id);
        if self.config.pacing == Pacing::Fast {
            self.send_frames_for(id);
        }
        // A stepped window has drawn its frame once it asks for the next one.
        if self
            .step_job
            .as_ref()
            .is_some_and(|job| job.awaiting.contains(&id))
            && self.wants_frame(id)
        {
            let done = self.step_job.as_mut().is_some_and(|job| {
                job.awaiting.retain(|w| *w != id);
                job.awaiting.is_empty()
            });
            if done {
                self.advance_step();
            }
        }
    }

    // ---- settle --------------------------------------------------------

    fn settle_check(&self, id: u64) -> Option<SettleCheck> {
        let rec = self.windows.get(id)?;
        let wl = rec.surface.surface.wl_surface();
        let pending_configure = match &rec.surface.surface {
            Surface::Toplevel(w) => w.toplevel().is_some_and(|t| {
                with_states(t.wl_surface(), |states| {
                    states
                        .data_map
                        .get::<XdgToplevelSurfaceData>()
                        .is_some_and(|d| !d.lock().unwrap().pending_configures().is_empty())
                })
            }),
            Surface::Popup(_) => false,
        };
        let client = wl.client().and_then(|c| self.clients.get(&c.id()));
        let input_read = client.is_none_or(|c| c.answered > c.last_input);
        let activity = &rec.surface.activity;
        Some(SettleCheck {
            wants_frame: self.wants_frame(id),
            pending_configure,
            quiet_ticks: activity.quiet_ticks(),
            input_read,
            answered_while_quiet: client.is_none_or(|c| activity.answered_while_quiet(c.answered)),
        })
    }

    /// Send a ping to the client of `surface` unless one is in flight.
    pub fn ping_client_of(&mut self, surface: &WlSurface) {
        let moment = self.next_moment();
        let Some(shell) = self.shell_client_of(surface) else {
            return;
        };
        let Some(rec) = self.client_record(surface) else {
            return;
        };
        if rec.ping_in_flight.is_some() {
            return;
        }
        if shell.send_ping(SERIAL_COUNTER.next_serial()).is_ok() {
            rec.ping_in_flight = Some(moment);
        }
    }

    /// The xdg_wm_base of the client that owns `surface`, through any of its windows.
    fn shell_client_of(&self, surface: &WlSurface) -> Option<ShellClient> {
        let client = surface.client()?.id();
        self.windows.iter().find_map(|r| {
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

    /// A client answered our ping.
    pub fn pong(&mut self, shell: &ShellClient) {
        let client_id = self.windows.iter().find_map(|r| {
            let owner = r.surface.surface.shell_client();
            (owner.as_ref() == Some(shell))
                .then(|| r.surface.surface.wl_surface().client().map(|c| c.id()))
                .flatten()
        });
        let Some(client_id) = client_id else { return };
        let Some(rec) = self.clients.get_mut(&client_id) else {
            return;
        };
        if let Some(sent) = rec.ping_in_flight.take() {
            rec.answered = rec.answered.max(sent);
        }
        let answered = rec.answered;
        self.input_pong(&client_id, answered);
        if let Some(job) = &mut self.step_job {
            let windows = &self.windows;
            let of_client = |id: &u64| {
                windows
                    .get(*id)
                    .and_then(|r| r.surface.surface.wl_surface().client())
                    .is_some_and(|c| c.id() == client_id)
            };
            if answered >= job.moment {
                job.awaiting.retain(|id| !of_client(id));
            } else if let Some(surface) = job
                .awaiting
                .iter()
                .find(|id| of_client(id))
                .and_then(|id| windows.get(*id))
                .map(|r| r.surface.surface.wl_surface())
            {
                // That pong answered a ping from before the frame: ask again.
                self.ping_client_of(&surface);
            }
            if self
                .step_job
                .as_ref()
                .is_some_and(|job| job.awaiting.is_empty())
            {
                self.advance_step();
            }
        }
        self.check_settle_waiters();
    }

    pub fn add_settle_waiter(
        &mut self,
        handle: WindowHandle,
        timeout: Duration,
        reply: oneshot::Sender<HostResult<Settled>>,
    ) {
        let id = match self.resolve(handle) {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let now = Instant::now();
        let commits = self
            .windows
            .get(id)
            .map_or(0, |r| r.surface.activity.commits());
        self.settle_waiters.push(SettleWaiter {
            handle,
            started: now,
            deadline: now + timeout,
            commits_at_start: commits,
            reply,
        });
        self.check_settle_waiters();
    }

    /// Answer every settle waiter whose window settled or whose time ran out.
    pub fn check_settle_waiters(&mut self) {
        let now = Instant::now();
        let waiters = std::mem::take(&mut self.settle_waiters);
        for w in waiters {
            let id = match self.resolve(w.handle) {
                Ok(id) => id,
                Err(e) => {
                    let _ = w.reply.send(Err(e));
                    continue;
                }
            };
            let Some(check) = self.settle_check(id) else {
                continue;
            };
            let commits = self
                .windows
                .get(id)
                .map_or(0, |r| r.surface.activity.commits());
            if check.settled() {
                let _ = w.reply.send(Ok(Settled {
                    window: w.handle,
                    commits: commits - w.commits_at_start,
                    waited: now - w.started,
                }));
            } else if now >= w.deadline {
                let _ = w.reply.send(Err(HostError::Timeout(
                    w.deadline - w.started,
                    format!(
                        "window {} did not settle: {} ({} frames committed meanwhile)",
                        w.handle,
                        check.reason(),
                        commits - w.commits_at_start
                    ),
                )));
            } else {
                if check.needs_ping() {
                    let wl = self.windows.get(id).map(|r| r.surface.surface.wl_surface());
                    if let Some(wl) = wl {
                        self.ping_client_of(&wl);
                    }
                }
                self.settle_waiters.push(w);
            }
        }
    }

    // ---- step pacing ---------------------------------------------------

    pub fn start_step(&mut self, frames: u32, reply: oneshot::Sender<HostResult<Stepped>>) {
        if self.config.pacing != Pacing::Step {
            let _ = reply.send(Err(HostError::InvalidRequest(format!(
                "step needs step pacing; this session paces {:?}",
                self.config.pacing
            ))));
            return;
        }
        if self.step_job.is_some() {
            let _ = reply.send(Err(HostError::InvalidRequest(
                "a step is already in progress".into(),
            )));
            return;
        }
        let moment = self.moment;
        self.step_job = Some(StepJob {
            remaining: frames,
            frames: 0,
            callbacks: 0,
            awaiting: Vec::new(),
            moment,
            deadline: Instant::now() + Duration::from_secs(10),
            reply,
        });
        self.advance_step();
    }

    /// Deliver the next stepped frame, or answer when all were delivered.
    fn advance_step(&mut self) {
        loop {
            let Some(job) = self.step_job.as_mut() else {
                return;
            };
            if !job.awaiting.is_empty() {
                return;
            }
            if job.remaining == 0 {
                let job = self.step_job.take().expect("job");
                let _ = job.reply.send(Ok(Stepped {
                    frames: job.frames,
                    callbacks: job.callbacks,
                }));
                return;
            }
            job.remaining -= 1;
            job.frames += 1;
            let (got, n) = self.send_frames_all();
            let moment = self.next_moment();
            let job = self.step_job.as_mut().expect("job");
            job.callbacks += n;
            job.moment = moment;
            job.awaiting = got.clone();
            // Each window that got a frame either draws the next one or shows, by
            // answering a ping, that it drew nothing.
            for id in got {
                if let Some(wl) = self.windows.get(id).map(|r| r.surface.surface.wl_surface()) {
                    // With a ping from before this frame in flight, its pong asks again.
                    self.ping_client_of(&wl);
                }
            }
        }
    }

    fn check_step_deadline(&mut self) {
        if self
            .step_job
            .as_ref()
            .is_some_and(|j| Instant::now() >= j.deadline)
        {
            let job = self.step_job.take().expect("job");
            let _ = job.reply.send(Err(HostError::Timeout(
                Duration::from_secs(10),
                format!(
                    "step stalled after {} frames: windows {:?} neither drew nor answered a ping",
                    job.frames, job.awaiting
                ),
            )));
        }
    }

    // ---- capture -------------------------------------------------------

    pub fn capture_window(&mut self, handle: WindowHandle) -> HostResult<Pixels> {
        let (_, surface) = self.resolve_surface(handle)?;
        let scale = self.config.scale;
        match &surface {
            Surface::Toplevel(window) => {
                capture::render_window(&mut self.capture_renderer, window, scale)
            }
            Surface::Popup(popup) => capture::render_surface(
                &mut self.capture_renderer,
                popup.wl_surface(),
                popup.geometry(),
                scale,
            ),
        }
        .map_err(HostError::Failed)
    }

    pub fn capture_output(&mut self) -> HostResult<Pixels> {
        capture::render_output(&mut self.capture_renderer, &self.space, &self.output)
            .map_err(HostError::Failed)
    }

    // ---- clients -------------------------------------------------------

    /// Learn a client's pid from its socket credentials, else from the app we launched.
    pub fn note_client(&mut self, surface: &WlSurface) {
        let Some(client) = surface.client() else {
            return;
        };
        let creds_pid = client
            .get_credentials(&self.display_handle)
            .ok()
            .map(|c| c.pid as u32);
        // Without credentials, the newest app we launched is the best-known owner.
        let fallback = self.apps.running().last().copied();
        let rec = self.clients.entry(client.id()).or_default();
        if rec.pid.is_none() {
            rec.pid = creds_pid.or(fallback);
        }
    }

    /// Make popups fit the output.
    pub fn unconstrain_popup(&self, popup: &smithay::wayland::shell::xdg::PopupSurface) {
        let kind = PopupKind::Xdg(popup.clone());
        let Some(root_id) = self.popup_root_window(&kind) else {
            return;
        };
        let Some(root) = self.windows.get(root_id) else {
            return;
        };
        let toplevel_offset = smithay::desktop::get_popup_toplevel_coords(&kind);
        let mut target: Rectangle<i32, Logical> =
            Rectangle::from_size((self.config.width, self.config.height).into());
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
