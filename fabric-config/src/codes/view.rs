//! Codes of `fabric view` (`fabric-view`): the local read-only web page over runs, batches
//! and trajectories.

use super::{Origin as O, code, declare};
use crate::error::Stage as S;

declare! {
    /// fabric-view.
    pub(super) VIEW = [
        VIEW_LISTEN_REFUSED = "view_listen_refused" => code(
            Some(S::Config),
            O::Cli,
            "`fabric view`: --listen is not a loopback address (the page is served on loopback only)",
        )
        .with_hint("use --listen 127.0.0.1:PORT (port 0: any free port)"),
        VIEW_START_FAILED = "view_start_failed" => code(
            None,
            O::Host,
            "`fabric view` could not listen on its address, read a path it was given, or reach the reactor",
        ),
    ];
}
