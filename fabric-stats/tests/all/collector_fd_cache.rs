//! The cgroup reader's and the collector's descriptor caches against real processes (each
//! test alone in its own process: the descriptor counter is process-wide).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::support::{self, RealTree, until};
use fabric_config::config::{SystemStatsConfig, SystemStatsGroup};
use fabric_config::stats::ObservationStatus;
use fabric_stats::{CgroupReader, InvocationIds, StatsCollector, StatsTarget, cached_descriptors};

/// A fixture cgroup tree whose leaf is the real cgroup path of `pid`.
fn fixture_for(pid: u32, cg: &Path) -> PathBuf {
    let membership = fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let path = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .expect("test host must list a cgroup v2 membership line")
        .trim_start_matches('/')
        .to_owned();
    fs::create_dir_all(cg).unwrap();
    fs::write(cg.join("cgroup.controllers"), "cpu memory io\n").unwrap();
    let leaf = cg.join(&path);
    fs::create_dir_all(&leaf).unwrap();
    fs::write(leaf.join("cpu.stat"), "usage_usec 1000000\n").unwrap();
    fs::write(leaf.join("memory.current"), "1048576\n").unwrap();
    leaf
}

#[test]
fn descriptors_are_reused_counted_and_released() {
    if !support::alone::in_own_process(
        "collector_fd_cache::descriptors_are_reused_counted_and_released",
    ) {
        return; // it ran, and passed, in its own process
    }
    let dir = tempfile::tempdir().unwrap();
    let cg = dir.path().join("cg");
    let tree = RealTree::spawn("exec sleep 30");
    let pid = tree.pid();
    let leaf = fixture_for(pid, &cg);
    let baseline = cached_descriptors();
    let reader = CgroupReader::new("/proc", &cg);
    let first = reader.observe(pid, &SystemStatsGroup::ALL);
    assert_eq!(first.status, ObservationStatus::Available, "{first:?}");
    let held = cached_descriptors();
    assert!(held > baseline, "membership and cgroup files stay open");
    // A second observation re-reads the open files: no new descriptors, new values.
    fs::write(leaf.join("cpu.stat"), "usage_usec 3000000\n").unwrap();
    let second = reader.observe(pid, &SystemStatsGroup::ALL);
    assert_eq!(cached_descriptors(), held);
    assert_eq!(second.snapshot.unwrap().cpu_usage_seconds.value, Some(3.0));
    // The process exits and is reaped: its membership descriptor reads ESRCH, so the
    // observation says host_exited (never a value of another process) and drops it.
    drop(tree);
    let gone = reader.observe(pid, &SystemStatsGroup::ALL);
    assert_eq!(gone.status, ObservationStatus::Unavailable);
    assert_eq!(gone.reason.as_deref(), Some("host_exited"));
    assert!(gone.snapshot.is_none());
    assert_eq!(cached_descriptors(), held - 1);
    drop(reader);
    assert_eq!(cached_descriptors(), baseline);
}

#[test]
fn a_collector_keeps_per_target_readers_until_released() {
    if !support::alone::in_own_process(
        "collector_fd_cache::a_collector_keeps_per_target_readers_until_released",
    ) {
        return; // it ran, and passed, in its own process
    }
    let dir = tempfile::tempdir().unwrap();
    let cg = dir.path().join("cg");
    let tree = RealTree::spawn("exec sleep 30");
    fixture_for(tree.pid(), &cg);
    let target = StatsTarget {
        runtime_id: "runtime-1".into(),
        host_pid: tree.pid(),
        started_at: SystemTime::now(),
    };
    let ids = InvocationIds {
        invocation_id: "invocation-1".into(),
        request_id: "r".into(),
    };
    let config = SystemStatsConfig {
        collect: None,
        sampling: None,
    };
    let baseline = cached_descriptors();
    let collector = StatsCollector::new("/proc", &cg);
    // The spawned shell may still be between fork and exec: wait for a settled reading.
    until(Duration::from_secs(10), || {
        let stats = collector.begin_with(&config, &target, &ids, None).finish();
        (stats.stats.after.status == ObservationStatus::Available).then_some(())
    });
    let held = cached_descriptors();
    for _ in 0..5 {
        let finished = collector.begin_with(&config, &target, &ids, None).finish();
        let cgroup = finished.stats.cgroup.unwrap();
        assert_eq!(cgroup.after.status, ObservationStatus::Available);
        assert_eq!(cgroup.deltas.cpu_usage_seconds.value, Some(0.0));
    }
    assert_eq!(
        cached_descriptors(),
        held,
        "warm invocations open nothing new"
    );
    collector.release(&target);
    assert!(cached_descriptors() < held);
    drop(collector);
    assert_eq!(cached_descriptors(), baseline);
}

#[test]
fn idle_targets_give_way_under_the_descriptor_budget() {
    if !support::alone::in_own_process(
        "collector_fd_cache::idle_targets_give_way_under_the_descriptor_budget",
    ) {
        return; // it ran, and passed, in its own process
    }
    let tree = RealTree::spawn("sleep 30 & sleep 30 & wait");
    let baseline = cached_descriptors();
    let collector = StatsCollector::default();
    let target = |i: u64| StatsTarget {
        runtime_id: format!("runtime-{i}"),
        host_pid: tree.pid(),
        // Distinct start times: distinct targets (each with its own reader) of one tree.
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(i),
    };
    until(Duration::from_secs(10), || {
        let snapshot = collector.snapshot(&target(0)).ok()?;
        (snapshot.process_count == 3).then_some(())
    });
    // stat + children list of three processes per target: 60 targets want 360 descriptors.
    for i in 1..=60 {
        collector.snapshot(&target(i)).unwrap();
        assert!(
            cached_descriptors() <= baseline + 256 + 6,
            "{}",
            cached_descriptors()
        );
    }
    // The most recent target kept its descriptors (idle targets were dropped instead).
    let before = cached_descriptors();
    collector.release(&target(60));
    assert_eq!(cached_descriptors(), before - 6);
    drop(collector);
    assert_eq!(cached_descriptors(), baseline);
}
