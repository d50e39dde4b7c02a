//! `fabric-agent-ctl`: the sandbox runtime server and its command bridge (docs/sandbox.md).
//!
//! ```text
//! fabric-agent-ctl serve
//! fabric-agent-ctl start  --agent NAME --config FILE|-
//! fabric-agent-ctl invoke --agent NAME --runtime-id ID (--input FILE|- | --request FILE|-)
//! fabric-agent-ctl stop   --agent NAME --runtime-id ID
//! fabric-agent-ctl check  [--agent NAME --runtime-id ID [--live|--active|--ready]] [--timeout-seconds S]
//! ```
//!
//! The socket is `$FABRIC_HOST_SOCKET`, else `/sandbox/fabric.sock`. Every command except
//! `serve` prints exactly one JSON response line on stdout and exits 0 only when its status
//! is `succeeded` (for `check`: and the report passed); otherwise 1. `serve` logs to stderr
//! and exits 0 after an orderly shutdown, 1 when it could not start or cleanup is
//! unconfirmed.

#![forbid(unsafe_code)]

mod args;
mod loopback;

use fabric_config::codes;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use fabric_config::bridge::{Operation, SHUTDOWN_SECONDS, Status, message};
use fabric_host::{RunOptions, RuntimeServer};
use fabric_sandbox::bridge::{Client, Server, ShutdownOutcome, socket_from_env};

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.first().map(String::as_str) == Some("serve") {
        return serve(&arguments[1..]);
    }
    if arguments.first().map(String::as_str) == Some("connect") {
        return loopback::connect(&arguments[1..]);
    }
    let operation = arguments
        .first()
        .and_then(|a| Operation::parse(a))
        .map_or("unknown", Operation::as_str);
    let response = match args::parse_command(&arguments) {
        Ok(command) => {
            let mut client = Client::from_env();
            if let Some(timeout) = command.timeout {
                client.set_timeout(timeout);
            }
            client.call(&command.request)
        }
        Err(failure) => fabric_config::bridge::Response::failed(operation, &failure),
    };
    let line = response.encode();
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(&line);
    let _ = stdout.flush();
    let passed = response.status == Status::Succeeded
        && (response.operation != "check"
            || response.result.get("outcome").and_then(|o| o.as_str()) == Some("passed"));
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn serve(rest: &[String]) -> ExitCode {
    if let Some(extra) = rest.first() {
        eprintln!("fabric-agent-ctl serve: invalid_request: unexpected argument `{extra}`");
        return ExitCode::FAILURE;
    }
    let socket = socket_from_env();
    let server = match Server::bind(&socket, |dir| {
        RuntimeServer::with_options(RunOptions::with_base_dir(dir))
    }) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("fabric-agent-ctl serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The allow-listed host loopback ports (container provider, `network` mode `loopback`),
    // relayed while the server runs.
    let _relays = match loopback::relays(&socket) {
        Ok(relays) => relays,
        Err(error) => {
            eprintln!("fabric-agent-ctl serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    let stopper = server.stopper();
    let signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ]);
    match signals {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if signals.forever().next().is_some() {
                    stopper.stop();
                    // The watchdog bounds exit when a runtime's work does not end.
                    std::thread::sleep(Duration::from_secs(SHUTDOWN_SECONDS));
                    eprintln!(
                        "fabric-agent-ctl serve: cleanup_unconfirmed: {}",
                        message(codes::CLEANUP_UNCONFIRMED)
                    );
                    std::process::exit(1);
                }
            });
        }
        Err(error) => {
            eprintln!(
                "fabric-agent-ctl serve: host_unavailable: cannot install signal handlers: {error}"
            );
            return ExitCode::FAILURE;
        }
    }
    eprintln!("fabric-agent-ctl serve: listening on {}", socket.display());
    match server.run() {
        Ok(ShutdownOutcome::Clean { .. }) => ExitCode::SUCCESS,
        Ok(ShutdownOutcome::Unconfirmed) => {
            eprintln!(
                "fabric-agent-ctl serve: cleanup_unconfirmed: {}",
                message(codes::CLEANUP_UNCONFIRMED)
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("fabric-agent-ctl serve: {error}");
            ExitCode::FAILURE
        }
    }
}
