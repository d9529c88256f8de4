//! WayDriver 0.3.10 doing on gtk4-widget-factory what `benches/peers.rs`
//! times with Wayrig, in its own way: medians of five fresh sessions.
//!
//! Each session is WayDriver's own (a private dbus-daemon, pipewire,
//! wireplumber and `mutter --headless`); the app uses the session bus this
//! runs on, so run it under `dbus-run-session` with `XDG_RUNTIME_DIR` set.
//! Rows are printed as `peer-row<TAB>NAME<TAB>MS` lines, named as Wayrig's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use waydriver::{CompositorRuntime, PointerButton, Session, SessionConfig};
use waydriver_capture_mutter::MutterCapture;
use waydriver_compositor_mutter::MutterCompositor;
use waydriver_input_mutter::MutterInput;

type Failure = Box<dyn std::error::Error>;

const ROUNDS: usize = 5;
const TYPED: &str = "hello wayland";
/// Page 1's check boxes labelled "checkbutton"; the second is the first
/// sensitive, unchecked one in a fresh app (checked before timing).
const CHECK_BOXES: &str = "//Checkbox[@name='checkbutton']";
const CHECK_BOX: &str = "(//Checkbox[@name='checkbutton'])[2]";
const ENTRIES: &str = "//TextBox[@visible='true' and @sensitive='true']";
include!("../../rows.rs");

#[tokio::main]
async fn main() -> Result<(), Failure> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err("run under dbus-run-session: WayDriver's apps use the session bus".into());
    }
    waydriver_compositor_mutter::establish_runtime_root();
    let mut rounds = Vec::new();
    for i in 0..ROUNDS {
        rounds.push(round().await?);
        eprintln!("waydriver: session {} of {ROUNDS} done", i + 1);
    }
    println!("WayDriver 0.3.10 on gtk4-widget-factory, median of {ROUNDS} sessions");
    for (i, name) in ROWS.iter().enumerate() {
        let times: Result<Vec<Duration>, String> = rounds.iter().map(|r| r[i].clone()).collect();
        match times {
            Ok(mut times) => {
                times.sort();
                let median = times[times.len() / 2];
                println!("peer-row\t{name}\t{:.1}", median.as_secs_f64() * 1e3);
            }
            Err(why) => println!("peer-row\t{name}\t{why}"),
        }
    }
    Ok(())
}

/// One fresh session: the five times, in `ROWS` order, or why one failed.
async fn round() -> Result<[Result<Duration, String>; 5], Failure> {
    let began = Instant::now();
    let mut compositor = MutterCompositor::new();
    compositor.start(Some("1280x800"), None).await?;
    let state = compositor
        .state()
        .ok_or("mutter has no state after start")?;
    let input = MutterInput::new(state.clone());
    let capture = MutterCapture::new(state);
    let session = Session::start(
        Box::new(compositor),
        Box::new(input),
        Box::new(capture),
        SessionConfig {
            command: "gtk4-widget-factory".into(),
            args: vec![],
            cwd: None,
            app_name: "widget-factory".into(),
            video_output: None,
            video_bitrate: None,
            video_fps: None,
            prewarm_visual: false,
            visual_region_tuning: Default::default(),
            visual_text_tuning: Default::default(),
            visual_click_tuning: Default::default(),
            gsettings_isolated: true,
            xdg_isolated: true,
            extra_env: vec![("GSK_RENDERER".into(), "cairo".into())],
            capture_external_effects: false,
        },
    )
    .await?;
    let session = Arc::new(session);
    session.set_default_timeout(Duration::from_secs(5));
    // The app is registered; the tree is whole once page 1's check boxes
    // are in it. Asked again at once, as Wayrig's side asks.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !session.dump_tree().await?.contains("name=\"checkbutton") {
        if Instant::now() > deadline {
            return Err("no check boxes in the tree after 30 s".into());
        }
    }
    let launch = began.elapsed();

    let t = Instant::now();
    session.dump_tree().await?;
    let read_again = t.elapsed();

    let check = session.locate(CHECK_BOX);
    let boxes = session.locate(CHECK_BOXES).inspect_all().await?;
    if boxes.len() < 2 || boxes[1].states.iter().any(|s| s == "checked") {
        return Err(format!("{CHECK_BOX} is not an unchecked check box").into());
    }
    // GTK 4.8 answers its AT-SPI action as done and toggles nothing, so the
    // box is clicked where it shows, as Wayrig's press does.
    let t = Instant::now();
    let press = match check.pointer_click(PointerButton::Left).await {
        Ok(()) => check.wait_for_checked().await.map(|_| t.elapsed()),
        Err(e) => Err(e),
    }
    .map_err(|e| format!("failed: {e}"));

    let mut entry = None;
    for candidate in session.locate(ENTRIES).all().await? {
        if candidate.text().await.is_ok_and(|s| s.is_empty()) {
            entry = Some(candidate);
            break;
        }
    }
    let entry = entry.ok_or("no empty entry on page 1")?;
    // Focus is untimed: GTK refuses GrabFocus, so the entry is clicked.
    let typing = match entry.pointer_click(PointerButton::Left).await {
        Ok(()) => {
            let t = Instant::now();
            match session.type_text(TYPED).await {
                Ok(()) => entry
                    .wait_for_text(|s| s == TYPED)
                    .await
                    .map(|_| t.elapsed()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
    .map_err(|e| format!("failed: {e}"));

    let t = Instant::now();
    let png = session.take_screenshot().await?;
    let screenshot = t.elapsed();
    if png.is_empty() {
        return Err("an empty screenshot".into());
    }
    if let Some(path) = std::env::var_os("WAYDRIVER_PEER_SHOT") {
        std::fs::write(path, &png)?;
    }
    drop((check, entry));
    let session = Arc::try_unwrap(session).map_err(|_| "a locator still holds the session")?;
    session.kill().await?;
    Ok([Ok(launch), Ok(read_again), press, typing, Ok(screenshot)])
}
