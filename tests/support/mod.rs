//! Shared pieces of the end-to-end tests: a compositor per test, the purpose-built
//! test client with its JSON event stream, and waiting on the window event stream.
#![allow(dead_code)] // each test binary uses its own subset

pub mod abp;
pub mod desktop;
pub mod grid;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{Capture, Host, LaunchSpec, WindowEvent, WindowInfo, WindowWatch};
use wayrig_proto::mygo::{Call, Code, ElementPick, WireError};
use wayrig_proto::mygo_client::CallError;
use wayrig_sessions::{Live, Spec};

/// Generous bound for real apps starting on a loaded 2-core machine.
pub const APP_START: Duration = Duration::from_secs(30);

pub fn start(config: Config) -> CompositorHost {
    let on_a_bus = config
        .app_env
        .iter()
        .any(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS");
    CompositorHost::start(test_config(config, on_a_bus)).expect("compositor starts")
}

/// A session made by Wayrig's one recipe (its own directory, private bus
/// and compositor), its apps given the tests' environment.
pub async fn live(config: Config) -> Live {
    live_with(Spec {
        compositor: config,
        accessibility: true,
        desktop: None,
        read_ahead: false,
    })
    .await
}

/// A session made by the recipe from `spec`, its apps given the tests'
/// environment.
pub async fn live_with(spec: Spec) -> Live {
    let on_a_bus = spec.accessibility;
    Live::start(Spec {
        compositor: test_config(spec.compositor, on_a_bus),
        ..spec
    })
    .await
    .expect("session starts")
}

/// The tests' configuration: logs to the test's output, GTK 4 drawn by
/// cairo, and GTK 3 kept off a session bus when there is none.
fn test_config(config: Config, on_a_bus: bool) -> Config {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_test_writer()
        .try_init();
    let mut app_env = config.app_env.clone();
    app_env.push(("GSK_RENDERER".into(), "cairo".into()));
    if !on_a_bus {
        // No session bus: keep GTK3's accessibility bridge from looking for one.
        app_env.push(("NO_AT_BRIDGE".into(), "1".into()));
    }
    Config { app_env, ..config }
}

/// A program Wayrig ships (`wayrig`, `mygo-automation`): the one built with
/// the feature set users get when `WAYRIG_SHIPPED_BINS` names its directory
/// (`scripts/test` builds it so), else the one cargo built for the tests,
/// whose dependencies carry the tests' features too.
pub fn shipped(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("WAYRIG_SHIPPED_BINS").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join(name);
    }
    PathBuf::from(match name {
        "wayrig" => env!("CARGO_BIN_EXE_wayrig"),
        "mygo-automation" => env!("CARGO_BIN_EXE_mygo-automation"),
        other => panic!("{other} is no program Wayrig ships"),
    })
}

/// A binary built beside the test executables (target/<profile>/NAME).
pub fn workspace_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build the workspace binaries first (cargo build --workspace --bins)",
        path.display()
    );
    path
}

/// Say that the test `test` skips, and why: a `SKIPPED` line on the test
/// binary's own stderr, past libtest's capture (which shows a passing
/// test's output to no one), so `scripts/suite-summary` counts the test
/// as skipped, not passed. The caller returns at once.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    // One write, so a line of another thread's output cannot split it.
    let line = format!("SKIPPED {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether a system program is installed, for tests of real apps.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
        .unwrap_or(false)
}

/// Live processes (zombies left out) whose command line or environment
/// contains `text`, each file read as the NUL-separated text /proc gives.
pub fn processes_naming(text: &str, in_environment: bool) -> Vec<i32> {
    let files: &[&str] = if in_environment {
        &["cmdline", "environ"]
    } else {
        &["cmdline"]
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            files.iter().any(|f| {
                std::fs::read(format!("/proc/{pid}/{f}"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(text))
            })
        })
        .filter(|pid| {
            // A zombie has ended; only its parent has not reaped it yet.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.starts_with(" Z"))
            })
        })
        .collect()
}

