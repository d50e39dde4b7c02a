//! cgroup v2 readings against fixture cgroup trees.

use std::fs;
use std::path::Path;

use fabric_config::config::SystemStatsGroup;
use fabric_config::stats::{CgroupSnapshot, LimitStatus, ObservationStatus};
use fabric_stats::{CgroupReader, cgroup_deltas};

const PID: u32 = 4242;
const ALL: [SystemStatsGroup; 4] = SystemStatsGroup::ALL;
const CGROUPS: [SystemStatsGroup; 3] = [
    SystemStatsGroup::CgroupCpu,
    SystemStatsGroup::CgroupMemory,
    SystemStatsGroup::CgroupPressure,
];

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// proc/4242/cgroup → `0::/a/b`; cgroup root with levels `/`, `/a`, `/a/b`.
    fn new() -> Self {
        let fixture = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        fixture.write("proc/4242/cgroup", "0::/a/b\n");
        fixture.write("cg/cgroup.controllers", "cpu memory io\n");
        fixture.write(
            "cg/cpu.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
        );
        fixture.write("cg/a/cpu.max", "200000 100000\n");
        fixture.write("cg/a/memory.max", "max\n");
        fixture.write("cg/a/memory.swap.max", "max\n");
        let leaf = [
            ("cpu.max", "max 100000\n"),
            (
                "cpu.stat",
                "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 10\nnr_throttled 3\nthrottled_usec 250000\n",
            ),
            ("memory.max", "1073741824\n"),
            ("memory.high", "max\n"),
            ("memory.current", "83886080\n"),
            ("memory.peak", "419430400\n"),
            ("memory.swap.current", "0\n"),
            ("memory.events", "low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n"),
            (
                "cpu.pressure",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=1500000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n",
            ),
            (
                "memory.pressure",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=20\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=10\n",
            ),
            (
                "io.pressure",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=3000000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n",
            ),
        ];
        for (name, text) in leaf {
            fixture.write(&format!("cg/a/b/{name}"), text);
        }
        fixture
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn remove(&self, rel: &str) {
        fs::remove_file(self.dir.path().join(rel)).unwrap();
    }

    fn reader(&self) -> CgroupReader {
        CgroupReader::new(self.dir.path().join("proc"), self.dir.path().join("cg"))
    }

    fn snapshot(&self, groups: &[SystemStatsGroup]) -> CgroupSnapshot {
        let observation = self.reader().observe(PID, groups);
        assert_eq!(
            observation.status,
            ObservationStatus::Available,
            "{observation:?}"
        );
        observation.snapshot.unwrap()
    }
}

