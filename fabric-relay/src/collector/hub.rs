//! The collector's routing state: registrations, their bounded record queues, scope
//! ancestry and the counters. Shared by the reactor (which routes what publishers post and
//! writes HTTP streams) and in-process consumers (which pop from a queue directly).
//!
//! Routing, as upstream's collector: a scope-start record whose
//! `metadata.nemo_fabric_request_id` names an accepting registration belongs to it (and
//! its `uuid` is remembered); any other record belongs to the registration owning its
//! `uuid` or, failing that, its `parent_uuid`; a scope start routed by ancestry is
//! remembered too. Records without a `uuid`, or whose scopes nobody owns, are counted as
//! uncorrelated and dropped.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use fabric_reactor::watched::Watched;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

/// Most records one request's queue holds.
pub const QUEUE_MAX_RECORDS: usize = 1024;
/// Most record bytes one request's queue holds.
pub const QUEUE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Bytes counted for one remembered scope beyond its text (map entries, hashing).
const SCOPE_OVERHEAD: usize = 96;
/// Remembered scopes may take at most this fraction of the memory budget (`1 / N`), so
/// queued records never leave a new run's scope start unroutable.
const SCOPES_SHARE: usize = 4;

/// What a remembered scope costs the memory budget: its uuid (in the owner map and the
/// registration's set), its owner's id, and the entries.
fn scope_cost(uuid: &str, request_id: &str) -> usize {
    2 * uuid.len() + request_id.len() + SCOPE_OVERHEAD
}

/// A collector's bounds: its memory budget and how many registrations it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) memory_budget: usize,
    pub(crate) max_registrations: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            memory_budget: super::MEMORY_BUDGET,
            max_registrations: super::MAX_REGISTRATIONS,
        }
    }
}

/// Where a registration is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Registered,
    Streaming,
    Disconnected,
    /// Deregistered without removing the queue: what is queued is still delivered.
    Draining,
}

#[derive(Debug)]
struct Registration {
    phase: Phase,
    attached: bool,
    queue: VecDeque<String>,
    queued_bytes: usize,
    /// Deregistered: no record is accepted; `drain` says whether the queue is delivered.
    closed: bool,
    drain: bool,
    uuids: HashSet<String>,
}

impl Registration {
    fn accepts(&self) -> bool {
        !self.closed
            && matches!(
                self.phase,
                Phase::Registered | Phase::Streaming | Phase::Disconnected
            )
    }

    fn has_room(&self, size: usize) -> bool {
        self.queue.len() < QUEUE_MAX_RECORDS && self.queued_bytes + size <= QUEUE_MAX_BYTES
    }
}

/// What the collector has seen, since it started (`GET /v1/stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CollectorStats {
    /// Non-blank lines posted to `/v1/atof`.
    pub records_received: u64,
    /// Records queued for a registration.
    pub records_routed: u64,
    /// Records that belonged to no registration (dropped).
    pub records_uncorrelated: u64,
    /// Lines that were not a JSON object (dropped).
    pub records_invalid: u64,
    /// Records dropped after waiting for queue room for the backpressure timeout.
    pub records_dropped_backpressure: u64,
    /// Posts refused with 413 (a record over 1 MiB).
    pub records_too_large: u64,
    /// Registrations currently held.
    pub registrations: u64,
    /// Registrations refused with 503 because the collector held its maximum.
    pub registrations_refused: u64,
    /// Publisher requests answered 503 because the memory budget stayed full for the
    /// backpressure timeout.
    pub requests_refused_memory: u64,
    /// Bytes counted against the memory budget now: queued records, records being
    /// received or waiting for room, remembered scopes.
    pub memory_bytes: u64,
    /// The memory budget.
    pub memory_budget_bytes: u64,
}

/// Why a registration was refused (409).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RegisterError {
    Duplicate(String),
    /// The collector holds its maximum of live registrations (503).
    Full(usize),
}

impl RegisterError {
    pub(crate) fn detail(&self) -> String {
        match self {
            RegisterError::Duplicate(id) => {
                format!("request_id {} is already registered", repr(id))
            }
            RegisterError::Full(max) => format!(
                "the collector holds its maximum of {max} live registrations (max_registrations)"
            ),
        }
    }
}

