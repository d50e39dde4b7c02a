//! The callers' side: the process-wide [`Engine`], typed [`Handle`]s to registered tenants,
//! and [`Registration`], the lazily registered tenant of a crate.

use std::any::Any;
use std::io;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::mpsc::{self, Sender, SyncSender};

use mio::{Poll, Waker};

use super::reactor::Reactor;
use super::tenant::{Context, Tenant};
use super::{MAX_TENANTS, WAKER};
use crate::sys;

/// Why the reactor cannot serve a call: it could not be started, or its thread is gone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct EngineError {
    reason: String,
}

impl EngineError {
    fn new(reason: impl Into<String>) -> EngineError {
        EngineError {
            reason: reason.into(),
        }
    }

    fn exited() -> EngineError {
        EngineError::new("the reactor thread has exited")
    }

    /// What went wrong (an OS error text or "the reactor thread has exited").
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// A closure run on the reactor thread against one tenant.
pub(super) type Run = Box<dyn FnOnce(&mut dyn Any, &mut Context<'_>) + Send>;

/// Builds a tenant on the reactor thread, with the context it will be called with.
pub(super) type Make = Box<dyn FnOnce(&mut Context<'_>) -> io::Result<Box<dyn Tenant>> + Send>;

pub(super) enum Command {
    Register {
        make: Make,
        reply: SyncSender<Result<usize, EngineError>>,
    },
    Call {
        tenant: usize,
        run: Run,
    },
}

/// The process-wide reactor: its command channel and its waker. The thread starts on
/// first use and lives as long as the process.
#[derive(Debug)]
pub struct Engine {
    commands: Sender<Command>,
    waker: Waker,
}

static ENGINE: OnceLock<Result<Engine, EngineError>> = OnceLock::new();

impl Engine {
    /// The process-wide engine, created (with its reactor thread) on first use.
    pub fn global() -> Result<&'static Engine, EngineError> {
        ENGINE
            .get_or_init(Engine::spawn)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The engine when it was started, without starting it.
    pub fn running() -> Option<&'static Engine> {
        ENGINE.get().and_then(|engine| engine.as_ref().ok())
    }

    fn spawn() -> Result<Engine, EngineError> {
        // Every host costs four descriptors on the reactor; a low soft limit would cap
        // the number of runtimes long before memory does.
        let _ = sys::raise_open_file_limit(65_536);
        let failed = |error: std::io::Error| EngineError::new(error.to_string());
        let poll = Poll::new().map_err(failed)?;
        let waker = Waker::new(poll.registry(), WAKER).map_err(failed)?;
        let (commands, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("fabric-reactor".into())
            .spawn(move || {
                let _ = sys::block_sigpipe_in_this_thread();
                Reactor::new(poll).run(receiver)
            })
            .map_err(failed)?;
        Ok(Engine { commands, waker })
    }

    fn send(&self, command: Command) -> Result<(), EngineError> {
        self.send_quiet(command)?;
        self.waker
            .wake()
            .map_err(|error| EngineError::new(error.to_string()))
    }

    /// Queues `command` without waking the reactor: it runs at the next wake-up.
    fn send_quiet(&self, command: Command) -> Result<(), EngineError> {
        self.commands
            .send(command)
            .map_err(|_| EngineError::exited())
    }

    /// Hands `tenant` to the reactor; the handle reaches it from any thread. At most 254
    /// tenants are registered per process (each crate registers its tenants once).
    pub fn register<T: Tenant>(&'static self, tenant: T) -> Result<Handle<T>, EngineError> {
        self.register_with(move |_| Ok(tenant))
    }

    /// Builds a tenant on the reactor thread with the [`Context`] it will be called with
    /// (to keep a clone of the registry, or its [`Tokens`](crate::Tokens)), and registers it.
    pub fn register_with<T: Tenant>(
        &'static self,
        make: impl FnOnce(&mut Context<'_>) -> io::Result<T> + Send + 'static,
    ) -> Result<Handle<T>, EngineError> {
        let (reply, wait) = mpsc::sync_channel(1);
        let make: Make =
            Box::new(move |cx| make(cx).map(|tenant| Box::new(tenant) as Box<dyn Tenant>));
        self.send(Command::Register { make, reply })?;
        let tenant = wait.recv().map_err(|_| EngineError::exited())??;
        Ok(Handle {
            engine: self,
            tenant,
            _tenant: PhantomData,
        })
    }

    pub(super) fn tenant_limit_reached() -> EngineError {
        EngineError::new(format!("no more than {MAX_TENANTS} reactor tenants"))
    }

    pub(super) fn tenant_failed(error: &io::Error) -> EngineError {
        EngineError::new(format!("cannot register a reactor tenant: {error}"))
    }
}

/// A typed way to one registered tenant: closures sent here run on the reactor thread with
/// the tenant and its [`Context`]. Cheap to copy; `Send + Sync`.
#[derive(Debug)]
pub struct Handle<T> {
    engine: &'static Engine,
    tenant: usize,
    _tenant: PhantomData<fn() -> T>,
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T: Tenant> Handle<T> {
    /// `f` as the command that runs it on this tenant.
    fn command(&self, f: impl FnOnce(&mut T, &mut Context<'_>) + Send + 'static) -> Command {
        let run: Run = Box::new(move |tenant, cx| {
            if let Some(tenant) = tenant.downcast_mut::<T>() {
                f(tenant, cx);
            }
        });
        Command::Call {
            tenant: self.tenant,
            run,
        }
    }

    /// Runs `f` on the reactor thread without waiting for it.
    pub fn post(
        &self,
        f: impl FnOnce(&mut T, &mut Context<'_>) + Send + 'static,
    ) -> Result<(), EngineError> {
        self.engine.send(self.command(f))
    }

    /// Runs `f` on the reactor thread at its next wake-up, without waking it: the next
    /// readiness event, deadline or other command (at the latest after the longest poll,
    /// one second). Every wake-up runs the queued closures before it handles readiness, so
    /// a closure posted before an action that makes a source ready (a request written to a
    /// host's stdin whose answer makes stdout readable) runs before that readiness is seen.
    pub fn post_quiet(
        &self,
        f: impl FnOnce(&mut T, &mut Context<'_>) + Send + 'static,
    ) -> Result<(), EngineError> {
        self.engine.send_quiet(self.command(f))
    }

    /// Runs `f` on the reactor thread and waits for its value.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut T, &mut Context<'_>) -> R + Send + 'static,
    ) -> Result<R, EngineError> {
        let (reply, wait) = mpsc::sync_channel(1);
        self.post(move |tenant, cx| {
            let _ = reply.send(f(tenant, cx));
        })?;
        wait.recv().map_err(|_| EngineError::exited())
    }
}

/// A crate's tenant, registered with the process-wide engine on first use:
///
/// ```no_run
/// # use fabric_reactor::{Context, Registration, Tenant};
/// #[derive(Default)]
/// struct Clock;
/// impl Tenant for Clock {
///     fn on_ready(&mut self, _cx: &mut Context<'_>, _sub: usize) {}
/// }
/// static CLOCK: Registration<Clock> = Registration::new();
/// let handle = CLOCK.get_or_register(Clock::default)?;
/// handle.call(|_clock, _cx| ())?;
/// # Ok::<(), fabric_reactor::EngineError>(())
/// ```
#[derive(Debug)]
pub struct Registration<T> {
    handle: OnceLock<Result<Handle<T>, EngineError>>,
}

impl<T> Default for Registration<T> {
    fn default() -> Self {
        Registration::new()
    }
}

impl<T> Registration<T> {
    /// Not registered yet.
    pub const fn new() -> Registration<T> {
        Registration {
            handle: OnceLock::new(),
        }
    }
}

impl<T: Tenant> Registration<T> {
    /// The tenant's handle, registering `make()` with the global engine the first time.
    pub fn get_or_register(&self, make: impl FnOnce() -> T) -> Result<Handle<T>, EngineError> {
        self.handle
            .get_or_init(|| Engine::global()?.register(make()))
            .as_ref()
            .copied()
            .map_err(Clone::clone)
    }

    /// The tenant's handle, registering it with `make` on the reactor thread the first
    /// time (see [`Engine::register_with`]).
    pub fn get_or_register_with(
        &self,
        make: impl FnOnce(&mut Context<'_>) -> io::Result<T> + Send + 'static,
    ) -> Result<Handle<T>, EngineError> {
        self.handle
            .get_or_init(|| Engine::global()?.register_with(make))
            .as_ref()
            .copied()
            .map_err(Clone::clone)
    }

    /// The handle if the tenant was registered (never registers it).
    pub fn get(&self) -> Option<Handle<T>> {
        self.handle
            .get()
            .and_then(|handle| handle.as_ref().ok())
            .copied()
    }
}
