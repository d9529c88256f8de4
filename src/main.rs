//! The `wayrig` command: `wayrig run -- APP` hosts apps in Wayrig's compositor,
//! headless or nested; the other commands are the agent CLI over its socket.

/// `eprintln!` for a line the user or a script reads: written whole, in one
/// write. The apps Wayrig starts share its stderr, and `eprintln!` writes a
/// line in pieces, which a busy app's output can land between ("wayrig:
/// started info: main.c:421: foot as pid 7").
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

mod attach;
mod faces;
mod notify;
mod send;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tracing_subscriber::EnvFilter;
use wayrig_agent as agent;
use wayrig_compositor::{CompositorHost, Config, Decorations, Pacing};
use wayrig_host::{Host, LaunchSpec, WindowEvent};
use wayrig_services::{encode_capture, ImageFormat};
use wayrig_sessions::{Live, Spec, Staged};

#[derive(Parser)]
#[command(
    name = "wayrig",
    version,
    about = "A Wayland compositor built to be driven: host GUI apps and automate them"
)]
struct Cli {
    #[command(flatten)]
    common: agent::Common,
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Host APP in a compositor of its own (`wayrig launch` starts more).
    Run(Box<RunArgs>),
    /// Serve the faces for the windows of the desktop this runs in (sway and
    /// other wlroots compositors), instead of hosting apps in Wayrig's own.
    Attach(Box<attach::AttachArgs>),
    /// Serve W3C WebDriver: each WebDriver session starts an isolated
    /// session (its own compositor, buses and directory) and its app.
    Serve(serve::ServeArgs),
    /// Send one request over the MixOS Bus and print its answer's body.
    Send(send::SendArgs),
    /// Read a recording `wayrig run --record DIR` made.
    #[command(subcommand)]
    Trace(TraceCommand),
    #[command(flatten)]
    Agent(agent::AgentCommand),
}

/// How settle judges an app, hosted or attached.
#[derive(Args)]
struct SettleArgs {
    /// Whether a running thread of an app (a worker computing what it will
    /// show), or a timer its main loop wakes for within 250 ms (hosted
    /// apps), keeps its window from settling: on, or off for apps whose
    /// workers or timers never rest.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    settle_threads: bool,
}

#[derive(Args)]
struct RunArgs {
    /// Output size in logical points, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    size: (i32, i32),
    /// Device pixels per logical point (1, 1.25, 2, ...).
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale)]
    scale: f64,
    /// Frame pacing: realtime (virtual 60 Hz output), fast (answer frames at once) or step.
    #[arg(long, default_value = "realtime")]
    pacing: Pacing,
    /// Refresh rate of the virtual output in Hz.
    #[arg(long, default_value_t = 60.0, value_parser = parse_refresh)]
    refresh: f64,
    /// Who draws decorations: client (toolkits draw their own) or server (none drawn).
    #[arg(long, default_value = "client")]
    decorations: Decorations,
    /// Stop sending frame callbacks to minimized and fully covered windows.
    #[arg(long)]
    throttle_hidden: bool,
    #[command(flatten)]
    settle: SettleArgs,
    /// Whether each window's elements are read as soon as it maps, before
    /// a client asks, so the first read asked is quick: on, or off to spend
    /// nothing on elements no client reads.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    read_ahead: bool,
    /// Show the output in a window on your desktop (Wayland or X11).
    #[arg(long)]
    nested: bool,
    /// Keep running after the last app exits (default: stop with it).
    #[arg(long)]
    keep_running: bool,
    /// Extra environment for launched apps, KEY=VALUE (repeatable).
    #[arg(long = "env", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Once the first window has settled, print the windows as JSON lines and
    /// write a PNG of the output to FILE.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// How long to wait for the first window to settle before the screenshot, in ms.
    #[arg(long, default_value_t = 3000)]
    settle_timeout: u64,
    /// Stop after the screenshot (ending the app).
    #[arg(long, requires = "screenshot")]
    once: bool,
    #[command(flatten)]
    faces: faces::FaceArgs,
    /// Record the session into DIR: `video.webm` (the output as drawn),
    /// `trace.jsonl` (every request and answer, input, frame and window
    /// event) and `shots/` (the screen at each action); `wayrig trace view
    /// DIR` makes its viewer.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The most the recording may take on disk (bytes; K, M or G suffixed).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_bytes)]
    record_limit: u64,
    /// Another app to start once the first has started: its argument vector
    /// as a JSON array of strings, run without a shell (repeatable).
    #[arg(long = "launch", value_name = "JSON_ARGV", value_parser = parse_argv)]
    launch: Vec<Argv>,
    /// Check the arguments and exit: status 0 when `run` takes them, 2 and
    /// the reason when not. Starts nothing.
    #[arg(long)]
    check_args: bool,
    /// The app and its arguments, run without a shell.
    #[arg(last = true, required = true, value_name = "APP")]
    app: Vec<String>,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Write DIR/index.html, the recording's viewer: a timeline of the
    /// requests with the screen before and after each, their answers, the
    /// input they sent and the video; it works offline from DIR alone.
    View {
        /// The folder `wayrig run --record DIR` wrote.
        dir: PathBuf,
    },
}

