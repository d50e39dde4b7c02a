//! Periodic sampling: one process-wide scheduler thread for every runtime, and the bounded
//! per-invocation series it feeds.
//!
//! The scheduler thread starts lazily with the first sampled invocation and then serves
//! all of them from a deadline list (one wait per wake-up, no thread per runtime). Each
//! series keeps both endpoints, retains at most `max_samples` intermediate samples (later
//! ones are counted as dropped), and reduces every sample — retained or not — into the
//! streaming gauges, so truncation never changes the peak or the mean. A sample that
//! arrives after its invocation closed is discarded.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use fabric_config::stats::{Measurement, ObservationStatus};
use serde::Serialize;

use crate::cgroup::CgroupReader;
use crate::proc::{ProcReader, TreeTotals};
use crate::reduce::{CounterAccumulator, GaugeAccumulator};
use crate::timestamp::rfc3339_millis;

/// Which point of the series a sample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SampleKind {
    Before,
    Sample,
    After,
}

/// The process-tree part of a sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ProcessReading {
    NotCollected,
    Available(TreeTotals),
    Missing {
        status: ObservationStatus,
        reason: String,
    },
}

/// One sample of one invocation.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) kind: SampleKind,
    pub(crate) offset: Duration,
    pub(crate) observed_at: SystemTime,
    pub(crate) process: ProcessReading,
    /// `None` when `cgroup.memory` is not selected.
    pub(crate) cgroup_memory_current: Option<Measurement<u64>>,
    /// Time the sample took to read.
    pub(crate) cost: Duration,
}

/// What a sampler reads for one invocation: the target's own process-tree reader and the
/// collector's cgroup reader (both keep their descriptors open between readings).
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub(crate) proc: Arc<ProcReader>,
    pub(crate) cgroup: Arc<CgroupReader>,
    pub(crate) pid: u32,
    pub(crate) process: bool,
    /// `memory.current` in every sample (sampling with `cgroup.memory` selected).
    pub(crate) cgroup_memory: bool,
}

impl Probe {
    pub(crate) fn read(&self, kind: SampleKind, start: Instant) -> Sample {
        let began = Instant::now();
        let observed_at = SystemTime::now();
        let process = if self.process {
            match self.proc.read_tree(self.pid) {
                Ok(totals) => ProcessReading::Available(totals),
                Err(error) => ProcessReading::Missing {
                    status: match error {
                        crate::StatsError::Unsupported { .. } => ObservationStatus::Unsupported,
                        _ => ObservationStatus::Unavailable,
                    },
                    reason: error.reason_code().to_owned(),
                },
            }
        } else {
            ProcessReading::NotCollected
        };
        let cgroup_memory_current = self.cgroup_memory.then(|| match kind {
            SampleKind::Sample => self.cgroup.memory_current_sample(self.pid),
            _ => self.cgroup.memory_current(self.pid),
        });
        let cost = began.elapsed();
        Sample {
            kind,
            offset: began.saturating_duration_since(start),
            observed_at,
            process,
            cgroup_memory_current,
            cost,
        }
    }
}

/// The bounded series of one invocation plus its streaming reductions.
#[derive(Debug)]
pub(crate) struct Series {
    pub(crate) max_samples: u64,
    pub(crate) clock_ticks: u64,
    pub(crate) retained: Vec<Sample>,
    pub(crate) intermediate: u64,
    pub(crate) dropped: u64,
    pub(crate) seen: u64,
    pub(crate) late_discarded: u64,
    pub(crate) unavailable: u64,
    /// The final endpoint is being read: periodic samples are no longer accepted.
    pub(crate) closing: bool,
    pub(crate) closed: bool,
    pub(crate) collection: Duration,
    pub(crate) largest_gap: Duration,
    pub(crate) last_offset: Option<Duration>,
    pub(crate) rss: GaugeAccumulator,
    pub(crate) processes: GaugeAccumulator,
    pub(crate) cgroup_memory: GaugeAccumulator,
    pub(crate) cpu: CounterAccumulator,
}

impl Series {
    pub(crate) fn new(cadence: Duration, max_samples: u64, clock_ticks: u64) -> Self {
        Series {
            max_samples,
            clock_ticks,
            retained: Vec::new(),
            intermediate: 0,
            dropped: 0,
            seen: 0,
            late_discarded: 0,
            unavailable: 0,
            closing: false,
            closed: false,
            collection: Duration::ZERO,
            largest_gap: Duration::ZERO,
            last_offset: None,
            rss: GaugeAccumulator::new(cadence),
            processes: GaugeAccumulator::new(cadence),
            cgroup_memory: GaugeAccumulator::new(cadence),
            cpu: CounterAccumulator::new(cadence),
        }
    }

