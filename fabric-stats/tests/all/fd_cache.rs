//! The process-tree readers' descriptor cache is bounded and released with the reader (alone
//! in its own process: the counter is process-wide).

use std::time::Duration;

use crate::support::{self, RealTree, until};
use fabric_stats::{ProcReader, cached_descriptors};

#[test]
fn descriptors_are_cached_bounded_and_released() {
    if !support::alone::in_own_process("fd_cache::descriptors_are_cached_bounded_and_released") {
        return; // it ran, and passed, in its own process
    }
    let tree = RealTree::spawn("sleep 30 & sleep 30 & wait");
    let baseline = cached_descriptors();
    {
        let reader = ProcReader::new("/proc");
        until(Duration::from_secs(10), || {
            reader
                .read_tree(tree.pid())
                .ok()
                .filter(|t| t.process_count == 3)
        });
        // stat + children list for each of the three processes.
        assert_eq!(cached_descriptors(), baseline + 6);
        // Re-reading reuses them.
        reader.read_tree(tree.pid()).unwrap();
        assert_eq!(cached_descriptors(), baseline + 6);
        // A clone starts empty.
        let clone = reader.clone();
        clone.read_tree(tree.pid()).unwrap();
        assert_eq!(cached_descriptors(), baseline + 12);
    }
    assert_eq!(cached_descriptors(), baseline);

    // Over the process-wide budget, readers close their caches after each reading.
    let readers: Vec<ProcReader> = (0..60).map(|_| ProcReader::new("/proc")).collect();
    for reader in &readers {
        reader.read_tree(tree.pid()).unwrap();
    }
    assert!(cached_descriptors() <= 256 + 6, "{}", cached_descriptors());
}
