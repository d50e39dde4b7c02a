//! Invocation system stats around real process trees (fixture cgroup trees).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::{RealTree, until};
use fabric_config::config::{
    SystemStatsConfig, SystemStatsGroup, SystemStatsSamplingConfig, SystemStatsSetting,
};
use fabric_config::stats::{InvocationSystemStats, ObservationStatus};
use fabric_stats::{ArtifactLocation, InvocationIds, StatsCollector, StatsTarget};
use serde_json::Value;

/// A cgroup fixture rooted at the real cgroup path of `pid`, so the real `/proc` can be
/// used for the process tree.
fn collector_for(pid: u32, cg: &Path) -> StatsCollector {
    let membership = fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let path = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .unwrap_or("/")
        .trim_start_matches('/')
        .to_owned();
    fs::create_dir_all(cg).unwrap();
    fs::write(cg.join("cgroup.controllers"), "cpu memory io\n").unwrap();
    let leaf = if path.is_empty() {
        cg.to_path_buf()
    } else {
        cg.join(&path)
    };
    fs::create_dir_all(&leaf).unwrap();
    fs::write(
        leaf.join("cpu.stat"),
        "usage_usec 1000000\nnr_throttled 0\nthrottled_usec 0\n",
    )
    .unwrap();
    fs::write(leaf.join("cpu.max"), "100000 100000\n").unwrap();
    fs::write(leaf.join("memory.current"), "1048576\n").unwrap();
    fs::write(leaf.join("memory.events"), "oom_kill 0\n").unwrap();
    fs::write(
        leaf.join("io.pressure"),
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",
    )
    .unwrap();
    let membership_has_v2 = membership.lines().any(|l| l.starts_with("0::"));
    assert!(
        membership_has_v2,
        "test host must list a cgroup v2 membership line"
    );
    StatsCollector::new("/proc", cg)
}

fn target(tree: &RealTree) -> StatsTarget {
    StatsTarget {
        runtime_id: "runtime-1".into(),
        host_pid: tree.pid(),
        started_at: SystemTime::now(),
    }
}

/// Waits until the spawned tree runs its program (a process between fork and exec can
/// briefly report no resident memory).
fn settled(tree: &RealTree) {
    let collector = StatsCollector::default();
    until(Duration::from_secs(10), || {
        let snapshot = collector.snapshot(&target(tree)).ok()?;
        (snapshot.resident_memory_bytes > 0).then_some(())
    });
}

fn ids() -> InvocationIds {
    InvocationIds {
        invocation_id: "invocation-2".into(),
        request_id: "trial-42".into(),
    }
}

fn config(
    groups: Option<Vec<SystemStatsGroup>>,
    sampling: Option<(u64, u64)>,
) -> SystemStatsSetting {
    SystemStatsSetting::Configured(SystemStatsConfig {
        collect: groups,
        sampling: sampling.map(|(interval_ms, max_samples)| SystemStatsSamplingConfig {
            interval_ms,
            max_samples,
        }),
    })
}

