//! What the reactor knows of its clients: the [`Tenant`] trait and the [`Context`] a tenant
//! is called with.

use std::any::Any;
use std::time::Instant;

use mio::{Registry, Token};

use super::{SUB_MASK, TENANT_SHIFT};

/// A client of the reactor: host pipes, loopback HTTP servers, the runtime server, and
/// whatever comes later. The reactor calls these methods on its own thread only; a tenant
/// never blocks in them.
///
/// A tenant registers its sources with [`Context::registry`] under tokens from
/// [`Context::token`]; a readiness event of one of them comes back to
/// [`Tenant::on_ready`] with the `sub` the token was made from. Callers on other threads
/// reach a tenant through its [`Handle`](crate::Handle) (a closure run on the reactor
/// thread), never directly.
///
/// One turn of the loop: wait (see below), [`on_ready`](Tenant::on_ready) for each event,
/// [`run_again`](Tenant::run_again) for every tenant, the queued handle calls, then
/// [`fire`](Tenant::fire) for every tenant. The wait ends at the earliest
/// [`next_deadline`](Tenant::next_deadline) (at most a second away); it does not happen
/// while a tenant [`has_work`](Tenant::has_work), and it is a zero-timeout poll with the
/// thread yielded while a tenant is [`spinning`](Tenant::spinning).
pub trait Tenant: AsAny + Send + 'static {
    /// A readiness event for the source registered under `cx.token(sub)`. Events can be
    /// spurious or stale (for a source already closed): tolerate both.
    fn on_ready(&mut self, cx: &mut Context<'_>, sub: usize);

    /// Work left from an earlier turn (a read budget used up) is done now.
    fn run_again(&mut self, _cx: &mut Context<'_>) {}

    /// Deadlines due at `now` are handled.
    fn fire(&mut self, _cx: &mut Context<'_>, _now: Instant) {}

    /// The earliest deadline this tenant has to be called back for (`fire`).
    fn next_deadline(&self) -> Option<Instant> {
        None
    }

    /// Whether `run_again` has work, so the reactor must not sleep.
    fn has_work(&self) -> bool {
        false
    }

    /// Whether the tenant expects a peer's answer within microseconds and wants the reactor
    /// to poll without sleeping (yielding its thread between polls) until then.
    fn spinning(&mut self, _now: Instant) -> bool {
        false
    }
}

/// Lets the reactor hand a tenant back to its typed handle (`&mut dyn Tenant` → `&mut T`).
/// Implemented for every type; tenants never implement it themselves.
pub trait AsAny {
    /// `self` as `Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// What a tenant is called with: the poll registry and its own token space.
#[derive(Debug)]
pub struct Context<'a> {
    registry: &'a Registry,
    tenant: usize,
}

impl<'a> Context<'a> {
    pub(super) fn new(registry: &'a Registry, tenant: usize) -> Context<'a> {
        Context { registry, tenant }
    }

    /// The registry to (de)register this tenant's sources with.
    pub fn registry(&self) -> &'a Registry {
        self.registry
    }

    /// The token of this tenant's source number `sub` (below 2^56).
    ///
    /// # Panics
    /// When `sub` does not fit the tenant's token space (a bug in the tenant).
    pub fn token(&self, sub: usize) -> Token {
        self.tokens().token(sub)
    }

    /// This tenant's token space, to keep (a tenant that registers sources outside a call).
    pub fn tokens(&self) -> Tokens {
        Tokens {
            tenant: self.tenant,
        }
    }
}

/// One tenant's token space: `(index + 1) << 56 | sub`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    tenant: usize,
}

impl Tokens {
    /// The token of source number `sub` (below 2^56).
    ///
    /// # Panics
    /// When `sub` does not fit the tenant's token space (a bug in the tenant).
    pub fn token(self, sub: usize) -> Token {
        assert!(sub <= SUB_MASK, "sub-token {sub} out of range");
        Token(((self.tenant + 1) << TENANT_SHIFT) | sub)
    }
}