fn tree_contents(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.display().to_string(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn full_observation_with_limits_over_visible_ancestors() {
    let fixture = Fixture::new();
    let before = tree_contents(fixture.dir.path());
    let snap = fixture.snapshot(&ALL);
    assert_eq!(snap.path, "/a/b");
    // cpu.max: the leaf says max, the parent 2 CPUs: the numeric bound wins.
    assert_eq!(snap.cpu_limit_cores.status, LimitStatus::Available);
    assert_eq!(snap.cpu_limit_cores.value, Some(2.0));
    assert_eq!(snap.cpu_limit_cores.source.as_deref(), Some("/a"));
    assert_eq!(snap.cpu_usage_seconds.value, Some(2.5));
    assert_eq!(snap.cpu_throttled_periods.value, Some(3));
    assert_eq!(snap.cpu_throttled_seconds.value, Some(0.25));
    // memory.max: numeric at the leaf beats max at the parent.
    assert_eq!(snap.memory_max_bytes.value, Some(1_073_741_824));
    assert_eq!(snap.memory_max_bytes.source.as_deref(), Some("/a/b"));
    // memory.high: only an explicit max → unlimited.
    assert_eq!(snap.memory_high_bytes.status, LimitStatus::Unlimited);
    assert_eq!(snap.memory_high_bytes.value, None);
    assert_eq!(snap.memory_swap_max_bytes.status, LimitStatus::Unlimited);
    assert_eq!(snap.memory_swap_max_bytes.source.as_deref(), Some("/a"));
    assert_eq!(snap.memory_current_bytes.value, Some(83_886_080));
    assert_eq!(snap.memory_peak_bytes.value, Some(419_430_400));
    assert_eq!(snap.memory_swap_current_bytes.value, Some(0));
    assert_eq!(snap.memory_oom_kills.value, Some(1));
    assert_eq!(snap.cpu_pressure_some_seconds.value, Some(1.5));
    assert_eq!(snap.cpu_pressure_full_seconds.value, Some(0.5));
    assert_eq!(snap.memory_pressure_some_seconds.value, Some(0.00002));
    assert_eq!(snap.io_pressure_some_seconds.value, Some(3.0));
    assert_eq!(snap.io_pressure_full_seconds.value, Some(1.0));
    // Read-only: nothing in the fixture changed.
    assert_eq!(tree_contents(fixture.dir.path()), before);
}

#[test]
fn smallest_visible_numeric_limit_wins() {
    let fixture = Fixture::new();
    fixture.write("cg/a/memory.max", "536870912\n");
    fixture.write("cg/a/b/cpu.max", "50000 100000\n");
    let snap = fixture.snapshot(&ALL);
    assert_eq!(snap.memory_max_bytes.value, Some(536_870_912));
    assert_eq!(snap.memory_max_bytes.source.as_deref(), Some("/a"));
    assert_eq!(snap.cpu_limit_cores.value, Some(0.5));
    assert_eq!(snap.cpu_limit_cores.source.as_deref(), Some("/a/b"));
}

#[test]
fn missing_sources_and_files_are_explicit() {
    let fixture = Fixture::new();
    fixture.remove("cg/a/memory.swap.max");
    fixture.remove("cg/a/b/memory.peak");
    fixture.remove("cg/a/b/io.pressure");
    fixture.write("cg/a/b/memory.current", "lots\n");
    let snap = fixture.snapshot(&ALL);
    assert_eq!(snap.memory_swap_max_bytes.status, LimitStatus::Unsupported);
    assert_eq!(
        snap.memory_peak_bytes.status,
        ObservationStatus::Unsupported
    );
    assert_eq!(snap.memory_peak_bytes.value, None);
    assert_eq!(
        snap.memory_peak_bytes.reason.as_deref(),
        Some("file_missing")
    );
    assert_eq!(
        snap.io_pressure_some_seconds.status,
        ObservationStatus::Unsupported
    );
    assert_eq!(
        snap.memory_current_bytes.status,
        ObservationStatus::Unavailable
    );
    assert_eq!(
        snap.memory_current_bytes.reason.as_deref(),
        Some("parse_failed")
    );
    // Unrelated measurements are unaffected.
    assert_eq!(snap.memory_oom_kills.value, Some(1));
}

#[test]
fn each_group_alone() {
    let fixture = Fixture::new();
    let cpu = fixture.snapshot(&[SystemStatsGroup::CgroupCpu]);
    assert_eq!(cpu.cpu_usage_seconds.value, Some(2.5));
    assert_eq!(cpu.memory_max_bytes.status, LimitStatus::NotCollected);
    assert_eq!(
        cpu.memory_current_bytes.status,
        ObservationStatus::NotCollected
    );
    assert_eq!(cpu.memory_oom_kills.status, ObservationStatus::NotCollected);
    assert_eq!(
        cpu.io_pressure_some_seconds.status,
        ObservationStatus::NotCollected
    );

    let memory = fixture.snapshot(&[SystemStatsGroup::CgroupMemory]);
    assert_eq!(memory.cpu_limit_cores.status, LimitStatus::NotCollected);
    assert_eq!(
        memory.cpu_usage_seconds.status,
        ObservationStatus::NotCollected
    );
    assert_eq!(memory.memory_current_bytes.value, Some(83_886_080));
    assert_eq!(
        memory.cpu_pressure_some_seconds.status,
        ObservationStatus::NotCollected
    );

    let pressure = fixture.snapshot(&[SystemStatsGroup::CgroupPressure]);
    assert_eq!(
        pressure.cpu_throttled_periods.status,
        ObservationStatus::NotCollected
    );
    assert_eq!(
        pressure.memory_peak_bytes.status,
        ObservationStatus::NotCollected
    );
    assert_eq!(pressure.memory_pressure_full_seconds.value, Some(0.00001));
    // Not-collected values serialize as a status only, never as zero.
    let json = serde_json::to_value(&pressure).unwrap();
    assert_eq!(
        json["cpu_usage_seconds"],
        serde_json::json!({"status": "not_collected"})
    );
}

#[test]
fn deltas_between_endpoints() {
    let fixture = Fixture::new();
    let reader = fixture.reader();
    let before = reader.observe(PID, &CGROUPS);
    fixture.write(
        "cg/a/b/cpu.stat",
        "usage_usec 4000000\nnr_throttled 5\nthrottled_usec 750000\n",
    );
    fixture.write("cg/a/b/memory.events", "oom_kill 3\n");
    let after = reader.observe(PID, &CGROUPS);
    let deltas = cgroup_deltas(&before, &after, &CGROUPS);
    assert_eq!(deltas.cpu_usage_seconds.value, Some(1.5));
    assert_eq!(deltas.cpu_throttled_periods.value, Some(2));
    assert_eq!(deltas.cpu_throttled_seconds.value, Some(0.5));
    assert_eq!(deltas.memory_oom_kills.value, Some(2));

    // A counter reset (external) is not a negative delta.
    fixture.write("cg/a/b/memory.events", "oom_kill 0\n");
    let reset = reader.observe(PID, &CGROUPS);
    let deltas = cgroup_deltas(&after, &reset, &CGROUPS);
    assert_eq!(
        deltas.memory_oom_kills.status,
        ObservationStatus::Unavailable
    );
    assert_eq!(
        deltas.memory_oom_kills.reason.as_deref(),
        Some("counter_decreased")
    );

    // Only cgroup.memory selected: cpu deltas not collected.
    let deltas = cgroup_deltas(&after, &reset, &[SystemStatsGroup::CgroupMemory]);
    assert_eq!(
        deltas.cpu_usage_seconds.status,
        ObservationStatus::NotCollected
    );
}

#[test]
fn host_exit_and_missing_v2_are_not_zeros() {
    let fixture = Fixture::new();
    let gone = fixture.reader().observe(9999, &ALL);
    assert_eq!(gone.status, ObservationStatus::Unavailable);
    assert_eq!(gone.reason.as_deref(), Some("host_exited"));
    assert!(gone.snapshot.is_none());

    // v1-only membership line.
    fixture.write("proc/4242/cgroup", "4:memory:/x\n");
    let v1 = fixture.reader().observe(PID, &ALL);
    assert_eq!(v1.status, ObservationStatus::Unsupported);

    // No v2 hierarchy mounted at the root.
    let fixture = Fixture::new();
    fixture.remove("cg/cgroup.controllers");
    let none = fixture.reader().observe(PID, &ALL);
    assert_eq!(none.status, ObservationStatus::Unsupported);
    assert_eq!(none.reason.as_deref(), Some("cgroup_v2_unavailable"));

    // Outside this namespace's view.
    let fixture = Fixture::new();
    fixture.write("proc/4242/cgroup", "0::/../other\n");
    let hidden = fixture.reader().observe(PID, &ALL);
    assert_eq!(hidden.reason.as_deref(), Some("cgroup_not_visible"));
}

#[test]
fn hybrid_host_uses_the_unified_hierarchy() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write("proc/4242/cgroup", "4:memory:/m\n0::/svc\n");
    write("cg/unified/cgroup.controllers", "\n");
    write("cg/unified/svc/cpu.stat", "usage_usec 1000000\n");
    let reader = CgroupReader::new(dir.path().join("proc"), dir.path().join("cg"));
    let snap = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(snap.cpu_usage_seconds.value, Some(1.0));
    // No cpu controller: throttling keys and limits have no source.
    assert_eq!(
        snap.cpu_throttled_periods.status,
        ObservationStatus::Unsupported
    );
    assert_eq!(snap.cpu_limit_cores.status, LimitStatus::Unsupported);
    assert_eq!(
        snap.memory_current_bytes.status,
        ObservationStatus::Unsupported
    );
}

#[test]
fn a_reused_reader_sees_new_values_limits_and_files() {
    let fixture = Fixture::new();
    fixture.remove("cg/a/b/memory.peak");
    let reader = fixture.reader();
    let first = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(
        first.memory_peak_bytes.reason.as_deref(),
        Some("file_missing")
    );
    // Cached descriptors are re-read: new counter values and new limits at every level.
    fixture.write("cg/a/b/cpu.stat", "usage_usec 9000000\n");
    fixture.write("cg/a/memory.max", "1048576\n");
    // Without guard files at the leaf, a missing file is probed again each time.
    fixture.write("cg/a/b/memory.peak", "5\n");
    let second = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(second.cpu_usage_seconds.value, Some(9.0));
    assert_eq!(
        second.cpu_throttled_periods.reason.as_deref(),
        Some("key_missing")
    );
    assert_eq!(second.memory_max_bytes.value, Some(1_048_576));
    assert_eq!(second.memory_max_bytes.source.as_deref(), Some("/a"));
    assert_eq!(second.memory_peak_bytes.value, Some(5));
    // A limit file that becomes unparsable makes the limit unavailable, never a zero.
    fixture.write("cg/a/memory.max", "\n");
    let third = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(third.memory_max_bytes.status, LimitStatus::Unavailable);
    assert_eq!(
        third.memory_max_bytes.reason.as_deref(),
        Some("parse_failed")
    );
}

#[test]
fn missing_files_are_remembered_until_the_controllers_change() {
    let fixture = Fixture::new();
    fixture.write("cg/a/b/cgroup.controllers", "cpu io\n");
    fixture.write("cg/a/b/cgroup.pressure", "1\n");
    fixture.remove("cg/a/b/memory.peak");
    fixture.remove("cg/a/b/io.pressure");
    let reader = fixture.reader();
    let snap = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(
        snap.memory_peak_bytes.reason.as_deref(),
        Some("file_missing")
    );
    fixture.write("cg/a/b/memory.peak", "7\n");
    fixture.write("cg/a/b/io.pressure", "some total=2000000\n");
    let snap = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(
        snap.memory_peak_bytes.reason.as_deref(),
        Some("file_missing"),
        "same controllers: the file is still known missing"
    );
    assert_eq!(
        snap.io_pressure_some_seconds.reason.as_deref(),
        Some("file_missing")
    );
    // Pressure switched (cgroup.pressure): only pressure files are probed again.
    fixture.write("cg/a/b/cgroup.pressure", "0\n");
    let snap = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(snap.io_pressure_some_seconds.value, Some(2.0));
    assert_eq!(
        snap.io_pressure_full_seconds.reason.as_deref(),
        Some("key_missing")
    );
    assert_eq!(
        snap.memory_peak_bytes.reason.as_deref(),
        Some("file_missing")
    );
    // Controllers changed: every missing file of that level is probed again.
    fixture.write("cg/a/b/cgroup.controllers", "cpu io memory\n");
    let snap = reader.observe(PID, &ALL).snapshot.unwrap();
    assert_eq!(snap.memory_peak_bytes.value, Some(7));
    // A fresh reader sees the same as the revalidated one.
    assert_eq!(
        fixture.snapshot(&ALL).memory_peak_bytes.value,
        Some(7),
        "fresh reader"
    );
}

#[test]
fn a_moved_process_is_followed_and_its_deltas_are_not_mixed() {
    let fixture = Fixture::new();
    fixture.write("cg/a/cpu.stat", "usage_usec 100\n");
    let reader = fixture.reader();
    let before = reader.observe(PID, &CGROUPS);
    assert_eq!(before.snapshot.as_ref().unwrap().path, "/a/b");
    fixture.write("proc/4242/cgroup", "0::/a\n");
    let after = reader.observe(PID, &CGROUPS);
    let snap = after.snapshot.as_ref().unwrap();
    assert_eq!(snap.path, "/a");
    assert_eq!(snap.cpu_usage_seconds.value, Some(0.0001));
    // Limits now start at /a (the leaf's 1 GiB memory.max no longer applies).
    assert_eq!(snap.memory_max_bytes.status, LimitStatus::Unlimited);
    let deltas = cgroup_deltas(&before, &after, &CGROUPS);
    assert_eq!(
        deltas.cpu_usage_seconds.reason.as_deref(),
        Some("cgroup_changed")
    );
    // Moved to a cgroup this namespace cannot see: unavailable, not the old cgroup.
    fixture.write("proc/4242/cgroup", "0::/../elsewhere\n");
    let hidden = reader.observe(PID, &CGROUPS);
    assert_eq!(hidden.status, ObservationStatus::Unavailable);
    assert_eq!(hidden.reason.as_deref(), Some("cgroup_not_visible"));
    // And back.
    fixture.write("proc/4242/cgroup", "0::/a/b\n");
    let back = reader.observe(PID, &CGROUPS);
    assert_eq!(back.snapshot.unwrap().path, "/a/b");
}

#[test]
fn memory_current_alone_uses_the_same_cache() {
    let fixture = Fixture::new();
    let reader = fixture.reader();
    assert_eq!(reader.memory_current(PID).value, Some(83_886_080));
    fixture.write("cg/a/b/memory.current", "4096\n");
    assert_eq!(reader.memory_current(PID).value, Some(4096));
    fixture.write("cg/a/b/memory.current", "lots\n");
    assert_eq!(
        reader.memory_current(PID).reason.as_deref(),
        Some("parse_failed")
    );
    assert_eq!(
        reader.memory_current(9999).reason.as_deref(),
        Some("host_exited")
    );
}
