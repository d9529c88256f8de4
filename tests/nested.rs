//! The nested mode end to end, inside an Xvfb host session: the compositor runs
//! on the main thread (winit requires it), so this test has its own `main`.

mod support;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{have, wait_window, Image, TestClient};
use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::Host;

/// Xvfb in its own process group, ended on drop.
struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the server's own process group; no memory is touched.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// Start Xvfb and learn its display number from -displayfd, which it writes once ready.
fn start_xvfb() -> (Xvfb, String) {
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills two valid descriptors, which we own from here on.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let write_fd = write.as_raw_fd();
    let mut cmd = Command::new("Xvfb");
    cmd.args([
        "-displayfd",
        &write_fd.to_string(),
        "-screen",
        "0",
        "1400x900x24",
        "-nolisten",
        "tcp",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .process_group(0);
    // SAFETY: between fork and exec only fcntl, async-signal-safe, runs: it keeps
    // the pipe's write end open across exec for -displayfd.
    unsafe {
        cmd.pre_exec(move || {
            libc::fcntl(write_fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().expect("start Xvfb");
    drop(write);
    let xvfb = Xvfb(child);
    let mut number = String::new();
    std::fs::File::from(read)
        .read_to_string(&mut number)
        .expect("read display number");
    (xvfb, format!(":{}", number.trim()))
}

fn main() {
    // scripts/install-deps installs both: their absence is a failure, not a skip.
    assert!(
        have("Xvfb") && have("xwininfo"),
        "nested: Xvfb or xwininfo missing (apt-get install xvfb x11-utils)"
    );
    let (_xvfb, display) = start_xvfb();
    // Only this process's main thread exists yet: setting the environment is safe.
    std::env::set_var("DISPLAY", &display);
    let config = Config {
        nested: true,
        app_env: vec![("GSK_RENDERER".into(), "cairo".into())],
        ..Config::default()
    };
    let (host, runner) =
        CompositorHost::start_here(config).expect("nested compositor starts under Xvfb");
    let display_for_check = display.clone();
    let driver = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let result = tokio::spawn(check(host, display_for_check)).await;
            result.map_err(|e| format!("{e}"))
        })
    });
    runner.run();
    match driver.join().expect("driver thread") {
        Ok(()) => {
            println!("test nested_mode_shows_the_output_in_a_window ... ok\n1 passed, 0 failed")
        }
        Err(e) => {
            println!(
                "test nested_mode_shows_the_output_in_a_window ... FAILED\n{e}\n0 passed, 1 failed"
            );
            std::process::exit(1);
        }
    }
}

/// Panics on failure; the host is dropped while unwinding, which stops the runner.
async fn check(host: CompositorHost, display: String) {
    let mut watch = host.watch_windows().await.unwrap();
    let mut client = TestClient::spawn(&host, &["--title", "nested", "--color", "00aa00"]);
    client.expect("idle", Duration::from_secs(10), |_| true);
    let win = wait_window(&mut watch, Duration::from_secs(10), |w| w.title == "nested").await;
    host.settle(win.handle, Duration::from_secs(10))
        .await
        .expect("settles nested");
    let shot = Image::decode(&host.capture_window(win.handle).await.unwrap());
    assert!(shot.share_of([0, 0xaa, 0]) > 0.9);

    // The output is shown in a window on the host session.
    let out = Command::new("xwininfo")
        .args(["-display", &display, "-name", "Wayrig"])
        .output()
        .expect("xwininfo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "no Wayrig window on {display}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("Width: 1280") && text.contains("Height: 800"),
        "{text}"
    );

    // The window shows the output as a capture of it does: upright, pixel for
    // pixel. A GTK window, whose text and widgets are not symmetric top to
    // bottom, tells a flip apart.
    let fixture =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gtk4-fixture.py");
    host.launch(wayrig_host::LaunchSpec {
        argv: vec!["/usr/bin/python3".into(), fixture.to_string_lossy().into()],
        ..Default::default()
    })
    .await
    .expect("the GTK fixture starts");
    let gtk = wait_window(&mut watch, support::APP_START, |w| {
        w.title == "wayrig-gtk4-fixture"
    })
    .await;
    host.settle(gtk.handle, Duration::from_secs(20))
        .await
        .expect("the GTK fixture settles");
    let captured = Image::decode(&host.capture_output().await.unwrap());
    let shown = read_back(&display, &text, captured.width, captured.height);
    let upright = mean_difference(&captured, &shown, false);
    let flipped = mean_difference(&captured, &shown, true);
    assert!(
        upright < 2.0,
        "the nested window differs from a capture of the output by {upright:.1} per \
         channel (flipped top to bottom: {flipped:.1})"
    );
    assert!(
        flipped > 10.0 * upright.max(0.1),
        "the output is too symmetric to tell a flip: {flipped:.1} vs {upright:.1}"
    );
    host.shutdown().await;
}

/// The pixels of the window `xwininfo` described, read from the X server
/// (GetImage on the root window at the window's place), as RGBA rows.
fn read_back(display: &str, xwininfo: &str, width: u32, height: u32) -> Image {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ConnectionExt, ImageFormat};
    let at = |what: &str| -> i16 {
        xwininfo
            .lines()
            .find_map(|l| l.trim().strip_prefix(what))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} in {xwininfo}"))
    };
    let (x, y) = (at("Absolute upper-left X:"), at("Absolute upper-left Y:"));
    let (conn, screen) = x11rb::connect(Some(display)).expect("connect to Xvfb");
    let root = conn.setup().roots[screen].root;
    let image = conn
        .get_image(
            ImageFormat::Z_PIXMAP,
            root,
            x,
            y,
            width as u16,
            height as u16,
            !0,
        )
        .expect("GetImage")
        .reply()
        .expect("GetImage's reply");
    // Xvfb's 24-bit screen: 32 bits a pixel, blue, green, red, unused.
    assert_eq!(
        image.data.len(),
        (width * height * 4) as usize,
        "depth {}",
        image.depth
    );
    let rgba = image
        .data
        .chunks_exact(4)
        .flat_map(|p| [p[2], p[1], p[0], 0xff])
        .collect();
    Image {
        width,
        height,
        rgba,
    }
}

/// The mean difference per colour channel of two images of one size; with
/// `flip`, against `b` turned top to bottom.
fn mean_difference(a: &Image, b: &Image, flip: bool) -> f64 {
    let mut sum = 0u64;
    for y in 0..a.height {
        let by = if flip { b.height - 1 - y } else { y };
        for x in 0..a.width {
            let (p, q) = (a.pixel(x, y), b.pixel(x, by));
            sum += (0..3).map(|c| p[c].abs_diff(q[c]) as u64).sum::<u64>();
        }
    }
    sum as f64 / (a.width * a.height * 3) as f64
}
