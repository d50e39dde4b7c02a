//! [`Capture`]: one runtime's registration with the gateway, what the host holds while the
//! runtime lives.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::budget::BudgetExceeded;
use crate::route::Route;
use crate::server;

/// The largest body kept in a record by default (bytes; `CaptureOptions::body_cap`).
pub const DEFAULT_BODY_CAP: usize = 4 * 1024 * 1024;

/// Why the gateway could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The gateway's listener or tenant could not be set up.
    #[error("the model-call gateway is unavailable: {reason}")]
    Unavailable {
        /// What failed (an OS or engine reason; no request data).
        reason: String,
    },
}

/// One model role's real endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The role (`models.<role>`).
    pub role: String,
    /// The role's configured model.
    pub model: String,
    /// The role's real `base_url`.
    pub base_url: String,
}

impl Upstream {
    /// A role, its model and its real `base_url`.
    pub fn new(role: &str, model: &str, base_url: &str) -> Upstream {
        Upstream {
            role: role.to_owned(),
            model: model.to_owned(),
            base_url: base_url.to_owned(),
        }
    }
}

/// What a capture allows and keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Calls forwarded per invocation; the next is answered 429. Default: no limit.
    pub max_model_calls: Option<u64>,
    /// Total tokens (as the endpoints report them) per invocation; once reached, calls are
    /// answered 429. Default: no limit.
    pub max_total_tokens: Option<u64>,
    /// The largest request or response body kept in a record; longer ones are stored
    /// truncated with a flag. Default [`DEFAULT_BODY_CAP`] (4 MiB).
    pub body_cap: usize,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            max_model_calls: None,
            max_total_tokens: None,
            body_cap: DEFAULT_BODY_CAP,
        }
    }
}

/// What one invocation's captured calls came to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CaptureSummary {
    /// Records written for the invocation.
    pub records: u64,
    /// The invocation's `model-calls.jsonl` (`None` when no call was recorded).
    pub path: Option<PathBuf>,
    /// The budgets that refused calls.
    pub budget_exceeded: Vec<BudgetExceeded>,
}

/// A runtime's registration: its token and endpoints. Dropping it unregisters the token
/// (later requests with it are refused).
#[derive(Debug)]
pub struct Capture {
    route: Arc<Route>,
    origin: String,
}

impl Capture {
    /// Registers a runtime's model endpoints; calls outside an invocation are recorded in
    /// `runtime_dir`.
    pub fn register(
        runtime_id: &str,
        upstreams: Vec<Upstream>,
        runtime_dir: &Path,
        options: CaptureOptions,
    ) -> Result<Capture, GatewayError> {
        let gateway = server::gateway()?;
        let token = fabric_reactor::http::new_token()
            .map_err(|reason| GatewayError::Unavailable { reason })?;
        let route = Arc::new(Route::new(
            token,
            runtime_id,
            upstreams,
            runtime_dir,
            options,
        ));
        gateway.routes.insert(Arc::clone(&route));
        Ok(Capture {
            route,
            origin: format!("http://127.0.0.1:{}", gateway.port),
        })
    }

    /// The URL the adapter gets in place of `role`'s `base_url` (it holds the token: treat
    /// it as a credential).
    pub fn base_url(&self, role: &str) -> Option<String> {
        self.route.upstream(role)?;
        Some(format!("{}/{}/{role}", self.origin, self.route.token()))
    }

    /// Starts recording calls for `invocation_id` in `<runtime_dir>/<invocation_id>/`
    /// (its budgets start at zero).
    pub fn begin(&self, invocation_id: &str) {
        self.route.begin(invocation_id);
    }

    /// Ends the invocation: what its calls came to. Later calls belong to the runtime.
    pub fn end(&self) -> CaptureSummary {
        self.route.end()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Ok(gateway) = server::gateway() {
            gateway.routes.remove(self.route.token());
        }
    }
}