    /// Adds a sample; returns false (and counts it) when the series is closed or the sample
    /// is older than the last one. An `After` sample closes the series.
    pub(crate) fn push(&mut self, sample: Sample) -> bool {
        let late = match sample.kind {
            // The final endpoint always lands (started after `closing` was set, so no
            // accepted sample is newer).
            SampleKind::After => self.closed,
            _ => {
                self.closed
                    || (self.closing && sample.kind == SampleKind::Sample)
                    || self.last_offset.is_some_and(|last| sample.offset < last)
            }
        };
        if late {
            self.late_discarded += 1;
            return false;
        }
        if let Some(last) = self.last_offset {
            self.largest_gap = self.largest_gap.max(sample.offset.saturating_sub(last));
        }
        self.last_offset = Some(sample.offset);
        self.seen += 1;
        self.collection += sample.cost;
        match &sample.process {
            ProcessReading::Available(totals) => {
                self.rss
                    .push(sample.offset, Some(totals.resident_memory_bytes as f64));
                self.processes
                    .push(sample.offset, Some(totals.process_count as f64));
                self.cpu.push(
                    sample.offset,
                    Some(totals.cpu_ticks as f64 / self.clock_ticks.max(1) as f64),
                );
            }
            ProcessReading::Missing { .. } => {
                self.unavailable += 1;
                self.rss.push(sample.offset, None);
                self.processes.push(sample.offset, None);
                self.cpu.push(sample.offset, None);
            }
            ProcessReading::NotCollected => {}
        }
        if let Some(memory) = &sample.cgroup_memory_current {
            self.cgroup_memory
                .push(sample.offset, memory.get().map(|&v| v as f64));
        }
        match sample.kind {
            SampleKind::Sample => {
                if self.intermediate < self.max_samples {
                    self.intermediate += 1;
                    self.retained.push(sample);
                } else {
                    self.dropped += 1;
                }
            }
            SampleKind::Before => self.retained.push(sample),
            SampleKind::After => {
                self.retained.push(sample);
                self.closed = true;
            }
        }
        true
    }
}

struct Job {
    id: u64,
    due: Instant,
    interval: Duration,
    start: Instant,
    probe: Arc<Probe>,
    series: Arc<Mutex<Series>>,
}

#[derive(Default)]
struct Jobs {
    jobs: Vec<Job>,
    next_id: u64,
}

struct Scheduler {
    jobs: Mutex<Jobs>,
    wake: Condvar,
    thread_id: OnceLock<u32>,
    /// Due times are multiples of the interval since this instant, so invocations with the
    /// same cadence share one wake-up.
    epoch: Instant,
}

impl Scheduler {
    /// The first grid point of `interval` strictly after `after`.
    fn next_tick(&self, after: Instant, interval: Duration) -> Instant {
        let interval_ns = interval.as_nanos().max(1);
        let since = after.saturating_duration_since(self.epoch).as_nanos();
        let ticks = since / interval_ns + 1;
        let offset = u64::try_from(ticks * interval_ns).unwrap_or(u64::MAX);
        self.epoch + Duration::from_nanos(offset)
    }
}

static SCHEDULER: OnceLock<Arc<Scheduler>> = OnceLock::new();

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a stats lock leaves plain data behind; keep using it.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn lock_series(series: &Mutex<Series>) -> MutexGuard<'_, Series> {
    lock(series)
}

fn scheduler() -> &'static Arc<Scheduler> {
    SCHEDULER.get_or_init(|| {
        let scheduler = Arc::new(Scheduler {
            jobs: Mutex::new(Jobs::default()),
            wake: Condvar::new(),
            thread_id: OnceLock::new(),
            epoch: Instant::now(),
        });
        let worker = Arc::clone(&scheduler);
        // If the thread cannot be spawned, registered series simply get no intermediate
        // samples; endpoints are still taken by the caller.
        let _ = std::thread::Builder::new()
            .name("fabric-sampler".to_owned())
            .spawn(move || run(&worker));
        scheduler
    })
}

