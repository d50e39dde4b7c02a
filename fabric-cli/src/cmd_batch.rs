//! `fabric batch CONFIG --items ITEMS.jsonl --output RESULTS.jsonl [--concurrency N]
//! [--isolation fresh|reuse] [--attempts N] [--timeout S] [--retry-failed]
//! [--capture-model-calls [--max-model-calls N] [--max-total-tokens N]] [--json]`.
//!
//! Runs every item of ITEMS (one JSON line each; `-` reads stdin as a stream) through the
//! config with `fabric-batch`, appending one line per finished item to RESULTS in
//! completion order; items whose id already has a line there are skipped (resume). On a
//! terminal: a progress bar on stderr and the summary as a table; piped or with `--json`:
//! the summary as JSON on stdout.
//!
//! Signals: the first `SIGINT`/`SIGTERM` stops taking items and lets in-flight items
//! finish within `--grace` seconds, then stops their runtimes; a second stops them at once.
//! Exit codes: 0 every item has a succeeded result; 1 some failed or errored; 2 bad input
//! (config, items, output; nothing runs for a bad items file); 130 (`SIGINT`) or 143
//! (`SIGTERM`) after a cancelled batch.

use std::io::{BufReader, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use fabric_batch::{Batch, BatchLine, BatchOptions, BatchSummary, Cancel, Isolation, Output};
use fabric_config::{ErrorInfo, Stage, codes};
use fabric_host::Fabric;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::common::{read_config, runtime_options};
use crate::output::{
    EXIT_FAILED, EXIT_INVALID, EXIT_OK, exit_for, print_error, print_json, print_line,
};

/// Arguments of `fabric batch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// JSON-lines items: a RunRequest object, any other JSON value (the input), or
    /// {"id": ..., "requests": [...]} (turns on one runtime); `-` reads stdin.
    #[arg(long)]
    pub items: PathBuf,
    /// Results file (JSON lines, appended; ids already there are skipped).
    #[arg(long)]
    pub output: PathBuf,
    /// Items run at once [default: the number of cores].
    #[arg(long, value_name = "COUNT", allow_hyphen_values = true, value_parser = crate::flags::count)]
    pub concurrency: Option<crate::flags::Count>,
    /// `fresh` (a new runtime per item) or `reuse` (runtimes handed to the next item; a
    /// runtime keeps its conversation).
    #[arg(long, default_value = "fresh", value_parser = ["fresh", "reuse"])]
    pub isolation: String,
    /// Attempts per item; runtime failures (start failed, host crashed, host timeout) are
    /// retried with backoff and jitter.
    #[arg(long, value_name = "COUNT", allow_hyphen_values = true, default_value_t = crate::flags::Count(1), value_parser = crate::flags::count)]
    pub attempts: crate::flags::Count,
    /// Seconds one item (every turn) may take; past it, its runtime is stopped.
    #[arg(long, value_name = "SECONDS", value_parser = crate::flags::seconds, allow_hyphen_values = true)]
    pub timeout: Option<crate::flags::Seconds>,
    /// Retry a failed RunResult too (attempts permitting).
    #[arg(long)]
    pub retry_failed: bool,
    /// Seconds in-flight items may finish after the first Ctrl-C.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, value_parser = crate::flags::seconds, default_value_t = crate::flags::Seconds(10.0))]
    pub grace: crate::flags::Seconds,
    /// `fresh` isolation: start every item cold instead of on hosts launched ahead of it
    /// (by default up to COUNT hosts are kept prewarmed while the batch runs).
    #[arg(long)]
    pub no_prewarm: bool,
    #[command(flatten)]
    pub capture: crate::capture_flags::CaptureArgs,
    /// Print the summary as JSON even on a terminal.
    #[arg(long)]
    pub json: bool,
}

/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// First signal: drain; second: stop now.
fn install_signals(cancel: &Arc<Cancel>, grace: std::time::Duration) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let cancel = Arc::clone(cancel);
    let spawned = std::thread::Builder::new()
        .name("fabric-batch-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    eprintln!(
                        "fabric: stopping the batch: in-flight items get {}s to finish (signal again to stop them now)",
                        grace.as_secs_f64()
                    );
                } else {
                    eprintln!("fabric: stopping in-flight items now");
                }
                cancel.cancel(grace);
            }
        });
    drop(spawned);
}

/// The items: a file is read and checked whole first; stdin is a stream.
type Items = Box<dyn Iterator<Item = Result<fabric_batch::Item, ErrorInfo>> + Send>;

