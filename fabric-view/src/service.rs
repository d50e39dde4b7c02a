//! The server as a [`Service`] of the reactor's HTTP driver: the token check, the page and
//! its assets answered at once, API requests handed to a worker thread whose bytes
//! [`Service::produce`] moves to the socket.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use fabric_reactor::Handle;
use fabric_reactor::http::{
    ChunkedError, Ending, OnBody, OnHead, Produce, Reject, Reply, Request, ServerKey, Service,
    Turn, constant_time_eq,
};

use crate::answer;
use crate::api;
use crate::assets;
use crate::index::Shared;
use crate::route::{self, Route};
use crate::server::{ViewServers, wake};
use fabric_reactor::http::Outbox;

/// API requests answered at once (each on its own thread); more are answered 503.
const MAX_WORKERS: usize = 32;

/// Wakes the server from a worker.
#[derive(Debug, Clone)]
pub(crate) struct Waker {
    handle: Handle<ViewServers>,
    key: ServerKey,
}

impl Waker {
    pub(crate) fn new(handle: Handle<ViewServers>, key: ServerKey) -> Waker {
        Waker { handle, key }
    }

    pub(crate) fn wake(&self) {
        wake(&self.handle, self.key);
    }
}

/// One `fabric view` server.
#[derive(Debug)]
pub(crate) struct ViewService {
    token: String,
    shared: Arc<Shared>,
    waker: Arc<OnceLock<Waker>>,
    workers: Arc<AtomicUsize>,
}

/// A connection: the answer a worker is producing, if any.
#[derive(Debug, Default)]
pub(crate) struct ViewConn {
    outbox: Option<Arc<Outbox>>,
}

impl ViewService {
    pub(crate) fn new(token: String, shared: Arc<Shared>, waker: Arc<OnceLock<Waker>>) -> Self {
        ViewService {
            token,
            shared,
            waker,
            workers: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The request carries the token (`?token=` or `Authorization: Bearer`).
    fn authorized(&self, request: &Request) -> bool {
        let expected = self.token.as_bytes();
        let bearer = request
            .header("authorization")
            .and_then(|value| value.strip_prefix("Bearer ").map(str::to_owned));
        if bearer.is_some_and(|given| constant_time_eq(given.trim().as_bytes(), expected)) {
            return true;
        }
        route::Query::parse(request.query())
            .get("token")
            .is_some_and(|given| constant_time_eq(given.as_bytes(), expected))
    }

    /// Runs `api` on a worker thread that writes its answer into the connection's outbox.
    fn spawn(&self, conn: &mut ViewConn, api: route::Api) -> OnHead {
        if self.workers.fetch_add(1, Ordering::SeqCst) >= MAX_WORKERS {
            self.workers.fetch_sub(1, Ordering::SeqCst);
            return OnHead::Reply(Reply::close(answer::error(503, "busy: retry", false)));
        }
        let outbox = Arc::new(Outbox::default());
        let job = Job {
            shared: Arc::clone(&self.shared),
            outbox: Arc::clone(&outbox),
            waker: Arc::clone(&self.waker),
            workers: Arc::clone(&self.workers),
        };
        let spawned = std::thread::Builder::new()
            .name("fabric-view-api".into())
            .spawn(move || job.run(api));
        if spawned.is_err() {
            self.workers.fetch_sub(1, Ordering::SeqCst);
            return OnHead::Reply(Reply::close(answer::error(503, "busy: retry", false)));
        }
        conn.outbox = Some(outbox);
        // The worker writes the head itself once it knows it.
        OnHead::Stream(Vec::new())
    }
}

/// One API request on its worker thread.
struct Job {
    shared: Arc<Shared>,
    outbox: Arc<Outbox>,
    waker: Arc<OnceLock<Waker>>,
    workers: Arc<AtomicUsize>,
}

impl Job {
    fn run(self, request: route::Api) {
        let wake = || {
            if let Some(waker) = self.waker.get() {
                waker.wake();
            }
        };
        api::answer(&self.shared, request, &self.outbox, &wake);
        self.outbox.finish();
        wake();
        self.workers.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Service for ViewService {
    type Conn = ViewConn;

    fn on_head(&mut self, conn: &mut ViewConn, request: &Request, _turn: &mut Turn) -> OnHead {
        let keep_alive = request.asks_keep_alive();
        let reply = |bytes: Vec<u8>| OnHead::Reply(Reply { bytes, keep_alive });
        if request.method() != "GET" {
            return OnHead::Reply(Reply::close(answer::error(
                405,
                "fabric view is read-only: GET only",
                false,
            )));
        }
        if !self.authorized(request) {
            return OnHead::Reply(Reply::close(answer::error(
                401,
                "a token is required: open the URL fabric view printed",
                false,
            )));
        }
        match route::route(request.path(), request.query()) {
            None => reply(answer::error(404, "not found", keep_alive)),
            Some(Route::Page) => reply(answer::whole(
                200,
                "text/html; charset=utf-8",
                &assets::index_html(&self.token),
                keep_alive,
            )),
            Some(Route::Asset(name)) => match assets::find(&name) {
                Some(bytes) => reply(answer::whole(
                    200,
                    assets::content_type(&name),
                    bytes,
                    keep_alive,
                )),
                None => reply(answer::error(404, "not found", keep_alive)),
            },
            Some(Route::Api(api)) => self.spawn(conn, api),
        }
    }

    fn on_body(
        &mut self,
        _conn: &mut ViewConn,
        _data: &mut Vec<u8>,
        _complete: bool,
        _turn: &mut Turn,
    ) -> OnBody {
        OnBody::Reply(Reply::close(answer::error(400, "no body expected", false)))
    }

    fn produce(
        &mut self,
        conn: &mut ViewConn,
        out: &mut Vec<u8>,
        room: usize,
        turn: &mut Turn,
    ) -> Produce {
        match &conn.outbox {
            Some(outbox) => outbox.take(out, room, turn),
            None => Produce::Done,
        }
    }

    fn on_body_error(
        &mut self,
        _conn: &mut ViewConn,
        _error: ChunkedError,
        _turn: &mut Turn,
    ) -> Vec<u8> {
        answer::error(400, "malformed body", false)
    }

    fn on_deadline(&mut self, _conn: &mut ViewConn, _turn: &mut Turn) -> OnBody {
        OnBody::Reply(Reply::close(answer::error(400, "no body expected", false)))
    }

    fn reject(&self, _why: Reject) -> Option<Vec<u8>> {
        Some(answer::error(400, "malformed request", false))
    }

    fn on_close(&mut self, conn: ViewConn, _ending: Ending) {
        if let Some(outbox) = conn.outbox {
            outbox.abandon();
        }
    }
}