/// Python's `repr` of a simple string (single quotes), as upstream's messages show it.
fn repr(text: &str) -> String {
    if text.contains('\'') && !text.contains('"') {
        format!("\"{text}\"")
    } else {
        format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// Why a stream could not be attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttachError {
    /// 404: not registered.
    Unknown,
    /// 409: a stream is already attached.
    Attached,
}

/// What putting a record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Put {
    Queued,
    /// The queue is at a bound: retry when a consumer made room.
    Full,
    /// The registration is gone or closed: the record is dropped.
    Gone,
}

/// What popping found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pop {
    Record(String),
    /// Nothing queued yet.
    Empty,
    /// The queue is closed and delivered (or was removed).
    End,
}

/// The routing tables, counters and memory accounting.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    requests: HashMap<String, Registration>,
    owners: HashMap<String, String>,
    pub(crate) stats: CollectorStats,
    bounds: Bounds,
    /// Record bytes in every queue.
    queued: usize,
    /// What the remembered scopes cost ([`scope_cost`]).
    scopes: usize,
    /// Bytes connections hold: partial records being received and routed records waiting
    /// for room (kept up to date by the HTTP service).
    held: usize,
}

impl Routes {
    pub(crate) fn new(bounds: Bounds) -> Routes {
        Routes {
            bounds,
            ..Routes::default()
        }
    }

    /// The counters, with the memory figures of now.
    pub(crate) fn snapshot(&self) -> CollectorStats {
        CollectorStats {
            memory_bytes: self.used() as u64,
            memory_budget_bytes: self.bounds.memory_budget as u64,
            ..self.stats.clone()
        }
    }

    /// Bytes counted against the budget.
    fn used(&self) -> usize {
        self.queued + self.scopes + self.held
    }

    /// Whether a connection may read more of a partial record: everything counted is
    /// within the budget.
    pub(crate) fn may_buffer(&self) -> bool {
        self.used() <= self.bounds.memory_budget
    }

    /// Bytes connections hold now.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// A connection now holds `now` bytes instead of `before`.
    pub(crate) fn hold(&mut self, before: usize, now: usize) {
        self.held = (self.held + now).saturating_sub(before);
    }

    pub(crate) fn is_registered(&self, request_id: &str) -> bool {
        self.requests.contains_key(request_id)
    }

    pub(crate) fn register(&mut self, request_id: &str) -> Result<(), RegisterError> {
        if self.requests.contains_key(request_id) {
            return Err(RegisterError::Duplicate(request_id.to_owned()));
        }
        if self.requests.len() >= self.bounds.max_registrations {
            self.stats.registrations_refused += 1;
            return Err(RegisterError::Full(self.bounds.max_registrations));
        }
        self.requests.insert(
            request_id.to_owned(),
            Registration {
                phase: Phase::Registered,
                attached: false,
                queue: VecDeque::new(),
                queued_bytes: 0,
                closed: false,
                drain: false,
                uuids: HashSet::new(),
            },
        );
        self.stats.registrations = self.requests.len() as u64;
        Ok(())
    }

    /// Whether [`Routes::attach`] would succeed (a `HEAD` of the stream).
    pub(crate) fn can_attach(&self, request_id: &str) -> Result<(), AttachError> {
        match self.requests.get(request_id) {
            None => Err(AttachError::Unknown),
            Some(registration) if registration.attached => Err(AttachError::Attached),
            Some(_) => Ok(()),
        }
    }

    pub(crate) fn attach(&mut self, request_id: &str) -> Result<(), AttachError> {
        let registration = self
            .requests
            .get_mut(request_id)
            .ok_or(AttachError::Unknown)?;
        if registration.attached {
            return Err(AttachError::Attached);
        }
        registration.attached = true;
        if matches!(registration.phase, Phase::Registered | Phase::Disconnected) {
            registration.phase = Phase::Streaming;
        }
        Ok(())
    }

    /// The consumer went away: a closed, delivered queue is forgotten; an open one keeps
    /// collecting records for a later consumer.
    pub(crate) fn detach(&mut self, request_id: &str) {
        let Some(registration) = self.requests.get_mut(request_id) else {
            return;
        };
        registration.attached = false;
        if registration.closed && registration.queue.is_empty() {
            self.forget(request_id);
        } else if registration.phase == Phase::Streaming {
            registration.phase = Phase::Disconnected;
        }
    }

