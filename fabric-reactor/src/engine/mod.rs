//! The process-wide reactor: one thread running `mio::Poll` for every tenant.
//!
//! Callers never touch the reactor's state: they send a closure through a tenant's
//! [`Handle`], the reactor is woken through its `Waker` (`Token(0)`), and the closure runs
//! on the reactor thread with the tenant. Each tenant owns the tokens
//! `(index + 1) << 56 | sub` (its [`Context::token`]), so the loop routes an event by its
//! top byte and knows nothing else of the tenant.

mod handle;
mod reactor;
mod tenant;

use std::time::Duration;

use mio::Token;

pub use handle::{Engine, EngineError, Handle, Registration};
pub use tenant::{AsAny, Context, Tenant, Tokens};

/// The waker's fixed token.
const WAKER: Token = Token(0);
/// Bits of a token below the tenant index.
const TENANT_SHIFT: u32 = usize::BITS - 8;
/// The sub-token bits.
const SUB_MASK: usize = (1 << TENANT_SHIFT) - 1;
/// Tenants one process can register (the top byte, 0 being the waker's).
const MAX_TENANTS: usize = 254;
/// Longest poll sleep when no deadline is due.
const MAX_POLL: Duration = Duration::from_secs(1);
