//! `wayrig send`: one ABP request over the MixOS Bus and its answer, as
//! MixOS's own `send` tool makes one, for scripts and the README's examples.

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use wayrig_proto::abp::{Frame, Rc};

/// How long the answer may take.
const ANSWER: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(clap::Args)]
pub struct SendArgs {
    /// The Bus: ws://HOST:PORT/ws, as `wayrig run --bus-listen` prints it
    /// (or first among the arguments, as `wayrig send ws://… TO COMMAND`).
    #[arg(long, env = "WAYRIG_BUS", value_name = "URL")]
    url: Option<String>,
    /// [URL] TO COMMAND [BODY]: the Bus name to send to (an app's, as `wayrig
    /// run` prints it), the command (`<app>.ui.tree`, `HELP`, ...) and its
    /// JSON body (default `{}`).
    #[arg(value_name = "ARGS", num_args = 2..=4, required = true)]
    args: Vec<String>,
}

/// One request, its parts in place.
struct Request {
    url: String,
    to: String,
    command: String,
    body: String,
}

impl SendArgs {
    /// A first argument that is a ws:// URL is the Bus, else `--url` or $WAYRIG_BUS.
    fn request(self) -> Result<Request, String> {
        let mut args = self.args.into_iter().peekable();
        let url = match args.next_if(|a| a.starts_with("ws://") || a.starts_with("wss://")) {
            Some(url) => url,
            None => self.url.ok_or(
                "which Bus? give its ws://HOST:PORT/ws URL first, as --url, or in WAYRIG_BUS",
            )?,
        };
        let rest: Vec<String> = args.collect();
        match rest.as_slice() {
            [to, command] => Ok(Request {
                url,
                to: to.clone(),
                command: command.clone(),
                body: "{}".into(),
            }),
            [to, command, body] => Ok(Request {
                url,
                to: to.clone(),
                command: command.clone(),
                body: body.clone(),
            }),
            _ => Err("give TO COMMAND [BODY] after the URL".into()),
        }
    }
}

/// Send the request, print the answer's body; a refusal is an error.
pub fn run(args: SendArgs) -> Result<(), String> {
    let args = args.request()?;
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

async fn exchange(args: &Request) -> Result<Frame, String> {
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