#[test]
fn explicit_null_disables_everything() {
    let tree = RealTree::spawn("sleep 30");
    settled(&tree);
    let dir = tempfile::tempdir().unwrap();
    let collector = collector_for(tree.pid(), &dir.path().join("cg"));
    let location = ArtifactLocation {
        root: dir.path().to_path_buf(),
        dir: dir.path().join("out"),
        reference_dir: "x".into(),
    };
    assert!(
        collector
            .begin(
                &SystemStatsSetting::Disabled,
                &target(&tree),
                &ids(),
                Some(location)
            )
            .is_none()
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn default_collects_every_group_at_the_endpoints() {
    let tree = RealTree::spawn("sleep 30");
    settled(&tree);
    let dir = tempfile::tempdir().unwrap();
    let collector = collector_for(tree.pid(), &dir.path().join("cg"));
    let stats = collector
        .begin(&SystemStatsSetting::Default, &target(&tree), &ids(), None)
        .unwrap();
    assert_eq!(stats.before().status, ObservationStatus::Available);
    let finished = stats.finish();
    let stats = finished.stats;
    assert!(finished.artifacts.is_empty());
    assert_eq!(stats.collected_groups, SystemStatsGroup::ALL.to_vec());
    assert_eq!(stats.after.status, ObservationStatus::Available);
    let after = stats.after.snapshot.as_ref().unwrap();
    assert_eq!(after.runtime_id, "runtime-1");
    assert!(after.process_count >= 1 && after.resident_memory_bytes > 0);
    assert!(
        stats
            .cpu_time_seconds_estimate
            .is_some_and(|cpu| cpu >= 0.0)
    );
    assert!(stats.elapsed_seconds >= 0.0);
    let cgroup = stats.cgroup.as_ref().unwrap();
    assert_eq!(cgroup.before.status, ObservationStatus::Available);
    let snap = cgroup.after.snapshot.as_ref().unwrap();
    assert_eq!(snap.cpu_limit_cores.value, Some(1.0));
    assert_eq!(snap.memory_current_bytes.value, Some(1_048_576));
    assert_eq!(cgroup.deltas.cpu_usage_seconds.value, Some(0.0));
    assert!(stats.sampled.is_none());
    // Round trip through the wire shape.
    let json = serde_json::to_value(&stats).unwrap();
    assert!(json.get("sampled").is_none());
    let back: InvocationSystemStats = serde_json::from_value(json).unwrap();
    assert_eq!(back, stats);
}

#[test]
fn each_group_alone() {
    let tree = RealTree::spawn("sleep 30");
    settled(&tree);
    let dir = tempfile::tempdir().unwrap();
    let collector = collector_for(tree.pid(), &dir.path().join("cg"));
    for group in SystemStatsGroup::ALL {
        let stats = collector
            .begin(
                &config(Some(vec![group]), None),
                &target(&tree),
                &ids(),
                None,
            )
            .unwrap()
            .finish()
            .stats;
        assert_eq!(stats.collected_groups, vec![group]);
        if group == SystemStatsGroup::Process {
            assert_eq!(stats.before.status, ObservationStatus::Available);
            assert!(
                stats.cgroup.is_none(),
                "an entirely excluded cgroup block is omitted"
            );
            assert!(stats.cpu_time_seconds_estimate.is_some());
        } else {
            assert_eq!(stats.before.status, ObservationStatus::NotCollected);
            assert_eq!(stats.after.status, ObservationStatus::NotCollected);
            assert!(stats.before.snapshot.is_none());
            assert!(stats.cpu_time_seconds_estimate.is_none());
            let snap = stats.cgroup.unwrap().after.snapshot.unwrap();
            let cpu = snap.cpu_usage_seconds.status;
            let memory = snap.memory_current_bytes.status;
            let pressure = snap.io_pressure_some_seconds.status;
            let expect = |selected: bool| {
                if selected {
                    ObservationStatus::Available
                } else {
                    ObservationStatus::NotCollected
                }
            };
            assert_eq!(
                cpu,
                expect(group == SystemStatsGroup::CgroupCpu),
                "{group:?}"
            );
            assert_eq!(
                memory,
                expect(group == SystemStatsGroup::CgroupMemory),
                "{group:?}"
            );
            assert_eq!(
                pressure,
                expect(group == SystemStatsGroup::CgroupPressure),
                "{group:?}"
            );
        }
    }
}

#[test]
fn busy_tree_has_a_positive_cpu_estimate() {
    let tree = RealTree::spawn("while :; do :; done");
    let collector = StatsCollector::default();
    let setting = config(Some(vec![SystemStatsGroup::Process]), None);
    let stats = collector
        .begin(&setting, &target(&tree), &ids(), None)
        .unwrap();
    let start = stats.before().snapshot.as_ref().unwrap().cpu_time_seconds;
    until(Duration::from_secs(20), || {
        let now = collector.snapshot(&target(&tree)).ok()?.cpu_time_seconds;
        (now >= start + 0.05).then_some(())
    });
    let stats = stats.finish().stats;
    let before = stats.before.snapshot.as_ref().unwrap().cpu_time_seconds;
    let after = stats.after.snapshot.as_ref().unwrap().cpu_time_seconds;
    let estimate = stats.cpu_time_seconds_estimate.unwrap();
    assert!(estimate >= 0.05, "{estimate}");
    assert!((estimate - (after - before)).abs() < 1e-6);
}

#[test]
fn host_exit_during_the_exchange_is_unavailable_after() {
    let mut tree = RealTree::spawn("sleep 30");
    let collector = StatsCollector::default();
    let setting = config(Some(vec![SystemStatsGroup::Process]), None);
    let stats = collector
        .begin(&setting, &target(&tree), &ids(), None)
        .unwrap();
    tree.child.kill().unwrap();
    tree.child.wait().unwrap();
    let stats = stats.finish().stats;
    assert_eq!(stats.before.status, ObservationStatus::Available);
    assert_eq!(stats.after.status, ObservationStatus::Unavailable);
    assert_eq!(stats.after.reason.as_deref(), Some("host_exited"));
    assert!(stats.cpu_time_seconds_estimate.is_none());
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(
        json["after"],
        serde_json::json!({"status": "unavailable", "reason": "host_exited"})
    );
}

#[test]
fn sampling_truncates_keeps_endpoints_and_writes_artifacts() {
    let tree = RealTree::spawn("sleep 30 & sleep 30 & wait");
    let dir = tempfile::tempdir().unwrap();
    let collector = collector_for(tree.pid(), &dir.path().join("cg"));
    let out = dir.path().join("artifacts/.fabric/runtime-1/invocation-2");
    let location = ArtifactLocation {
        root: dir.path().to_path_buf(),
        dir: out.clone(),
        reference_dir: ".fabric/runtime-1/invocation-2".into(),
    };
    until(Duration::from_secs(10), || {
        (collector.snapshot(&target(&tree)).ok()?.process_count == 3).then_some(())
    });
    let stats = collector
        .begin(
            &config(None, Some((1, 3))),
            &target(&tree),
            &ids(),
            Some(location),
        )
        .unwrap();
    until(Duration::from_secs(20), || {
        (stats.samples_seen() >= 10).then_some(())
    });
    let finished = stats.finish();
    let sampled = finished.stats.sampled.as_ref().unwrap();
    assert_eq!(sampled.interval_ms, 1);
    assert_eq!(sampled.max_samples, 3);
    assert_eq!(
        sampled.retained_samples, 5,
        "3 intermediate + both endpoints"
    );
    assert!(sampled.truncated);
    assert!(sampled.dropped_samples >= 6, "{}", sampled.dropped_samples);
    let rss = sampled.resident_memory_bytes.as_ref().unwrap();
    assert!(rss.observations >= 10 && rss.sampled_peak.unwrap() > 0.0);
    assert!(rss.final_value.is_some());
    assert!(rss.covered_fraction > 0.0 && rss.covered_fraction <= 1.0);
    assert!(
        sampled
            .cgroup_memory_current_bytes
            .as_ref()
            .unwrap()
            .final_value
            == Some(1_048_576.0)
    );
    assert!(
        sampled
            .diagnostics
            .iter()
            .all(|d| d.code != "sample_write_failed")
    );

    // Artifact references: both files, relative to the artifact root.
    let names: Vec<_> = finished
        .artifacts
        .iter()
        .map(|a| (a.name.as_str(), a.path.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (
                "system-stats.jsonl",
                ".fabric/runtime-1/invocation-2/system-stats.jsonl"
            ),
            (
                "system-stats-summary.json",
                ".fabric/runtime-1/invocation-2/system-stats-summary.json"
            ),
        ]
    );
    assert_eq!(sampled.samples.as_ref(), Some(&finished.artifacts[0]));
    assert_eq!(sampled.summary.as_ref(), Some(&finished.artifacts[1]));

    // Files are private and carry the ids.
    for name in ["system-stats.jsonl", "system-stats-summary.json"] {
        let mode = fs::metadata(out.join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
    }
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let text = fs::read_to_string(out.join("system-stats.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["kind"], "before");
    assert_eq!(lines[4]["kind"], "after");
    let mut previous = -1.0;
    for line in &lines {
        assert_eq!(line["runtime_id"], "runtime-1");
        assert_eq!(line["invocation_id"], "invocation-2");
        assert_eq!(line["request_id"], "trial-42");
        let offset = line["offset_ms"].as_f64().unwrap();
        assert!(offset >= previous, "offsets are ordered");
        previous = offset;
        assert_eq!(line["process"]["status"], "available");
        assert_eq!(line["process"]["process_count"], 3);
    }
    assert!(lines[0]["offset_ms"].as_f64().unwrap() < 1000.0);
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("system-stats-summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["runtime_id"], "runtime-1");
    assert_eq!(summary["invocation_id"], "invocation-2");
    assert_eq!(summary["request_id"], "trial-42");
    assert_eq!(summary["system_stats"]["sampled"]["retained_samples"], 5);
    assert_eq!(
        summary["system_stats"]["sampled"]["samples"]["name"],
        "system-stats.jsonl"
    );
}

#[test]
fn sample_write_failure_keeps_reductions_and_suppresses_the_reference() {
    let tree = RealTree::spawn("sleep 30");
    settled(&tree);
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    fs::write(&blocker, "file").unwrap();
    let location = ArtifactLocation {
        root: dir.path().to_path_buf(),
        dir: blocker.join("sub"),
        reference_dir: "sub".into(),
    };
    let collector = StatsCollector::default();
    let setting = config(Some(vec![SystemStatsGroup::Process]), Some((1, 100)));
    let stats = collector
        .begin(&setting, &target(&tree), &ids(), Some(location))
        .unwrap();
    until(Duration::from_secs(20), || {
        (stats.samples_seen() >= 3).then_some(())
    });
    let finished = stats.finish();
    assert!(finished.artifacts.is_empty());
    let sampled = finished.stats.sampled.unwrap();
    assert!(sampled.samples.is_none() && sampled.summary.is_none());
    let codes: Vec<_> = sampled
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert!(codes.contains(&"sample_write_failed"), "{codes:?}");
    assert!(codes.contains(&"summary_write_failed"), "{codes:?}");
    assert!(sampled.resident_memory_bytes.unwrap().sampled_peak.unwrap() > 0.0);
    assert!(
        sampled.cgroup_memory_current_bytes.is_none(),
        "cgroup.memory not selected"
    );
}

#[test]
fn handles_cross_threads() {
    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}
    assert_send::<StatsCollector>();
    assert_sync::<StatsCollector>();
    assert_send::<fabric_stats::InvocationStats>();
    assert_sync::<fabric_stats::InvocationStats>();
    assert_send::<fabric_stats::FinishedStats>();
    assert_send::<fabric_stats::StatsError>();
    assert_sync::<fabric_stats::StatsError>();
}
