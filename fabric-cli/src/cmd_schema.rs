//! `fabric schema [NAME]`: print a generated JSON Schema, or list the names.

use fabric_config::codes;
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage, schema};

use crate::output::{EXIT_INVALID, EXIT_OK, print_error};

/// Arguments of `fabric schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schema name, for example `sdk/agent`; omit to list them.
    pub name: Option<String>,
}

/// Runs `fabric schema`.
pub fn run(args: Args) -> ExitCode {
    match args.name {
        None => {
            for (name, _) in schema::all() {
                crate::output::print_line(name);
            }
            ExitCode::from(EXIT_OK)
        }
        Some(name) => {
            let wanted = name.strip_suffix(".schema.json").unwrap_or(&name);
            match schema::get(wanted) {
                Some(value) => {
                    crate::output::print_line(schema::to_file_text(&value).trim_end_matches('\n'));
                    ExitCode::from(EXIT_OK)
                }
                None => {
                    let info = ErrorInfo::new(
                        Stage::Config,
                        codes::UNKNOWN_SCHEMA,
                        format!("no schema named `{name}`; run `fabric schema` to list them"),
                    );
                    print_error(&info, EXIT_INVALID)
                }
            }
        }
    }
}
