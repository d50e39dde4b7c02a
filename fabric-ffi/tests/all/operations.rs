//! Non-blocking calls through the C ABI: begin, watch the readiness descriptor with
//! `poll(2)`, take; cancellation and free before completion; the descriptor's lifetime.

use std::ffi::CString;
use std::time::{Duration, Instant};

use crate::support::{call, call_maybe, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_completion_queue_fd, fabric_completion_queue_free,
    fabric_completion_queue_new, fabric_completion_queue_next, fabric_operation_cancel,
    fabric_operation_free, fabric_operation_ready_fd, fabric_operation_take, fabric_run_begin,
    fabric_runtime_free, fabric_runtime_invoke_begin, fabric_runtime_start,
    fabric_runtime_start_begin, fabric_runtime_status, fabric_runtime_stop,
    fabric_runtime_stop_begin,
};
use serde_json::{Value, json};

const OK: i32 = FabricStatus::Ok as i32;

fn config() -> CString {
    scripted_config("ffi-operations", json!({"when_exhausted": "echo"}))
}

fn start() -> u64 {
    let config = config();
    let mut rt = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), std::ptr::null(), &mut rt, out)
    });
    assert_eq!(status, OK, "{info}");
    rt
}

fn stop(rt: u64) {
    // SAFETY: valid slot.
    let (status, _) = call(|out| unsafe { fabric_runtime_stop(rt, out) });
    assert_eq!(status, OK);
    assert_eq!(fabric_runtime_free(rt), OK);
}

fn request(input: &str, sleep_ms: u64) -> CString {
    let request = json!({"input": input, "context": {"scripted": {"sleep_ms": sleep_ms}}});
    CString::new(request.to_string()).expect("cstring")
}

/// Begins an invocation; returns the operation handle.
fn begin_invoke(rt: u64, request: &CString) -> Result<u64, Value> {
    begin_invoke_in(rt, request, 0)
}

/// Begins an invocation reporting to `queue` (0: none).
fn begin_invoke_in(rt: u64, request: &CString, queue: u64) -> Result<u64, Value> {
    let mut op = 0u64;
    // SAFETY: valid string and slots.
    let (status, error) = call_maybe(|out| unsafe {
        fabric_runtime_invoke_begin(rt, request.as_ptr(), queue, &mut op, out)
    });
    if status == OK {
        assert!(error.is_null(), "no document on success: {error}");
        assert_ne!(op, 0);
        Ok(op)
    } else {
        Err(error)
    }
}

fn ready_fd(op: u64) -> i32 {
    let mut fd = -1;
    // SAFETY: valid slots.
    let (status, error) = call_maybe(|out| unsafe { fabric_operation_ready_fd(op, &mut fd, out) });
    assert_eq!(status, OK, "{error}");
    assert!(fd >= 0);
    fd
}

/// The inode of `fd` (a socket's inode is unique while it is open).
fn inode(fd: i32) -> Option<u64> {
    // SAFETY: fstat only writes the struct; a closed descriptor is EBADF.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let status = unsafe { libc::fstat(fd, &mut stat) };
    (status == 0).then_some(stat.st_ino)
}

/// Waits (poll(2), no spinning) until every descriptor is readable.
fn wait_readable(fds: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pending: Vec<i32> = fds.to_vec();
    while !pending.is_empty() {
        assert!(Instant::now() < deadline, "operations did not complete");
        let mut polls: Vec<libc::pollfd> = pending
            .iter()
            .map(|&fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `polls` is a valid array of its length.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, 1000) };
        assert!(n >= 0, "poll failed");
        pending = polls
            .iter()
            .filter(|p| p.revents & libc::POLLIN == 0)
            .map(|p| p.fd)
            .collect();
    }
}

fn take(op: u64) -> (i32, Value) {
    // SAFETY: valid slot.
    call_maybe(|out| unsafe { fabric_operation_take(op, out) })
}

fn state(rt: u64) -> String {
    // SAFETY: valid slot.
    let (status, info) = call(|out| unsafe { fabric_runtime_status(rt, out) });
    assert_eq!(status, OK, "{info}");
    info["state"].as_str().expect("state").to_owned()
}

