//! Benchmarks of the compositor host, printed as a table of medians: launch to
//! first frame of gtk4-widget-factory, captures with PNG encoding, the session's
//! screenshots (cropped, scaled, encoded), the `wayrig` process's resident
//! memory, and a peer (grim on headless sway) when installed.
//!
//! Run with `cargo bench --bench host` (release build).

mod table;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use table::{median, ms};

use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{Host, LaunchSpec, WindowCommand, WindowEvent};
use wayrig_services::{ImageFormat, LogicalRect, Session, ShotRequest};

const LAUNCHES: usize = 5;
const CAPTURES: usize = 30;

fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
        .unwrap_or(false)
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rt = table::runtime();
    let mut rows: Vec<(String, String, String)> = Vec::new();
    rt.block_on(async {
        let host = Arc::new(
            CompositorHost::start(Config {
                app_env: vec![
                    ("GSK_RENDERER".into(), "cairo".into()),
                    ("NO_AT_BRIDGE".into(), "1".into()),
                ],
                ..Config::default()
            })
            .expect("compositor"),
        );
        let mut watch = host.watch_windows().await.unwrap();

        let mut launches = Vec::new();
        let mut last = None;
        for i in 0..LAUNCHES {
            let t0 = Instant::now();
            host.launch(LaunchSpec {
                argv: vec!["gtk4-widget-factory".into()],
                ..Default::default()
            })
            .await
            .expect("launch gtk4-widget-factory");
            let win = loop {
                match watch.events.recv().await.unwrap() {
                    WindowEvent::Created(w) if w.app_id == "gtk4-widget-factory" => break w,
                    _ => {}
                }
            };
            launches.push(t0.elapsed());
            if i + 1 < LAUNCHES {
                host.window_command(win.handle, WindowCommand::ForceClose)
                    .await
                    .unwrap();
            } else {
                last = Some(win);
            }
        }
        let win = last.unwrap();
        rows.push((
            "launch to first frame, gtk4-widget-factory".into(),
            ms(median(launches)),
            format!("median of {LAUNCHES}"),
        ));

        let mut window_caps = Vec::new();
        let mut size = (0, 0);
        for _ in 0..CAPTURES {
            let t0 = Instant::now();
            let cap = host.capture_window(win.handle).await.unwrap();
            window_caps.push(t0.elapsed());
            size = (cap.width, cap.height);
        }
        rows.push((
            format!("capture window {}x{} + PNG (wayrig)", size.0, size.1),
            ms(median(window_caps)),
            format!("median of {CAPTURES}; window covered or not"),
        ));
        let mut output_caps = Vec::new();
        for _ in 0..CAPTURES {
            let t0 = Instant::now();
            host.capture_output().await.unwrap();
            output_caps.push(t0.elapsed());
        }
        rows.push((
            "capture output 1280x800 + PNG (wayrig)".into(),
            ms(median(output_caps)),
            format!("median of {CAPTURES}"),
        ));
        let session = Session::without_accessibility(host.clone())
            .await
            .expect("session");
        let quarter = LogicalRect {
            x: 320.0,
            y: 200.0,
            width: 640.0,
            height: 400.0,
        };
        for (what, request) in [
            ("PNG as captured", ShotRequest::default()),
            (
                "region 640x400, PNG",
                ShotRequest {
                    region: Some(quarter),
                    ..ShotRequest::default()
                },
            ),
            (
                "scaled to 640, PNG",
                ShotRequest {
                    max_dimension: Some(640),
                    ..ShotRequest::default()
                },
            ),
            (
                "JPEG quality 80",
                ShotRequest {
                    format: ImageFormat::Jpeg { quality: 80 },
                    ..ShotRequest::default()
                },
            ),
            (
                "lossless WebP",
                ShotRequest {
                    format: ImageFormat::Webp,
                    ..ShotRequest::default()
                },
            ),
        ] {
            let mut shots = Vec::new();
            let mut bytes = 0;
            for _ in 0..CAPTURES {
                let t0 = Instant::now();
                bytes = session.screenshot(&request).await.unwrap().image.len();
                shots.push(t0.elapsed());
            }
            rows.push((
                format!("screenshot output 1280x800, {what}"),
                ms(median(shots)),
                format!("median of {CAPTURES}; {} KiB", bytes / 1024),
            ));
        }
        host.shutdown().await;
    });

    if let Some(rss) = wayrig_rss() {
        rows.push((
            "wayrig resident memory, hosting gtk4-widget-factory".into(),
            format!("{rss} MiB"),
            "VmRSS of the wayrig process".into(),
        ));
    }
    let (scan, threads) = thread_look();
    rows.push((
        format!("settle's thread look per tick: 10 apps, {threads} threads"),
        format!("{:.3} ms", scan.as_secs_f64() * 1000.0),
        "median of 200 ticks; only while a settle waits".into(),
    ));
    match grim_on_sway() {
        Ok(d) => rows.push((
            "peer: grim on headless sway, output 1280x800 PNG".into(),
            ms(d),
            format!("median of {CAPTURES}"),
        )),
        Err(why) => rows.push(("peer: grim on headless sway".into(), "-".into(), why)),
    }

    table::print(&rows);
}

