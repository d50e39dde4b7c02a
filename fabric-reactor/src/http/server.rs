//! [`Servers`]: the tenant that drives every server (listener and connections) of one
//! service type.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry};

use super::conn::{Conn, Deadline, Phase, Step};
use super::{Ending, Limits, Reject, Service, Turn};
use crate::engine::{Context, Tenant};
use crate::slots::{SlotKey, Slots};

/// Sub-tokens per server: 0 for the listener, `1 + index` for connection `index`.
const PER_SERVER: usize = Limits::MAX_CAPACITY + 1;

/// Identifies one server (slot + generation): a key of a closed server never reaches the
/// server that reused its slot.
pub type ServerKey = SlotKey;

#[derive(Debug)]
struct Server<S: Service> {
    listener: TcpListener,
    service: S,
    limits: Limits,
    conns: Vec<Option<Conn<S::Conn>>>,
    /// Eviction order: bumped for every accepted or newly idle connection.
    seq: u64,
}

/// Every server of one [`Service`] type, as a reactor tenant. Open servers with
/// [`Servers::open`] from a handle call; the listener's connections are then served on
/// readiness with no thread of their own.
#[derive(Debug)]
pub struct Servers<S: Service> {
    slots: Slots<Server<S>>,
    /// Connections that used their read budget: driven again next turn.
    again: Vec<(usize, usize)>,
    /// Servers whose paused and streaming connections are driven again next turn.
    wake: Vec<usize>,
    /// No connection deadline is earlier than this.
    earliest: Option<Instant>,
}

impl<S: Service> Default for Servers<S> {
    fn default() -> Self {
        Servers {
            slots: Slots::default(),
            again: Vec::new(),
            wake: Vec::new(),
            earliest: None,
        }
    }
}

