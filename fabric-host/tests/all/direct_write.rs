//! The caller writes a request line to the host's stdin itself (`hosts/lane.rs`): the line
//! reaches the host without the reactor thread, and the byte stream stays one request at a
//! time, in order, under concurrent callers, large lines and a racing stop.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use fabric_host::Host;
use fabric_reactor::{Context, Registration, Tenant};
use serde_json::{Value, json};

use crate::faults::{invoke, spec, start, stop};

/// A reactor tenant whose only use is to occupy the reactor thread on request.
#[derive(Default)]
struct Occupier;

impl Tenant for Occupier {
    fn on_ready(&mut self, _cx: &mut Context<'_>, _sub: usize) {}
}

static OCCUPIER: Registration<Occupier> = Registration::new();

fn echo_of(answer: &Value) -> &Value {
    &answer["output"]["echo"]
}

#[test]
fn the_request_line_reaches_the_host_while_the_reactor_is_busy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("invoked");
    let marker_text = marker.to_string_lossy().into_owned();
    let host = Arc::new(
        Host::launch(spec("ok", &[("FAKE_INVOKE_MARKER", marker_text.as_str())])).expect("launch"),
    );
    start(&host);
    // Hold the reactor thread until the host has the request: only a line written by the
    // caller can get there meanwhile.
    let (release, held) = mpsc::channel::<()>();
    let (entered, in_reactor) = mpsc::channel::<()>();
    OCCUPIER
        .get_or_register(Occupier::default)
        .expect("tenant")
        .post(move |_, _| {
            let _ = entered.send(());
            let _ = held.recv_timeout(Duration::from_secs(20));
        })
        .expect("post");
    in_reactor
        .recv_timeout(Duration::from_secs(10))
        .expect("the reactor ran the occupying closure");
    let caller = {
        let host = Arc::clone(&host);
        std::thread::spawn(move || invoke(&host, json!("while busy"), Duration::from_secs(30)))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let arrived = loop {
        if marker.exists() {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    release.send(()).expect("release the reactor");
    assert!(
        arrived,
        "the host never saw the request while the reactor was held"
    );
    let answer = caller.join().expect("caller").expect("invoke answered");
    assert_eq!(echo_of(&answer), "while busy");
    assert!(stop(&host).error.is_none());
}

#[test]
fn concurrent_callers_of_one_host_get_their_own_answers_or_busy() {
    let host = Arc::new(Host::launch(spec("ok", &[])).expect("launch"));
    start(&host);
    let threads = 6;
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|thread| {
            let host = Arc::clone(&host);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let (mut answered, mut busy) = (0, 0);
                for call in 0..40 {
                    let input = format!("{thread}-{call}");
                    match invoke(&host, json!(input), Duration::from_secs(30)) {
                        Ok(answer) => {
                            assert_eq!(echo_of(&answer), input.as_str(), "answer of another call");
                            answered += 1;
                        }
                        Err(error) => {
                            assert_eq!(error.code(), "runtime_busy", "{error:?}");
                            busy += 1;
                        }
                    }
                }
                (answered, busy)
            })
        })
        .collect();
    let answered: usize = workers
        .into_iter()
        .map(|worker| worker.join().expect("worker").0)
        .sum();
    assert!(answered > 0);
    // The host is still in step: one more call gets its own answer.
    let answer = invoke(&host, json!("after"), Duration::from_secs(30)).expect("usable");
    assert_eq!(echo_of(&answer), "after");
    assert!(host.terminal_error().is_none());
    assert!(stop(&host).error.is_none());
}

#[test]
fn many_hosts_invoked_at_once_each_answer_in_order() {
    let hosts: Vec<Arc<Host>> = (0..6)
        .map(|_| Arc::new(Host::launch(spec("ok", &[])).expect("launch")))
        .collect();
    for host in &hosts {
        start(host);
    }
    let workers: Vec<_> = hosts
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let host = Arc::clone(host);
            std::thread::spawn(move || {
                for call in 0..30 {
                    let input = format!("{index}-{call}");
                    let answer = invoke(&host, json!(input), Duration::from_secs(30))
                        .expect("each host answers");
                    assert_eq!(echo_of(&answer), input.as_str());
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker");
    }
    for host in &hosts {
        assert!(stop(host).error.is_none());
    }
}

#[test]
fn a_line_larger_than_the_pipe_is_finished_by_the_reactor() {
    let host = Host::launch(spec("ok", &[])).expect("launch");
    start(&host);
    // Far beyond a pipe's buffer: the caller writes what fits, the reactor the rest.
    for size in [300 * 1024, 2 * 1024 * 1024] {
        let input = "x".repeat(size);
        let answer = invoke(&host, json!(input), Duration::from_secs(30)).expect("answered");
        assert_eq!(echo_of(&answer).as_str().map(str::len), Some(size));
        let small = invoke(&host, json!("small"), Duration::from_secs(30)).expect("next");
        assert_eq!(echo_of(&small), "small");
    }
    assert!(stop(&host).error.is_none());
}

#[test]
fn a_stop_racing_invokes_never_mixes_their_lines() {
    for _ in 0..5 {
        let host = Arc::new(Host::launch(spec("ok", &[])).expect("launch"));
        start(&host);
        let caller = {
            let host = Arc::clone(&host);
            std::thread::spawn(move || {
                for call in 0..200 {
                    let input = format!("call-{call}");
                    match invoke(&host, json!(input), Duration::from_secs(30)) {
                        Ok(answer) => assert_eq!(echo_of(&answer), input.as_str()),
                        Err(error) => {
                            assert_eq!(error.code(), "runtime_stopped", "{error:?}");
                            return;
                        }
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let report = stop(&host);
        caller.join().expect("caller");
        assert!(report.error.is_none(), "{:?}", report.error);
        // A stop request was answered by the stop, never by an invoke's answer.
        if let Some(response) = &report.response {
            assert!(response.is_ok(), "{response:?}");
        }
    }
}
