//! `fabric view`: a local, read-only web page over what Fabric writes — batch outputs,
//! RunResult files, `.fabric/<runtime>/<invocation>/` directories, Relay ATOF/ATIF
//! trajectories and NeMo Gym exports — found under the paths it is given.
//!
//! The server is a [`Service`](fabric_reactor::http::Service) of the reactor's loopback
//! HTTP driver (no HTTP stack of its own). It listens on loopback only, answers only
//! requests carrying its per-process token (`?token=` or `Authorization: Bearer`), and
//! serves files only by the opaque ids of its index: no part of a URL is ever a path.
//! API answers are built, and files streamed, on short-lived worker threads; the reactor
//! thread only moves their bytes to the sockets.
//!
//! ```no_run
//! use fabric_view::{View, ViewOptions};
//!
//! let view = View::start(ViewOptions::new(vec!["runs/".into()]))?;
//! println!("{}", view.url());
//! view.close();
//! # Ok::<(), fabric_view::ViewError>(())
//! ```

#![forbid(unsafe_code)]

mod answer;
mod api;
mod assets;
mod error;
mod index;
mod route;
mod server;
mod service;
pub mod wire;

pub use answer::CONTENT_SECURITY_POLICY;
pub use error::ViewError;
pub use server::{View, ViewOptions};
