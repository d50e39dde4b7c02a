//! The model-call capture gateway: one loopback HTTP server per process (a [`Service`] of
//! the reactor's HTTP driver) that sits between a harness and its model endpoints.
//!
//! A runtime started with `capture_model_calls` registers a [`Capture`]: an unguessable
//! path token and the real `base_url` of each model role. The adapter is handed
//! [`Capture::base_url`] in place of each `models.*.base_url`; every request under that
//! URL is forwarded to the real endpoint byte for byte (request and response bodies; SSE
//! chunks as they arrive), over HTTP or HTTPS (`ureq` with rustls, on a small bounded
//! worker pool: no async runtime), and recorded as one JSON line of `model-calls.jsonl`
//! ([`fabric_config::ModelCallRecord`]). Credentials pass through as the harness sends
//! them and are never recorded. A request without a registered token is refused (404):
//! the gateway is no open proxy for other local users. Budgets (`max_model_calls`,
//! `max_total_tokens`) answer an over-budget call with 429 instead of forwarding it.
//!
//! ```no_run
//! use fabric_gateway::{Capture, CaptureOptions, Upstream};
//!
//! let capture = Capture::register(
//!     "runtime-1",
//!     vec![Upstream::new("default", "gpt-4o", "http://127.0.0.1:8000/v1")],
//!     std::path::Path::new("/tmp/.fabric/runtime-1"),
//!     CaptureOptions::default(),
//! )?;
//! let url = capture.base_url("default").expect("a captured role");
//! assert!(url.starts_with("http://127.0.0.1:"));
//! # Ok::<(), fabric_gateway::GatewayError>(())
//! ```
//!
//! [`Service`]: fabric_reactor::http::Service

#![forbid(unsafe_code)]

mod budget;
mod capture;
mod client;
mod forward;
mod record;
mod route;
mod server;
mod service;
mod sse;
mod transport;

pub use budget::BudgetExceeded;
pub use capture::{Capture, CaptureOptions, CaptureSummary, GatewayError, Upstream};
pub use record::MODEL_CALLS_FILE;
