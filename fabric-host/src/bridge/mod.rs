//! The sandbox runtime server and its command-bridge client (`fabric-agent-ctl`; see
//! `docs/sandbox.md`). The wire lives in [`fabric_config::bridge`].
//!
//! A [`Server`] owns a directory (the socket's parent, also the base dir of every config it
//! starts): an exclusive `fabric.lock`, a `fabric.unclean` marker kept after any runtime
//! was started, and a private unix socket. Each connection carries one request line and
//! gets one response line. The server holds several runtimes by id ([`RuntimeServer`]);
//! invoke and stop of one runtime are serialized, different runtimes run independently.
//!
//! ```no_run
//! use fabric_config::bridge::{Operation, Payload, Request};
//! use fabric_host::bridge::{Client, Server};
//! use fabric_host::RunOptions;
//!
//! let dir = std::path::Path::new("/tmp/sandbox");
//! let server = Server::bind(&dir.join("fabric.sock"), RunOptions::default())?;
//! let stopper = server.stopper();
//! let thread = std::thread::spawn(move || server.run());
//!
//! let client = Client::new(dir.join("fabric.sock"));
//! let check = Request { operation: Operation::Check, agent: None, runtime_id: None, payload: Payload::None };
//! assert_eq!(client.call(&check).status, fabric_config::bridge::Status::Succeeded);
//! stopper.stop();
//! let _outcome = thread.join().expect("server thread")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod client;
mod listen;
mod server;

pub use client::{Client, decode_response, socket_from_env};
pub use listen::{ServeError, Server, Stopper};
pub use server::{RuntimeServer, SERVER_SOURCE_ID, ShutdownOutcome};
