//! The poll loop. It knows tenants only through [`Tenant`]: no client type is named here.

use std::io;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};

use super::handle::{Command, Engine};
use super::tenant::{Context, Tenant};
use super::{MAX_POLL, MAX_TENANTS, SUB_MASK, TENANT_SHIFT, WAKER};

pub(super) struct Reactor {
    poll: Poll,
    tenants: Vec<Box<dyn Tenant>>,
}

impl Reactor {
    pub(super) fn new(poll: Poll) -> Reactor {
        Reactor {
            poll,
            tenants: Vec::new(),
        }
    }

    pub(super) fn run(mut self, commands: Receiver<Command>) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = self.timeout();
            if let Err(error) = self.poll.poll(&mut events, Some(timeout))
                && error.kind() != io::ErrorKind::Interrupted
            {
                // epoll_wait failing for another reason is not recoverable by retrying
                // hot; back off briefly and keep serving deadlines.
                std::thread::sleep(Duration::from_millis(10));
            }
            // Commands first: one queued before an action that made a source ready (see
            // `Handle::post_quiet`) is seen before that readiness.
            if !self.run_commands(&commands) {
                return;
            }
            let registry = self.poll.registry();
            for event in events.iter() {
                if event.token() == WAKER {
                    continue;
                }
                let (index, sub) = split(event.token());
                if let Some(tenant) = self.tenants.get_mut(index) {
                    tenant.on_ready(&mut Context::new(registry, index), sub);
                }
            }
            for (index, tenant) in self.tenants.iter_mut().enumerate() {
                tenant.run_again(&mut Context::new(registry, index));
            }
            let now = Instant::now();
            let registry = self.poll.registry();
            for (index, tenant) in self.tenants.iter_mut().enumerate() {
                tenant.fire(&mut Context::new(registry, index), now);
            }
            // And again before sleeping: a quiet command queued while this turn ran may
            // belong to readiness this turn already consumed (a host that answered a request
            // line before the reactor ran the request's bookkeeping, the answer read in this
            // turn). Left queued, it would wait for the next wake-up: up to `MAX_POLL`.
            if !self.run_commands(&commands) {
                return;
            }
        }
    }

    /// Runs every queued command; false once every handle is gone.
    fn run_commands(&mut self, commands: &Receiver<Command>) -> bool {
        loop {
            match commands.try_recv() {
                Ok(command) => self.on_command(command),
                Err(TryRecvError::Empty) => return true,
                Err(TryRecvError::Disconnected) => return false,
            }
        }
    }

    /// How long the next poll may wait: not at all while a tenant has work or spins (the
    /// thread is yielded first), else until the earliest deadline, at most [`MAX_POLL`].
    fn timeout(&mut self) -> Duration {
        if self.tenants.iter().any(|tenant| tenant.has_work()) {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let mut spinning = false;
        for tenant in &mut self.tenants {
            spinning |= tenant.spinning(now);
        }
        if spinning {
            std::thread::yield_now();
            return Duration::ZERO;
        }
        self.tenants
            .iter()
            .filter_map(|tenant| tenant.next_deadline())
            .fold(MAX_POLL, |timeout, at| {
                timeout.min(at.saturating_duration_since(now))
            })
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Register { make, reply } => {
                let index = self.tenants.len();
                let registered = if index < MAX_TENANTS {
                    match make(&mut Context::new(self.poll.registry(), index)) {
                        Ok(tenant) => {
                            self.tenants.push(tenant);
                            Ok(index)
                        }
                        Err(error) => Err(Engine::tenant_failed(&error)),
                    }
                } else {
                    Err(Engine::tenant_limit_reached())
                };
                let _ = reply.send(registered);
            }
            Command::Call { tenant, run } => {
                let registry = self.poll.registry();
                if let Some(entry) = self.tenants.get_mut(tenant) {
                    // Through the trait object: `Box<dyn Tenant>` is `Any` itself.
                    let entry: &mut dyn Tenant = &mut **entry;
                    run(entry.as_any_mut(), &mut Context::new(registry, tenant));
                }
            }
        }
    }
}

/// The tenant index and sub-token of a token made by [`Context::token`].
fn split(token: Token) -> (usize, usize) {
    (
        (token.0 >> TENANT_SHIFT).wrapping_sub(1),
        token.0 & SUB_MASK,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::Interest;
    use mio::net::UnixStream;
    use std::io::{Read, Write};
    use std::sync::mpsc::{self, Sender};

    /// Reads its socket when ready and then queues a command without waking the reactor,
    /// as a caller's `post_quiet` racing the reactor's turn does.
    struct Racing {
        socket: UnixStream,
        commands: Sender<Command>,
        ran: Option<Sender<()>>,
    }

    impl Tenant for Racing {
        fn on_ready(&mut self, _cx: &mut Context<'_>, _sub: usize) {
            let mut buf = [0u8; 16];
            while matches!(self.socket.read(&mut buf), Ok(n) if n > 0) {}
            if let Some(ran) = self.ran.take() {
                let run: super::super::handle::Run = Box::new(move |_, _| {
                    let _ = ran.send(());
                });
                let _ = self.commands.send(Command::Call { tenant: 0, run });
            }
        }
    }

    #[test]
    fn a_command_queued_during_a_turn_runs_before_the_reactor_sleeps() {
        let poll = Poll::new().unwrap();
        let (commands, receiver) = mpsc::channel();
        let (ran, was_run) = mpsc::channel();
        let (mut socket, mut peer) = UnixStream::pair().unwrap();
        let token = Context::new(poll.registry(), 0).token(0);
        poll.registry()
            .register(&mut socket, token, Interest::READABLE)
            .unwrap();
        let mut reactor = Reactor::new(poll);
        reactor.tenants.push(Box::new(Racing {
            socket,
            commands: commands.clone(),
            ran: Some(ran),
        }));
        std::thread::spawn(move || reactor.run(receiver));
        // Readiness wakes the reactor; the command its handler queues must not wait for the
        // next wake-up (nothing else would wake this reactor before `MAX_POLL`).
        peer.write_all(b"x").unwrap();
        let waited = Instant::now();
        was_run
            .recv_timeout(MAX_POLL * 5)
            .expect("the queued command ran");
        assert!(
            waited.elapsed() < MAX_POLL / 2,
            "the command waited {:?} for a later wake-up",
            waited.elapsed()
        );
        drop(commands);
    }

    #[test]
    fn tokens_round_trip() {
        let poll = Poll::new().unwrap();
        for (tenant, sub) in [(0, 0), (3, 17), (MAX_TENANTS - 1, SUB_MASK)] {
            let token = Context::new(poll.registry(), tenant).token(sub);
            assert_ne!(token, WAKER);
            assert_eq!(split(token), (tenant, sub));
        }
    }
}
