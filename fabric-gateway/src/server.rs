//! The process's one gateway server: its loopback listener on the reactor's HTTP driver,
//! opened on first use, and the way workers wake it.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use fabric_reactor::http::{Limits, ServerKey, Servers};
use fabric_reactor::{Handle, Registration};

use crate::capture::GatewayError;
use crate::route::Routes;
use crate::service::GatewayService;

/// Harness connections served at once; a quarter kept for requests that passed the token
/// check. A kept connection waits 60 s for the harness's next call: longer than the SDKs'
/// pools keep an idle one (httpx: 5 s), so the harness closes it first rather than reusing
/// it just as the gateway closes it.
const LIMITS: Limits = {
    let mut limits = Limits::new(1024, 256);
    limits.keep_alive_idle = std::time::Duration::from_secs(60);
    limits
};

type GatewayServers = Servers<GatewayService>;

static SERVERS: Registration<GatewayServers> = Registration::new();
static GATEWAY: Mutex<Option<&'static Gateway>> = Mutex::new(None);

/// The running gateway.
#[derive(Debug)]
pub(crate) struct Gateway {
    pub(crate) routes: Arc<Routes>,
    pub(crate) port: u16,
}

/// Wakes the gateway server's waiting connections (a worker pushed bytes). Wakes are
/// coalesced: while one is posted and not yet begun, another push needs none (the resume
/// takes every connection's bytes pushed before it begins).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waker {
    handle: Handle<GatewayServers>,
    key: ServerKey,
}

/// A resume is posted to the reactor and has not begun.
static POSTED: AtomicBool = AtomicBool::new(false);

impl Waker {
    pub(crate) fn wake(&self) {
        if POSTED.swap(true, Ordering::AcqRel) {
            return;
        }
        let key = self.key;
        let posted = self.handle.post(move |servers, cx| {
            // Acquire: the bytes pushed before any coalesced wake are seen by the resume.
            POSTED.swap(false, Ordering::AcqRel);
            servers.resume(cx, key);
        });
        if posted.is_err() {
            POSTED.store(false, Ordering::Release);
        }
    }

    /// Lets the reactor end an answer the worker wrote whole on a kept connection, at its
    /// next wake-up instead of now: the harness has every byte, and its next request (or
    /// its close) wakes the reactor, which runs this before it reads the connection; a
    /// harness that stays silent has its connection's idle deadline set within the
    /// reactor's longest poll (1 s). Saves a wake-up of the reactor per call.
    pub(crate) fn settle(&self) {
        let key = self.key;
        let _ = self
            .handle
            .post_quiet(move |servers, cx| servers.resume(cx, key));
    }
}

/// The gateway, started on first use.
pub(crate) fn gateway() -> Result<&'static Gateway, GatewayError> {
    let mut slot = GATEWAY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(gateway) = *slot {
        return Ok(gateway);
    }
    let unavailable = |reason: String| GatewayError::Unavailable { reason };
    let handle = SERVERS
        .get_or_register(GatewayServers::default)
        .map_err(|error| unavailable(error.reason().to_owned()))?;
    let socket = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
        .map_err(|error| unavailable(format!("cannot bind the gateway listener: {error}")))?;
    let port = socket
        .local_addr()
        .map_err(|error| unavailable(error.to_string()))?
        .port();
    let routes = Arc::new(Routes::default());
    let waker = Arc::new(OnceLock::new());
    let service = GatewayService::new(Arc::clone(&routes), Arc::clone(&waker));
    let key = handle
        .call(move |servers, cx| servers.open(cx, socket, LIMITS, service))
        .map_err(|error| unavailable(error.reason().to_owned()))?
        .map_err(|error| unavailable(format!("cannot watch the gateway listener: {error}")))?;
    let _ = waker.set(Waker { handle, key });
    let gateway: &'static Gateway = Box::leak(Box::new(Gateway { routes, port }));
    *slot = Some(gateway);
    Ok(gateway)
}
