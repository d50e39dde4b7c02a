//! The sampling scheduler is one process-wide thread for every runtime (alone in its own
//! process, so no other test shares the scheduler).

use std::time::{Duration, SystemTime};

use crate::support::{self, RealTree, until};
use fabric_config::config::{SystemStatsConfig, SystemStatsGroup, SystemStatsSamplingConfig};
use fabric_stats::{
    InvocationIds, StatsCollector, StatsTarget, active_sampled_invocations, sampler_thread_id,
};

fn sampler_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim() == "fabric-sampler")
        .count()
}

#[test]
fn one_scheduler_thread_serves_every_runtime() {
    if !support::alone::in_own_process("scheduler::one_scheduler_thread_serves_every_runtime") {
        return; // it ran, and passed, in its own process
    }
    let tree = RealTree::spawn("sleep 30");
    let collector = StatsCollector::default();
    let config = SystemStatsConfig {
        collect: Some(vec![SystemStatsGroup::Process]),
        sampling: Some(SystemStatsSamplingConfig {
            interval_ms: 2,
            max_samples: 1000,
        }),
    };
    let running: Vec<_> = (0..8)
        .map(|i| {
            let target = StatsTarget {
                runtime_id: format!("runtime-{i}"),
                host_pid: tree.pid(),
                started_at: SystemTime::now(),
            };
            let ids = InvocationIds {
                invocation_id: format!("invocation-{i}"),
                request_id: "r".into(),
            };
            collector.begin_with(&config, &target, &ids, None)
        })
        .collect();
    assert_eq!(active_sampled_invocations(), 8);
    until(Duration::from_secs(20), || {
        running.iter().all(|s| s.samples_seen() >= 5).then_some(())
    });
    // Exactly one thread carries the sampler's name (it fits the kernel's 15-byte comm).
    assert_eq!(sampler_threads(), 1);
    assert!(sampler_thread_id().is_some());
    // Finishing one and dropping the rest unregisters all of them.
    let mut running = running.into_iter();
    let finished = running.next().unwrap().finish();
    assert!(finished.stats.sampled.unwrap().retained_samples >= 6);
    drop(running);
    assert_eq!(active_sampled_invocations(), 0);
    assert_eq!(sampler_threads(), 1);
}
