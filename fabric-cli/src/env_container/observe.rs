//! The sandbox observation of a container environment at `release`: its cgroup's CPU time,
//! peak memory and OOM kills (cgroup v2, else v1 `memory` and `cpuacct`), read from the
//! host side before the container is removed, and the wall time since `prepare`.

use std::path::Path;
use std::time::Duration;

use fabric_config::gym::{SandboxObservation, SandboxOutcome, SandboxRole};

const MIB: f64 = 1024.0 * 1024.0;

/// What one cgroup reading found (each `None` when its file was unreadable).
#[derive(Debug, Default, PartialEq)]
pub struct Usage {
    pub cpu_seconds: Option<f64>,
    pub peak_bytes: Option<u64>,
    pub oom_kills: Option<u64>,
    /// The files read, e.g. `cgroup_v1:memory.max_usage_in_bytes+cpuacct.usage`.
    pub source: Option<String>,
}

/// Reads the cgroup `cgroup` (a path like `/libpod_parent/libpod-<id>`, as podman reports
/// it) under the cgroup mount `root` (`/sys/fs/cgroup`; tests pass a fixture tree).
pub fn read(root: &Path, cgroup: &str) -> Usage {
    let relative = cgroup.trim_start_matches('/');
    let text = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
    let number = |path: std::path::PathBuf| text(path).and_then(|t| t.trim().parse::<u64>().ok());
    let keyed = |path: std::path::PathBuf, key: &str| {
        text(path).and_then(|t| {
            t.lines().find_map(|line| {
                let (name, value) = line.split_once(' ')?;
                (name == key)
                    .then(|| value.trim().parse::<u64>().ok())
                    .flatten()
            })
        })
    };
    let (usage, files) = if root.join("cgroup.controllers").is_file() {
        let dir = root.join(relative);
        (
            Usage {
                cpu_seconds: keyed(dir.join("cpu.stat"), "usage_usec").map(|us| us as f64 / 1e6),
                peak_bytes: number(dir.join("memory.peak")),
                oom_kills: keyed(dir.join("memory.events"), "oom_kill"),
                source: None,
            },
            ["cgroup_v2:cpu.stat", "memory.peak", "memory.events"],
        )
    } else {
        let memory = root.join("memory").join(relative);
        (
            Usage {
                cpu_seconds: number(root.join("cpuacct").join(relative).join("cpuacct.usage"))
                    .map(|ns| ns as f64 / 1e9),
                peak_bytes: number(memory.join("memory.max_usage_in_bytes")),
                oom_kills: keyed(memory.join("memory.oom_control"), "oom_kill"),
                source: None,
            },
            [
                "cgroup_v1:cpuacct.usage",
                "memory.max_usage_in_bytes",
                "memory.oom_control",
            ],
        )
    };
    let found = [
        usage.cpu_seconds.is_some(),
        usage.peak_bytes.is_some(),
        usage.oom_kills.is_some(),
    ];
    let read: Vec<&str> = files
        .iter()
        .zip(found)
        .filter_map(|(file, found)| found.then_some(*file))
        .collect();
    Usage {
        source: (!read.is_empty()).then(|| read.join("+")),
        ..usage
    }
}

/// The observation of the environment `id` whose cgroup read `usage`, alive for `wall`.
pub fn observation(id: &str, usage: Usage, wall: Duration) -> SandboxObservation {
    let oom = usage.oom_kills.is_some_and(|kills| kills > 0);
    SandboxObservation {
        role: SandboxRole::Agent,
        provider: Some("container".to_owned()),
        sandbox_id: Some(id.to_owned()),
        outcome: if oom {
            SandboxOutcome::Oom
        } else {
            SandboxOutcome::Completed
        },
        exit_code: None,
        wall_time_s: Some(wall.as_secs_f64()),
        cpu_time_s: usage.cpu_seconds,
        peak_memory_mib: usage.peak_bytes.map(|bytes| bytes as f64 / MIB),
        resource_usage_source: usage.source,
        error_type: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn v1_files_are_read_and_an_oom_kill_makes_the_outcome_oom() {
        let root = tempfile::tempdir().unwrap();
        let group = "/libpod_parent/libpod-abc";
        write(
            &root
                .path()
                .join("memory/libpod_parent/libpod-abc/memory.max_usage_in_bytes"),
            "67108864\n",
        );
        write(
            &root
                .path()
                .join("memory/libpod_parent/libpod-abc/memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        );
        write(
            &root
                .path()
                .join("cpuacct/libpod_parent/libpod-abc/cpuacct.usage"),
            "1500000000\n",
        );
        let usage = read(root.path(), group);
        assert_eq!(usage.cpu_seconds, Some(1.5));
        assert_eq!(usage.peak_bytes, Some(64 * 1024 * 1024));
        assert_eq!(usage.oom_kills, Some(2));
        let seen = observation("env-1", usage, Duration::from_secs(3));
        assert_eq!(seen.outcome, SandboxOutcome::Oom);
        assert_eq!(seen.peak_memory_mib, Some(64.0));
        assert_eq!(
            seen.resource_usage_source.as_deref(),
            Some("cgroup_v1:cpuacct.usage+memory.max_usage_in_bytes+memory.oom_control")
        );
    }

    #[test]
    fn v2_files_are_read_and_missing_ones_are_left_out() {
        let root = tempfile::tempdir().unwrap();
        write(&root.path().join("cgroup.controllers"), "cpu memory pids\n");
        write(
            &root.path().join("machine.slice/c/cpu.stat"),
            "usage_usec 250000\nuser_usec 1\n",
        );
        write(
            &root.path().join("machine.slice/c/memory.events"),
            "oom 0\noom_kill 0\n",
        );
        let usage = read(root.path(), "/machine.slice/c");
        assert_eq!(
            (usage.cpu_seconds, usage.peak_bytes, usage.oom_kills),
            (Some(0.25), None, Some(0))
        );
        assert_eq!(
            usage.source.as_deref(),
            Some("cgroup_v2:cpu.stat+memory.events")
        );
        let seen = observation("env-2", usage, Duration::ZERO);
        assert_eq!(seen.outcome, SandboxOutcome::Completed);
        assert_eq!(read(root.path(), "/missing"), Usage::default());
    }
}