fn run(scheduler: &Scheduler) {
    if let Some(tid) = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|link| link.file_name()?.to_str()?.parse().ok())
    {
        let _ = scheduler.thread_id.set(tid);
    }
    let mut due: Vec<(Arc<Probe>, Arc<Mutex<Series>>, Instant)> = Vec::new();
    loop {
        {
            let mut jobs = lock(&scheduler.jobs);
            loop {
                let now = Instant::now();
                match jobs.jobs.iter().map(|job| job.due).min() {
                    None => jobs = scheduler.wake.wait(jobs).unwrap_or_else(|p| p.into_inner()),
                    Some(next) if next > now => {
                        jobs = scheduler
                            .wake
                            .wait_timeout(jobs, next - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    Some(_) => break,
                }
            }
            let now = Instant::now();
            for job in jobs.jobs.iter_mut().filter(|job| job.due <= now) {
                due.push((Arc::clone(&job.probe), Arc::clone(&job.series), job.start));
                // The next grid point after now: missed ticks are skipped, not burst.
                job.due = scheduler.next_tick(now, job.interval);
            }
        }
        for (probe, series, start) in due.drain(..) {
            let sample = probe.read(SampleKind::Sample, start);
            lock(&series).push(sample);
        }
    }
}

/// Registration of one series with the scheduler; unregisters on drop.
#[derive(Debug)]
pub(crate) struct Registration {
    id: u64,
}

pub(crate) fn register(
    probe: Arc<Probe>,
    series: Arc<Mutex<Series>>,
    start: Instant,
    interval: Duration,
) -> Registration {
    let scheduler = scheduler();
    let mut jobs = lock(&scheduler.jobs);
    jobs.next_id += 1;
    let id = jobs.next_id;
    let due = scheduler.next_tick(start, interval);
    jobs.jobs.push(Job {
        id,
        due,
        interval,
        start,
        probe,
        series,
    });
    drop(jobs);
    scheduler.wake.notify_one();
    Registration { id }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(scheduler) = SCHEDULER.get() {
            lock(&scheduler.jobs).jobs.retain(|job| job.id != self.id);
        }
    }
}

/// The Linux thread id of the process-wide sampling thread, once it has started (for
/// overhead measurements via `/proc/self/task/<tid>/stat`).
pub fn sampler_thread_id() -> Option<u32> {
    SCHEDULER.get()?.thread_id.get().copied()
}

/// Series currently registered with the scheduler.
pub fn active_sampled_invocations() -> usize {
    SCHEDULER
        .get()
        .map_or(0, |scheduler| lock(&scheduler.jobs).jobs.len())
}

/// RFC 3339 time of a sample.
pub(crate) fn sample_time(sample: &Sample) -> String {
    rfc3339_millis(sample.observed_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: SampleKind, ms: u64, rss: u64) -> Sample {
        Sample {
            kind,
            offset: Duration::from_millis(ms),
            observed_at: SystemTime::UNIX_EPOCH,
            process: ProcessReading::Available(TreeTotals {
                process_count: 1,
                resident_memory_bytes: rss,
                cpu_ticks: ms / 10,
            }),
            cgroup_memory_current: None,
            cost: Duration::from_micros(10),
        }
    }

    #[test]
    fn truncation_keeps_both_endpoints_and_counts_drops() {
        let mut series = Series::new(Duration::from_millis(10), 2, 100);
        assert!(series.push(sample(SampleKind::Before, 0, 100)));
        for i in 1..=5 {
            assert!(series.push(sample(SampleKind::Sample, i * 10, 100 + i)));
        }
        // The peak sits in a dropped sample: reductions still see it.
        assert!(series.push(sample(SampleKind::Sample, 60, 10_000)));
        assert!(series.push(sample(SampleKind::After, 70, 50)));
        let kinds: Vec<_> = series.retained.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                SampleKind::Before,
                SampleKind::Sample,
                SampleKind::Sample,
                SampleKind::After
            ]
        );
        assert_eq!(series.dropped, 4);
        assert_eq!(series.seen, 8);
        let summary = series.rss.summary(Duration::from_millis(70));
        assert_eq!(summary.sampled_peak, Some(10_000.0));
        assert_eq!(summary.final_value, Some(50.0));
    }

    #[test]
    fn samples_racing_the_final_endpoint_are_discarded() {
        let mut series = Series::new(Duration::from_millis(10), 100, 100);
        series.push(sample(SampleKind::Before, 0, 1));
        series.closing = true;
        // A periodic sample that finished while the final endpoint was being read, even
        // one that started later than it, never displaces the endpoint.
        assert!(!series.push(sample(SampleKind::Sample, 25, 7)));
        assert!(series.push(sample(SampleKind::After, 20, 2)));
        assert_eq!(series.retained.last().unwrap().kind, SampleKind::After);
        assert_eq!(
            series.rss.summary(Duration::from_millis(20)).final_value,
            Some(2.0)
        );
        assert_eq!(series.late_discarded, 1);
    }

    #[test]
    fn late_samples_are_discarded_after_close() {
        let mut series = Series::new(Duration::from_millis(10), 100, 100);
        series.push(sample(SampleKind::Before, 0, 1));
        series.push(sample(SampleKind::After, 20, 2));
        assert!(!series.push(sample(SampleKind::Sample, 30, 999)));
        assert_eq!(series.late_discarded, 1);
        assert_eq!(series.retained.len(), 2);
        assert_eq!(
            series.rss.summary(Duration::from_millis(20)).sampled_peak,
            Some(2.0)
        );
        // An out-of-order (older) sample is late too.
        let mut series = Series::new(Duration::from_millis(10), 100, 100);
        series.push(sample(SampleKind::Before, 0, 1));
        series.push(sample(SampleKind::Sample, 20, 1));
        assert!(!series.push(sample(SampleKind::Sample, 10, 1)));
    }
}
