//! `mygo-automation`: the agent CLI under the name agents' habits and skills
//! already use; the same commands as `wayrig`'s, over the same socket.

use std::process::ExitCode;

use clap::Parser;
use wayrig_agent as agent;

#[derive(Parser)]
#[command(
    name = "mygo-automation",
    version,
    about = "Drive an app over its MyGo automation socket"
)]
struct Cli {
    #[command(flatten)]
    common: agent::Common,
    #[command(subcommand)]
    command: agent::AgentCommand,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match agent::run(cli.common, cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mygo-automation: {e}");
            ExitCode::FAILURE
        }
    }
}