/// Items of stdin, read on a thread of their own into a queue as small as the concurrency
/// (back-pressure), so a cancel ends the batch even while stdin stays open.
fn stdin_items(cancel: Arc<Cancel>, capacity: usize) -> Items {
    let (sender, receiver) = std::sync::mpsc::sync_channel(capacity);
    let spawned = std::thread::Builder::new()
        .name("fabric-batch-stdin".into())
        .spawn(move || {
            let reader = fabric_batch::ItemReader::new(BufReader::new(std::io::stdin()), "-");
            for item in reader {
                if sender.send(item).is_err() {
                    break;
                }
            }
        });
    drop(spawned);
    Box::new(std::iter::from_fn(move || {
        loop {
            if cancel.draining() {
                return None;
            }
            match receiver.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(item) => return Some(item),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }))
}

fn open_items(path: &PathBuf, cancel: &Arc<Cancel>, capacity: usize) -> Result<Items, ErrorInfo> {
    if path.as_os_str() == "-" {
        return Ok(stdin_items(Arc::clone(cancel), capacity));
    }
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|error| {
        ErrorInfo::new(
            Stage::Config,
            codes::BATCH_ITEMS_READ_FAILED,
            format!("cannot read items `{name}`: {error}"),
        )
        .with_metadata("file", name.clone())
    })?;
    let items = fabric_batch::read_all(BufReader::new(file), &name)?;
    Ok(Box::new(items.into_iter().map(Ok)))
}

fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {pos} items · {msg} · {per_sec} · {elapsed}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

fn table(summary: &BatchSummary) -> String {
    let usage = &summary.usage;
    let mut rows = vec![
        ("items", summary.items.to_string()),
        ("succeeded", summary.succeeded.to_string()),
        ("failed", summary.failed.to_string()),
        ("errored", summary.errored.to_string()),
        ("skipped", summary.skipped.to_string()),
        ("cancelled", summary.cancelled.to_string()),
        ("retries", summary.retries.to_string()),
        ("wall", format!("{:.3} s", summary.wall_ms as f64 / 1000.0)),
        ("items/s", format!("{:.2}", summary.items_per_second)),
        (
            "latency",
            format!(
                "p50 {} ms · p90 {} ms · p99 {} ms",
                summary.latency.p50_ms, summary.latency.p90_ms, summary.latency.p99_ms
            ),
        ),
        (
            "tokens",
            format!(
                "{} in ({} cached) · {} out · {} total",
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens,
                usage.total_tokens
            ),
        ),
    ];
    if let Some(cost) = usage.cost_usd {
        rows.push(("cost", format!("${cost:.4}")));
    }
    if let Some(calls) = &summary.model_calls {
        rows.push((
            "captured",
            format!(
                "{} model calls over {} invocations",
                calls.calls, calls.invocations
            ),
        ));
    }
    if let Some(stats) = &summary.system_stats {
        rows.push((
            "system",
            format!(
                "{} invocations · {:.3} s adapter CPU · {:.3} s exchange · peak RSS {:.1} MiB",
                stats.invocations,
                stats.cpu_time_seconds,
                stats.elapsed_seconds,
                stats.peak_resident_memory_bytes as f64 / (1024.0 * 1024.0)
            ),
        ));
    }
    rows.iter()
        .map(|(name, value)| format!("{name:>10}  {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `fabric batch`.
pub fn run(args: Args) -> ExitCode {
    let config = match read_config(&args.config.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let mut run_options = match runtime_options(&args.config, None) {
        Ok(options) => options,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    if let Err(info) = args.capture.apply(&mut run_options) {
        return print_error(&info, EXIT_INVALID);
    }
    let plan = match Fabric::new().plan(&config, &run_options) {
        Ok(plan) => plan,
        Err(error) => {
            let exit = exit_for(&error);
            return print_error(&ErrorInfo::from(error), exit);
        }
    };
    let defaults = BatchOptions::default();
    let options = BatchOptions {
        concurrency: args
            .concurrency
            .map_or(defaults.concurrency, |count| count.get()),
        isolation: Isolation::parse(&args.isolation).unwrap_or_default(),
        attempts: u32::try_from(args.attempts.0).unwrap_or(u32::MAX),
        retry_failed: args.retry_failed,
        timeout: args.timeout.map(crate::flags::Seconds::duration),
        grace: args.grace.duration(),
        prewarm: !args.no_prewarm,
        ..defaults
    };
    let cancel = Arc::new(Cancel::new());
    let items = match open_items(&args.items, &cancel, options.concurrency) {
        Ok(items) => items,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let (output, done) = match Output::open(&args.output) {
        Ok(opened) => opened,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    install_signals(&cancel, options.grace);
    let bar = progress_bar();
    let observe = |_: &BatchLine, _: &str, so_far: &BatchSummary| {
        if let Some(bar) = &bar {
            bar.inc(1);
            bar.set_message(format!(
                "{} succeeded · {} failed · {} errored",
                so_far.succeeded, so_far.failed, so_far.errored
            ));
        }
    };
    let batch = Batch {
        plan: &plan,
        runtime: &run_options.runtime,
        options: &options,
        done: &done,
        output: Some(&output),
        cancel: &cancel,
    };
    let summary = batch.run(items, &observe);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Some(error) = &summary.input_error {
        return print_error(error, EXIT_INVALID);
    }
    if !args.json && std::io::stdout().is_terminal() {
        print_line(&table(&summary));
    } else {
        print_json(&serde_json::to_value(&summary).unwrap_or_default());
    }
    let signal = SIGNAL.load(Ordering::SeqCst);
    if summary.interrupted && signal != 0 {
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(130));
    }
    if summary.failed + summary.errored > 0 {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::from(EXIT_OK)
    }
}
