//! Observable resource use on demand: resident memory in steps, CPU burn, child processes.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIB: usize = 1024 * 1024;
const PAGE: usize = 4096;

/// Every block reserves at least this much address space. glibc serves allocations above
/// its largest dynamic mmap threshold (32 MiB on 64-bit) with their own mapping and unmaps
/// them on free, and freeing them never raises the threshold; smaller blocks could land on
/// the heap and stay resident after free. Only the touched pages count toward RSS.
const MIN_BLOCK: usize = 33 * MIB;

/// One allocation and how many MiB of it were touched.
#[derive(Debug)]
struct Block {
    buf: Vec<u8>,
    mib: u64,
}

/// Resident memory held by the runtime, as a stack of touched blocks, freed last-in
/// first-out.
#[derive(Debug, Default)]
pub struct Ballast {
    blocks: Vec<Block>,
    held_mib: u64,
}

impl Ballast {
    /// MiB currently held.
    pub fn held_mib(&self) -> u64 {
        self.held_mib
    }

    /// Grows or shrinks the held memory to `mib`, touching every new page.
    pub fn set_mib(&mut self, mib: u64) {
        while self.held_mib > mib {
            match self.blocks.pop() {
                Some(block) => {
                    self.held_mib -= block.mib;
                    drop(block.buf);
                }
                None => {
                    self.held_mib = 0;
                    break;
                }
            }
        }
        if mib > self.held_mib {
            let add = mib - self.held_mib;
            let touched = usize::try_from(add).unwrap_or(usize::MAX / MIB) * MIB;
            // Zeroed memory from a fresh mapping is not resident until written: write one
            // byte per page of the touched part.
            let mut buf = vec![0u8; touched.max(MIN_BLOCK)];
            for i in (0..touched).step_by(PAGE) {
                buf[i] = 1;
            }
            std::hint::black_box(&mut buf);
            self.blocks.push(Block { buf, mib: add });
            self.held_mib = mib;
        }
    }

    /// Frees everything.
    pub fn clear(&mut self) {
        self.set_mib(0);
    }
}

/// Walks `levels`, holding each for `step_ms`; returns the highest level.
pub fn run_memory_steps(ballast: &mut Ballast, levels: &[u64], step_ms: u64) -> u64 {
    let mut peak = 0;
    for &level in levels {
        ballast.set_mib(level);
        peak = peak.max(level);
        std::thread::sleep(Duration::from_millis(step_ms));
    }
    peak
}

/// Busy-loops until this thread has used `ms` milliseconds of CPU time (not wall time: on a
/// loaded machine the loop runs longer, so tests can rely on the CPU counter moving). A wall
/// clock cap of `10 × ms + 5 s` bounds the loop when the CPU clock cannot be read.
pub fn burn_cpu(ms: u64) -> u64 {
    let want_ns = ms.saturating_mul(1_000_000);
    let start_ns = thread_cpu_ns();
    let cap = Instant::now() + Duration::from_millis(ms.saturating_mul(10).saturating_add(5_000));
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rounds = 0u64;
    loop {
        for _ in 0..1024 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        rounds += 1;
        if rounds % 64 == 0 {
            let used = match (start_ns, thread_cpu_ns()) {
                (Some(start), Some(now)) => now.saturating_sub(start) >= want_ns,
                _ => false,
            };
            if used || Instant::now() >= cap {
                break;
            }
        }
    }
    std::hint::black_box(x);
    rounds
}

/// CPU time of the calling thread in nanoseconds: `/proc/thread-self/schedstat` (ns), else
/// utime + stime from `/proc/thread-self/stat` (clock ticks, assumed 100 Hz).
fn thread_cpu_ns() -> Option<u64> {
    if let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = text.split_whitespace().next().and_then(|v| v.parse().ok()) {
            return Some(ns);
        }
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 2..)?
        .split_whitespace()
        .collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}

/// Starts `n` processes the way a daemonizing tool leaves them behind: a shell that
/// ignores `SIGTERM` starts `setsid sleep` in the background and exits, so each `sleep` is
/// an orphan (re-parented away from this process), in a session and process group of its
/// own, and ignores `SIGTERM`. Nothing of this process tracks them. Returns their pids.
pub fn spawn_orphans(n: u64) -> std::io::Result<Vec<u32>> {
    let mut pids = Vec::new();
    for _ in 0..n {
        let output = Command::new("sh")
            .args([
                "-c",
                "trap '' TERM; setsid sleep 86400 </dev/null >/dev/null 2>&1 & echo $!",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()?;
        let pid = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse::<u32>()
            .map_err(|_| std::io::Error::other("the shell did not report the orphan's pid"))?;
        pids.push(pid);
    }
    Ok(pids)
}

/// Spawns `n` long `sleep` children with null stdio (stdout stays reserved for the protocol).
pub fn spawn_sleepers(children: &mut Vec<Child>, n: u64) -> std::io::Result<Vec<u32>> {
    let mut pids = Vec::new();
    for _ in 0..n {
        let child = Command::new("sleep")
            .arg("86400")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        pids.push(child.id());
        children.push(child);
    }
    Ok(pids)
}

/// Kills and reaps every child.
pub fn reap_all(children: &mut Vec<Child>) {
    for mut child in children.drain(..) {
        let _ = child.kill();
        let _ = child.wait();
    }
}
