//! Timing through the gateway against the same stub called directly, shared by the load
//! tests and the bench program (bench/gateway/gateway.rs includes this file).

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use fabric_gateway::{Capture, CaptureOptions, Upstream};

use crate::stub::{self, Stub};

/// One SSE event whose content is `n` in three digits.
pub fn numbered(n: usize) -> Vec<u8> {
    format!("data: {{\"id\":\"s\",\"choices\":[{{\"delta\":{{\"content\":\"{n:03}\"}}}}]}}\n\n")
        .into_bytes()
}

pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Time to the first byte of the answer's body that contains `marker`.
pub fn time_to(url: &str, marker: &[u8]) -> Duration {
    let started = Instant::now();
    let mut stream: TcpStream = stub::post(url, "{\"model\":\"m\"}", "");
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "closed before {marker:?}");
        data.extend_from_slice(&buf[..n]);
        if data.windows(marker.len()).any(|w| w == marker) {
            return started.elapsed();
        }
    }
}

/// Time to the end of the answer (the connection's close, which both the stub and the
/// gateway send after the last byte).
pub fn time_to_end(url: &str) -> Duration {
    let started = Instant::now();
    let mut stream: TcpStream = stub::post(url, "{\"model\":\"m\"}", "");
    let mut data = Vec::new();
    stream.read_to_end(&mut data).expect("read");
    assert!(!data.is_empty(), "no answer");
    started.elapsed()
}

/// On-CPU time of this process's gateway threads (the reactor and the forwarding
/// workers), from each thread's `/proc/self/task/*/schedstat`.
pub fn gateway_cpu() -> Duration {
    let mut nanos = 0u64;
    for task in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !(comm.starts_with("fabric-reactor") || comm.starts_with("fabric-gateway")) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        nanos += stat
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(nanos)
}

/// `clients` concurrent streamed calls to `url`: how many answers were not exactly
/// `expected` (a lost, reordered or changed chunk, or a status other than 200).
pub fn concurrent_streams(url: &str, clients: usize, expected: &[u8]) -> usize {
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let url = url.to_owned();
            std::thread::spawn(move || stub::answer(stub::post(&url, "{\"stream\":true}", "")))
        })
        .collect();
    threads
        .into_iter()
        .map(|thread| thread.join().expect("client"))
        .filter(|(status, _, body)| *status != 200 || body != expected)
        .count()
}

/// The medians of `rounds` calls to a JSON stub and to an SSE stub (first chunk), each
/// called directly and through the gateway, alternated within every round.
#[derive(Debug)]
pub struct Overhead {
    pub call_direct: Duration,
    pub call_gateway: Duration,
    /// To the end of the answer (what a harness waits for).
    pub end_direct: Duration,
    pub end_gateway: Duration,
    pub chunk_direct: Duration,
    pub chunk_gateway: Duration,
    /// The gateway threads' CPU per non-streamed call (its record included).
    pub cpu_per_call: Duration,
}

pub fn overhead(rounds: usize, records: &std::path::Path) -> Overhead {
    let answer =
        r#"{"id":"c","choices":[{"message":{"content":"ok"}}],"usage":{"total_tokens":1}}"#;
    let plain = Stub::start(vec![stub::json_answer(answer)], Duration::ZERO);
    let first = [stub::SSE_HEAD, &numbered(0)].concat();
    let streamed = Stub::start(vec![first, numbered(1)], Duration::from_millis(20));
    let capture = Capture::register(
        "runtime-bench",
        vec![
            Upstream::new("plain", "m", &plain.base_url()),
            Upstream::new("streamed", "m", &streamed.base_url()),
        ],
        records,
        CaptureOptions::default(),
    )
    .expect("register");
    let through = |role: &str| format!("{}/chat/completions", capture.base_url(role).unwrap());
    let direct = |stub: &Stub| format!("{}/chat/completions", stub.base_url());
    let (mut call_direct, mut call_gateway) = (Vec::new(), Vec::new());
    let (mut end_direct, mut end_gateway) = (Vec::new(), Vec::new());
    let (mut chunk_direct, mut chunk_gateway) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        call_direct.push(time_to(&direct(&plain), b"usage"));
        call_gateway.push(time_to(&through("plain"), b"usage"));
        end_direct.push(time_to_end(&direct(&plain)));
        end_gateway.push(time_to_end(&through("plain")));
        chunk_direct.push(time_to(&direct(&streamed), b"000"));
        chunk_gateway.push(time_to(&through("streamed"), b"000"));
    }
    // Let the streamed calls' second chunks and records pass before counting CPU.
    std::thread::sleep(Duration::from_millis(100));
    let before = gateway_cpu();
    for _ in 0..rounds {
        time_to_end(&through("plain"));
    }
    // The last call's record is written just after its answer.
    std::thread::sleep(Duration::from_millis(20));
    let cpu_per_call = (gateway_cpu() - before) / u32::try_from(rounds).expect("rounds");
    Overhead {
        call_direct: median(call_direct),
        call_gateway: median(call_gateway),
        end_direct: median(end_direct),
        end_gateway: median(end_gateway),
        chunk_direct: median(chunk_direct),
        chunk_gateway: median(chunk_gateway),
        cpu_per_call,
    }
}

/// `clients` concurrent streams of `events` events (10 ms apart) through the gateway:
/// (answers not exactly as the stub sent them, records written, requests the stub got).
pub fn streams_through_gateway(
    clients: usize,
    events: usize,
    records: &std::path::Path,
) -> (usize, u64, usize) {
    let mut parts = vec![[stub::SSE_HEAD, &numbered(0)].concat()];
    parts.extend((1..events).map(numbered));
    let stub = Stub::start(parts.clone(), Duration::from_millis(10));
    let capture = Capture::register(
        "runtime-load",
        vec![Upstream::new("default", "m", &stub.base_url())],
        records,
        CaptureOptions::default(),
    )
    .expect("register");
    capture.begin("inv-load");
    let url = format!(
        "{}/chat/completions",
        capture.base_url("default").expect("url")
    );
    let expected: Vec<u8> = parts.concat()[stub::SSE_HEAD.len()..].to_vec();
    let lost = concurrent_streams(&url, clients, &expected);
    let summary = capture.end();
    (lost, summary.records, stub.received().len())
}
