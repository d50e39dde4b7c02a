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

/// Time to the end of the answer on a new connection (its close, which both the closing
/// stub and the gateway send after the last byte of a `Connection: close` call).
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

/// Added latency medians, each target called directly and through the gateway, alternated
/// within every round. The main figures are of clients that keep their connection to a
/// stub that keeps its connections too (as harnesses' SDKs and model servers do), calls
/// back to back; the `quiet_` ones are the same calls each made after [`QUIET`] without
/// one (as after a model's time to think: the machine's idle threads and cores wake more
/// slowly, and a call through the gateway wakes three threads more than a direct one); the
/// `new_` ones open a connection per call to a stub that closes after each answer.
#[derive(Debug)]
pub struct Overhead {
    /// To the body of a non-streamed answer.
    pub call_direct: Duration,
    pub call_gateway: Duration,
    /// To the end of the answer (what a harness waits for).
    pub end_direct: Duration,
    pub end_gateway: Duration,
    /// To a streamed answer's first chunk.
    pub chunk_direct: Duration,
    pub chunk_gateway: Duration,
    /// The gateway threads' CPU per non-streamed call (its record included).
    pub cpu_per_call: Duration,
    pub new_call_direct: Duration,
    pub new_call_gateway: Duration,
    pub new_end_direct: Duration,
    pub new_end_gateway: Duration,
    pub new_chunk_direct: Duration,
    pub new_chunk_gateway: Duration,
    pub new_cpu_per_call: Duration,
    pub quiet_call_direct: Duration,
    pub quiet_call_gateway: Duration,
    pub quiet_chunk_direct: Duration,
    pub quiet_chunk_gateway: Duration,
    /// Connections the kept stubs accepted (direct and through the gateway).
    pub kept_accepted: usize,
}

/// The pause before each call of the `quiet_` figures.
pub const QUIET: Duration = Duration::from_millis(5);

const ANSWER: &str =
    r#"{"id":"c","choices":[{"message":{"content":"ok"}}],"usage":{"total_tokens":1}}"#;

/// The gateway threads' CPU per call over `rounds` calls made by `call`.
fn cpu_per_call(rounds: usize, mut call: impl FnMut()) -> Duration {
    // Let earlier calls' streamed chunks and records pass before counting CPU.
    std::thread::sleep(Duration::from_millis(100));
    let before = gateway_cpu();
    for _ in 0..rounds {
        call();
    }
    // The last call's record is written just after its answer.
    std::thread::sleep(Duration::from_millis(20));
    (gateway_cpu() - before) / u32::try_from(rounds).expect("rounds")
}

pub fn overhead(rounds: usize, records: &std::path::Path) -> Overhead {
    let plain = Stub::start(vec![stub::json_answer(ANSWER)], Duration::ZERO);
    let first = [stub::SSE_HEAD, &numbered(0)].concat();
    let streamed = Stub::start(vec![first, numbered(1)], Duration::from_millis(20));
    let kept_plain = Stub::start_with(
        vec![stub::kept_json_answer(ANSWER)],
        Duration::ZERO,
        stub::Mode::KeepAlive,
    );
    let kept_streamed = Stub::start_with(
        stub::kept_sse(&[numbered(0), numbered(1)]),
        Duration::ZERO,
        stub::Mode::KeepAlive,
    );
    let capture = Capture::register(
        "runtime-bench",
        vec![
            Upstream::new("plain", "m", &plain.base_url()),
            Upstream::new("streamed", "m", &streamed.base_url()),
            Upstream::new("kept-plain", "m", &kept_plain.base_url()),
            Upstream::new("kept-streamed", "m", &kept_streamed.base_url()),
        ],
        records,
        CaptureOptions::default(),
    )
    .expect("register");
    let through = |role: &str| format!("{}/chat/completions", capture.base_url(role).unwrap());
    let direct = |stub: &Stub| format!("{}/chat/completions", stub.base_url());
    let body = "{\"model\":\"m\"}";
    let (plain_direct, plain_gateway) = (direct(&kept_plain), through("kept-plain"));
    let (sse_direct, sse_gateway) = (direct(&kept_streamed), through("kept-streamed"));
    let mut clients = [&plain_direct, &plain_gateway, &sse_direct, &sse_gateway]
        .map(|url| stub::Kept::connect(url));
    let targets: [(&str, &[u8]); 4] = [
        (&plain_direct, b"usage"),
        (&plain_gateway, b"usage"),
        (&sse_direct, b"000"),
        (&sse_gateway, b"000"),
    ];
    // (to the marker, to the end) of one call on kept client `index`.
    let mut kept = |index: usize| {
        let (url, marker) = targets[index];
        let answer = clients[index].call(url, body, marker);
        assert_eq!(answer.status, 200, "{}", answer.head);
        (answer.to_marker.expect("marker"), answer.to_end)
    };
    // Each call is made twice and the second timed, so a timed call follows one of its own
    // kind: a call through the gateway follows one whose record is being written (as in a
    // harness's run of calls), a direct one follows a direct one.
    let twice = |call: &mut dyn FnMut() -> (Duration, Duration)| {
        call();
        call()
    };
    let mut samples: [Vec<Duration>; 16] = Default::default();
    for _ in 0..rounds {
        // A new connection per call, as before keep-alive (the first of every round).
        samples[6].push(time_to(&direct(&plain), b"usage"));
        samples[7].push(time_to(&through("plain"), b"usage"));
        samples[8].push(time_to_end(&direct(&plain)));
        samples[9].push(time_to_end(&through("plain")));
        samples[10].push(time_to(&direct(&streamed), b"000"));
        samples[11].push(time_to(&through("streamed"), b"000"));
        for index in 0..4 {
            let (marker, end) = twice(&mut || kept(index));
            samples[index].push(marker);
            if index < 2 {
                samples[4 + index].push(end);
            }
        }
        for index in 0..4 {
            std::thread::sleep(QUIET);
            samples[12 + index].push(kept(index).0);
        }
    }
    let cpu_kept = cpu_per_call(rounds, || {
        kept(1);
    });
    let new_cpu_per_call = cpu_per_call(rounds, || {
        time_to_end(&through("plain"));
    });
    let [a, b, e, f, c, d, g, h, i, j, k, l, m, n, o, p] = samples.map(median);
    Overhead {
        call_direct: a,
        call_gateway: b,
        end_direct: c,
        end_gateway: d,
        chunk_direct: e,
        chunk_gateway: f,
        cpu_per_call: cpu_kept,
        new_call_direct: g,
        new_call_gateway: h,
        new_end_direct: i,
        new_end_gateway: j,
        new_chunk_direct: k,
        new_chunk_gateway: l,
        new_cpu_per_call,
        quiet_call_direct: m,
        quiet_call_gateway: n,
        quiet_chunk_direct: o,
        quiet_chunk_gateway: p,
        kept_accepted: kept_plain.accepted() + kept_streamed.accepted(),
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