fn parse_size(s: &str) -> Result<(i32, i32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got {s:?}"))?;
    let w: i32 = w.parse().map_err(|_| format!("bad width in {s:?}"))?;
    let h: i32 = h.parse().map_err(|_| format!("bad height in {s:?}"))?;
    if w <= 0 || h <= 0 || w > 16384 || h > 16384 {
        return Err(format!("size {s:?} out of range (1..=16384)"));
    }
    Ok((w, h))
}

fn parse_scale(s: &str) -> Result<f64, String> {
    let scale: f64 = s
        .parse()
        .map_err(|_| format!("expected a number, got {s:?}"))?;
    if !(scale > 0.0 && scale <= 8.0) {
        return Err(format!("scale {s} out of range (0, 8]"));
    }
    Ok(scale)
}

fn parse_refresh(s: &str) -> Result<f64, String> {
    let hz: f64 = s
        .parse()
        .map_err(|_| format!("expected a number, got {s:?}"))?;
    if !(1.0..=1000.0).contains(&hz) {
        return Err(format!("refresh {s} Hz out of range [1, 1000]"));
    }
    Ok(hz)
}

/// An app's argument vector, program first.
#[derive(Clone, Debug)]
struct Argv(Vec<String>);

fn parse_argv(s: &str) -> Result<Argv, String> {
    let argv: Vec<String> = serde_json::from_str(s).map_err(|e| {
        format!("expected a JSON array of strings, like [\"foot\",\"-e\",\"top\"]: {e}")
    })?;
    match argv.first() {
        Some(program) if !program.is_empty() => Ok(Argv(argv)),
        _ => Err("the array must start with the program to run".into()),
    }
}

pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => s.split_at(at),
        None => (s, ""),
    };
    let shift = match unit {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        other => return Err(format!("unknown unit {other:?}: give bytes, or K, M or G")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("expected a size like 500M, got {s:?}"))?;
    n.checked_mul(1 << shift)
        .filter(|&bytes| bytes >= 1 << 20)
        .ok_or_else(|| format!("size {s} out of range (1M up to 16E)"))
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("expected on or off, got {other:?}")),
    }
}

