//! The Wayland client side of the portal: the globals it found, the toplevels
//! and outputs the compositor announces, and screencopy frames, read on a thread.
//!
//! Requests go out from any thread (proxies are thread-safe); events are read
//! and dispatched on one thread of its own, into the shared state below.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use wayland_client::globals::{registry_queue_init, GlobalList, GlobalListContents};
use wayland_client::protocol::{
    wl_buffer::WlBuffer, wl_callback, wl_callback::WlCallback, wl_output, wl_output::WlOutput,
    wl_registry::WlRegistry, wl_seat::WlSeat, wl_shm, wl_shm::WlShm, wl_shm_pool::WlShmPool,
};
use wayland_client::{
    event_created_child, Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum,
};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1::{self, ZwlrDataControlDeviceV1},
    zwlr_data_control_manager_v1::ZwlrDataControlManagerV1,
    zwlr_data_control_offer_v1::{self, ZwlrDataControlOfferV1},
    zwlr_data_control_source_v1::{self, ZwlrDataControlSourceV1},
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1::{self, ZwlrForeignToplevelHandleV1},
    zwlr_foreign_toplevel_manager_v1::{self, ZwlrForeignToplevelManagerV1},
};
use wayland_protocols_wlr::screencopy::v1::client::{
    zwlr_screencopy_frame_v1::{self, ZwlrScreencopyFrameV1},
    zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1,
};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};
use wayrig_host::Rect;

use crate::clipboard::{OfferTypes, Selection, SourceText};

/// How long the compositor may take to answer a round trip.
const SYNC_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A toplevel as zwlr_foreign_toplevel_handle_v1 describes it.
#[derive(Debug, Clone)]
pub struct Toplevel {
    pub handle: ZwlrForeignToplevelHandleV1,
    pub title: String,
    pub app_id: String,
    pub maximized: bool,
    pub minimized: bool,
    pub activated: bool,
    pub fullscreen: bool,
    /// Its first `done` arrived: title and app id are known.
    pub ready: bool,
}

/// An output as wl_output describes it.
#[derive(Debug, Clone)]
pub struct Output {
    pub proxy: WlOutput,
    pub name: String,
    pub x: i32,
    pub y: i32,
    pub pixel_width: i32,
    pub pixel_height: i32,
    pub refresh_mhz: u32,
    pub scale: i32,
}

impl Output {
    /// Its place in the global space, logical points.
    pub fn bounds(&self) -> Rect {
        let scale = self.scale.max(1);
        Rect::new(
            self.x,
            self.y,
            self.pixel_width / scale,
            self.pixel_height / scale,
        )
    }
}

/// What the event thread keeps current.
#[derive(Default)]
pub struct Shared {
    /// By the portal's own id, in the order the compositor announced them.
    pub toplevels: Mutex<BTreeMap<u64, Toplevel>>,
    pub outputs: Mutex<Vec<Output>>,
    /// The clipboard as zwlr_data_control_device_v1 last announced it.
    pub selection: Mutex<Selection>,
    next_toplevel: Mutex<u64>,
}

/// The globals the portal binds, each present only if the compositor offers it.
pub struct Globals {
    pub seat: Option<WlSeat>,
    pub shm: Option<WlShm>,
    pub toplevels: Option<ZwlrForeignToplevelManagerV1>,
    pub screencopy: Option<ZwlrScreencopyManagerV1>,
    pub virtual_pointer: Option<ZwlrVirtualPointerManagerV1>,
    pub virtual_keyboard: Option<ZwpVirtualKeyboardManagerV1>,
    pub data_control: Option<ZwlrDataControlManagerV1>,
    /// The seat's clipboard, made at once so its first selection is heard.
    pub clipboard: Option<ZwlrDataControlDeviceV1>,
    /// Every interface the compositor advertised, with its version.
    pub advertised: Vec<(String, u32)>,
}