/// Every thread's stack of a running process, for a failure's message: a
/// wayrig that stopped making progress says where it waits.
pub fn thread_stacks(pid: u32) -> String {
    let out = Command::new("timeout")
        .args(["20", "gdb", "-p", &pid.to_string(), "-batch", "-nx"])
        .args(["-ex", "set pagination off", "-ex", "thread apply all bt 40"])
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!("(no stacks: gdb did not run: {e})"),
    }
}

/// Wait until each process has ended, on its pidfd (which becomes readable
/// when it exits); returns those still running after `timeout`.
pub fn wait_ended(pids: &[i32], timeout: Duration) -> Vec<i32> {
    let deadline = Instant::now() + timeout;
    pids.iter()
        .copied()
        .filter(|&pid| {
            // SAFETY: pidfd_open(2) takes a pid and flags and returns a new fd.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
            if fd < 0 {
                return false; // gone already
            }
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let wait = deadline.saturating_duration_since(Instant::now());
            // SAFETY: one pollfd that lives across the call; the fd is ours to close.
            let ready = unsafe { libc::poll(&mut poll, 1, wait.as_millis() as i32) };
            unsafe { libc::close(fd) };
            ready != 1
        })
        .collect()
}

/// Wait on the window event stream until `pred` holds for some window's
/// new state. The windows a wait reads past join the watch's, so that a
/// later wait finds them (two apps started together map in either order);
/// the one it answers does not: the caller reads what follows of it, and
/// a later wait for such a window wants the next one (a menu opened again).
pub async fn wait_window(
    watch: &mut WindowWatch,
    timeout: Duration,
    pred: impl Fn(&WindowInfo) -> bool,
) -> WindowInfo {
    if let Some(w) = watch.windows.iter().find(|w| pred(w)) {
        return w.clone();
    }
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let ev = tokio::time::timeout_at(deadline, watch.events.recv())
            .await
            .expect("timed out waiting for a window event")
            .expect("window event stream ended");
        match ev {
            WindowEvent::Created(w) | WindowEvent::Updated(w) if pred(&w) => return w,
            WindowEvent::Created(w) | WindowEvent::Updated(w) => {
                match watch
                    .windows
                    .iter_mut()
                    .find(|kept| kept.handle == w.handle)
                {
                    Some(kept) => *kept = w,
                    None => watch.windows.push(w),
                }
            }
            WindowEvent::Closed(handle) => watch.windows.retain(|kept| kept.handle != handle),
        }
    }
}

/// Launch an installed app in the host and wait for its first window.
pub async fn launch_and_wait(host: &dyn Host, argv: &[&str], timeout: Duration) -> WindowInfo {
    let mut watch = host.watch_windows().await.expect("window watch");
    let app = host
        .launch(LaunchSpec {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("launch {argv:?}: {e}"));
    wait_window(&mut watch, timeout, |w| w.pid == Some(app.pid)).await
}

/// Wait for the window with this id to be announced closed.
pub async fn wait_closed(watch: &mut WindowWatch, id: u64, timeout: Duration) {
    wait_event(
        watch,
        timeout,
        |ev| matches!(ev, WindowEvent::Closed(h) if h.id == id),
    )
    .await;
}

/// Wait on the window event stream for the first event for which `pred` holds.
pub async fn wait_event(
    watch: &mut WindowWatch,
    timeout: Duration,
    pred: impl Fn(&WindowEvent) -> bool,
) -> WindowEvent {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let ev = tokio::time::timeout_at(deadline, watch.events.recv())
            .await
            .expect("timed out waiting for a window event")
            .expect("window event stream ended");
        if pred(&ev) {
            return ev;
        }
    }
}

