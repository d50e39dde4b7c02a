//! What a batch writes, declared in `fabric-config` (they cross the C ABI).

pub use fabric_config::batch::{
    AttemptRecord, BatchLine, BatchSummary, Latency, SystemStatsTotals, UsageTotals, Verdict,
};
