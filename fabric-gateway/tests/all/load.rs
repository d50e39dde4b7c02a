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
    const ROUNDS: usize = 100;
    let dir = tempfile::tempdir().expect("tempdir");
    let o = overhead(ROUNDS, dir.path());
    let added = |gateway: Duration, direct: Duration| gateway.saturating_sub(direct);
    println!(
        "gateway bench ({ROUNDS} rounds), kept connections: call added {:?}, to the end added \
         {:?} (gateway CPU {:?} per call), first chunk added {:?} ({} stub connections); after \
         a quiet pause: call added {:?}, first chunk added {:?}; new connection per call: call \
         added {:?}, to the end added {:?} (CPU {:?}), first chunk added {:?}",
        added(o.call_gateway, o.call_direct),
        added(o.end_gateway, o.end_direct),
        o.cpu_per_call,
        added(o.chunk_gateway, o.chunk_direct),
        o.kept_accepted,
        added(o.quiet_call_gateway, o.quiet_call_direct),
        added(o.quiet_chunk_gateway, o.quiet_chunk_direct),
        added(o.new_call_gateway, o.new_call_direct),
        added(o.new_end_gateway, o.new_end_direct),
        o.new_cpu_per_call,
        added(o.new_chunk_gateway, o.new_chunk_direct),
    );
    // A sanity bound only (debug builds on a shared machine): the stream's first chunk is
    // passed on within milliseconds (before the closing stub's next one, 20 ms later).
    assert!(
        o.chunk_gateway < Duration::from_millis(10)
            && o.new_chunk_gateway < Duration::from_millis(20),
        "first chunk through the gateway took {:?} (kept), {:?} (new connection)",
        o.chunk_gateway,
        o.new_chunk_gateway
    );
    // Both kept stubs saw two connections: the direct client's and the gateway's, reused.
    assert_eq!(o.kept_accepted, 4, "endpoint connections are reused");
}
