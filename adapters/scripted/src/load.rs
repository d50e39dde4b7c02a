//! Observable resource use on demand: resident memory in steps, CPU burn, child processes.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIB: usize = 1024 * 1024;
const PAGE: usize = 4096;

/// Resident memory held by the runtime, as a stack of touched blocks.
///
/// Blocks are freed last-in first-out, so the allocator can hand the pages back (large
/// blocks are separate mappings; small ones sit at the top of the heap and get trimmed).
#[derive(Debug, Default)]
pub struct Ballast {
    blocks: Vec<Vec<u8>>,
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
                    self.held_mib -= (block.len() / MIB) as u64;
                    drop(block);
                }
                None => {
                    self.held_mib = 0;
                    break;
                }
            }
        }
        if mib > self.held_mib {
            let add = (mib - self.held_mib) as usize;
            let mut block = vec![0u8; add * MIB];
            // Zeroed allocations may be untouched lazily-mapped pages; write one byte per
            // page so the memory is resident.
            for i in (0..block.len()).step_by(PAGE) {
                block[i] = 1;
            }
            std::hint::black_box(&mut block);
            self.blocks.push(block);
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

/// Busy-loops for `ms` milliseconds of wall time on this thread.
pub fn burn_cpu(ms: u64) -> u64 {
    let until = Instant::now() + Duration::from_millis(ms);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rounds = 0u64;
    while Instant::now() < until {
        for _ in 0..1024 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        rounds += 1;
    }
    std::hint::black_box(x);
    rounds
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
