//! Spawned children, resident memory and CPU time.

use serde_json::{Value, json};

use super::adapter::{invoke_msg, started, stop_msg, succeeded_output};

#[test]
fn spawned_children_live_until_stop() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"spawn_children": 3}}),
    ));
    let pids: Vec<u32> = succeeded_output(&r)["output"]["metadata"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(pids.len(), 3);
    for pid in &pids {
        assert_eq!(
            parent_of(*pid),
            Some(a.child.id()),
            "child {pid} belongs to the adapter"
        );
    }
    a.request(stop_msg("R1"));
    assert!(a.wait_exit().success());
    for pid in &pids {
        // Reaped children no longer exist (or, if the pid was reused, have another parent).
        assert_ne!(parent_of(*pid), Some(a.child.id()));
    }
}

#[test]
fn memory_steps_touch_resident_memory() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"memory_mib": [20, 96, 20], "step_ms": 0, "memory_hold": true}}),
    ));
    let meta = &succeeded_output(&r)["output"]["metadata"];
    assert_eq!(meta["memory_peak_mib"], 96);
    assert_eq!(meta["memory_held_mib"], 20);
    let pid = a.child.id();
    let hwm = status_kib(pid, "VmHWM:").unwrap();
    let rss = status_kib(pid, "VmRSS:").unwrap();
    assert!(hwm >= 96 * 1024, "peak RSS {hwm} KiB");
    assert!((20 * 1024..60 * 1024).contains(&rss), "held RSS {rss} KiB");
    // The next invocation without memory directives frees the held level.
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let rss = status_kib(pid, "VmRSS:").unwrap();
    assert!(rss < 16 * 1024, "RSS after release {rss} KiB");
}

#[test]
fn small_levels_are_returned_to_the_os_after_large_ones() {
    let mut a = started(json!({}));
    let pid = a.child.id();
    let baseline = status_kib(pid, "VmRSS:").unwrap();
    let hold = |levels: Value| json!({"scripted": {"memory_mib": levels, "step_ms": 0, "memory_hold": true}});
    // A 20 MiB block freed, then a 12 MiB block: both must leave no resident memory behind.
    a.request(invoke_msg("R1", json!("x"), hold(json!([20]))));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    a.request(invoke_msg("R1", json!("x"), hold(json!([12]))));
    let held = status_kib(pid, "VmRSS:").unwrap();
    assert!(
        held >= baseline + 11 * 1024,
        "held {held} KiB, baseline {baseline} KiB"
    );
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let after = status_kib(pid, "VmRSS:").unwrap();
    assert!(
        after < baseline + 4 * 1024,
        "after release {after} KiB, baseline {baseline} KiB"
    );
}

#[test]
fn burn_cpu_uses_cpu_time() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"burn_cpu_ms": 150}}),
    ));
    assert_eq!(
        succeeded_output(&r)["output"]["metadata"]["cpu_burned_ms"],
        150
    );
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", a.child.id())).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // utime + stime in clock ticks (fields 14 and 15 of the full line).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    assert!(ticks >= 5, "cpu ticks {ticks}");
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(1)?.parse().ok()
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
