//! `fabric view [PATH ...] [--listen 127.0.0.1:PORT] [--open]`: serves a local, read-only
//! web page over the runs, batches and trajectories found under the paths (default: the
//! current directory), until `SIGINT`/`SIGTERM`.
//!
//! The first stdout line is the page's URL, `http://127.0.0.1:PORT/?token=TOKEN` (the token
//! is new for every process). Nothing is opened unless `--open` (xdg-open; a failure is a
//! warning on stderr). A non-loopback `--listen` exits 2 naming the flag.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage, codes};
use fabric_view::{View, ViewError, ViewOptions};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::output::{EXIT_INVALID, EXIT_OK, EXIT_RUNTIME, print_error, print_line};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files and directories to look at (batch outputs, RunResult files, `.fabric/`
    /// directories, ATOF/ATIF trajectories, Gym exports). Default: the current directory.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Loopback address to listen on (port 0: any free port); any other address is refused.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Open the page in the browser (xdg-open).
    #[arg(long)]
    open: bool,
}

fn failed(error: &ViewError) -> ExitCode {
    let (stage, exit) = match error {
        ViewError::ListenRefused { .. } | ViewError::Path { .. } => (Stage::Config, EXIT_INVALID),
        _ => (Stage::Start, EXIT_RUNTIME),
    };
    let info = ErrorInfo::new(stage, error.code(), error.to_string())
        .with_metadata("field", error.field());
    print_error(&info, exit)
}

pub fn run(args: Args) -> ExitCode {
    let mut options = ViewOptions::new(if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    });
    options.listen = args.listen;
    // Signals first: a signal during the first scan still stops cleanly.
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        let info = ErrorInfo::new(
            Stage::Start,
            codes::VIEW_START_FAILED,
            "cannot install the SIGINT/SIGTERM handlers",
        );
        return print_error(&info, EXIT_RUNTIME);
    };
    let view = match View::start(options) {
        Ok(view) => view,
        Err(error) => return failed(&error),
    };
    let url = view.url();
    print_line(&url);
    eprintln!("fabric view: serving {url} (Ctrl-C stops)");
    if args.open {
        match std::process::Command::new("xdg-open").arg(&url).spawn() {
            Ok(mut child) => {
                // Reaped when it ends (xdg-open returns once the browser was asked).
                std::thread::spawn(move || child.wait());
            }
            Err(error) => eprintln!("fabric view: warning: cannot run xdg-open: {error}"),
        }
    }
    let _ = signals.forever().next();
    view.close();
    ExitCode::from(EXIT_OK)
}