/// The dispatch state of the event thread.
pub struct Client {
    shared: Arc<Shared>,
    /// Bumped whenever a toplevel's state is complete or one closed.
    changed: watch::Sender<u64>,
}

/// A live connection: its globals, the shared state and a handle to queue on.
pub struct Wayland {
    pub connection: Connection,
    pub queue: QueueHandle<Client>,
    pub globals: Globals,
    pub shared: Arc<Shared>,
    pub changed: watch::Receiver<u64>,
}

impl Wayland {
    /// Connect to $WAYLAND_DISPLAY, bind what is there, read the first state,
    /// and start the event thread.
    pub fn connect() -> Result<Wayland, String> {
        let connection = Connection::connect_to_env().map_err(|e| {
            format!(
                "cannot connect to the desktop's Wayland display (WAYLAND_DISPLAY={:?}): {e}",
                std::env::var("WAYLAND_DISPLAY").unwrap_or_default()
            )
        })?;
        let (list, mut queue) = registry_queue_init::<Client>(&connection)
            .map_err(|e| format!("cannot read the compositor's globals: {e}"))?;
        let qh = queue.handle();
        let globals = bind_globals(&list, &qh);
        let shared = Arc::new(Shared::default());
        let (changed_tx, changed) = watch::channel(0);
        let mut client = Client {
            shared: shared.clone(),
            changed: changed_tx,
        };
        // One round trip announces the outputs' and toplevels' objects, the
        // next their properties.
        for _ in 0..2 {
            queue
                .roundtrip(&mut client)
                .map_err(|e| format!("the compositor went away: {e}"))?;
        }
        std::thread::Builder::new()
            .name("wayrig-portal-events".into())
            .spawn(move || read_events(queue, client))
            .map_err(|e| format!("cannot start the event thread: {e}"))?;
        Ok(Wayland {
            connection,
            queue: qh,
            globals,
            shared,
            changed,
        })
    }

    pub fn flush(&self) -> Result<(), String> {
        self.connection
            .flush()
            .map_err(|e| format!("the compositor went away: {e}"))
    }

    /// Until the compositor has answered every request sent before this one,
    /// and the event thread has handled the events they caused (at most
    /// `SYNC_LIMIT`: a compositor that stops answering is an error, not a hang).
    pub async fn sync(&self) -> Result<(), String> {
        let (done, answered) = tokio::sync::oneshot::channel();
        self.connection
            .display()
            .sync(&self.queue, Mutex::new(Some(done)));
        self.flush()?;
        match tokio::time::timeout(SYNC_LIMIT, answered).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err("the compositor went away".to_string()),
            Err(_) => Err(format!(
                "the compositor did not answer a round trip within {} s",
                SYNC_LIMIT.as_secs()
            )),
        }
    }
}

fn read_events(mut queue: EventQueue<Client>, mut client: Client) {
    loop {
        if let Err(e) = queue.blocking_dispatch(&mut client) {
            tracing::warn!("portal: the compositor connection ended: {e}");
            client.changed.send_modify(|n| *n += 1);
            return;
        }
    }
}

fn bind_globals(list: &GlobalList, qh: &QueueHandle<Client>) -> Globals {
    let advertised: Vec<(String, u32)> = list.contents().with_list(|globals| {
        globals
            .iter()
            .map(|g| (g.interface.clone(), g.version))
            .collect()
    });
    for global in list
        .contents()
        .clone_list()
        .into_iter()
        .filter(|g| g.interface == WlOutput::interface().name)
    {
        let output: WlOutput = list
            .registry()
            .bind(global.name, global.version.min(4), qh, ());
        drop(output);
    }
    let seat: Option<WlSeat> = list.bind(qh, 1..=7, ()).ok();
    // Version 1: the clipboard only; the primary selection is the apps' own.
    let data_control: Option<ZwlrDataControlManagerV1> = list.bind(qh, 1..=1, ()).ok();
    let clipboard = match (&data_control, &seat) {
        (Some(manager), Some(seat)) => Some(manager.get_data_device(seat, qh, ())),
        _ => None,
    };
    Globals {
        seat,
        shm: list.bind(qh, 1..=1, ()).ok(),
        toplevels: list.bind(qh, 1..=3, ()).ok(),
        screencopy: list.bind(qh, 1..=3, ()).ok(),
        virtual_pointer: list.bind(qh, 1..=2, ()).ok(),
        virtual_keyboard: list.bind(qh, 1..=1, ()).ok(),
        data_control,
        clipboard,
        advertised,
    }
}