/// A decoded capture: RGBA rows.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    pub fn decode(capture: &Capture) -> Image {
        assert_eq!(
            capture.rgba.len(),
            (capture.width * capture.height * 4) as usize,
            "a capture holds width x height pixels of 4 bytes"
        );
        Image {
            width: capture.width,
            height: capture.height,
            rgba: capture.rgba.clone(),
        }
    }

    pub fn from_png(png: &[u8]) -> Image {
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().expect("valid PNG");
        let mut buf = vec![
            0;
            reader
                .output_buffer_size()
                .expect("a PNG of a size that fits")
        ];
        let info = reader.next_frame(&mut buf).expect("PNG frame");
        assert_eq!(info.color_type, png::ColorType::Rgba);
        buf.truncate(info.buffer_size());
        Image {
            width: info.width,
            height: info.height,
            rgba: buf,
        }
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 4) as usize;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2]]
    }

    /// The part of the image inside `r` (clipped to the image).
    pub fn crop(&self, r: wayrig_host::Rect) -> Image {
        let x0 = r.x.clamp(0, self.width as i32) as u32;
        let y0 = r.y.clamp(0, self.height as i32) as u32;
        let x1 = (r.x + r.width).clamp(0, self.width as i32) as u32;
        let y1 = (r.y + r.height).clamp(0, self.height as i32) as u32;
        let mut rgba = Vec::new();
        for y in y0..y1 {
            let row = ((y * self.width + x0) * 4) as usize;
            rgba.extend_from_slice(&self.rgba[row..row + ((x1 - x0) * 4) as usize]);
        }
        Image {
            width: x1.saturating_sub(x0),
            height: y1.saturating_sub(y0),
            rgba,
        }
    }

    /// How many distinct colours the image has (a blank image has one).
    pub fn distinct_colours(&self) -> usize {
        let mut set = std::collections::HashSet::new();
        for px in self.rgba.chunks_exact(4) {
            set.insert([px[0], px[1], px[2]]);
        }
        set.len()
    }

    /// Share of pixels within a small distance of `rgb`.
    pub fn share_of(&self, rgb: [u8; 3]) -> f64 {
        let near = self
            .rgba
            .chunks_exact(4)
            .filter(|p| (0..3).all(|i| (p[i] as i32 - rgb[i] as i32).abs() <= 16))
            .count();
        near as f64 / (self.width * self.height) as f64
    }
}

/// An app whose stdout is one JSON event per line: the purpose-built Wayland
/// client, or a toolkit fixture. A read takes every line the app wrote
/// before it (what an app printed before it answered a settle is seen once
/// the settle returns), and a thread keeps reading meanwhile, so the app
/// never blocks on a full pipe.
pub struct TestClient {
    pub child: Child,
    events: std::sync::Arc<(std::sync::Mutex<EventReader>, std::sync::Condvar)>,
    /// Every event received so far, in order.
    pub seen: Vec<Value>,
}

/// The app's stdout, read without blocking, and the events read from it.
struct EventReader {
    stdout: std::process::ChildStdout,
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// Events read and not yet taken.
    pending: std::collections::VecDeque<Value>,
    /// Its stdout reached its end.
    ended: bool,
    /// A line that was not JSON.
    bad_line: Option<String>,
}

impl EventReader {
    /// Read every line the app has written so far into `pending`.
    fn read_written(&mut self) {
        use std::io::Read;
        let mut buf = [0u8; 8192];
        while !self.ended {
            match self.stdout.read(&mut buf) {
                Ok(0) => self.ended = true,
                Ok(n) => self.partial.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => self.ended = true,
            }
        }
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]).into_owned();
            match serde_json::from_str::<Value>(&line) {
                Ok(v) => self.pending.push_back(v),
                Err(_) => {
                    self.bad_line.get_or_insert(line);
                }
            }
        }
    }
}

impl TestClient {
    /// The purpose-built client with these arguments.
    pub fn spawn(host: &CompositorHost, args: &[&str]) -> TestClient {
        Self::spawn_program(host, &workspace_binary("wayrig-testclient"), args, &[])
    }

