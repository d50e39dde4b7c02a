//! The HTTP client that forwards calls to their endpoints: `ureq` agents (rustls for
//! HTTPS, connections kept alive in their pools, over the gateway's own TCP transport),
//! configured to pass bytes through as they are.

use std::sync::OnceLock;

use ureq::Agent;
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{ConnectProxyConnector, Connector, RustlsConnector};

use crate::forward::Call;
use crate::transport::TcpConnector;

/// The buffers of an endpoint connection, each way. ureq's default (128 KiB each) is
/// zero-filled for every new connection: tens of microseconds per call in an optimized
/// build and about a millisecond in a debug one. An answer's head must fit the input
/// buffer (it is the answer's head limit too).
pub(crate) const BUFFER_BYTES: usize = 16 * 1024;

/// Endpoint connections kept for the next call, in all and per endpoint (ureq's default
/// keeps 3 per host: a harness running calls in parallel would open most of them anew).
const IDLE_CONNECTIONS: usize = 64;

/// How long an endpoint connection is kept unused: under the 5 s after which common model
/// servers (uvicorn's default) close an idle one, so a kept connection is rarely taken just
/// as its endpoint closes it (ureq checks it before use; a call whose connection broke
/// anyway is answered 502, never sent twice: `forward::send`).
const IDLE_AGE: std::time::Duration = std::time::Duration::from_secs(4);

/// A request head is written a line at a time, so the output buffer bounds its longest
/// line: a call with a longer line (the harness's heads may reach the server's
/// [`fabric_reactor::http::MAX_HEAD_BYTES`]) goes through an agent with room for it.
const WIDE_OUTPUT_BYTES: usize = fabric_reactor::http::MAX_HEAD_BYTES + 8 * 1024;

/// The agent for `call`: the lean one, or the wide one when a line of its head may not fit.
pub(crate) fn agent(call: &Call) -> &'static Agent {
    static LEAN: OnceLock<Agent> = OnceLock::new();
    static WIDE: OnceLock<Agent> = OnceLock::new();
    // The request line holds the endpoint URL; a header line is `name: value\r\n`.
    let longest = call
        .headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 4)
        .chain([call.upstream.base_url.len() + call.path.len() + call.query.len() + 32])
        .max()
        .unwrap_or(0);
    if longest < BUFFER_BYTES / 2 {
        LEAN.get_or_init(|| build(BUFFER_BYTES))
    } else {
        WIDE.get_or_init(|| build(WIDE_OUTPUT_BYTES))
    }
}

pub(crate) fn build(output: usize) -> Agent {
    let config = Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(ureq::config::AutoHeaderValue::None)
        .accept(ureq::config::AutoHeaderValue::None)
        .accept_encoding(ureq::config::AutoHeaderValue::None)
        .allow_non_standard_methods(true)
        .input_buffer_size(BUFFER_BYTES)
        .max_response_header_size(BUFFER_BYTES)
        .output_buffer_size(output)
        .max_idle_connections(IDLE_CONNECTIONS)
        .max_idle_connections_per_host(IDLE_CONNECTIONS)
        .max_idle_age(IDLE_AGE)
        .tls_config(tls_config())
        .build();
    // ureq's own chain (a CONNECT proxy when one is configured, TCP, rustls) with the
    // gateway's TCP transport in place of ureq's.
    let connector =
        ().chain(ConnectProxyConnector::default())
            .chain(TcpConnector)
            .chain(RustlsConnector::default());
    Agent::with_parts(config, connector, DefaultResolver::default())
}

/// The roots HTTPS endpoints are verified against: the certificates of the PEM file
/// `SSL_CERT_FILE` names when it is set (as OpenSSL and Python read it), else Mozilla's
/// roots (`webpki-roots`).
fn tls_config() -> ureq::tls::TlsConfig {
    let specific = std::env::var_os("SSL_CERT_FILE")
        .and_then(|path| std::fs::read(path).ok())
        .map(|pem| {
            ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .filter(|certs| !certs.is_empty());
    let roots = match specific {
        Some(certs) => ureq::tls::RootCerts::new_with_certs(&certs),
        None => ureq::tls::RootCerts::WebPki,
    };
    ureq::tls::TlsConfig::builder().root_certs(roots).build()
}
