//! fabric-stats benchmarks (`cargo bench -p fabric-stats`; harness = false).
//!
//! - `resource_snapshot` latency for a 1-process and a 20-process tree (budget: ≤ 200 µs
//!   for 20 processes), children lists and the parent-scan fallback.
//! - Sampling overhead: 50 runtimes sampled every 10 ms by the one scheduler thread; CPU %
//!   of that thread from `/proc/self/task/<tid>/stat`.
//! - Invocation endpoints: `begin` + `finish` (sampling off, no artifacts) per selected
//!   group and for the default (every group), on a 1-process tree in this process's cgroup
//!   (real `/proc` and `/sys/fs/cgroup`), plus `process` on a 9-thread Python process.
//!
//! Environment: `FABRIC_BENCH_ITERS` (snapshot reads per case, default 2000),
//! `FABRIC_BENCH_SECONDS` (sampling window, default 3), `FABRIC_BENCH_ONLY` (comma list of
//! `snapshot`, `endpoints`, `sampling`; default all).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use fabric_config::config::{SystemStatsConfig, SystemStatsGroup, SystemStatsSamplingConfig};
use fabric_stats::{
    InvocationIds, ProcReader, StatsCollector, StatsTarget, TreeDiscovery, sampler_thread_id,
};

struct Tree {
    child: Child,
}

