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
use fabric_relay::collector::{
    ATOF_BODY_IDLE, Collector, CollectorOptions, MAX_REGISTRATIONS, MEMORY_BUDGET, PUT_TIMEOUT,
};
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::flags::{self, Count, Seconds};
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
    /// Seconds a record waits for room in a full queue (or a publisher for room in the
    /// memory budget) before it is dropped (or the request is answered 503); above 0, at
    /// most 10^9.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = Seconds(PUT_TIMEOUT.as_secs_f64()),
        value_parser = flags::seconds,
        allow_hyphen_values = true
    )]
    backpressure_timeout: Seconds,
    /// Bytes the collector may hold in all: queued records, records being received or
    /// waiting for room, remembered scopes (at least 1048576, one largest record; at most
    /// 2^40). A record that does not fit waits for --backpressure-timeout, then is dropped;
    /// a publisher whose partial record does not fit is then answered 503
    /// `collector_memory_full`.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = Count(MEMORY_BUDGET as u64),
        value_parser = flags::memory_bytes,
        allow_hyphen_values = true
    )]
    memory_budget_bytes: Count,
    /// Live registrations held at most (1 to 2^20); one more is answered 503
    /// `collector_registrations_full`.
    #[arg(
        long,
        value_name = "COUNT",
        default_value_t = Count(MAX_REGISTRATIONS as u64),
        value_parser = flags::count,
        allow_hyphen_values = true
    )]
    max_registrations: Count,
    /// Seconds a publisher's `POST /v1/atof` body may send nothing before its connection is
    /// closed (an inactivity deadline: a body may stream for a whole run while bytes keep
    /// coming; a blank line keeps it alive); above 0, at most a week.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = Seconds(ATOF_BODY_IDLE.as_secs_f64()),
        value_parser = flags::seconds,
        allow_hyphen_values = true
    )]
    body_idle_timeout: Seconds,
}

/// Longest `--body-idle-timeout` accepted, in seconds (one week).
const MAX_BODY_IDLE_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

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
    let body_idle = args.body_idle_timeout.0;
    if body_idle > MAX_BODY_IDLE_SECONDS {
        return invalid(
            codes::COLLECTOR_LISTEN_INVALID,
            "--body-idle-timeout",
            format!(
                "--body-idle-timeout must be a number of seconds above 0 and at most \
                 {MAX_BODY_IDLE_SECONDS}"
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
        memory_budget: args.memory_budget_bytes.get(),
        max_registrations: args.max_registrations.get(),
        body_idle: args.body_idle_timeout.duration(),
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
