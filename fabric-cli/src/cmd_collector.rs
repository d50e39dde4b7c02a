//! `fabric collector serve`: the Relay ATOF collector as a standalone process, so one
//! collector serves many runtimes (their `nemo-fabric-stream` sinks point at it).
//!
//! The first stdout line is `{"base_url", "token"?, "token_source"}` (the token only when
//! it was generated: one from the environment is never printed). `SIGINT`/`SIGTERM` stop
//! the collector; a last line `{"stopped": true, "stats": {...}}` reports its counters and
//! the command exits 0.

use fabric_config::codes;
use std::net::SocketAddr;
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage};
use fabric_relay::collector::{Collector, CollectorOptions, PUT_TIMEOUT};
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::flags::{self, Seconds};
use crate::output::{EXIT_INVALID, EXIT_OK, EXIT_RUNTIME, print_error, print_line};

/// Shortest bearer token accepted from the environment (as upstream's collector).
const MIN_TOKEN_CHARS: usize = 32;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Serve the collector until SIGINT/SIGTERM.
    Serve(ServeArgs),
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Environment variable holding the bearer token (at least 32 ASCII characters);
    /// when it is unset a token is generated and printed on the first line.
    #[arg(long, default_value = "FABRIC_COLLECTOR_TOKEN")]
    token_env: String,
    /// Allow a non-loopback listen address (the token then crosses the network in clear
    /// text: put TLS in front).
    #[arg(long)]
    allow_non_loopback: bool,
    /// Seconds a record waits for room in a full queue before it is dropped (above 0, at
    /// most 10^9).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = Seconds(PUT_TIMEOUT.as_secs_f64()),
        value_parser = flags::seconds,
        allow_hyphen_values = true
    )]
    backpressure_timeout: Seconds,
}

fn invalid(code: &str, field: &str, message: String) -> ExitCode {
    let info = ErrorInfo::new(Stage::Config, code, message).with_metadata("field", field);
    print_error(&info, EXIT_INVALID)
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        Sub::Serve(args) => serve(args),
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    if !args.listen.ip().is_loopback() && !args.allow_non_loopback {
        return invalid(
            codes::COLLECTOR_LISTEN_INVALID,
            "--listen",
            format!(
                "--listen {} is not a loopback address; pass --allow-non-loopback to serve it",
                args.listen
            ),
        );
    }
    let from_env = std::env::var(&args.token_env)
        .ok()
        .map(|token| token.trim().to_owned());
    if let Some(token) = &from_env
        && (token.chars().count() < MIN_TOKEN_CHARS || !token.is_ascii() || token.contains(' '))
    {
        return invalid(
            codes::COLLECTOR_TOKEN_INVALID,
            "--token-env",
            format!(
                "the environment variable {} must hold an ASCII token of at least \
                 {MIN_TOKEN_CHARS} characters without spaces",
                args.token_env
            ),
        );
    }
    // Signals first: a signal during start still stops cleanly.
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        let info = ErrorInfo::new(
            Stage::Start,
            codes::COLLECTOR_START_FAILED,
            "cannot install the SIGINT/SIGTERM handlers",
        );
        return print_error(&info, EXIT_RUNTIME);
    };
    let options = CollectorOptions {
        listen: args.listen,
        token: from_env.clone(),
        put_timeout: args.backpressure_timeout.duration(),
    };
    let collector = match Collector::start(&options) {
        Ok(collector) => collector,
        Err(error) => return print_error(&ErrorInfo::from(error), EXIT_RUNTIME),
    };
    let mut first = json!({
        "base_url": collector.base_url(),
        "atof_url": format!("{}/v1/atof", collector.base_url()),
        "token_source": if from_env.is_some() { "env" } else { "generated" },
        "token_env": args.token_env,
    });
    if from_env.is_none() {
        first["token"] = json!(collector.token());
    }
    print_line(&first.to_string());
    let _ = signals.forever().next();
    let stats = collector.stats();
    collector.close();
    print_line(&json!({"stopped": true, "stats": stats}).to_string());
    ExitCode::from(EXIT_OK)
}
