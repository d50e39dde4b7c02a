//! A batch driven the way an event loop drives it: every finished line ready at once
//! (`fabric_batch_next_lines`, the same text the output file got), and only zero-timeout
//! calls with `poll(2)` on `fabric_batch_ready_fd` in between; and the `fresh` batch's
//! prewarmed hosts (`summary.prewarmed`, off with `prewarm: false`).

use std::collections::BTreeSet;
use std::ffi::CString;
use std::time::{Duration, Instant};

use crate::support::{call, call_maybe, scripted_config};
use fabric_ffi::{
    FabricStatus, fabric_batch_close, fabric_batch_free, fabric_batch_next_lines,
    fabric_batch_push, fabric_batch_ready_fd, fabric_batch_start, fabric_batch_summary,
};
use serde_json::{Value, json};

const OK: i32 = FabricStatus::Ok as i32;
const END: i32 = FabricStatus::End as i32;
const TIMEOUT: i32 = FabricStatus::Timeout as i32;

/// Starts a batch of a config named `name` (a name per test: prewarmed hosts are claimed by
/// any start of an equal plan in the process).
fn start(name: &str, settings: &Value) -> u64 {
    let config = scripted_config(name, json!({"when_exhausted": "echo"}));
    let settings = CString::new(settings.to_string()).expect("cstring");
    let mut batch = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_batch_start(config.as_ptr(), settings.as_ptr(), &mut batch, out)
    });
    assert_eq!(status, OK, "{info}");
    batch
}

fn item(index: usize, sleep_ms: u64) -> CString {
    let item = json!({
        "id": format!("item-{index}"),
        "input": format!("question {index}"),
        "context": {"scripted": {"sleep_ms": sleep_ms}},
    });
    CString::new(item.to_string()).expect("cstring")
}

fn push(batch: u64, item: &CString, timeout_ms: i64) -> i32 {
    // SAFETY: valid string and slot.
    call_maybe(|out| unsafe { fabric_batch_push(batch, item.as_ptr(), timeout_ms, out) }).0
}

/// `(status, lines)` of one `fabric_batch_next_lines`.
fn next_lines(batch: u64, timeout_ms: i64, max: u32) -> (i32, Vec<Value>) {
    // SAFETY: valid slot.
    let (status, lines) =
        call_maybe(|out| unsafe { fabric_batch_next_lines(batch, timeout_ms, max, out) });
    let lines = match lines {
        Value::Array(lines) => lines,
        Value::Null => Vec::new(),
        other => panic!("not an array: {other}"),
    };
    (status, lines)
}

fn summary(batch: u64) -> Value {
    // SAFETY: valid slot.
    let (status, summary) = call(|out| unsafe { fabric_batch_summary(batch, -1, out) });
    assert_eq!(status, OK, "{summary}");
    summary
}

fn ready_fd(batch: u64) -> i32 {
    let mut fd = -1;
    // SAFETY: valid slots.
    let (status, error) = call_maybe(|out| unsafe { fabric_batch_ready_fd(batch, &mut fd, out) });
    assert_eq!(status, OK, "{error}");
    assert!(fd >= 0);
    fd
}

/// Waits until `fd` is readable, then reads what is there.
fn wait_and_drain(fd: i32, deadline: Instant) {
    loop {
        assert!(
            Instant::now() < deadline,
            "the descriptor never became readable"
        );
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut poll, 1, 1000) } > 0 {
            break;
        }
    }
    let mut sink = [0u8; 64];
    // SAFETY: reads into a valid buffer of its length; the descriptor is non-blocking.
    while unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
}

#[test]
fn next_lines_hands_out_every_ready_line_as_the_output_file_has_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = dir.path().join("out.jsonl");
    let settings = json!({"concurrency": 3, "isolation": "reuse", "output": output});
    let batch = start("ffi-batch-next-lines", &settings);
    for index in 0..6 {
        assert_eq!(push(batch, &item(index, 0), -1), OK);
    }
    assert_eq!(fabric_batch_close(batch), OK);
    assert_eq!(summary(batch)["succeeded"], 6);
    let (status, first) = next_lines(batch, 0, 2);
    assert_eq!((status, first.len()), (OK, 2));
    let (status, rest) = next_lines(batch, 0, 0);
    assert_eq!((status, rest.len()), (OK, 4));
    assert_eq!(next_lines(batch, 0, 0).0, END);
    let pulled: BTreeSet<String> = first.iter().chain(&rest).map(Value::to_string).collect();
    let written: BTreeSet<String> = std::fs::read_to_string(&output)
        .expect("output")
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line)
                .expect("line")
                .to_string()
        })
        .collect();
    assert_eq!(pulled, written);
    assert_eq!(fabric_batch_free(batch), OK);
}

#[test]
fn zero_timeout_calls_and_the_ready_descriptor_drive_a_whole_batch() {
    let count = 24;
    let batch = start(
        "ffi-batch-ready-fd",
        &json!({"concurrency": 4, "isolation": "reuse"}),
    );
    let fd = ready_fd(batch);
    let deadline = Instant::now() + Duration::from_secs(120);
    let items: Vec<CString> = (0..count).map(|index| item(index, 30)).collect();
    let (mut pushed, mut closed, mut ids, mut wakes) = (0, false, BTreeSet::new(), 0);
    loop {
        while pushed < count && push(batch, &items[pushed], 0) == OK {
            pushed += 1;
        }
        if pushed == count && !closed {
            assert_eq!(fabric_batch_close(batch), OK);
            closed = true;
        }
        let (status, lines) = next_lines(batch, 0, 0);
        for line in &lines {
            assert_eq!(line["result"]["status"], "succeeded", "{line}");
            ids.insert(line["id"].as_str().expect("id").to_owned());
        }
        if status == END {
            break;
        }
        if status == TIMEOUT {
            wait_and_drain(fd, deadline);
            wakes += 1;
        }
    }
    assert_eq!(ids.len(), count);
    assert!(ids.contains("item-0") && ids.contains(&format!("item-{}", count - 1)));
    // Each wake-up follows a change (a line, a freed slot): never a spin.
    assert!(wakes <= 3 * count, "{wakes} wake-ups for {count} items");
    assert_eq!(summary(batch)["succeeded"], count);
    assert_eq!(fabric_batch_free(batch), OK);
}

/// Runs `count` items through a `fresh` batch with `settings` and returns its summary.
fn fresh_batch(count: usize, settings: Value) -> Value {
    let batch = start("ffi-batch-prewarm", &settings);
    for index in 0..count {
        assert_eq!(push(batch, &item(index, 0), -1), OK);
    }
    assert_eq!(fabric_batch_close(batch), OK);
    let summary = summary(batch);
    assert_eq!(summary["succeeded"], count, "{summary}");
    assert_eq!(fabric_batch_free(batch), OK);
    summary
}

#[test]
fn fresh_items_start_on_prewarmed_hosts_unless_turned_off() {
    let warm = fresh_batch(6, json!({"concurrency": 2}));
    let prewarmed = warm["prewarmed"].as_u64().expect("prewarmed");
    assert!((1..=6).contains(&prewarmed), "{warm}");
    let cold = fresh_batch(4, json!({"concurrency": 2, "prewarm": false}));
    assert_eq!(cold["prewarmed"], 0, "{cold}");
    let reuse = fresh_batch(4, json!({"concurrency": 2, "isolation": "reuse"}));
    assert_eq!(reuse["prewarmed"], 0, "{reuse}");
}