/// What settle's look at running threads costs on one tick: ten apps of
/// twenty sleeping threads each, every one looked at.
fn thread_look() -> (Duration, usize) {
    let script = "import threading, time\n\
                  for _ in range(19):\n    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()\n\
                  print('ready', flush=True)\ntime.sleep(120)\n";
    let mut apps: Vec<std::process::Child> = (0..10)
        .map(|_| {
            Command::new("python3")
                .args(["-c", script])
                .stdout(Stdio::piped())
                .process_group(0)
                .spawn()
                .expect("python3")
        })
        .collect();
    for app in &mut apps {
        let mut line = String::new();
        let _ = BufReader::new(app.stdout.take().unwrap()).read_line(&mut line);
    }
    let threads = apps
        .iter()
        .map(|a| {
            std::fs::read_dir(format!("/proc/{}/task", a.id()))
                .map(|d| d.count())
                .unwrap_or(0)
        })
        .sum();
    let mut ticks = Vec::new();
    for _ in 0..200 {
        let t0 = Instant::now();
        for app in &apps {
            std::hint::black_box(wayrig_host::threads::busy_thread(app.id()));
        }
        ticks.push(t0.elapsed());
    }
    for app in &mut apps {
        // SAFETY: kill(2) on the process group each app leads.
        unsafe { libc::kill(-(app.id() as i32), libc::SIGKILL) };
        let _ = app.wait();
    }
    (median(ticks), threads)
}

/// Resident memory of a `wayrig run` process once gtk4-widget-factory shows.
fn wayrig_rss() -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let wayrig = exe.parent()?.parent()?.join("wayrig");
    if !wayrig.exists() {
        eprintln!(
            "{} missing (cargo build --release --bin wayrig); skipping memory",
            wayrig.display()
        );
        return None;
    }
    let shot = std::env::temp_dir().join(format!("wayrig-bench-{}.png", std::process::id()));
    let mut child = Command::new(&wayrig)
        .args(["run", "--settle-timeout", "500", "--screenshot"])
        .arg(&shot)
        .args(["--", "gtk4-widget-factory"])
        .env("GSK_RENDERER", "cairo")
        .env("NO_AT_BRIDGE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    // The window list is printed once the screenshot is written: read until then.
    let mut first_line = String::new();
    BufReader::new(child.stdout.take()?)
        .read_line(&mut first_line)
        .ok()?;
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok();
    // SAFETY: ends the wayrig process group we started; no memory is touched.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGTERM);
    }
    let _ = child.wait();
    let _ = std::fs::remove_file(&shot);
    let kb: u64 = status?
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024)
}