impl Dispatch<WlRegistry, GlobalListContents> for Client {
    fn event(
        _: &mut Self,
        _: &WlRegistry,
        _: wayland_client::protocol::wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // Outputs plugged in later are not followed; the list is read once.
    }
}

impl Dispatch<WlOutput, ()> for Client {
    fn event(
        client: &mut Self,
        proxy: &WlOutput,
        event: wl_output::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let mut outputs = client.shared.outputs.lock().unwrap();
        let index = match outputs.iter().position(|o| o.proxy == *proxy) {
            Some(i) => i,
            None => {
                outputs.push(Output {
                    proxy: proxy.clone(),
                    name: String::new(),
                    x: 0,
                    y: 0,
                    pixel_width: 0,
                    pixel_height: 0,
                    refresh_mhz: 0,
                    scale: 1,
                });
                outputs.len() - 1
            }
        };
        let output = &mut outputs[index];
        match event {
            wl_output::Event::Geometry { x, y, .. } => {
                output.x = x;
                output.y = y;
            }
            wl_output::Event::Mode {
                flags,
                width,
                height,
                refresh,
            } => {
                let current =
                    matches!(flags, WEnum::Value(f) if f.contains(wl_output::Mode::Current));
                if current {
                    output.pixel_width = width;
                    output.pixel_height = height;
                    output.refresh_mhz = refresh.max(0) as u32;
                }
            }
            wl_output::Event::Scale { factor } => output.scale = factor,
            wl_output::Event::Name { name } => output.name = name,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for Client {
    fn event(
        client: &mut Self,
        _: &ZwlrForeignToplevelManagerV1,
        event: zwlr_foreign_toplevel_manager_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_foreign_toplevel_manager_v1::Event::Toplevel { toplevel } = event {
            let id = {
                let mut next = client.shared.next_toplevel.lock().unwrap();
                *next += 1;
                *next
            };
            client.shared.toplevels.lock().unwrap().insert(
                id,
                Toplevel {
                    handle: toplevel,
                    title: String::new(),
                    app_id: String::new(),
                    maximized: false,
                    minimized: false,
                    activated: false,
                    fullscreen: false,
                    ready: false,
                },
            );
        }
    }

    event_created_child!(Client, ZwlrForeignToplevelManagerV1, [
        zwlr_foreign_toplevel_manager_v1::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ())
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for Client {
    fn event(
        client: &mut Self,
        proxy: &ZwlrForeignToplevelHandleV1,
        event: zwlr_foreign_toplevel_handle_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_foreign_toplevel_handle_v1::Event;
        let mut toplevels = client.shared.toplevels.lock().unwrap();
        let Some((&id, toplevel)) = toplevels.iter_mut().find(|(_, t)| t.handle == *proxy) else {
            return;
        };
        match event {
            Event::Title { title } => toplevel.title = title,
            Event::AppId { app_id } => toplevel.app_id = app_id,
            Event::State { state } => {
                let states: Vec<u32> = state
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                toplevel.maximized = states.contains(&0);
                toplevel.minimized = states.contains(&1);
                toplevel.activated = states.contains(&2);
                toplevel.fullscreen = states.contains(&3);
            }
            Event::Done => {
                toplevel.ready = true;
                drop(toplevels);
                client.changed.send_modify(|n| *n += 1);
            }
            Event::Closed => {
                toplevels.remove(&id);
                drop(toplevels);
                proxy.destroy();
                client.changed.send_modify(|n| *n += 1);
            }
            _ => {}
        }
    }
}

/// What a screencopy frame reports, forwarded to whoever waits on it.
#[derive(Debug)]
pub enum FrameEvent {
    Buffer {
        format: WEnum<wl_shm::Format>,
        width: u32,
        height: u32,
        stride: u32,
    },
    YInverted,
    Damage(Rect),
    BufferDone,
    Ready,
    Failed,
}

impl Dispatch<ZwlrScreencopyFrameV1, mpsc::UnboundedSender<FrameEvent>> for Client {
    fn event(
        _: &mut Self,
        _: &ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        sink: &mpsc::UnboundedSender<FrameEvent>,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_screencopy_frame_v1::Event;
        let forwarded = match event {
            Event::Buffer {
                format,
                width,
                height,
                stride,
            } => FrameEvent::Buffer {
                format,
                width,
                height,
                stride,
            },
            Event::Flags { flags } => match flags {
                WEnum::Value(f) if f.contains(zwlr_screencopy_frame_v1::Flags::YInvert) => {
                    FrameEvent::YInverted
                }
                _ => return,
            },
            Event::Damage {
                x,
                y,
                width,
                height,
            } => FrameEvent::Damage(Rect::new(x as i32, y as i32, width as i32, height as i32)),
            Event::BufferDone => FrameEvent::BufferDone,
            Event::Ready { .. } => FrameEvent::Ready,
            Event::Failed => FrameEvent::Failed,
            _ => return,
        };
        // The waiter may have given up (a settle that saw quiet): nothing to do.
        let _ = sink.send(forwarded);
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for Client {
    fn event(
        client: &mut Self,
        proxy: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_device_v1::Event;
        let mut selection = client.shared.selection.lock().unwrap();
        match event {
            Event::Selection { id } => selection.replaced(id),
            Event::Finished => {
                selection.finished();
                proxy.destroy();
            }
            // Offers are made with their types' list, and heard of in `Selection`.
            _ => {}
        }
    }

    event_created_child!(Client, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, OfferTypes::default())
    ]);
}

impl Dispatch<ZwlrDataControlOfferV1, OfferTypes> for Client {
    fn event(
        _: &mut Self,
        _: &ZwlrDataControlOfferV1,
        event: zwlr_data_control_offer_v1::Event,
        types: &OfferTypes,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_data_control_offer_v1::Event::Offer { mime_type } = event {
            types.0.lock().unwrap().push(mime_type);
        }
    }
}

impl Dispatch<ZwlrDataControlSourceV1, SourceText> for Client {
    fn event(
        client: &mut Self,
        proxy: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        source: &SourceText,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_source_v1::Event;
        match event {
            Event::Send { fd, .. } => source.send(fd),
            Event::Cancelled => {
                source.cancel();
                client.shared.selection.lock().unwrap().lost(proxy);
                proxy.destroy();
            }
            _ => {}
        }
    }
}

impl Dispatch<WlCallback, Mutex<Option<tokio::sync::oneshot::Sender<()>>>> for Client {
    fn event(
        _: &mut Self,
        _: &WlCallback,
        event: wl_callback::Event,
        done: &Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_callback::Event::Done { .. } = event {
            if let Some(done) = done.lock().unwrap().take() {
                let _ = done.send(());
            }
        }
    }
}

/// Objects that send no events the portal reads.
macro_rules! no_events {
    ($($proxy:ty),*) => {$(
        impl Dispatch<$proxy, ()> for Client {
            fn event(
                _: &mut Self,
                _: &$proxy,
                _: <$proxy as Proxy>::Event,
                _: &(),
                _: &Connection,
                _: &QueueHandle<Self>,
            ) {
            }
        }
    )*};
}

no_events!(
    WlSeat,
    WlShm,
    WlShmPool,
    WlBuffer,
    ZwlrScreencopyManagerV1,
    ZwlrVirtualPointerManagerV1,
    ZwlrVirtualPointerV1,
    ZwpVirtualKeyboardManagerV1,
    ZwpVirtualKeyboardV1,
    ZwlrDataControlManagerV1
);

/// An anonymous shared-memory file of `len` bytes holding `contents` at its start.
pub fn memfd(name: &str, len: usize, contents: &[u8]) -> Result<OwnedFd, String> {
    let name = std::ffi::CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: memfd_create with a valid C string; the fd is owned at once.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!(
            "cannot create shared memory: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd was just returned by memfd_create and is ours alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file = std::fs::File::from(fd);
    file.set_len(len as u64)
        .map_err(|e| format!("cannot size shared memory: {e}"))?;
    std::os::unix::fs::FileExt::write_all_at(&file, contents, 0)
        .map_err(|e| format!("cannot fill shared memory: {e}"))?;
    Ok(OwnedFd::from(file))
}

/// One captured frame: pixels as opaque RGBA rows, top row first.
pub struct Pixels {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// The shm buffer a frame is copied into.
pub struct ShmTarget {
    fd: OwnedFd,
    pool: WlShmPool,
    pub buffer: WlBuffer,
    format: wl_shm::Format,
    width: u32,
    height: u32,
    stride: u32,
}

impl ShmTarget {
    pub fn new(
        wayland: &Wayland,
        format: WEnum<wl_shm::Format>,
        width: u32,
        height: u32,
        stride: u32,
    ) -> Result<ShmTarget, String> {
        let shm = wayland
            .globals
            .shm
            .as_ref()
            .ok_or("the compositor offers no wl_shm to copy frames into")?;
        let format = match format {
            WEnum::Value(f @ (wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888))
            | WEnum::Value(f @ (wl_shm::Format::Xbgr8888 | wl_shm::Format::Abgr8888)) => f,
            other => {
                return Err(format!(
                    "the compositor offers frames as {other:?}, which the portal does not read"
                ))
            }
        };
        let len = stride as usize * height as usize;
        if len == 0 || len > (1 << 30) {
            return Err(format!("a {width}x{height} frame cannot be copied"));
        }
        let fd = memfd("wayrig-frame", len, &[])?;
        let pool = shm.create_pool(fd.as_fd(), len as i32, &wayland.queue, ());
        let buffer = pool.create_buffer(
            0,
            width as i32,
            height as i32,
            stride as i32,
            format,
            &wayland.queue,
            (),
        );
        Ok(ShmTarget {
            fd,
            pool,
            buffer,
            format,
            width,
            height,
            stride,
        })
    }

    /// The copied pixels as opaque RGBA, top row first.
    pub fn read(&self, y_inverted: bool) -> Result<Pixels, String> {
        let mut raw = Vec::new();
        let file = std::fs::File::from(
            self.fd
                .try_clone()
                .map_err(|e| format!("cannot read the frame: {e}"))?,
        );
        std::io::BufReader::new(file)
            .read_to_end(&mut raw)
            .map_err(|e| format!("cannot read the frame: {e}"))?;
        let (w, h, stride) = (
            self.width as usize,
            self.height as usize,
            self.stride as usize,
        );
        let bgr = matches!(
            self.format,
            wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888
        );
        let mut rgba = Vec::with_capacity(w * h * 4);
        for row in 0..h {
            let source = if y_inverted { h - 1 - row } else { row };
            let line = &raw[source * stride..source * stride + w * 4];
            for px in line.chunks_exact(4) {
                if bgr {
                    rgba.extend_from_slice(&[px[2], px[1], px[0], 255]);
                } else {
                    rgba.extend_from_slice(&[px[0], px[1], px[2], 255]);
                }
            }
        }
        Ok(Pixels {
            width: self.width,
            height: self.height,
            rgba,
        })
    }
}

impl Drop for ShmTarget {
    fn drop(&mut self) {
        self.buffer.destroy();
        self.pool.destroy();
    }
}
