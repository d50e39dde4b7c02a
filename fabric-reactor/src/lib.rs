//! The floor of the core: one `mio` reactor thread and the tenants it serves, the loopback
//! HTTP connection driver, process spawning, the host stderr ring and the operating-system
//! calls. Nothing here knows adapters, runtimes or documents: every client of the reactor
//! is a [`Tenant`] registered at run time, so the loop names none of them.
//!
//! ```no_run
//! use std::time::Instant;
//! use fabric_reactor::{Context, Registration, Tenant};
//!
//! /// Counts readiness events of the sources it registered.
//! #[derive(Default)]
//! struct Counter {
//!     events: u64,
//! }
//!
//! impl Tenant for Counter {
//!     fn on_ready(&mut self, _cx: &mut Context<'_>, _sub: usize) {
//!         self.events += 1;
//!     }
//! }
//!
//! static COUNTER: Registration<Counter> = Registration::new();
//! let counter = COUNTER.get_or_register(Counter::default)?;
//! // Closures run on the reactor thread with the tenant and its context.
//! let events = counter.call(|counter, _cx| counter.events)?;
//! assert_eq!(events, 0);
//! # let _ = Instant::now();
//! # Ok::<(), fabric_reactor::EngineError>(())
//! ```

#![deny(unsafe_code)]

pub mod beneath;
mod engine;
pub mod http;
pub mod slots;
pub mod spawner;
pub mod stderr;
#[allow(unsafe_code)]
pub mod sys;
pub mod watched;

pub use engine::{AsAny, Context, Engine, EngineError, Handle, Registration, Tenant, Tokens};