impl Tree {
    fn spawn(processes: usize) -> Tree {
        use std::os::unix::process::CommandExt;
        let script = if processes <= 1 {
            "exec sleep 600".to_owned()
        } else {
            format!(
                "for i in $(seq {}); do sleep 600 & done; wait",
                processes - 1
            )
        };
        let child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let tree = Tree { child };
        let reader = ProcReader::new("/proc");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let settled = reader
                .read_tree(tree.pid())
                .is_ok_and(|t| t.process_count as usize == processes);
            if settled {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "tree of {processes} did not settle"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        tree
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--"])
            .arg(format!("-{}", self.pid()))
            .status();
        let _ = self.child.wait();
    }
}

/// A process with `threads` extra threads (a Python interpreter), like a threaded adapter
/// host; skipped when `python3` is missing.
struct ThreadedHost {
    child: Child,
}

impl ThreadedHost {
    fn spawn(threads: usize) -> Option<ThreadedHost> {
        let script = format!(
            "import threading, time\n\
             for _ in range({threads}): threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n\
             print('ready', flush=True)\n\
             time.sleep(600)\n"
        );
        let mut child = Command::new("python3")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("ready line");
        assert_eq!(line.trim(), "ready");
        Some(ThreadedHost { child })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ThreadedHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn bench_snapshot(label: &str, reader: &ProcReader, pid: u32, iterations: u64) -> Duration {
    // Warm-up.
    for _ in 0..50 {
        if let Err(error) = reader.snapshot(pid, "runtime-bench", SystemTime::now()) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
            panic!("{label}: {error:?} {stat:?}");
        }
    }
    let mut times = Vec::with_capacity(iterations as usize);
    for _ in 0..iterations {
        let start = Instant::now();
        let snapshot = reader
            .snapshot(pid, "runtime-bench", SystemTime::now())
            .expect("snapshot");
        times.push(start.elapsed());
        std::hint::black_box(snapshot);
    }
    times.sort();
    let median = percentile(&times, 0.5);
    println!(
        "resource_snapshot/{label}: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs ({} reads)",
        median.as_secs_f64() * 1e6,
        percentile(&times, 0.9).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
        iterations
    );
    median
}

fn thread_cpu_seconds(tid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).expect("task stat");
    let close = text.rfind(')').expect("stat");
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // Linux reports thread CPU in USER_HZ (100 on every supported architecture).
    ticks as f64 / 100.0
}

fn bench_sampling(runtimes: usize, interval_ms: u64, seconds: u64) {
    let trees: Vec<Tree> = (0..runtimes).map(|_| Tree::spawn(1)).collect();
    let collector = StatsCollector::default();
    let config = SystemStatsConfig {
        collect: Some(vec![
            SystemStatsGroup::Process,
            SystemStatsGroup::CgroupMemory,
        ]),
        sampling: Some(SystemStatsSamplingConfig {
            interval_ms,
            max_samples: 100_000,
        }),
    };
    let running: Vec<_> = trees
        .iter()
        .enumerate()
        .map(|(i, tree)| {
            let target = StatsTarget {
                runtime_id: format!("runtime-{i}"),
                host_pid: tree.pid(),
                started_at: SystemTime::now(),
            };
            let ids = InvocationIds {
                invocation_id: format!("invocation-{i}"),
                request_id: format!("r{i}"),
            };
            collector.begin_with(&config, &target, &ids, None)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let tid = loop {
        if let Some(tid) = sampler_thread_id() {
            break tid;
        }
        assert!(Instant::now() < deadline, "sampler thread did not start");
        std::thread::sleep(Duration::from_millis(1));
    };
    // Let every job reach steady state, then measure a window.
    std::thread::sleep(Duration::from_millis(200));
    let seen_before: u64 = running.iter().map(|s| s.samples_seen()).sum();
    let cpu_before = thread_cpu_seconds(tid);
    let wall = Instant::now();
    std::thread::sleep(Duration::from_secs(seconds));
    let cpu = thread_cpu_seconds(tid) - cpu_before;
    let elapsed = wall.elapsed().as_secs_f64();
    let seen: u64 = running.iter().map(|s| s.samples_seen()).sum::<u64>() - seen_before;
    let expected = runtimes as f64 * elapsed * 1000.0 / interval_ms as f64;
    println!(
        "sampling/{runtimes}-runtimes@{interval_ms}ms: scheduler thread CPU {:.1}% of one core, \
         {seen} samples in {elapsed:.2} s ({:.0}% of the {expected:.0} scheduled), {:.1} µs CPU per sample",
        cpu / elapsed * 100.0,
        seen as f64 / expected * 100.0,
        if seen > 0 {
            cpu / seen as f64 * 1e6
        } else {
            f64::NAN
        },
    );
    for stats in running {
        std::hint::black_box(stats.finish());
    }
}

/// A fresh reader per snapshot: no cached descriptors (the first reading of a runtime).
fn bench_cold(processes: usize, pid: u32, iterations: u64) {
    let mut times = Vec::with_capacity(iterations as usize);
    for _ in 0..iterations {
        let mut reader = ProcReader::new("/proc");
        reader.set_discovery(TreeDiscovery::ChildrenFiles);
        let start = Instant::now();
        let snapshot = reader
            .snapshot(pid, "runtime-bench", SystemTime::now())
            .expect("snapshot");
        times.push(start.elapsed());
        std::hint::black_box(snapshot);
    }
    times.sort();
    println!(
        "resource_snapshot/{processes}-process/children-cold: median {:.1} µs, p90 {:.1} µs",
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.9).as_secs_f64() * 1e6
    );
}

/// The kernel's share: the same file reads a snapshot needs (each process's stat, its
/// children list, and the children re-read), with no tree logic. Shows how much of the
/// snapshot latency is system-call cost on this machine under its current load.
fn bench_floor(processes: usize, root: u32, iterations: u64) {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let mut pids = vec![root];
    let mut index = 0;
    while index < pids.len() {
        let pid = pids[index];
        let list = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
        pids.extend(list.split_whitespace().map(|p| p.parse::<u32>().unwrap()));
        index += 1;
    }
    assert_eq!(pids.len(), processes);
    let stats: Vec<String> = pids.iter().map(|p| format!("/proc/{p}/stat")).collect();
    let children: Vec<String> = pids
        .iter()
        .map(|p| format!("/proc/{p}/task/{p}/children"))
        .collect();
    let mut buf = vec![0u8; 4096];
    let mut times = Vec::with_capacity(iterations as usize);
    for _ in 0..iterations {
        let start = Instant::now();
        for (stat, list) in stats.iter().zip(&children) {
            let mut file = std::fs::File::open(stat).unwrap();
            std::hint::black_box(file.read(&mut buf).unwrap());
            let file = std::fs::File::open(list).unwrap();
            std::hint::black_box(file.read_at(&mut buf, 0).unwrap());
            std::hint::black_box(file.read_at(&mut buf, 0).unwrap());
        }
        times.push(start.elapsed());
    }
    times.sort();
    println!(
        "resource_snapshot/{processes}-process/open-read-close-floor (what an uncached reading costs in system calls alone): median {:.1} µs",
        percentile(&times, 0.5).as_secs_f64() * 1e6
    );
}

/// `begin` + `finish` of one invocation (no sampling, no artifacts) for each group alone
/// and for every group (the default `system_stats`), with a warm collector.
fn bench_endpoints(tree_label: &str, pid: u32, iterations: u64, process_only: bool) {
    let collector = StatsCollector::default();
    let target = StatsTarget {
        runtime_id: "runtime-bench".to_owned(),
        host_pid: pid,
        started_at: SystemTime::now(),
    };
    let ids = InvocationIds {
        invocation_id: "invocation-bench".to_owned(),
        request_id: "r".to_owned(),
    };
    let cases: [(&str, Vec<SystemStatsGroup>); 5] = [
        ("process", vec![SystemStatsGroup::Process]),
        ("cgroup.cpu", vec![SystemStatsGroup::CgroupCpu]),
        ("cgroup.memory", vec![SystemStatsGroup::CgroupMemory]),
        ("cgroup.pressure", vec![SystemStatsGroup::CgroupPressure]),
        ("all (default)", SystemStatsGroup::ALL.to_vec()),
    ];
    for (label, groups) in cases {
        if process_only && label != "process" {
            continue;
        }
        let config = SystemStatsConfig {
            collect: Some(groups),
            sampling: None,
        };
        for _ in 0..50 {
            std::hint::black_box(collector.begin_with(&config, &target, &ids, None).finish());
        }
        let mut times = Vec::with_capacity(iterations as usize);
        for _ in 0..iterations {
            let start = Instant::now();
            let finished = collector.begin_with(&config, &target, &ids, None).finish();
            times.push(start.elapsed());
            std::hint::black_box(finished);
        }
        times.sort();
        println!(
            "endpoints/{tree_label}/{label}: begin+finish median {:.1} µs, p90 {:.1} µs ({iterations} invocations)",
            percentile(&times, 0.5).as_secs_f64() * 1e6,
            percentile(&times, 0.9).as_secs_f64() * 1e6,
        );
    }
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench`-less test args; keep it quick.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let iterations = env_number("FABRIC_BENCH_ITERS", 2000);
    let seconds = env_number("FABRIC_BENCH_SECONDS", 3);
    let only = std::env::var("FABRIC_BENCH_ONLY").unwrap_or_default();
    let selected = |name: &str| only.is_empty() || only.split(',').any(|o| o.trim() == name);
    if selected("endpoints") {
        let tree = Tree::spawn(1);
        bench_endpoints("1-process", tree.pid(), iterations, false);
        drop(tree);
        match ThreadedHost::spawn(8) {
            Some(host) => bench_endpoints("1-process-9-threads", host.pid(), iterations, true),
            None => println!("endpoints/1-process-9-threads: skipped (no python3)"),
        }
    }
    for processes in [1usize, 20] {
        if !selected("snapshot") {
            break;
        }
        let tree = Tree::spawn(processes);
        let mut children = ProcReader::new("/proc");
        children.set_discovery(TreeDiscovery::ChildrenFiles);
        let median = bench_snapshot(
            &format!("{processes}-process/children"),
            &children,
            tree.pid(),
            iterations,
        );
        let mut scan = ProcReader::new("/proc");
        scan.set_discovery(TreeDiscovery::ParentScan);
        bench_snapshot(
            &format!("{processes}-process/parent-scan"),
            &scan,
            tree.pid(),
            iterations / 10,
        );
        bench_cold(processes, tree.pid(), iterations / 4);
        bench_floor(processes, tree.pid(), iterations);
        if processes == 20 {
            let verdict = if median <= Duration::from_micros(200) {
                "within"
            } else {
                "OVER"
            };
            println!("resource_snapshot/20-process budget 200 µs: {verdict}");
        }
    }
    if selected("sampling") {
        bench_sampling(50, 10, seconds);
    }
}