    /// Any program printing JSON lines, in the session's environment plus `env`.
    pub fn spawn_program(
        host: &CompositorHost,
        program: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> TestClient {
        // The host's own launcher command, with stdout kept for the events.
        let env: Vec<(String, String)> = host
            .session()
            .app_env
            .iter()
            .cloned()
            .chain(env.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let mut cmd = wayrig_host::launch::app_command(&program.to_string_lossy(), &args, &env);
        cmd.stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
        let stdout = child.stdout.take().expect("stdout");
        use std::os::fd::AsRawFd;
        let fd = stdout.as_raw_fd();
        // SAFETY: fcntl(2) on the pipe's fd, which `stdout` owns and keeps open.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let events = std::sync::Arc::new((
            std::sync::Mutex::new(EventReader {
                stdout,
                partial: Vec::new(),
                pending: std::collections::VecDeque::new(),
                ended: false,
                bad_line: None,
            }),
            std::sync::Condvar::new(),
        ));
        let shared = events.clone();
        std::thread::spawn(move || loop {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd that lives across the call; the fd stays
            // open while `shared` holds the reader.
            unsafe { libc::poll(&mut poll, 1, 1000) };
            let (reader, told) = &*shared;
            let mut reader = reader.lock().unwrap();
            reader.read_written();
            told.notify_all();
            if reader.ended {
                break;
            }
        });
        TestClient {
            child,
            events,
            seen: Vec::new(),
        }
    }

