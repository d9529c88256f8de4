//! `wayrig attach`: the faces served for the windows of the desktop Wayrig runs
//! in, over the portal host, with the desktop's own session and AT-SPI buses.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use wayrig_host::{Host, LaunchSpec};
use wayrig_portal::{InputChoice, PortalHost};
use wayrig_services::{Buses, Session};

use wayrig_sessions::Live;

use crate::faces::{FaceArgs, Listeners};
use crate::StopSignals;

#[derive(Args)]
pub struct AttachArgs {
    #[command(flatten)]
    faces: FaceArgs,
    /// sway's IPC socket, where window places, pids and focus are read
    /// (default: $SWAYSOCK; without it, window places are unknown).
    #[arg(long, value_name = "PATH", env = "SWAYSOCK")]
    swaysock: Option<PathBuf>,
    /// Which devices carry input: `uinput` (any compositor that reads libinput;
    /// needs a writable /dev/uinput), `virtual` (the wlroots virtual pointer and
    /// keyboard, which type any script), or `auto`: uinput where it is writable.
    #[arg(long, value_name = "HOW", default_value = "auto", value_parser = parse_input)]
    input: InputChoice,
    #[command(flatten)]
    settle: crate::SettleArgs,
    /// An app to start on the desktop (its display, its buses), run without a
    /// shell; Wayrig ends it when it stops, and nothing else it did not start.
    #[arg(last = true, value_name = "APP")]
    app: Vec<String>,
}

fn parse_input(s: &str) -> Result<InputChoice, String> {
    match s {
        "auto" => Ok(InputChoice::Auto),
        "uinput" => Ok(InputChoice::Uinput),
        "virtual" => Ok(InputChoice::Virtual),
        other => Err(format!("{other:?} is none of uinput, virtual, auto")),
    }
}

pub fn run(args: AttachArgs) -> Result<(), String> {
    if !args.faces.any() {
        return Err(
            "attach serves faces: give --mygo-socket, --bus-listen, --bus-connect or --cua-listen"
                .into(),
        );
    }
    crate::runtime()?.block_on(attach(args))
}

async fn attach(args: AttachArgs) -> Result<(), String> {
    let mut stop = StopSignals::listen().map_err(|e| format!("cannot listen for signals: {e}"))?;
    let listeners = Listeners::bind(&args.faces).await?;
    // A start that sticks (a desktop that does not answer) still stops on a signal.
    let live = tokio::select! {
        live = attached(&args) => live?,
        _ = stop.recv() => return Ok(()),
    };
    let served = tokio::select! {
        served = serve(&live, &args, listeners) => Some(served),
        _ = stop.recv() => None,
    };
    let outcome = match served {
        None => Ok(()),
        Some(Err(e)) => Err(e),
        Some(Ok(())) => tokio::select! {
            _ = stop.recv() => Ok(()),
            _ = live.host().disconnected() => Err("the desktop's compositor ended".to_string()),
        },
    };
    live.end().await;
    outcome
}

/// The session over the desktop: its compositor through the portal host,
/// and its own buses when it has them.
async fn attached(args: &AttachArgs) -> Result<Live<PortalHost>, String> {
    let host = PortalHost::attach(args.swaysock.clone(), args.input).await?;
    host.set_settle_threads(args.settle.settle_threads);
    let host = Arc::new(host);
    say!("wayrig: input through {}", host.input_source());
    if args.swaysock.is_none() {
        say!("wayrig: no $SWAYSOCK: window places and pids are unknown");
    }
    for limit in host.limits() {
        say!(
            "wayrig: attach cannot {:?}: {}",
            limit.capability,
            limit.reason
        );
    }
    let session = match std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        Ok(address) if !address.is_empty() => {
            let buses = Buses::of_desktop(&address)
                .await
                .map_err(|e| e.to_string())?;
            Session::new(host.clone(), buses).await
        }
        _ => {
            say!(
                "wayrig: no DBUS_SESSION_BUS_ADDRESS: serving windows, input and capture \
                 without the apps' accessibility"
            );
            Session::without_accessibility(host.clone()).await
        }
    };
    match session {
        Ok(session) => Ok(Live::new(host, session, None, None)),
        Err(e) => {
            host.shutdown().await;
            Err(e.to_string())
        }
    }
}

/// Serve the faces and start the app, if one is given.
async fn serve(
    live: &Live<PortalHost>,
    args: &AttachArgs,
    listeners: Listeners,
) -> Result<(), String> {
    listeners.serve(live, &args.faces).await?;
    if let Some(program) = args.app.first() {
        let app = live
            .host()
            .launch(LaunchSpec {
                argv: args.app.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| e.to_string())?;
        say!("wayrig: started {program} as pid {}", app.pid);
    }
    say!("wayrig: attached");
    Ok(())
}