    /// Stops routing to the request; `remove_queue` drops what is queued and ends an
    /// attached stream now, otherwise the queue is delivered first. Unknown ids are a no-op.
    pub(crate) fn deregister(&mut self, request_id: &str, remove_queue: bool) {
        for uuid in self
            .requests
            .get_mut(request_id)
            .map(|r| std::mem::take(&mut r.uuids))
            .unwrap_or_default()
        {
            self.scopes = self.scopes.saturating_sub(scope_cost(&uuid, request_id));
            if self
                .owners
                .get(&uuid)
                .is_some_and(|owner| owner == request_id)
            {
                self.owners.remove(&uuid);
            }
        }
        let Some(registration) = self.requests.get_mut(request_id) else {
            return;
        };
        registration.closed = true;
        if remove_queue {
            self.forget(request_id);
            return;
        }
        registration.phase = Phase::Draining;
        registration.drain = true;
        if registration.queue.is_empty() && !registration.attached {
            self.forget(request_id);
        }
    }

    fn forget(&mut self, request_id: &str) {
        if let Some(registration) = self.requests.remove(request_id) {
            self.queued = self.queued.saturating_sub(registration.queued_bytes);
            for uuid in registration.uuids {
                self.scopes = self.scopes.saturating_sub(scope_cost(&uuid, request_id));
                if self
                    .owners
                    .get(&uuid)
                    .is_some_and(|owner| owner == request_id)
                {
                    self.owners.remove(&uuid);
                }
            }
        }
        self.stats.registrations = self.requests.len() as u64;
    }

    /// The registration a record belongs to (remembering scope ownership), or `None`
    /// (counted as uncorrelated).
    pub(crate) fn route(&mut self, record: &Value) -> Option<String> {
        let routed = self.route_inner(record);
        if routed.is_none() {
            self.stats.records_uncorrelated += 1;
        }
        routed
    }

    fn route_inner(&mut self, record: &Value) -> Option<String> {
        let text = |key: &str| record.get(key).and_then(Value::as_str);
        let uuid = text("uuid")?.to_owned();
        let scope_start = text("kind") == Some("scope") && text("scope_category") == Some("start");
        let root = scope_start
            .then(|| {
                record
                    .get("metadata")
                    .and_then(|m| m.get("nemo_fabric_request_id"))
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
            })
            .flatten();
        if let Some(root) = root
            && self.accepts(root)
        {
            let root = root.to_owned();
            return self.associate(uuid, &root).then_some(root);
        }
        let owner = self
            .owners
            .get(&uuid)
            .or_else(|| text("parent_uuid").and_then(|parent| self.owners.get(parent)))
            .cloned()?;
        if !self.accepts(&owner) {
            return None;
        }
        if scope_start && !self.associate(uuid, &owner) {
            return None;
        }
        Some(owner)
    }

    fn accepts(&self, request_id: &str) -> bool {
        self.requests
            .get(request_id)
            .is_some_and(Registration::accepts)
    }

    fn associate(&mut self, uuid: String, request_id: &str) -> bool {
        if self
            .owners
            .get(&uuid)
            .is_some_and(|owner| owner != request_id)
        {
            return false;
        }
        let cost = scope_cost(&uuid, request_id);
        let over = self.scopes + cost > self.bounds.memory_budget / SCOPES_SHARE;
        let Some(registration) = self.requests.get_mut(request_id) else {
            return false;
        };
        if !registration.uuids.contains(&uuid) {
            if over {
                // Remembering one more scope would pass the budget: not routed.
                return false;
            }
            registration.uuids.insert(uuid.clone());
            self.scopes += cost;
        }
        self.owners.insert(uuid, request_id.to_owned());
        true
    }