impl<S: Service> Servers<S> {
    /// Serves `listener` (made non-blocking here) with `service`.
    pub fn open(
        &mut self,
        cx: &mut Context<'_>,
        listener: std::net::TcpListener,
        limits: Limits,
        service: S,
    ) -> io::Result<ServerKey> {
        if limits.capacity == 0 || limits.capacity > Limits::MAX_CAPACITY {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let slot = self.slots.reserve();
        let token = cx.token(slot * PER_SERVER);
        if let Err(error) = cx
            .registry()
            .register(&mut listener, token, Interest::READABLE)
        {
            self.slots.unreserve(slot);
            return Err(error);
        }
        Ok(self.slots.fill(
            slot,
            Server {
                listener,
                service,
                limits,
                conns: (0..limits.capacity).map(|_| None).collect(),
                seq: 0,
            },
        ))
    }

    /// Closes a server's listener and every connection (each told [`Ending::ServerClosed`]).
    pub fn close(&mut self, cx: &mut Context<'_>, key: ServerKey) {
        if !self.slots.live(key) {
            return;
        }
        let Some(mut server) = self.slots.take(key.slot) else {
            return;
        };
        let registry = cx.registry();
        let _ = registry.deregister(&mut server.listener);
        for conn in server.conns.iter_mut().filter_map(Option::take) {
            close_conn(registry, &mut server.service, conn, Ending::ServerClosed);
        }
        self.again.retain(|(slot, _)| *slot != key.slot);
        self.wake.retain(|slot| *slot != key.slot);
    }

    /// Drives the server's paused and streaming connections again (the service's state
    /// changed outside the reactor: a consumer made room, a queue was closed).
    pub fn resume(&mut self, cx: &mut Context<'_>, key: ServerKey) {
        if self.slots.live(key) {
            self.drive_waiting(cx.registry(), key.slot);
        }
    }

    /// Connections a live server holds now.
    pub fn connections(&self, key: ServerKey) -> usize {
        match self.slots.get(key.slot) {
            Some(server) if self.slots.live(key) => server.conns.iter().flatten().count(),
            _ => 0,
        }
    }

    fn note_deadline(&mut self, slot: usize, index: usize) {
        let at = self
            .slots
            .get(slot)
            .and_then(|server| server.conns[index].as_ref())
            .and_then(|conn| conn.deadline)
            .map(|(at, _)| at);
        if let Some(at) = at {
            self.earliest = Some(self.earliest.map_or(at, |e| e.min(at)));
        }
    }

    fn accept(&mut self, registry: &Registry, token: impl Fn(usize) -> mio::Token, slot: usize) {
        loop {
            let Some(server) = self.slots.get_mut(slot) else {
                return;
            };
            let stream = match server.listener.accept() {
                Ok((stream, _)) => stream,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return, // WouldBlock, or a transient accept failure
            };
            let Some(index) = make_room(registry, server) else {
                drop(stream); // every slot serves an accepted request: closed unanswered
                continue;
            };
            let Some(index) = admit(
                registry,
                server,
                stream,
                index,
                token(slot * PER_SERVER + index + 1),
            ) else {
                continue;
            };
            self.drive(registry, slot, index);
        }
    }

    fn drive(&mut self, registry: &Registry, slot: usize, index: usize) {
        let step = self.with_conn(slot, index, |conn, service, limits, seq, turn| {
            conn.step(service, limits, turn, seq)
        });
        let Some(step) = step else {
            return;
        };
        match step {
            Step::Wait => self.note_deadline(slot, index),
            Step::Again => {
                self.again.push((slot, index));
                self.note_deadline(slot, index);
            }
            Step::Drop(ending) => return self.drop_conn(registry, slot, index, ending),
        }
        self.watch_writes(registry, slot, index);
    }

    /// Registers connection `index` for writability while its output waits for room, and
    /// for readability only once it is written (an edge-triggered registration changed to
    /// include writability reports a socket that has room already).
    fn watch_writes(&mut self, registry: &Registry, slot: usize, index: usize) {
        let Some(conn) = self
            .slots
            .get_mut(slot)
            .and_then(|server| server.conns[index].as_mut())
        else {
            return;
        };
        let wants = conn.wants_write();
        if wants == conn.writable {
            return;
        }
        let interest = if wants {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        let token = conn.token;
        if registry
            .reregister(&mut conn.stream, token, interest)
            .is_ok()
        {
            conn.writable = wants;
        }
    }

    fn drop_conn(&mut self, registry: &Registry, slot: usize, index: usize, ending: Ending) {
        let Some(server) = self.slots.get_mut(slot) else {
            return;
        };
        if let Some(conn) = server.conns[index].take() {
            close_conn(registry, &mut server.service, conn, ending);
        }
    }

    fn drive_waiting(&mut self, registry: &Registry, slot: usize) {
        let Some(count) = self.slots.get(slot).map(|server| server.conns.len()) else {
            return;
        };
        for index in 0..count {
            let waiting = self
                .slots
                .get(slot)
                .and_then(|server| server.conns[index].as_ref())
                .is_some_and(Conn::is_waiting_on_service);
            if waiting {
                self.drive(registry, slot, index);
            }
        }
    }

    /// Runs `f` with connection `index` of server `slot` and its server's parts; a change
    /// the service announced (`Turn::wake_server`) queues the server for the next turn.
    /// `None` when the connection is gone.
    fn with_conn<R>(
        &mut self,
        slot: usize,
        index: usize,
        f: impl FnOnce(&mut Conn<S::Conn>, &mut S, &Limits, &mut u64, &mut Turn) -> R,
    ) -> Option<R> {
        let Server {
            service,
            limits,
            conns,
            seq,
            ..
        } = self.slots.get_mut(slot)?;
        let conn = conns[index].as_mut()?;
        let mut turn = Turn::default();
        let result = f(conn, service, limits, seq, &mut turn);
        if turn.wake {
            self.wake.push(slot);
        }
        Some(result)
    }

    /// Handles one expired deadline of connection `index`.
    fn expire(&mut self, registry: &Registry, slot: usize, index: usize, kind: Deadline) {
        let then = self.with_conn(slot, index, |conn, service, limits, seq, turn| {
            conn.deadline = None;
            match kind {
                Deadline::Head if matches!(conn.phase, Phase::Head { idle: true }) => {
                    Some(Ending::Done)
                }
                Deadline::Head => (!conn.reject(&*service, Reject::HeadTimeout, limits))
                    .then_some(Ending::Dropped),
                Deadline::BodyIdle => Some(Ending::Dropped),
                Deadline::Linger => Some(Ending::Done),
                Deadline::Service => {
                    let decision = service.on_deadline(&mut conn.state, turn);
                    conn.apply_body(service, decision, limits, turn, seq);
                    None
                }
            }
        });
        match then {
            Some(Some(ending)) => self.drop_conn(registry, slot, index, ending),
            Some(None) => self.drive(registry, slot, index),
            None => {}
        }
    }
}

/// A free connection slot of `server`, shedding a connection when the untrusted share is
/// full or no slot is free: the oldest never-trusted one first, then the oldest idle one,
/// then (every slot serving an accepted request) a stalled body ([`stalled_victim`]).
/// `None` when every slot serves a request that is making progress.
fn make_room<S: Service>(registry: &Registry, server: &mut Server<S>) -> Option<usize> {
    let untrusted_limit = server
        .limits
        .capacity
        .saturating_sub(server.limits.reserved);
    let untrusted = server
        .conns
        .iter()
        .flatten()
        .filter(|conn| conn.untrusted())
        .count();
    let free = server.conns.iter().position(Option::is_none);
    if untrusted < untrusted_limit.max(1)
        && let Some(free) = free
    {
        return Some(free);
    }
    let victim = server
        .conns
        .iter()
        .enumerate()
        .filter_map(|(index, conn)| conn.as_ref().map(|conn| (index, conn)))
        .filter(|(_, conn)| conn.untrusted())
        .min_by_key(|(_, conn)| (conn.trusted, conn.since))
        .map(|(index, _)| index);
    let victim = match (victim, free) {
        (Some(index), _) => Some(index),
        (None, Some(free)) => return Some(free),
        (None, None) => stalled_victim(server),
    };
    let index = victim?;
    if let Some(conn) = server.conns[index].take() {
        close_conn(registry, &mut server.service, conn, Ending::Dropped);
    }
    Some(index)
}

/// The connection to shed when every slot serves an accepted request: among the bodies that
/// stalled ([`Conn::stalled`]), one of the peer address holding the most connections, the
/// longest stalled of them.
fn stalled_victim<S: Service>(server: &Server<S>) -> Option<usize> {
    let now = Instant::now();
    let mut per_peer: HashMap<Option<IpAddr>, usize> = HashMap::new();
    for conn in server.conns.iter().flatten() {
        *per_peer.entry(conn.peer).or_default() += 1;
    }
    server
        .conns
        .iter()
        .enumerate()
        .filter_map(|(index, conn)| {
            let conn = conn.as_ref()?;
            let since = conn.stalled(&server.limits, now)?;
            let held = per_peer.get(&conn.peer).copied().unwrap_or(0);
            Some((index, held, since))
        })
        .min_by_key(|&(_, held, since)| (std::cmp::Reverse(held), since))
        .map(|(index, _, _)| index)
}

/// Registers an accepted connection in slot `index`; `None` when registering fails.
fn admit<S: Service>(
    registry: &Registry,
    server: &mut Server<S>,
    mut stream: TcpStream,
    index: usize,
    token: mio::Token,
) -> Option<usize> {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok().map(|addr| addr.ip());
    registry
        .register(&mut stream, token, Interest::READABLE)
        .ok()?;
    server.seq += 1;
    let mut conn = Conn::new(stream, &server.limits, server.seq, peer);
    conn.token = token;
    server.conns[index] = Some(conn);
    Some(index)
}

fn close_conn<S: Service>(
    registry: &Registry,
    service: &mut S,
    mut conn: Conn<S::Conn>,
    ending: Ending,
) {
    let _ = registry.deregister(&mut conn.stream);
    service.on_close(conn.state, ending);
}

impl<S: Service> Tenant for Servers<S> {
    fn on_ready(&mut self, cx: &mut Context<'_>, sub: usize) {
        let (slot, sub) = (sub / PER_SERVER, sub % PER_SERVER);
        if self.slots.get(slot).is_none() {
            return; // stale event of a closed server
        }
        let registry = cx.registry();
        if sub == 0 {
            self.accept(registry, |sub| cx.token(sub), slot);
        } else {
            self.drive(registry, slot, sub - 1);
        }
    }

    fn run_again(&mut self, cx: &mut Context<'_>) {
        let registry = cx.registry();
        for (slot, index) in std::mem::take(&mut self.again) {
            self.drive(registry, slot, index);
        }
        let mut wake = std::mem::take(&mut self.wake);
        wake.sort_unstable();
        wake.dedup();
        for slot in wake {
            self.drive_waiting(registry, slot);
        }
    }

    fn fire(&mut self, cx: &mut Context<'_>, now: Instant) {
        if self.earliest.is_none_or(|earliest| earliest > now) {
            return;
        }
        self.earliest = None;
        let registry = cx.registry();
        for slot in 0..self.slots.bound() {
            let count = self.slots.get(slot).map_or(0, |server| server.conns.len());
            for index in 0..count {
                let deadline = self
                    .slots
                    .get(slot)
                    .and_then(|server| server.conns[index].as_ref())
                    .and_then(|conn| conn.deadline);
                match deadline {
                    Some((at, kind)) if at <= now => self.expire(registry, slot, index, kind),
                    Some(_) => self.note_deadline(slot, index),
                    None => {}
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.earliest
    }

    fn has_work(&self) -> bool {
        !self.again.is_empty() || !self.wake.is_empty()
    }
}
