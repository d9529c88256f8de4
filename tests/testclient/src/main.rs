//! Purpose-built Wayland client that Wayrig's compositor tests drive: deterministic frames and input.
//! Draws wl_shm buffers on one xdg toplevel and reports every event as one JSON line on stdout.

mod cli;
mod signal;

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::process::ExitCode;

use cli::{Command, Frames, Options};
use serde_json::{json, Value};
use wayland_client::backend::WaylandError;
use wayland_client::globals::{registry_queue_init, GlobalListContents};
use wayland_client::protocol::wl_buffer::{self, WlBuffer};
use wayland_client::protocol::wl_callback::{self, WlCallback};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_display::WlDisplay;
use wayland_client::protocol::wl_keyboard::{self, WlKeyboard};
use wayland_client::protocol::wl_pointer::{self, WlPointer};
use wayland_client::protocol::wl_registry::{self, WlRegistry};
use wayland_client::protocol::wl_seat::{self, WlSeat};
use wayland_client::protocol::wl_shm::{self, WlShm};
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{
    delegate_noop, Connection, Dispatch, DispatchError, EventQueue, Proxy, QueueHandle, WEnum,
};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::{self, XdgToplevel};
use wayland_protocols::xdg::shell::client::xdg_wm_base::{self, XdgWmBase};

/// Top-left corner and side length of the white marker square, in buffer pixels.
const SQUARE_AT: u32 = 10;
const SQUARE_SIDE: u32 = 20;

