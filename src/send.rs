//! `wayrig send`: one ABP request over the MixOS Bus and its answer, as
//! MixOS's own `send` tool makes one, for scripts and the README's examples.

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use wayrig_proto::abp::{Frame, Rc};

/// How long the answer may take.
const ANSWER: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(clap::Args)]
pub struct SendArgs {
    /// The Bus: ws://HOST:PORT/ws, as `wayrig run --bus-listen` prints it.
    #[arg(long, env = "WAYRIG_BUS", value_name = "URL")]
    url: String,
    /// The Bus name to send to (an app's, as `wayrig run` prints it).
    to: String,
    /// The command: `<app>.ui.tree`, `<app>.ui.click`, `HELP`, ...
    command: String,
    /// The body, JSON.
    #[arg(default_value = "{}")]
    body: String,
}

/// Send the request, print the answer's body; a refusal is an error.
pub fn run(args: SendArgs) -> Result<(), String> {
    serde_json::from_str::<serde_json::Value>(&args.body)
        .map_err(|e| format!("the body is not JSON ({e}); quote it, as '{{\"label\": \"7\"}}'"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let answer = runtime.block_on(exchange(&args))?;
    println!("{}", answer.body);
    match answer.rc() {
        Some(Rc::Ok | Rc::Warning) => Ok(()),
        Some(rc) => Err(format!("{} was refused: rc {}", args.command, rc.code())),
        None => Err(format!("the answer to {} carries no rc", args.command)),
    }
}

async fn exchange(args: &SendArgs) -> Result<Frame, String> {
    let (mut ws, _) = tokio_tungstenite::connect_async(&args.url)
        .await
        .map_err(|e| format!("cannot reach the Bus at {}: {e}", args.url))?;
    let id = format!("send-{}", std::process::id());
    let request =
        Frame::request(&args.command, "wayrig-send", &args.to, &id).with_body(args.body.clone());
    ws.send(Message::text(request.serialize()))
        .await
        .map_err(|e| format!("cannot send to the Bus: {e}"))?;
    let waited = tokio::time::timeout(ANSWER, async {
        while let Some(message) = ws.next().await {
            let message = message.map_err(|e| format!("the Bus connection failed: {e}"))?;
            if let Message::Text(text) = message {
                let frame = Frame::parse_strict(text.as_str())
                    .map_err(|e| format!("the Bus sent a frame that is not ABP: {e}"))?;
                if frame.id() == Some(id.as_str()) {
                    return Ok(frame);
                }
            }
        }
        Err("the Bus closed the connection before answering".to_string())
    });
    waited
        .await
        .map_err(|_| format!("no answer from {} within {ANSWER:?}", args.to))?
}
