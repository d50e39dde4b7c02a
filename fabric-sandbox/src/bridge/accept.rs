//! [`Acceptors`]: unix listeners accepted on the core's reactor, each handing its
//! connections to a callback (the runtime server's: one thread per connection).

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};

use fabric_reactor::slots::{SlotKey, Slots};
use fabric_reactor::{Context, EngineError, Handle, Registration, Tenant};
use mio::Interest;
use mio::unix::SourceFd;

/// What an acceptor does with each connection (on the reactor thread: it must not block).
pub(crate) type OnAccept = Box<dyn FnMut(UnixStream) + Send>;

struct Acceptor {
    listener: UnixListener,
    on_accept: OnAccept,
}

/// Every runtime-server listener of the process: one reactor tenant.
#[derive(Default)]
pub(crate) struct Acceptors {
    slots: Slots<Acceptor>,
}

static ACCEPTORS: Registration<Acceptors> = Registration::new();

/// The acceptors' tenant (registered on first use).
pub(crate) fn accept_tenant() -> Result<Handle<Acceptors>, EngineError> {
    ACCEPTORS.get_or_register(Acceptors::default)
}

impl Acceptors {
    /// Watches `listener` (non-blocking) and calls `on_accept` for every connection.
    pub(crate) fn open(
        &mut self,
        cx: &mut Context<'_>,
        listener: UnixListener,
        on_accept: OnAccept,
    ) -> io::Result<SlotKey> {
        listener.set_nonblocking(true)?;
        let slot = self.slots.reserve();
        let fd = listener.as_raw_fd();
        if let Err(error) =
            cx.registry()
                .register(&mut SourceFd(&fd), cx.token(slot), Interest::READABLE)
        {
            self.slots.unreserve(slot);
            return Err(error);
        }
        Ok(self.slots.fill(
            slot,
            Acceptor {
                listener,
                on_accept,
            },
        ))
    }

    /// Stops watching a listener (the socket file is its owner's business).
    pub(crate) fn close(&mut self, cx: &mut Context<'_>, key: SlotKey) {
        if !self.slots.live(key) {
            return;
        }
        if let Some(acceptor) = self.slots.take(key.slot) {
            let fd = acceptor.listener.as_raw_fd();
            let _ = cx.registry().deregister(&mut SourceFd(&fd));
        }
    }
}

impl Tenant for Acceptors {
    fn on_ready(&mut self, _cx: &mut Context<'_>, sub: usize) {
        let Some(acceptor) = self.slots.get_mut(sub) else {
            return; // stale event of a closed listener
        };
        loop {
            match acceptor.listener.accept() {
                Ok((stream, _)) => (acceptor.on_accept)(stream),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return, // WouldBlock, or a transient accept failure
            }
        }
    }
}
