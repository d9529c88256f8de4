//! The cost of recording (`wayrig run --record`) on a busy app: gtk4-widget-
//! factory, whose spinners draw every frame, hosted with and without a
//! recording; the app's frame rate, Wayrig's CPU and the app's, and what
//! the video kept. Medians of 3 rounds of 5 s each way.
//!
//! Run with `cargo bench --bench record` (release build).

mod table;

use std::sync::Arc;
use std::time::{Duration, Instant};

use wayrig_compositor::{CompositorHost, Config};
use wayrig_host::{FrameWait, Host, LaunchSpec, WindowEvent};
use wayrig_record::Recording;

const ROUNDS: usize = 3;
const SPAN: Duration = Duration::from_secs(5);

/// CPU seconds this process has used (the compositor and the encoder are
/// threads of it).
fn own_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// CPU seconds process `pid` has used.
fn cpu_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|t| t.parse::<f64>().ok()).sum()
    });
    // SAFETY: sysconf reads a constant.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

struct Round {
    fps: f64,
    wayrig_cpu: f64,
    app_cpu: f64,
    video: Option<serde_json::Value>,
}

async fn round(record: bool) -> Round {
    let dir = std::env::temp_dir().join(format!("wayrig-bench-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let recording = record.then(|| Recording::start(&dir, 1 << 34).expect("a recording"));
    let host = Arc::new(
        CompositorHost::start(Config {
            app_env: vec![
                ("GSK_RENDERER".into(), "cairo".into()),
                ("NO_AT_BRIDGE".into(), "1".into()),
            ],
            record: recording.clone(),
            ..Config::default()
        })
        .expect("compositor"),
    );
    let mut watch = host.watch_windows().await.unwrap();
    let app = host
        .launch(LaunchSpec {
            argv: vec!["gtk4-widget-factory".into()],
            ..Default::default()
        })
        .await
        .expect("launch gtk4-widget-factory");
    let window = loop {
        match watch.events.recv().await.unwrap() {
            WindowEvent::Created(w) if w.app_id == "gtk4-widget-factory" => break w.handle,
            _ => {}
        }
    };
    // Past its start-up, into the spinners' steady drawing.
    host.wait_frames(window, FrameWait::Frames(30), Duration::from_secs(10))
        .await
        .expect("the app draws");
    let (commits, own, theirs, t0) = (
        host.commits(window).await.unwrap(),
        own_cpu(),
        cpu_of(app.pid),
        Instant::now(),
    );
    tokio::time::sleep(SPAN).await;
    let elapsed = t0.elapsed().as_secs_f64();
    let fps = (host.commits(window).await.unwrap() - commits) as f64 / elapsed;
    let wayrig_cpu = (own_cpu() - own) / elapsed;
    let app_cpu = (cpu_of(app.pid) - theirs) / elapsed;
    host.shutdown().await;
    drop(host);
    let video = recording.map(|recording| {
        recording.finish();
        let trace = std::fs::read_to_string(dir.join(wayrig_record::TRACE_FILE)).unwrap();
        let end: serde_json::Value = serde_json::from_str(trace.lines().last().unwrap()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        end
    });
    Round {
        fps,
        wayrig_cpu,
        app_cpu,
        video,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    if table::listing_only() {
        return;
    }
    let rt = table::runtime();
    let mut rows: Vec<(String, String, String)> = Vec::new();
    rt.block_on(async {
        let mut off = Vec::new();
        let mut on = Vec::new();
        // Alternated, so that a change in the machine's load falls on both.
        for _ in 0..ROUNDS {
            off.push(round(false).await);
            on.push(round(true).await);
        }
        for (name, rounds) in [("not recorded", &off), ("recorded", &on)] {
            let pick = |f: fn(&Round) -> f64| median(rounds.iter().map(f).collect());
            rows.push((
                format!("gtk4-widget-factory frames/s, {name}"),
                format!("{:.1}", pick(|r| r.fps)),
                "its spinners draw every frame of a 60 Hz output".into(),
            ));
            rows.push((
                format!("Wayrig CPU, {name}"),
                format!("{:.0}%", 100.0 * pick(|r| r.wayrig_cpu)),
                "of one core: compositor, and the encoder when recorded".into(),
            ));
            rows.push((
                format!("app CPU, {name}"),
                format!("{:.0}%", 100.0 * pick(|r| r.app_cpu)),
                "of one core".into(),
            ));
        }
        let frames = |key: &str| {
            median(
                on.iter()
                    .map(|r| r.video.as_ref().unwrap()[key].as_f64().unwrap_or(0.0))
                    .collect(),
            )
        };
        rows.push((
            "video frames encoded, recorded".into(),
            format!("{:.0}", frames("frames_encoded")),
            format!(
                "of {:.0} offered ({:.0} dropped); {:.0} output frames skipped while it was busy; whole run",
                frames("frames_offered"),
                frames("frames_dropped"),
                frames("frames_skipped")
            ),
        ));
        rows.push((
            "video size, recorded".into(),
            format!("{:.1} MB", frames("video_bytes") / 1e6),
            "1280x800 VP8, whole run".into(),
        ));
    });
    table::print_as("value", &rows);
}