pub(crate) fn parse_env(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    if k.is_empty() {
        return Err(format!("empty variable name in {s:?}"));
    }
    Ok((k.to_string(), v.to_string()))
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,smithay=warn,wayland_backend=off")),
        )
        .with_writer(std::io::stderr)
        // A closed stderr (the reader went away) must not panic the compositor.
        .log_internal_errors(false)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Commands::Run(args) => run(*args),
        Commands::Attach(args) => attach::run(*args),
        Commands::Serve(args) => serve::run(args),
        Commands::Send(args) => send::run(args),
        Commands::Trace(TraceCommand::View { dir }) => {
            wayrig_record::write_viewer(&dir).map(|page| {
                println!("{}", page.display());
            })
        }
        Commands::Agent(command) => agent::run(cli.common, command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say!("wayrig: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The compositor runs on this (main) thread, as the nested window requires;
/// driving it runs on a tokio runtime beside it.
fn run(args: RunArgs) -> Result<(), String> {
    if args.check_args {
        return Ok(());
    }
    let runtime = runtime()?;
    // Told to stop, Wayrig stops what it started (its apps, its bus): listen
    // before starting any of them, and throughout the start.
    let mut stop = runtime
        .block_on(async { StopSignals::listen() })
        .map_err(|e| format!("cannot listen for signals: {e}"))?;
    // An address or token a face may not use stops Wayrig before anything starts.
    let listeners = runtime.block_on(faces::Listeners::bind(&args.faces))?;
    let recording = match &args.record {
        Some(dir) => Some(wayrig_record::Recording::start(dir, args.record_limit)?),
        None => None,
    };
    if let Some(recording) = &recording {
        for secret in args.faces.secrets()? {
            recording.secret(&secret);
        }
    }
    // Every file the session makes (its Wayland socket, its bus's socket and
    // the AT-SPI bus's runtime files) lives under its one private directory,
    // removed when the session ends, however it ended. Faces read
    // accessibility: their session gets a bus of its own first, so that
    // every app starts on it.
    let spec = Spec {
        compositor: Config {
            width: args.size.0,
            height: args.size.1,
            scale: args.scale,
            refresh_mhz: (args.refresh * 1000.0).round() as u32,
            pacing: args.pacing,
            decorations: args.decorations,
            frames_for_hidden: !args.throttle_hidden,
            settle_threads: args.settle.settle_threads,
            nested: args.nested,
            exit_with_last_app: !args.keep_running,
            app_env: args.env.clone(),
            runtime_parent: None,
            record: recording.clone(),
        },
        accessibility: args.faces.any(),
        desktop: None,
        read_ahead: args.read_ahead,
    };
    let staged = runtime.block_on(async {
        tokio::select! {
            staged = Staged::prepare(spec) => staged.map(Some).map_err(|e| e.to_string()),
            _ = stop.recv() => Ok(None),
        }
    })?;
    let Some(staged) = staged else {
        return Ok(());
    };
    let (host, runner) = CompositorHost::start_here(staged.config()).map_err(|e| e.to_string())?;
    let driver = std::thread::spawn(move || {
        runtime.block_on(async move {
            let joined = tokio::select! {
                live = staged.join(host) => live.map_err(|e| e.to_string())?,
                // Dropped unjoined, the compositor stops and the runner returns.
                _ = stop.recv() => return Ok(()),
            };
            drive(joined, args, listeners, stop).await
        })
    });
    runner.run();
    let driven = driver
        .join()
        .map_err(|_| "the driver thread panicked".to_string())?;
    if let Some(recording) = recording {
        recording.finish();
        match recording.incomplete() {
            None => say!("wayrig: recorded to {}", recording.dir().display()),
            Some(why) => say!(
                "wayrig: recorded to {}, incomplete: {why}",
                recording.dir().display()
            ),
        }
    }
    driven
}

/// The runtime the daemon's commands drive their sessions on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// SIGTERM, SIGINT and SIGHUP, caught from the start.
pub(crate) struct StopSignals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub(crate) fn listen() -> std::io::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(StopSignals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Until one of them arrives.
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }
}

async fn drive(
    live: Live,
    args: RunArgs,
    listeners: faces::Listeners,
    mut stop: StopSignals,
) -> Result<(), String> {
    let mut manager = notify::ServiceManager::from_env();
    let outcome = tokio::select! {
        outcome = serve_run(&live, &args, listeners, &mut manager) => outcome,
        _ = stop.recv() => Ok(()),
    };
    if let Some(manager) = &manager {
        manager.stopping();
    }
    live.end().await;
    outcome
}

/// Serve the faces, start the apps, and run until the last app exits or we
/// are told to stop (then the caller ends the session).
async fn serve_run(
    live: &Live,
    args: &RunArgs,
    listeners: faces::Listeners,
    manager: &mut Option<notify::ServiceManager>,
) -> Result<(), String> {
    let host = live.host();
    if let Some(buses) = live.buses() {
        // Other accessibility tools can join the session's bus.
        say!("wayrig: DBUS_SESSION_BUS_ADDRESS={}", buses.session);
    }
    if args.faces.any() {
        listeners.serve(live, &args.faces).await?;
    }
    let info = host.session();
    say!(
        "wayrig: WAYLAND_DISPLAY={} XDG_RUNTIME_DIR={}",
        info.socket_name,
        info.runtime_dir.display()
    );
    let mut watch = host.watch_windows().await.map_err(|e| e.to_string())?;
    let app = host
        .launch(LaunchSpec {
            argv: args.app.clone(),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    say!("wayrig: started {} as pid {}", args.app[0], app.pid);
    for Argv(argv) in &args.launch {
        let also = host
            .launch(LaunchSpec {
                argv: argv.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("cannot start {}: {e}", argv[0]))?;
        say!("wayrig: started {} as pid {}", argv[0], also.pid);
    }
    // Under a service manager, ready means drivable: the faces listen (above)
    // and the session (the faces' view, not only the compositor's) has a window.
    let told = async {
        let mut kept = live.watch_windows();
        if let Ok(list) = kept.wait_for(|l| !l.is_empty()).await {
            if let (Some(manager), Some(first)) = (manager.as_mut(), list.first()) {
                manager.ready(&format!("window {} mapped", first.handle));
            }
        }
        // Told once; then only the end matters.
        std::future::pending::<()>().await
    };
    tokio::pin!(told);

    if let Some(path) = &args.screenshot {
        let first = loop {
            let event = tokio::select! {
                event = watch.events.recv() => event,
                _ = &mut told => continue,
            };
            match event {
                Ok(WindowEvent::Created(info)) => break info,
                Ok(_) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return Err(format!("{} exited before showing a window", args.app[0])),
            }
        };
        match host
            .settle(first.handle, Duration::from_millis(args.settle_timeout))
            .await
        {
            Ok(s) => say!("wayrig: window {} settled in {:?}", s.window, s.waited),
            Err(e) => say!("wayrig: {e}; capturing as it is"),
        }
        let shot = host.capture_output().await.map_err(|e| e.to_string())?;
        let (width, height) = (shot.width, shot.height);
        let png = encode_capture(shot, ImageFormat::Png)
            .await
            .map_err(|e| e.to_string())?;
        std::fs::write(path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        say!("wayrig: wrote {} ({width}x{height})", path.display());
        for w in host.windows().await.map_err(|e| e.to_string())? {
            println!("{}", serde_json::to_string(&w).map_err(|e| e.to_string())?);
        }
        if args.once {
            return Ok(());
        }
    }

    // Run until the compositor stops by itself (last app exited).
    loop {
        tokio::select! {
            event = watch.events.recv() => {
                if let Err(tokio::sync::broadcast::error::RecvError::Closed) = event {
                    break;
                }
            }
            _ = &mut told => {}
        }
    }
    Ok(())
}
