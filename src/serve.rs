//! `wayrig serve --webdriver HOST:PORT`: a W3C WebDriver service where each
//! WebDriver session is an isolated Wayrig session, up to `--max-sessions`.
//!
//! Selenium Grid relays to it as a node's service; loopback only unless a
//! token is set. On SIGTERM every session ends with all it started.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use tokio_util::sync::CancellationToken;
use wayrig_sessions::Sessions;

use crate::StopSignals;

#[derive(Args)]
pub struct ServeArgs {
    /// Serve W3C WebDriver at HOST:PORT (port 0 picks one); a loopback
    /// address unless a token is set.
    #[arg(long, value_name = "HOST:PORT")]
    webdriver: String,
    /// Sessions at most at once; `GET /status` says ready: false when full.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    max_sessions: u32,
    /// A file holding the token every request must carry as
    /// `Authorization: Bearer TOKEN`; with one, any address may be listened on.
    #[arg(long, value_name = "PATH")]
    webdriver_token_file: Option<PathBuf>,
    /// A browser origin allowed to call (repeatable); requests from any
    /// other origin are refused.
    #[arg(long, value_name = "ORIGIN")]
    webdriver_allow_origin: Vec<String>,
    /// Extra environment for every session's apps, KEY=VALUE (repeatable).
    #[arg(long = "env", value_parser = crate::parse_env)]
    env: Vec<(String, String)>,
    /// Record each session into DIR/SESSION-ID, as `wayrig run --record`
    /// does (`wayrig trace view DIR/SESSION-ID` reads one).
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The most each session's recording may take on disk (bytes; K, M or
    /// G suffixed).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = crate::parse_bytes)]
    record_limit: u64,
}

pub fn run(args: ServeArgs) -> Result<(), String> {
    crate::runtime()?.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let mut stop = StopSignals::listen().map_err(|e| format!("cannot listen for signals: {e}"))?;
    let token = match &args.webdriver_token_file {
        Some(path) => Some(crate::faces::read_token("--webdriver-token-file", path)?),
        None => None,
    };
    let listener = wayrig_webdriver::bind(&args.webdriver, token.is_some()).await?;
    if let Some(addr) = listener.addr() {
        say!("wayrig: webdriver listens at http://{addr}");
    }
    let mut sessions = Sessions::new(args.max_sessions as usize);
    if let Some(root) = args.record {
        sessions = sessions.recording_into(root, args.record_limit);
    }
    let sessions = Arc::new(sessions);
    let options = wayrig_webdriver::Options {
        token,
        origins: args.webdriver_allow_origin,
        env: args.env,
    };
    let cancel = CancellationToken::new();
    let served = tokio::spawn(wayrig_webdriver::serve(
        listener,
        sessions,
        options,
        cancel.clone(),
    ));
    stop.recv().await;
    say!("wayrig: stopping: ending every session");
    cancel.cancel();
    served
        .await
        .map_err(|e| format!("the WebDriver server failed: {e}"))?
}