fn main() -> ExitCode {
    let opts = match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Run(opts)) => opts,
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("wayrig-testclient: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wayrig-testclient: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Connects, creates the toplevel and dispatches until closed or disconnected.
fn run(opts: Options) -> Result<(), String> {
    // First of all: until SIGUSR1 is blocked, one would end the process.
    let usr1 = signal::Usr1::open().map_err(|e| format!("cannot watch SIGUSR1: {e}"))?;
    let conn = Connection::connect_to_env()
        .map_err(|e| format!("cannot connect to the compositor: {e}"))?;
    let (globals, mut queue) =
        registry_queue_init::<App>(&conn).map_err(|e| format!("cannot list globals: {e}"))?;
    let qh = queue.handle();

    let compositor: WlCompositor = globals
        .bind(&qh, 1..=4, ())
        .map_err(|e| format!("wl_compositor: {e}"))?;
    let shm: WlShm = globals
        .bind(&qh, 1..=1, ())
        .map_err(|e| format!("wl_shm: {e}"))?;
    let wm_base: XdgWmBase = globals
        .bind(&qh, 1..=6, ())
        .map_err(|e| format!("xdg_wm_base: {e}"))?;
    // Optional: without a seat there is simply no input to report.
    let _seat: Option<WlSeat> = globals.bind(&qh, 1..=8, ()).ok();

    emit("ready", json!({"pid": std::process::id()}));

    let surface = compositor.create_surface(&qh, ());
    let xdg_surface = wm_base.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg_surface.get_toplevel(&qh, ());
    toplevel.set_title(opts.title.clone());
    toplevel.set_app_id(opts.app_id.clone());
    surface.commit();

    let mut app = App {
        opts,
        display: conn.display(),
        shm,
        surface,
        pending: None,
        size: None,
        drawn: 0,
        frames_seen: 0,
        frame_armed: false,
        remap: None,
        remap_asked: false,
        pointer: None,
        keyboard: None,
        running: true,
        fatal: None,
    };
    while app.running {
        match turn(&mut queue, &mut app, &usr1) {
            Ok(()) => {}
            Err(DispatchError::Backend(WaylandError::Io(e))) => {
                eprintln!("wayrig-testclient: compositor went away: {e}");
                return Ok(());
            }
            Err(e) => return Err(format!("wayland error: {e}")),
        }
        if let Some(e) = app.fatal.take() {
            return Err(e);
        }
    }
    Ok(())
}

/// One turn of the event loop: dispatch what is queued, flush, then sleep until
/// the compositor sends something or SIGUSR1 comes, and handle that.
fn turn(
    queue: &mut EventQueue<App>,
    app: &mut App,
    usr1: &signal::Usr1,
) -> Result<(), DispatchError> {
    queue.dispatch_pending(app)?;
    if !app.running || app.fatal.is_some() {
        return Ok(());
    }
    queue.flush()?;
    // None: events were queued meanwhile; the next turn dispatches them first.
    let Some(guard) = queue.prepare_read() else {
        return Ok(());
    };
    let (wayland, signalled) = match signal::wait(guard.connection_fd(), usr1) {
        Ok(ready) => ready,
        Err(e) => {
            app.fatal = Some(format!("cannot wait for events: {e}"));
            return Ok(());
        }
    };
    if wayland {
        match guard.read() {
            Ok(_) => {}
            Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
    } else {
        drop(guard);
    }
    queue.dispatch_pending(app)?;
    if signalled {
        match usr1.take() {
            Ok(true) => app.ask_remap(&queue.handle()),
            Ok(false) => {}
            Err(e) => app.fatal = Some(format!("cannot read SIGUSR1: {e}")),
        }
    }
    Ok(())
}

/// User data of the wl_display.sync a remap sends after its fresh initial commit.
struct RemapSync;

/// A remap under way: the unmap and the fresh initial commit are sent, the
/// buffer is not yet.
struct Remap {
    /// The sync sent after the initial commit is done, so the configure that
    /// answers that commit (sent as the compositor handled it) has arrived.
    synced: bool,
    /// Size from the newest configure since the unmap, acked already.
    configured: Option<(i32, i32)>,
}

struct App {
    opts: Options,
    display: WlDisplay,
    shm: WlShm,
    surface: WlSurface,
    /// Toplevel configure (width, height, states) waiting for its xdg_surface.configure.
    pending: Option<(i32, i32, Vec<u32>)>,
    /// Size of the last committed buffer; `None` until the first frame is drawn.
    size: Option<(u32, u32)>,
    /// Number of buffers committed so far (the next `drawn` event's `n`).
    drawn: u32,
    /// Number of frame callbacks received so far.
    frames_seen: u32,
    /// A frame callback is requested and has not fired yet.
    frame_armed: bool,
    /// Set from the unmap until the remap commits its buffer.
    remap: Option<Remap>,
    /// SIGUSR1 came while the window was not mapped: remap once it is.
    remap_asked: bool,
    pointer: Option<WlPointer>,
    keyboard: Option<WlKeyboard>,
    running: bool,
    /// Set by event handlers when the client cannot go on.
    fatal: Option<String>,
}

impl App {
    /// The size to draw for a configure: the compositor's, or ours where it left it to us.
    fn configured_size(&self, width: i32, height: i32) -> (u32, u32) {
        let pick = |given: i32, fallback: u32| {
            u32::try_from(given)
                .ok()
                .filter(|&v| v > 0)
                .unwrap_or(fallback)
        };
        (pick(width, self.opts.width), pick(height, self.opts.height))
    }

    /// Whether the frame-callback loop should go on after the frames seen so far.
    fn wants_frames(&self) -> bool {
        match self.opts.frames {
            Frames::Forever => true,
            Frames::Count(n) => self.frames_seen < n,
        }
    }

    /// Applies an acked configure: draws at the new size, or just commits the ack.
    fn apply_configure(&mut self, qh: &QueueHandle<Self>, width: i32, height: i32) {
        let size = self.configured_size(width, height);
        match self.size {
            None => {
                let more = self.wants_frames();
                self.draw(qh, size, more);
                if !more {
                    emit("idle", json!({}));
                }
                self.serve_asked_remap(qh);
            }
            // A pending frame callback (if any) is still armed, so none is added here.
            Some(old) if old != size => self.draw(qh, size, false),
            Some(_) => self.surface.commit(),
        }
    }

    /// Handles a frame callback: draws the next frame and decides whether to ask for another.
    fn on_frame(&mut self, qh: &QueueHandle<Self>, time: u32) {
        self.frame_armed = false;
        if self.remap.is_some() {
            // Unmapped: no buffer may be attached before the remap's configure.
            // The remap's own frame picks the loop up again.
            return;
        }
        self.frames_seen += 1;
        emit("frame", json!({"n": self.frames_seen, "time": time}));
        let more = self.wants_frames();
        if let Some(size) = self.size {
            // A slow toolkit: busy drawing, it reads no events until it commits.
            std::thread::sleep(self.opts.draw_time);
            self.draw(qh, size, more);
        }
        if !more {
            emit("idle", json!({}));
        }
    }

    /// SIGUSR1: unmap and remap now if the window is mapped, else once it is.
    fn ask_remap(&mut self, qh: &QueueHandle<Self>) {
        if self.size.is_none() || self.remap.is_some() {
            self.remap_asked = true;
        } else {
            self.unmap(qh);
        }
    }

    fn serve_asked_remap(&mut self, qh: &QueueHandle<Self>) {
        if std::mem::take(&mut self.remap_asked) {
            self.ask_remap(qh);
        }
    }

    /// Unmaps the toplevel and starts mapping it again, as xdg-shell asks of a
    /// surface remapped after an unmap: a fresh initial commit without a buffer,
    /// then (once its configure is acked) a buffer.
    fn unmap(&mut self, qh: &QueueHandle<Self>) {
        self.surface.attach(None, 0, 0);
        self.surface.commit();
        emit("unmapped", json!({}));
        self.surface.commit();
        self.display.sync(qh, RemapSync);
        self.remap = Some(Remap {
            synced: false,
            configured: None,
        });
    }

    /// Maps the toplevel again once the configure answering the fresh initial
    /// commit is acked: draws and commits a buffer at its size.
    fn finish_remap(&mut self, qh: &QueueHandle<Self>) {
        let Some(Remap {
            synced: true,
            configured: Some((width, height)),
        }) = self.remap
        else {
            return;
        };
        self.remap = None;
        let size = self.configured_size(width, height);
        // A callback still armed from before the unmap keeps the loop going.
        let more = self.wants_frames() && !self.frame_armed;
        self.draw(qh, size, more);
        emit("remapped", json!({"width": size.0, "height": size.1}));
        self.serve_asked_remap(qh);
    }

    fn draw(&mut self, qh: &QueueHandle<Self>, size: (u32, u32), want_callback: bool) {
        if let Err(e) = self.try_draw(qh, size, want_callback) {
            self.fatal = Some(format!("cannot draw a {}x{} frame: {e}", size.0, size.1));
        }
    }

    fn try_draw(
        &mut self,
        qh: &QueueHandle<Self>,
        size: (u32, u32),
        want_callback: bool,
    ) -> io::Result<()> {
        let (width, height) = size;
        let too_big = || io::Error::new(io::ErrorKind::InvalidInput, "buffer too large");
        let stride = i32::try_from(width)
            .ok()
            .and_then(|w| w.checked_mul(4))
            .ok_or_else(too_big)?;
        let len = i32::try_from(height)
            .ok()
            .and_then(|h| h.checked_mul(stride))
            .ok_or_else(too_big)?;

        let n = self.drawn;
        // Mixing the frame number into the low bits of blue makes consecutive frames differ.
        let pixels = render(width, height, self.opts.color ^ (n & 0x0f));
        let mut file = File::from(memfd()?);
        file.write_all(&pixels)?;

        // The pool may go as soon as the buffer exists; the buffer keeps the memory mapped.
        let pool = self.shm.create_pool(file.as_fd(), len, qh, ());
        let buffer = pool.create_buffer(
            0,
            width as i32,
            height as i32,
            stride,
            wl_shm::Format::Xrgb8888,
            qh,
            (),
        );
        pool.destroy();

        self.surface.attach(Some(&buffer), 0, 0);
        self.surface.damage(0, 0, width as i32, height as i32);
        if want_callback {
            self.surface.frame(qh, ());
            self.frame_armed = true;
        }
        self.surface.commit();

        self.size = Some(size);
        self.drawn += 1;
        emit("drawn", json!({"n": n, "width": width, "height": height}));
        Ok(())
    }
}

/// XRGB8888 pixels (little-endian B, G, R, X) filled with `rgb` plus the white marker square.
fn render(width: u32, height: u32, rgb: u32) -> Vec<u8> {
    let fill = (0xff00_0000 | rgb).to_le_bytes();
    let white = 0xffff_ffffu32.to_le_bytes();
    let square = SQUARE_AT..SQUARE_AT + SQUARE_SIDE;
    let plain_row: Vec<u8> = (0..width).flat_map(|_| fill).collect();
    let marked_row: Vec<u8> = (0..width)
        .flat_map(|x| if square.contains(&x) { white } else { fill })
        .collect();
    let mut pixels = Vec::with_capacity(plain_row.len() * height as usize);
    for y in 0..height {
        pixels.extend_from_slice(if square.contains(&y) {
            &marked_row
        } else {
            &plain_row
        });
    }
    pixels
}

/// An anonymous, close-on-exec memory file to back a wl_shm pool.
fn memfd() -> io::Result<OwnedFd> {
    // SAFETY: the name is a valid NUL-terminated string and the flags are valid.
    let fd = unsafe { libc::memfd_create(c"wayrig-testclient".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create, so it is open and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Writes `{"ev":EV, ...fields}` as one line on stdout and flushes it, so tests can read it live.
/// `ev` always comes first; the other keys follow in alphabetical order.
fn emit(ev: &str, fields: Value) {
    let mut line = format!("{{\"ev\":{}", Value::from(ev));
    if let Value::Object(fields) = fields {
        for (key, value) in fields {
            line.push_str(&format!(",{}:{value}", Value::String(key)));
        }
    }
    line.push('}');
    let mut out = io::stdout().lock();
    // If the reader has gone away there is nobody to tell; keep serving the compositor.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

fn axis_name(axis: WEnum<wl_pointer::Axis>) -> String {
    match axis {
        WEnum::Value(wl_pointer::Axis::VerticalScroll) => "vertical".into(),
        WEnum::Value(wl_pointer::Axis::HorizontalScroll) => "horizontal".into(),
        other => unknown(other),
    }
}

fn unknown<T: Into<u32>>(value: WEnum<T>) -> String {
    match value {
        WEnum::Value(v) => format!("unknown({})", v.into()),
        WEnum::Unknown(v) => format!("unknown({v})"),
    }
}

impl Dispatch<WlRegistry, GlobalListContents> for App {
    fn event(
        _: &mut Self,
        _: &WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // Globals appearing or vanishing later do not matter to this client.
    }
}

delegate_noop!(App: WlCompositor);
delegate_noop!(App: WlShmPool);
delegate_noop!(App: ignore WlShm);
delegate_noop!(App: ignore WlSurface);

impl Dispatch<WlBuffer, ()> for App {
    fn event(
        _: &mut Self,
        buffer: &WlBuffer,
        event: wl_buffer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_buffer::Event::Release = event {
            buffer.destroy();
        }
    }
}

impl Dispatch<WlCallback, ()> for App {
    fn event(
        app: &mut Self,
        _: &WlCallback,
        event: wl_callback::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let wl_callback::Event::Done { callback_data } = event {
            app.on_frame(qh, callback_data);
        }
    }
}

impl Dispatch<WlCallback, RemapSync> for App {
    fn event(
        app: &mut Self,
        _: &WlCallback,
        event: wl_callback::Event,
        _: &RemapSync,
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let wl_callback::Event::Done { .. } = event {
            if let Some(remap) = &mut app.remap {
                remap.synced = true;
            }
            app.finish_remap(qh);
        }
    }
}

impl Dispatch<XdgWmBase, ()> for App {
    fn event(
        _: &mut Self,
        wm_base: &XdgWmBase,
        event: xdg_wm_base::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let xdg_wm_base::Event::Ping { serial } = event {
            wm_base.pong(serial);
        }
    }
}

impl Dispatch<XdgSurface, ()> for App {
    fn event(
        app: &mut Self,
        xdg_surface: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            xdg_surface.ack_configure(serial);
            if let Some((width, height, states)) = app.pending.take() {
                emit(
                    "configure",
                    json!({"width": width, "height": height, "states": states}),
                );
                if let Some(remap) = &mut app.remap {
                    remap.configured = Some((width, height));
                    app.finish_remap(qh);
                } else {
                    app.apply_configure(qh, width, height);
                }
            }
        }
    }
}

impl Dispatch<XdgToplevel, ()> for App {
    fn event(
        app: &mut Self,
        _: &XdgToplevel,
        event: xdg_toplevel::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            xdg_toplevel::Event::Configure {
                width,
                height,
                states,
            } => {
                let states = states
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                app.pending = Some((width, height, states));
            }
            xdg_toplevel::Event::Close => {
                emit("close", json!({}));
                if !app.opts.refuse_close {
                    app.running = false;
                }
            }
            _ => {}
        }
    }
}

impl Dispatch<WlSeat, ()> for App {
    fn event(
        app: &mut Self,
        seat: &WlSeat,
        event: wl_seat::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        let wl_seat::Event::Capabilities {
            capabilities: WEnum::Value(caps),
        } = event
        else {
            return;
        };
        if caps.contains(wl_seat::Capability::Pointer) {
            app.pointer.get_or_insert_with(|| seat.get_pointer(qh, ()));
        } else if let Some(pointer) = app.pointer.take() {
            if pointer.version() >= 3 {
                pointer.release();
            }
        }
        if caps.contains(wl_seat::Capability::Keyboard) {
            app.keyboard
                .get_or_insert_with(|| seat.get_keyboard(qh, ()));
        } else if let Some(keyboard) = app.keyboard.take() {
            if keyboard.version() >= 3 {
                keyboard.release();
            }
        }
    }
}

impl Dispatch<WlPointer, ()> for App {
    fn event(
        _: &mut Self,
        _: &WlPointer,
        event: wl_pointer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use wl_pointer::Event as E;
        let (ev, fields) = match event {
            E::Enter {
                surface_x,
                surface_y,
                ..
            } => ("enter", json!({"x": surface_x, "y": surface_y})),
            E::Leave { .. } => ("leave", json!({})),
            E::Motion {
                surface_x,
                surface_y,
                ..
            } => ("motion", json!({"x": surface_x, "y": surface_y})),
            E::Button { button, state, .. } => {
                let state = match state {
                    WEnum::Value(wl_pointer::ButtonState::Pressed) => "pressed".into(),
                    WEnum::Value(wl_pointer::ButtonState::Released) => "released".into(),
                    other => unknown(other),
                };
                ("button", json!({"button": button, "state": state}))
            }
            E::Axis { axis, value, .. } => {
                ("axis", json!({"axis": axis_name(axis), "value": value}))
            }
            E::AxisSource { axis_source } => {
                let source = match axis_source {
                    WEnum::Value(wl_pointer::AxisSource::Wheel) => "wheel".into(),
                    WEnum::Value(wl_pointer::AxisSource::Finger) => "finger".into(),
                    WEnum::Value(wl_pointer::AxisSource::Continuous) => "continuous".into(),
                    WEnum::Value(wl_pointer::AxisSource::WheelTilt) => "wheel_tilt".into(),
                    other => unknown(other),
                };
                ("axis_source", json!({"source": source}))
            }
            E::AxisValue120 { axis, value120 } => (
                "axis_value120",
                json!({"axis": axis_name(axis), "value120": value120}),
            ),
            E::AxisDiscrete { axis, discrete } => (
                "axis_discrete",
                json!({"axis": axis_name(axis), "discrete": discrete}),
            ),
            E::AxisStop { axis, .. } => ("axis_stop", json!({"axis": axis_name(axis)})),
            E::Frame => ("pointer_frame", json!({})),
            _ => return,
        };
        emit(ev, fields);
    }
}

impl Dispatch<WlKeyboard, ()> for App {
    fn event(
        _: &mut Self,
        _: &WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use wl_keyboard::Event as E;
        let (ev, fields) = match event {
            // The keymap fd is closed when the event is dropped; only its size is reported.
            E::Keymap { size, .. } => ("keymap", json!({"size": size})),
            E::Enter { .. } => ("kbd_enter", json!({})),
            E::Leave { .. } => ("kbd_leave", json!({})),
            E::Key { key, state, .. } => {
                let state = match state {
                    WEnum::Value(wl_keyboard::KeyState::Pressed) => "pressed".into(),
                    WEnum::Value(wl_keyboard::KeyState::Released) => "released".into(),
                    other => unknown(other),
                };
                ("key", json!({"key": key, "state": state}))
            }
            E::Modifiers {
                mods_depressed,
                mods_latched,
                mods_locked,
                group,
                ..
            } => (
                "modifiers",
                json!({
                    "depressed": mods_depressed,
                    "latched": mods_latched,
                    "locked": mods_locked,
                    "group": group,
                }),
            ),
            _ => return,
        };
        emit(ev, fields);
    }
}