/// Runs a command as `nobody` (sway refuses to run as root).
fn as_nobody(program: &str, runtime: &std::path::Path) -> Command {
    let mut cmd = if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", program]);
        c
    } else {
        Command::new(program)
    };
    cmd.env("XDG_RUNTIME_DIR", runtime).env("HOME", runtime);
    cmd
}

/// grim capturing a headless sway output showing gtk4-widget-factory: the usual
/// way to screenshot from outside a compositor.
fn grim_on_sway() -> Result<Duration, String> {
    if !have("sway") || !have("grim") || !have("swaymsg") {
        return Err("sway or grim not installed (apt-get install sway grim)".into());
    }
    let runtime = std::env::temp_dir().join(format!("wayrig-bench-sway-{}", std::process::id()));
    std::fs::create_dir_all(&runtime).map_err(|e| e.to_string())?;
    // sway says it is up by writing its socket name into a fifo we read.
    let ready = runtime.join("ready");
    let fifo =
        std::ffi::CString::new(ready.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    if unsafe { libc::mkfifo(fifo.as_ptr(), 0o666) } != 0 {
        return Err("cannot make a fifo".into());
    }
    let config = format!(
        "output HEADLESS-1 resolution 1280x800\nexec echo $WAYLAND_DISPLAY > {}\n",
        ready.display()
    );
    std::fs::write(runtime.join("config"), config).map_err(|e| e.to_string())?;
    if unsafe { libc::geteuid() } == 0 {
        let _ = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&runtime)
            .status();
    }
    let _ = Command::new("chmod").arg("700").arg(&runtime).status();
    let mut sway = as_nobody("sway", &runtime)
        .arg("-c")
        .arg(runtime.join("config"))
        .env("WLR_BACKENDS", "headless")
        .env("WLR_LIBINPUT_NO_DEVICES", "1")
        .env("WLR_RENDERER", "pixman")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| e.to_string())?;
    let result = (|| {
        let socket = std::fs::read_to_string(&ready)
            .map_err(|e| e.to_string())?
            .trim()
            .to_string();
        if socket.is_empty() {
            return Err("sway did not start".to_string());
        }
        let sway_sock = std::fs::read_dir(&runtime)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("sway-ipc"))
            })
            .ok_or("no sway IPC socket")?;
        // Wait for the app's window through sway's own event stream.
        let mut events = as_nobody("swaymsg", &runtime)
            .args(["-s"])
            .arg(&sway_sock)
            .args(["-t", "subscribe", "-m", "[\"window\"]"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut app = as_nobody("gtk4-widget-factory", &runtime)
            .env("WAYLAND_DISPLAY", &socket)
            .env("GSK_RENDERER", "cairo")
            .env("NO_AT_BRIDGE", "1")
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut first = String::new();
        BufReader::new(events.stdout.take().ok_or("no swaymsg output")?)
            .read_line(&mut first)
            .map_err(|e| e.to_string())?;
        let _ = events.kill();
        let _ = events.wait();
        let out = runtime.join("grim.png");
        let mut times = Vec::new();
        for _ in 0..CAPTURES {
            let t0 = Instant::now();
            let status = as_nobody("grim", &runtime)
                .arg(&out)
                .env("WAYLAND_DISPLAY", &socket)
                .status()
                .map_err(|e| e.to_string())?;
            if !status.success() {
                return Err(format!("grim failed: {status}"));
            }
            times.push(t0.elapsed());
        }
        // SAFETY: ends the app's process group we started; no memory is touched.
        unsafe {
            libc::kill(-(app.id() as i32), libc::SIGKILL);
        }
        let _ = app.wait();
        Ok(median(times))
    })();
    // SAFETY: ends the sway process group we started; no memory is touched.
    unsafe {
        libc::kill(-(sway.id() as i32), libc::SIGKILL);
    }
    let _ = sway.wait();
    let _ = std::fs::remove_dir_all(&runtime);
    result
}