    /// Queues a routed record (its JSON text) if there is room.
    pub(crate) fn put(&mut self, request_id: &str, text: &str) -> Put {
        let Some(registration) = self.requests.get_mut(request_id) else {
            return Put::Gone;
        };
        if registration.closed {
            return Put::Gone;
        }
        // The record's bytes are already counted as held by its connection: queueing it
        // moves them, so only the queues and scopes are compared with the budget here.
        let within_budget = self.queued + self.scopes + text.len() <= self.bounds.memory_budget;
        if !registration.has_room(text.len()) || !within_budget {
            return Put::Full;
        }
        self.queued += text.len();
        registration.queued_bytes += text.len();
        registration.queue.push_back(text.to_owned());
        self.stats.records_routed += 1;
        Put::Queued
    }

    pub(crate) fn pop(&mut self, request_id: &str) -> Pop {
        let Some(registration) = self.requests.get_mut(request_id) else {
            return Pop::End;
        };
        if registration.closed && !registration.drain {
            return Pop::End;
        }
        match registration.queue.pop_front() {
            Some(record) => {
                registration.queued_bytes -= record.len();
                self.queued -= record.len();
                Pop::Record(record)
            }
            None if registration.closed => Pop::End,
            None => Pop::Empty,
        }
    }
}

/// The routing state, its condition variable (for in-process consumers), and the flag that
/// says a publisher waits for queue room (so a consumer that made room wakes the reactor).
#[derive(Debug, Default)]
pub(crate) struct Hub {
    routes: Watched<Routes>,
    publisher_blocked: AtomicBool,
    watcher: Mutex<Watcher>,
}

/// Called after every change (an in-process consumer's readiness signal).
#[derive(Default)]
struct Watcher(Option<Arc<dyn Fn() + Send + Sync>>);

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Watcher(set)"
        } else {
            "Watcher(none)"
        })
    }
}

