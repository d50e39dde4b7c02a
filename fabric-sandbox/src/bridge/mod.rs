//! The sandbox runtime server's transport and its command-bridge client (`fabric-agent-ctl`;
//! see `docs/sandbox.md`). The wire lives in [`fabric_config::bridge`]; what a request means
//! is the [`Handler`]'s business (`fabric_host::RuntimeServer` in the core).
//!
//! A [`Server`] owns a directory (the socket's parent, also the base dir of every config it
//! starts): an exclusive `fabric.lock`, a `fabric.unclean` marker kept after any runtime
//! was started, and a private unix socket. Each connection carries one request line and
//! gets one response line.
//!
//! ```no_run
//! use fabric_config::bridge::{Failure, Operation, Payload, Request, Response};
//! use fabric_sandbox::bridge::{Client, Handler, Server, ShutdownOutcome};
//!
//! /// Answers every request with a failure.
//! struct Refuse;
//! impl Handler for Refuse {
//!     fn handle_line(&self, _line: &[u8]) -> Response {
//!         Response::failed("unknown", &Failure::invalid("operation"))
//!     }
//!     fn shutdown(&self) -> ShutdownOutcome {
//!         ShutdownOutcome::Clean { used: false }
//!     }
//! }
//!
//! let dir = std::path::Path::new("/tmp/sandbox");
//! let server = Server::bind(&dir.join("fabric.sock"), |_dir| Refuse)?;
//! let stopper = server.stopper();
//! let thread = std::thread::spawn(move || server.run());
//!
//! let client = Client::new(dir.join("fabric.sock"));
//! let check = Request { operation: Operation::Check, agent: None, runtime_id: None, payload: Payload::None };
//! let _refused = client.call(&check);
//! stopper.stop();
//! let _outcome = thread.join().expect("server thread")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod accept;
mod client;
mod server;

pub use client::{Client, decode_response, socket_from_env};
pub use server::{Handler, ServeError, Server, ShutdownOutcome, Stopper};
