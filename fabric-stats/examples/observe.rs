//! Prints a resource snapshot and one endpoint-only `system_stats` of a process tree.
//!
//! `cargo run -p fabric-stats --example observe -- [PID]` (default: this process).

use std::time::SystemTime;

use fabric_config::config::SystemStatsSetting;
use fabric_stats::{InvocationIds, StatsCollector, StatsTarget};

fn main() {
    let pid = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or_else(std::process::id);
    let collector = StatsCollector::default();
    let target = StatsTarget {
        runtime_id: "runtime-example".into(),
        host_pid: pid,
        started_at: SystemTime::now(),
    };
    match collector.snapshot(&target) {
        Ok(snapshot) => println!("{}", serde_json::to_string_pretty(&snapshot).unwrap()),
        Err(error) => println!(
            "{}",
            serde_json::to_string_pretty(&fabric_config::ErrorInfo::from(error)).unwrap()
        ),
    }
    let ids = InvocationIds {
        invocation_id: "invocation-example".into(),
        request_id: "r".into(),
    };
    if let Some(stats) = collector.begin(&SystemStatsSetting::Default, &target, &ids, None) {
        let finished = stats.finish();
        println!("{}", serde_json::to_string_pretty(&finished.stats).unwrap());
    }
}
