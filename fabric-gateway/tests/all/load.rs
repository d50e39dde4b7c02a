//! Load and overhead through the gateway: 64 concurrent streams lose no chunk, and the
//! added latency of a call and of a stream's first chunk against the same stub called
//! directly (printed; run with `--nocapture` to see the numbers; bench/gateway/gateway.rs
//! measures the same in an optimized build).

use std::time::Duration;

use crate::measure::{overhead, streams_through_gateway};

#[test]
fn sixty_four_concurrent_streams_lose_no_chunk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (lost, records, received) = streams_through_gateway(64, 20, dir.path());
    assert_eq!(lost, 0, "every chunk, in order");
    assert_eq!((records, received), (64, 64));
}

#[test]
fn added_latency_of_a_call_and_of_a_first_chunk() {
    const ROUNDS: usize = 200;
    let dir = tempfile::tempdir().expect("tempdir");
    let o = overhead(ROUNDS, dir.path());
    println!(
        "gateway bench ({ROUNDS} rounds): call direct {:?}, through gateway {:?} (added {:?}); \
         to the answer's end direct {:?}, through gateway {:?} (added {:?}; gateway CPU {:?} \
         per call); first chunk direct {:?}, through gateway {:?} (added {:?})",
        o.call_direct,
        o.call_gateway,
        o.call_gateway.saturating_sub(o.call_direct),
        o.end_direct,
        o.end_gateway,
        o.end_gateway.saturating_sub(o.end_direct),
        o.cpu_per_call,
        o.chunk_direct,
        o.chunk_gateway,
        o.chunk_gateway.saturating_sub(o.chunk_direct)
    );
    // A sanity bound only (debug builds on a shared machine): the stream's first chunk is
    // passed on long before the stub's next one (20 ms later).
    assert!(
        o.chunk_gateway < Duration::from_millis(20),
        "first chunk through the gateway took {:?}",
        o.chunk_gateway
    );
}