fn wait_idle(rt: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while state(rt) != "idle" {
        assert!(Instant::now() < deadline, "runtime stayed busy");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn many_invocations_on_many_runtimes_complete() {
    let runtimes: Vec<u64> = (0..6).map(|_| start()).collect();
    for round in 0..4 {
        let ops: Vec<(u64, u64, String)> = runtimes
            .iter()
            .enumerate()
            .map(|(index, &rt)| {
                let input = format!("round {round} runtime {index}");
                let op = begin_invoke(rt, &request(&input, 20)).expect("begin");
                (rt, op, input)
            })
            .collect();
        // A second invocation on a busy runtime is refused at once.
        let busy = begin_invoke(runtimes[0], &request("again", 0)).expect_err("busy");
        assert_eq!(busy["code"], "runtime_busy", "{busy}");
        let fds: Vec<i32> = ops.iter().map(|(_, op, _)| ready_fd(*op)).collect();
        wait_readable(&fds);
        for (rt, op, input) in &ops {
            let (status, result) = take(*op);
            assert_eq!(status, OK, "{result}");
            assert_eq!(result["status"], "succeeded", "{result}");
            assert_eq!(result["output"]["response"], input.as_str(), "{result}");
            assert_eq!(
                take(*op).0,
                FabricStatus::End as i32,
                "one take per operation"
            );
            assert_eq!(fabric_operation_free(*op), OK);
            assert_eq!(state(*rt), "idle");
        }
    }
    for rt in runtimes {
        stop(rt);
    }
}

#[test]
fn take_before_completion_does_not_wait() {
    let rt = start();
    let op = begin_invoke(rt, &request("slow", 300)).expect("begin");
    let began = Instant::now();
    assert_eq!(take(op), (FabricStatus::Timeout as i32, Value::Null));
    assert!(began.elapsed() < Duration::from_millis(250), "take waited");
    wait_readable(&[ready_fd(op)]);
    assert_eq!(take(op).0, OK);
    assert_eq!(fabric_operation_free(op), OK);
    stop(rt);
}

#[test]
fn cancel_and_free_before_completion_are_safe() {
    let rt = start();
    // Cancel: the invocation runs to its end, its result is dropped, the runtime is freed.
    let op = begin_invoke(rt, &request("cancelled", 200)).expect("begin");
    let fd = ready_fd(op);
    let socket = inode(fd).expect("open");
    assert_eq!(fabric_operation_cancel(op), OK);
    assert_eq!(fabric_operation_cancel(op), OK, "idempotent");
    wait_readable(&[fd]);
    assert_eq!(take(op), (FabricStatus::End as i32, Value::Null));
    assert_eq!(state(rt), "busy", "nothing is interrupted");
    wait_idle(rt);
    assert_eq!(inode(fd), Some(socket), "open until freed");
    assert_eq!(fabric_operation_free(op), OK);
    assert_ne!(inode(fd), Some(socket), "closed by the free");
    assert_eq!(
        fabric_operation_free(op),
        FabricStatus::InvalidArgument as i32,
        "stale"
    );

    // Free before completion: the descriptor is closed once the invocation finished.
    let op = begin_invoke(rt, &request("freed", 200)).expect("begin");
    let fd = ready_fd(op);
    let socket = inode(fd).expect("open");
    assert_eq!(fabric_operation_free(op), OK);
    wait_idle(rt);
    let deadline = Instant::now() + Duration::from_secs(10);
    while inode(fd) == Some(socket) {
        assert!(Instant::now() < deadline, "descriptor never closed");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The runtime works afterwards.
    let op = begin_invoke(rt, &request("after", 0)).expect("begin");
    wait_readable(&[ready_fd(op)]);
    let (status, result) = take(op);
    assert_eq!(status, OK, "{result}");
    assert_eq!(result["output"]["response"], "after");
    assert_eq!(fabric_operation_free(op), OK);
    stop(rt);
}

#[test]
fn start_run_and_stop_complete_without_blocking() {
    let config = config();
    // Start: the take issues the runtime handle.
    let mut op = 0u64;
    // SAFETY: valid strings and slots.
    let (status, error) = call_maybe(|out| unsafe {
        fabric_runtime_start_begin(config.as_ptr(), std::ptr::null(), 0, &mut op, out)
    });
    assert_eq!(status, OK, "{error}");
    wait_readable(&[ready_fd(op)]);
    let (status, info) = take(op);
    assert_eq!(status, OK, "{info}");
    let rt = info["handle"].as_u64().expect("handle");
    assert_eq!(state(rt), "idle");
    assert_eq!(fabric_operation_free(op), OK);

    // Stop.
    let mut op = 0u64;
    // SAFETY: valid slots.
    let (status, error) =
        call_maybe(|out| unsafe { fabric_runtime_stop_begin(rt, 0, &mut op, out) });
    assert_eq!(status, OK, "{error}");
    wait_readable(&[ready_fd(op)]);
    let (status, stopped) = take(op);
    assert_eq!(status, OK, "{stopped}");
    assert!(stopped["error"].is_null(), "{stopped}");
    assert_eq!(state(rt), "stopped");
    assert_eq!(fabric_operation_free(op), OK);
    assert_eq!(fabric_runtime_free(rt), OK);

    // Run, and a run whose config is broken: the error is the outcome's.
    let request = request("whole run", 0);
    for (config, expect) in [
        (config.clone(), OK),
        (CString::new("{}").expect("cstring"), 1),
    ] {
        let mut op = 0u64;
        // SAFETY: valid strings and slots.
        let (status, error) = call_maybe(|out| unsafe {
            fabric_run_begin(
                config.as_ptr(),
                request.as_ptr(),
                std::ptr::null(),
                0,
                &mut op,
                out,
            )
        });
        assert_eq!(status, OK, "{error}");
        wait_readable(&[ready_fd(op)]);
        let (status, result) = take(op);
        assert_eq!(status, expect, "{result}");
        if expect == OK {
            assert_eq!(result["output"]["response"], "whole run");
        } else {
            assert_eq!(result["stage"], "plan", "{result}");
        }
        assert_eq!(fabric_operation_free(op), OK);
    }

    // A start abandoned before it is taken issues no handle and ends its host.
    let mut op = 0u64;
    // SAFETY: valid strings and slots.
    let (status, _) = call_maybe(|out| unsafe {
        fabric_runtime_start_begin(config.as_ptr(), std::ptr::null(), 0, &mut op, out)
    });
    assert_eq!(status, OK);
    assert_eq!(fabric_operation_free(op), OK);
    // Misuse: a runtime handle is not an operation.
    assert_eq!(
        take(rt).0,
        FabricStatus::InvalidArgument as i32,
        "freed runtime id"
    );
}

#[test]
fn one_completion_queue_reports_many_operations() {
    let mut queue = 0u64;
    // SAFETY: valid slots.
    let (status, error) = call_maybe(|out| unsafe { fabric_completion_queue_new(&mut queue, out) });
    assert_eq!(status, OK, "{error}");
    let mut fd = -1;
    // SAFETY: valid slots.
    let (status, _) = call_maybe(|out| unsafe { fabric_completion_queue_fd(queue, &mut fd, out) });
    assert_eq!(status, OK);
    let next = || {
        let mut op = 0u64;
        // SAFETY: valid slots.
        let (status, _) =
            call_maybe(|out| unsafe { fabric_completion_queue_next(queue, &mut op, out) });
        (status, op)
    };
    assert_eq!(next().0, FabricStatus::Timeout as i32, "empty at first");

    let runtimes: Vec<u64> = (0..5).map(|_| start()).collect();
    let mut pending: std::collections::BTreeMap<u64, String> = runtimes
        .iter()
        .enumerate()
        .map(|(index, &rt)| {
            let input = format!("queued {index}");
            let op =
                begin_invoke_in(rt, &request(&input, 10 * index as u64), queue).expect("begin");
            (op, input)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pending.is_empty() {
        assert!(
            Instant::now() < deadline,
            "queue never reported every operation"
        );
        wait_readable(&[fd]);
        loop {
            let (status, op) = next();
            if status == FabricStatus::Timeout as i32 {
                break;
            }
            assert_eq!(status, OK);
            let input = pending.remove(&op).expect("each operation is queued once");
            let (status, result) = take(op);
            assert_eq!(status, OK, "{result}");
            assert_eq!(result["output"]["response"], input.as_str());
            assert_eq!(fabric_operation_free(op), OK);
        }
    }
    // Emptied: the descriptor is not readable any more.
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    assert_eq!(unsafe { libc::poll(&mut poll, 1, 0) }, 0);
    for rt in runtimes {
        stop(rt);
    }
    assert_eq!(fabric_completion_queue_free(queue), OK);
    assert_eq!(
        fabric_completion_queue_free(queue),
        FabricStatus::InvalidArgument as i32
    );
}