impl Hub {
    pub(crate) fn new(bounds: Bounds) -> Hub {
        Hub {
            routes: Watched::new(Routes::new(bounds)),
            ..Hub::default()
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock()
    }

    pub(crate) fn notify(&self) {
        self.routes.notify_all();
        let watcher = self
            .watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .clone();
        if let Some(watcher) = watcher {
            watcher();
        }
    }

    /// Installs the function called after every change (replacing any previous one).
    pub(crate) fn set_watcher(&self, watcher: Option<Arc<dyn Fn() + Send + Sync>>) {
        self.watcher.lock().unwrap_or_else(|p| p.into_inner()).0 = watcher;
    }

    /// A publisher waits for room in some queue.
    pub(crate) fn set_blocked(&self) {
        self.publisher_blocked.store(true, Ordering::SeqCst);
    }

    /// Whether a publisher was waiting (and clears the flag).
    pub(crate) fn take_blocked(&self) -> bool {
        self.publisher_blocked.swap(false, Ordering::SeqCst)
    }

    pub(crate) fn wait_until<'a>(
        &self,
        guard: MutexGuard<'a, Routes>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Routes> {
        self.routes.wait_until(guard, deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start(uuid: &str, request: Option<&str>) -> Value {
        let mut record = json!({"kind": "scope", "scope_category": "start", "uuid": uuid});
        if let Some(request) = request {
            record["metadata"] = json!({"nemo_fabric_request_id": request});
        }
        record
    }

    #[test]
    fn records_route_by_request_then_ancestry() {
        let mut routes = Routes::default();
        routes.register("a").unwrap();
        routes.register("b").unwrap();
        assert_eq!(routes.route(&start("s1", Some("a"))).as_deref(), Some("a"));
        assert_eq!(routes.route(&start("s2", Some("b"))).as_deref(), Some("b"));
        // A child scope, then a mark under the child: ancestry through parent_uuid.
        let child = json!({"kind": "scope", "scope_category": "start", "uuid": "c1",
                           "parent_uuid": "s1"});
        assert_eq!(routes.route(&child).as_deref(), Some("a"));
        let mark = json!({"kind": "mark", "uuid": "m1", "parent_uuid": "c1"});
        assert_eq!(routes.route(&mark).as_deref(), Some("a"));
        let end = json!({"kind": "scope", "scope_category": "end", "uuid": "s2"});
        assert_eq!(routes.route(&end).as_deref(), Some("b"));
        // Unknown request, unknown ancestry, no uuid: uncorrelated.
        assert_eq!(routes.route(&start("x", Some("zzz"))), None);
        assert_eq!(
            routes.route(&json!({"kind": "mark", "uuid": "u", "parent_uuid": "p"})),
            None
        );
        assert_eq!(routes.route(&json!({"kind": "mark"})), None);
        assert_eq!(routes.stats.records_uncorrelated, 3);
        // A scope owned by `a` cannot be claimed by `b`.
        assert_eq!(routes.route(&start("s1", Some("b"))), None);
        // Deregistered: its scopes no longer route.
        routes.deregister("a", true);
        assert_eq!(routes.route(&mark), None);
        assert_eq!(
            routes.register("b"),
            Err(RegisterError::Duplicate("b".into()))
        );
    }

    #[test]
    fn queues_are_bounded_and_drain_after_deregistration() {
        let mut routes = Routes::default();
        routes.register("a").unwrap();
        for _ in 0..QUEUE_MAX_RECORDS {
            assert_eq!(routes.put("a", "{}"), Put::Queued);
        }
        assert_eq!(routes.put("a", "{}"), Put::Full);
        assert_eq!(routes.pop("a"), Pop::Record("{}".into()));
        assert_eq!(routes.put("a", "{}"), Put::Queued);
        let big = "x".repeat(QUEUE_MAX_BYTES);
        routes.register("b").unwrap();
        assert_eq!(routes.put("b", "{}"), Put::Queued);
        assert_eq!(routes.put("b", &big), Put::Full);
        routes.attach("b").unwrap();
        routes.deregister("b", false);
        assert_eq!(routes.put("b", "{}"), Put::Gone);
        assert_eq!(routes.pop("b"), Pop::Record("{}".into()));
        assert_eq!(routes.pop("b"), Pop::End);
        routes.detach("b");
        assert_eq!(routes.attach("b"), Err(AttachError::Unknown));
        routes.deregister("a", true);
        assert_eq!(routes.pop("a"), Pop::End);
        assert_eq!(routes.stats.registrations, 0);
    }

    #[test]
    fn the_memory_budget_bounds_queues_scopes_and_held_bytes() {
        let mut routes = Routes::new(Bounds {
            memory_budget: 1000,
            max_registrations: 2,
        });
        routes.register("a").unwrap();
        routes.register("b").unwrap();
        assert_eq!(routes.register("c"), Err(RegisterError::Full(2)));
        assert_eq!(routes.stats.registrations_refused, 1);
        // Queues share the budget: `b` is refused what `a` took.
        let record = "x".repeat(400);
        assert_eq!(routes.put("a", &record), Put::Queued);
        assert_eq!(routes.put("a", &record), Put::Queued);
        assert_eq!(routes.put("b", &record), Put::Full);
        assert_eq!(routes.snapshot().memory_bytes, 800);
        assert_eq!(routes.pop("a"), Pop::Record(record.clone()));
        assert_eq!(routes.put("b", &record), Put::Queued);
        // Held bytes count for reading more, not for queueing what is held.
        routes.hold(0, 300);
        assert!(!routes.may_buffer());
        routes.hold(300, 100);
        assert!(routes.may_buffer());
        routes.hold(100, 0);
        // Scopes have a quarter of the budget, whatever the queues hold: one more scope
        // than fits is not remembered (nor routed).
        assert_eq!(routes.route(&start("s1", Some("a"))).as_deref(), Some("a"));
        assert_eq!(routes.route(&start("s2", Some("a"))).as_deref(), Some("a"));
        assert_eq!(routes.route(&start("s3", Some("a"))), None);
        assert_eq!(
            routes.snapshot().memory_bytes,
            (800 + 2 * scope_cost("s1", "a")) as u64
        );
        // Forgetting a registration gives its queue and scopes back.
        routes.deregister("a", true);
        routes.deregister("b", true);
        assert_eq!(routes.snapshot().memory_bytes, 0);
        routes.register("c").unwrap();
    }

    #[test]
    fn one_stream_per_registration() {
        let mut routes = Routes::default();
        routes.register("a").unwrap();
        routes.attach("a").unwrap();
        assert_eq!(routes.attach("a"), Err(AttachError::Attached));
        routes.detach("a");
        routes.attach("a").unwrap();
        assert_eq!(
            RegisterError::Duplicate("a".into()).detail(),
            "request_id 'a' is already registered"
        );
    }
}