    /// The next event, waiting up to `deadline` for the app to write it;
    /// `None` at the deadline or the end of its stdout.
    fn next_event(&mut self, deadline: Instant) -> Option<Value> {
        let (reader, told) = &*self.events;
        let mut reader = reader.lock().unwrap();
        loop {
            reader.read_written();
            if let Some(line) = &reader.bad_line {
                panic!("test client printed a non-JSON line {line:?}");
            }
            if let Some(v) = reader.pending.pop_front() {
                return Some(v);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if reader.ended || left.is_zero() {
                return None;
            }
            reader = told.wait_timeout(reader, left).unwrap().0;
        }
    }

    /// Whether the app's stdout has reached its end.
    fn ended(&self) -> bool {
        self.events.0.lock().unwrap().ended
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Read events until one with `"ev": ev` for which `pred` holds; returns it.
    pub fn expect(&mut self, ev: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let Some(v) = self.next_event(deadline) else {
                panic!(
                    "no {ev:?} event from the test client within {timeout:?} (its stdout \
                     ended: {}); seen: {:?}",
                    self.ended(),
                    self.seen
                )
            };
            self.seen.push(v.clone());
            if v["ev"] == ev && pred(&v) {
                return v;
            }
        }
    }

    /// Take every event the app has written so far, without waiting.
    pub fn drain(&mut self) -> Vec<Value> {
        let fresh: Vec<Value> = std::iter::from_fn(|| self.next_event(Instant::now())).collect();
        self.seen.extend(fresh.iter().cloned());
        fresh
    }

    /// Events of one kind seen so far.
    pub fn count(&self, ev: &str) -> usize {
        self.seen.iter().filter(|v| v["ev"] == ev).count()
    }

    /// Wait for the process to exit and return its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            // Reading to the end of stdout is how we learn it exited, without polling.
            match self.next_event(deadline) {
                Some(v) => self.seen.push(v),
                None if self.ended() => break,
                None => panic!("test client did not exit in {timeout:?}"),
            }
        }
        self.child.wait().expect("wait").code()
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the client's own process group; no memory is touched.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// `wayrig run` with an automation socket, in its own process group.
pub struct Wayrig {
    child: Child,
    pub socket: PathBuf,
    pub dir: PathBuf,
    /// The session bus of its apps.
    pub bus_address: String,
    /// Where its cua.env.v1 face listens, when its flags asked for one.
    pub cua_address: Option<String>,
    /// What it printed on stderr, as it comes.
    pub stderr: std::sync::Arc<Lines>,
}

impl Drop for Wayrig {
    fn drop(&mut self) {
        end_group(&mut self.child, Duration::from_secs(20));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// End the process group `leader` leads: TERM, then KILL if the leader is still
/// running after `grace`; then reap it. A stuck process cannot hang the test.
pub fn end_group(leader: &mut Child, grace: Duration) {
    let group = leader.id() as i32;
    // SAFETY: kill(2) on the process group we started; no memory is touched.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    if !wait_ended(&[group], grace).is_empty() {
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let _ = leader.wait();
}

/// A process group started by a test, killed (the whole group) when dropped,
/// on success and panic alike.
pub struct OwnedGroup(pub Child);

impl Drop for OwnedGroup {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group we started; no memory is touched.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

impl Wayrig {
    /// `wayrig run --mygo-socket` hosting the GTK4 fixture; returns once the socket listens.
    pub fn start() -> Wayrig {
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
        Self::start_app(&["/usr/bin/python3", fixture.to_str().unwrap()])
    }

    /// `wayrig run --mygo-socket` hosting `argv`; returns once the socket listens.
    pub fn start_app(argv: &[&str]) -> Wayrig {
        Self::start_with(&[], argv)
    }

    /// `wayrig run --mygo-socket FLAGS -- ARGV`; returns once the socket listens.
    pub fn start_with(flags: &[&str], argv: &[&str]) -> Wayrig {
        let dir = std::env::temp_dir().join(format!(
            "wayrig-mygo-test-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("app.sock");
        let mut child = Command::new(env!("CARGO_BIN_EXE_wayrig"))
            .args(["run", "--mygo-socket"])
            .arg(&socket)
            .args(flags)
            .args(["--env", "GSK_RENDERER=cairo", "--"])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("wayrig runs");
        // wayrig says on stderr which bus its apps use, then that the socket listens.
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let printed = std::sync::Arc::new(Lines::default());
        let lines = printed.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bus = String::new();
            let mut cua = None;
            for line in stderr.lines().map_while(Result::ok) {
                // Shown with the test's output when it fails.
                eprintln!("{line}");
                lines.push(line.clone());
                if let Some(address) = line.strip_prefix("wayrig: DBUS_SESSION_BUS_ADDRESS=") {
                    bus = address.to_string();
                }
                if let Some(address) = line.strip_prefix("wayrig: cua.env.v1 listens at ") {
                    cua = Some(address.to_string());
                }
                // Wayrig says this last of its faces.
                if line.contains("automation socket") {
                    let _ = tx.send((bus.clone(), cua.clone()));
                }
            }
        });
        let (bus_address, cua_address) =
            rx.recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| {
                    panic!(
                        "the automation socket did not listen within 30 s; wayrig's threads:\n{}",
                        thread_stacks(child.id())
                    )
                });
        Wayrig {
            child,
            socket,
            dir,
            bus_address,
            cua_address,
            stderr: printed,
        }
    }
}

impl Wayrig {
    /// The `wayrig` process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where its Bus listens (`--bus-listen`) and the Bus name of its first
    /// app, once it said both.
    pub fn bus_and_app(&self) -> (String, String) {
        let said = self.stderr.wait_for("bus listens at ", "the Bus address");
        let bus = said.split("listens at ").nth(1).unwrap().to_string();
        let said = self
            .stderr
            .wait_for("wayrig: bus name ", "the app's Bus name");
        let app = said.split_whitespace().nth(3).unwrap().to_string();
        (bus, app)
    }
}

/// A cua.env.v1 connection to `address` (HOST:PORT) and the ref of the
/// first window its `ListWindows` gives.
pub async fn cua_first_window(
    address: &str,
) -> (tonic::transport::Channel, wayrig_cua_proto::v1::WindowRef) {
    use wayrig_cua_proto::v1;
    let channel = tonic::transport::Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .expect("the cua face takes a connection");
    let listed = v1::windows_service_client::WindowsServiceClient::new(channel.clone())
        .list_windows(v1::ListWindowsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let window = listed.windows[0].r#ref.clone().expect("a window ref");
    (channel, window)
}

/// `text` typed into `window` over cua.env.v1's Computer `Keyboard`.
pub async fn cua_type(
    channel: tonic::transport::Channel,
    window: wayrig_cua_proto::v1::WindowRef,
    text: &str,
) {
    use wayrig_cua_proto::v1;
    v1::computer_service_client::ComputerServiceClient::new(channel)
        .keyboard(v1::KeyboardRequest {
            target: Some(v1::InputTarget {
                window: Some(window),
                ..Default::default()
            }),
            action: Some(v1::keyboard_request::Action::Type(v1::KeyboardType {
                text: text.into(),
                ..Default::default()
            })),
        })
        .await
        .unwrap();
}

/// A number to keep temporary names of parallel tests apart.
fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish() % 100_000
}

/// A client of the automation protocol: one request line, one answer line.
/// Well-formed requests are typed [`Call`]s; `send_line`, `raw_call` and
/// `raw_error` send lines written by hand, as a foreign client could (bad
/// ones included).
pub struct ProtocolClient {
    client: wayrig_proto::mygo_client::Client,
}

impl ProtocolClient {
    pub fn connect(path: &std::path::Path) -> ProtocolClient {
        let client = wayrig_proto::mygo_client::Client::connect(path).expect("connect");
        client
            .answer_within(Some(Duration::from_secs(60)))
            .expect("a read timeout");
        ProtocolClient { client }
    }

    /// Write `line` (which ends in its newline) and read the answer line as sent.
    pub fn exchange(&mut self, line: &str) -> String {
        self.client
            .exchange(line)
            .unwrap_or_else(|e| panic!("{line:?}: no answer: {e}"))
    }

    /// One line as written (the newline added), its answer as JSON.
    pub fn send_line(&mut self, line: &str) -> Value {
        let answer = self.exchange(&format!("{line}\n"));
        serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("answer {answer:?} is not JSON: {e}"))
    }

    /// A typed request, its result or error (the id it repeats checked).
    pub fn answer(&mut self, call: Call) -> Result<Value, WireError> {
        let method = call.method();
        match self.client.call(call) {
            Ok(result) => Ok(result),
            Err(CallError::App(e)) => Err(e),
            Err(CallError::Link(why)) => panic!("{method}: {why}"),
        }
    }

    /// The result of a request that must succeed.
    pub fn call(&mut self, call: Call) -> Value {
        let method = call.method();
        self.answer(call)
            .unwrap_or_else(|e| panic!("{method}: {e:?}"))
    }

    /// The error code of a request that must fail.
    pub fn error(&mut self, call: Call) -> Code {
        let method = call.method();
        match self.answer(call) {
            Err(e) => e.code,
            Ok(result) => panic!("{method}: expected an error, got {result}"),
        }
    }

    /// The result of a request written by hand that must succeed: for
    /// requests that leave out what a typed call always writes.
    pub fn raw_call(&mut self, method: &str, params: Value) -> Value {
        let line = json!({"id": 1, "method": method, "params": params}).to_string();
        let answer = self.send_line(&line);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The error code, as the wire spells it, of a request written by hand:
    /// params no typed call could carry.
    pub fn raw_error(&mut self, method: &str, params: Value) -> String {
        let line = json!({"id": 1, "method": method, "params": params}).to_string();
        let answer = self.send_line(&line);
        answer["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("{method}: expected an error, got {answer}"))
            .to_string()
    }

    /// The first window the app maps: `idle` with no window waits for it.
    pub fn first_window(&mut self) -> Value {
        let idle = Call::Idle {
            window: None,
            timeout_ms: Some(APP_START.as_millis() as u64),
        };
        if let Err(e) = self.answer(idle) {
            assert_eq!(e.code, Code::Timeout, "idle: {e:?}");
        }
        let windows = self.call(Call::Windows);
        windows["windows"]
            .as_array()
            .and_then(|w| w.first())
            .unwrap_or_else(|| panic!("no window mapped in {APP_START:?}"))
            .clone()
    }
}

/// How `act` names an element of `tree`'s answer: by its id.
pub fn element_id(node: &Value) -> ElementPick {
    let id = node["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("an element's id is a string of digits: {node}"));
    ElementPick::Id(id)
}

/// The id of the element a MyGo `tree` answer holds with `role` and `label`.
pub fn element_labelled(tree: &Value, role: &str, label: &str) -> ElementPick {
    element_id(&node_labelled(tree, role, label))
}

/// The node of a MyGo tree answer with this role and label.
pub fn node_labelled(tree: &Value, role: &str, label: &str) -> Value {
    tree["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["role"] == role && n["label"] == label)
        .cloned()
        .unwrap_or_else(|| panic!("no {role} {label:?} in the tree"))
}

/// The GTK 4 fixture's script.
pub fn gtk4_fixture() -> String {
    fixture_path("gtk4-fixture.py")
}

/// The path of a file in tests/fixtures.
pub fn fixture_path(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The centre of a widget in a fixture's reported layout ({x, y, w, h}).
pub fn layout_centre(layout: &Value, widget: &str) -> (f64, f64) {
    let b = &layout[widget];
    (
        b["x"].as_f64().unwrap() + b["w"].as_f64().unwrap() / 2.0,
        b["y"].as_f64().unwrap() + b["h"].as_f64().unwrap() / 2.0,
    )
}

/// The GTK4 fixture app (tests/fixtures/gtk4-fixture.py) in a host's session.
pub struct Gtk4Fixture {
    pub app: TestClient,
    pub window: wayrig_host::WindowHandle,
    pub info: WindowInfo,
    /// Where its widgets are, as the toolkit laid them out.
    pub layout: Value,
}

impl Gtk4Fixture {
    /// Start it with extra environment; returns once its window has settled.
    pub async fn open(host: &CompositorHost, env: &[(&str, &str)]) -> Gtk4Fixture {
        use wayrig_host::Host;
        let limit = Duration::from_secs(20);
        let mut watch = host.watch_windows().await.unwrap();
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
        let mut app = TestClient::spawn_program(
            host,
            std::path::Path::new("/usr/bin/python3"),
            &[path.to_str().unwrap()],
            env,
        );
        let layout = app.expect("layout", limit, |_| true);
        let pid = Some(app.pid());
        let info = wait_window(&mut watch, limit, |w| {
            w.title == "wayrig-gtk4-fixture" && w.pid == pid
        })
        .await;
        host.settle(info.handle, limit).await.unwrap();
        Gtk4Fixture {
            app,
            window: info.handle,
            info,
            layout,
        }
    }

    pub fn centre(&self, widget: &str) -> (f64, f64) {
        layout_centre(&self.layout, widget)
    }
}

/// Acting on an element by id in the window's tree as it is now, answering
/// the path the action took: what most end-to-end tests check.
pub trait ActById {
    async fn act_by_id(
        &self,
        window: wayrig_host::WindowHandle,
        id: u64,
        action: wayrig_services::Action,
    ) -> Result<wayrig_services::Path, wayrig_services::Error>;
}

impl ActById for wayrig_services::Session {
    async fn act_by_id(
        &self,
        window: wayrig_host::WindowHandle,
        id: u64,
        action: wayrig_services::Action,
    ) -> Result<wayrig_services::Path, wayrig_services::Error> {
        self.act(
            window,
            wayrig_services::ElementRef::Id(id),
            action,
            wayrig_services::ActOptions::default(),
        )
        .await
        .map(|report| report.path)
    }
}

/// Lines a process printed, as they come: waited on, never polled.
#[derive(Default)]
pub struct Lines {
    pub lines: std::sync::Mutex<Vec<String>>,
    added: std::sync::Condvar,
}

impl Lines {
    pub fn push(&self, line: String) {
        self.lines.lock().unwrap().push(line);
        self.added.notify_all();
    }

    pub fn contains(&self, text: &str) -> bool {
        self.lines.lock().unwrap().iter().any(|l| l.contains(text))
    }

    /// The last line holding `text`, once one came; fails saying what never came.
    pub fn wait_for(&self, text: &str, what: &str) -> String {
        let lines = self.lines.lock().unwrap();
        let (lines, _) = self
            .added
            .wait_timeout_while(lines, APP_START, |l| !l.iter().any(|l| l.contains(text)))
            .unwrap();
        let found = lines.iter().rev().find(|l| l.contains(text)).cloned();
        found.unwrap_or_else(|| panic!("{what} never came"))
    }

    /// Until `count` lines hold `text`; fails saying what never came.
    pub fn wait_count(&self, text: &str, count: usize, what: &str) {
        let lines = self.lines.lock().unwrap();
        let seen = |l: &Vec<String>| l.iter().filter(|l| l.contains(text)).count();
        let (lines, _) = self
            .added
            .wait_timeout_while(lines, APP_START, |l| seen(l) < count)
            .unwrap();
        assert!(seen(&lines) >= count, "{what} never came ({count} times)");
    }
}

/// Run a client's script to its end in a process group of its own (killed
/// past `limit`), checking it succeeded and said it was all done.
pub fn run_client(mut command: Command, limit: Duration) {
    let mut client = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the client runs");
    let (out, err) = follow_output(&mut client);
    let (done, finished) = std::sync::mpsc::channel();
    let pid = client.id() as i32;
    let waiter = std::thread::spawn(move || {
        let status = client.wait();
        let _ = done.send(());
        status
    });
    if finished.recv_timeout(limit).is_err() {
        // SAFETY: kill(2) on the client's own process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let status = waiter
        .join()
        .expect("the waiter")
        .expect("the client's status");
    let said = |l: &Lines| l.lines.lock().unwrap().join("\n");
    assert!(
        status.success() && said(&out).contains("all done"),
        "the client failed ({status}):\n{}\n{}",
        said(&out),
        said(&err)
    );
}

/// What a child prints on stdout and on stderr, line by line as it comes;
/// stderr is also shown with the test's output.
pub fn follow_output(child: &mut Child) -> (std::sync::Arc<Lines>, std::sync::Arc<Lines>) {
    let stdout = std::sync::Arc::new(Lines::default());
    let stderr = std::sync::Arc::new(Lines::default());
    let out: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().expect("stdout piped"));
    let err: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().expect("stderr piped"));
    for (pipe, lines, shown) in [(out, stdout.clone(), false), (err, stderr.clone(), true)] {
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if shown {
                    eprintln!("{line}");
                }
                lines.push(line);
            }
        });
    }
    (stdout, stderr)
}

/// Run `wayrig ARGS` (the agent CLI) with its session files under `cache`.
pub fn cli(cache: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wayrig"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("MYGO_AUTOMATION_SESSION")
        .output()
        .expect("wayrig runs")
}

/// `wayrig ARGS`, which must succeed; what it printed.
pub fn cli_ok(cache: &std::path::Path, args: &[&str]) -> String {
    let out = cli(cache, args);
    assert!(
        out.status.success(),
        "wayrig {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A tokio runtime of two workers, for a test's async clients.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Two busy loops beside the app, as a loaded CI machine has; ended with
/// their process group when dropped, and killed by the kernel when the
/// thread that started them ends (a test binary killed by a signal runs
/// no drop: its loops would spin on and load every later run).
pub struct Load(Vec<Child>);

impl Load {
    pub fn start() -> Load {
        Load(
            (0..2)
                .map(|_| {
                    let mut loop_ = Command::new("sh");
                    loop_.args(["-c", "while :; do :; done"]).process_group(0);
                    // SAFETY: prctl is async-signal-safe; nothing else runs
                    // between fork and exec.
                    unsafe {
                        loop_.pre_exec(|| {
                            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 {
                                Ok(())
                            } else {
                                Err(std::io::Error::last_os_error())
                            }
                        });
                    }
                    loop_.spawn().expect("a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            end_group(child, Duration::from_secs(1));
        }
    }
}
