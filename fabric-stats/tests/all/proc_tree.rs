//! Process-tree snapshots against fixture proc trees and real process trees.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::{FakeProc, Proc, RealTree, until};
use fabric_stats::{ProcReader, StatsError, TreeDiscovery, UnavailableReason, UnsupportedReason};

const PAGE: u64 = 4096;

/// host 100 (threads 100, 101) → 200 (thread 100's child) → 300 (zombie);
/// host → 201 (thread 101's child). 999 is an unrelated process.
fn sample_tree() -> FakeProc {
    let fake = FakeProc::new();
    fake.add(Proc {
        pid: 1,
        ppid: 0,
        state: 'S',
        cpu: [1, 1, 0, 0],
        rss_pages: 10,
        threads: &[(1, &[100, 999])],
    });
    fake.add(Proc {
        pid: 100,
        ppid: 1,
        state: 'S',
        cpu: [100, 50, 30, 20],
        rss_pages: 1000,
        threads: &[(100, &[200]), (101, &[201])],
    });
    fake.add(Proc {
        pid: 200,
        ppid: 100,
        state: 'R',
        cpu: [10, 5, 0, 0],
        rss_pages: 200,
        threads: &[(200, &[300])],
    });
    fake.add(Proc {
        pid: 201,
        ppid: 100,
        state: 'S',
        cpu: [7, 3, 0, 0],
        rss_pages: 50,
        threads: &[(201, &[])],
    });
    fake.add(Proc {
        pid: 300,
        ppid: 200,
        state: 'Z',
        cpu: [40, 10, 0, 0],
        rss_pages: 0,
        threads: &[(300, &[])],
    });
    fake.add(Proc {
        pid: 999,
        ppid: 1,
        state: 'S',
        cpu: [5000, 0, 0, 0],
        rss_pages: 99999,
        threads: &[(999, &[])],
    });
    fake
}

fn reader(fake: &FakeProc, discovery: TreeDiscovery) -> ProcReader {
    let mut reader = ProcReader::new(fake.root());
    reader
        .set_discovery(discovery)
        .set_page_size(PAGE)
        .set_clock_ticks(100);
    reader
}

fn expect_sample_totals(reader: &ProcReader) {
    let totals = reader.read_tree(100).unwrap();
    assert_eq!(
        totals.process_count, 3,
        "host, 200 and 201; zombie 300 not counted"
    );
    assert_eq!(totals.resident_memory_bytes, (1000 + 200 + 50) * PAGE);
    // CPU includes the zombie (not yet folded into its parent's cutime), not pid 999.
    assert_eq!(totals.cpu_ticks, 200 + 15 + 10 + 50);
    let snapshot = reader.snapshot(100, "runtime-1", UNIX_EPOCH).unwrap();
    assert_eq!(snapshot.runtime_id, "runtime-1");
    assert_eq!(snapshot.started_at, "1970-01-01T00:00:00.000Z");
    assert_eq!(snapshot.cpu_time_seconds, 2.75);
    assert_eq!(snapshot.process_count, 3);
    let json = serde_json::to_string(&snapshot).unwrap();
    assert!(!json.contains("SECRET") && !json.contains("fake"), "{json}");
}

#[test]
fn fixture_tree_from_children_lists_of_every_thread() {
    let fake = sample_tree();
    expect_sample_totals(&reader(&fake, TreeDiscovery::ChildrenFiles));
    expect_sample_totals(&reader(&fake, TreeDiscovery::Auto));
}

#[test]
fn fixture_tree_from_parent_scan() {
    let fake = sample_tree();
    expect_sample_totals(&reader(&fake, TreeDiscovery::ParentScan));
}

#[test]
fn missing_children_lists_fall_back_to_the_parent_scan() {
    let fake = sample_tree();
    fake.remove_children_files();
    expect_sample_totals(&reader(&fake, TreeDiscovery::Auto));
    let err = reader(&fake, TreeDiscovery::ChildrenFiles)
        .read_tree(100)
        .unwrap_err();
    assert_eq!(
        err,
        StatsError::Unsupported {
            reason: UnsupportedReason::NoChildrenLists
        },
        "children-only reader must not guess"
    );
}

#[test]
fn exited_host_is_unavailable_not_zero() {
    let fake = sample_tree();
    for discovery in [TreeDiscovery::ChildrenFiles, TreeDiscovery::ParentScan] {
        let err = reader(&fake, discovery).read_tree(4242).unwrap_err();
        assert_eq!(err.code(), "resource_observation_unavailable");
        assert_eq!(err.reason_code(), "host_exited");
        // A zombie host has exited too.
        let err = reader(&fake, discovery).read_tree(300).unwrap_err();
        assert_eq!(err.reason_code(), "host_exited");
    }
}

#[test]
fn reparented_child_is_a_changing_tree() {
    let fake = FakeProc::new();
    fake.add(Proc {
        pid: 100,
        ppid: 1,
        state: 'S',
        cpu: [0; 4],
        rss_pages: 1,
        threads: &[(100, &[200])],
    });
    // Listed as 100's child but its stat already names another parent.
    fake.add(Proc {
        pid: 200,
        ppid: 1,
        state: 'S',
        cpu: [0; 4],
        rss_pages: 1,
        threads: &[(200, &[])],
    });
    let mut reader = reader(&fake, TreeDiscovery::ChildrenFiles);
    reader.set_max_attempts(3);
    let err = reader.read_tree(100).unwrap_err();
    assert_eq!(
        err,
        StatsError::Unavailable {
            pid: 100,
            reason: UnavailableReason::TreeChanging { attempts: 3 }
        }
    );
}

#[test]
fn hidden_child_is_unavailable() {
    let fake = FakeProc::new();
    fake.add(Proc {
        pid: 100,
        ppid: 1,
        state: 'S',
        cpu: [0; 4],
        rss_pages: 1,
        threads: &[(100, &[200])],
    });
    let err = reader(&fake, TreeDiscovery::ChildrenFiles)
        .read_tree(100)
        .unwrap_err();
    assert_eq!(
        err,
        StatsError::Unavailable {
            pid: 100,
            reason: UnavailableReason::ProcessHidden { pid: 200 }
        }
    );
}

#[test]
fn unparsable_stat_is_unreadable() {
    let fake = sample_tree();
    std::fs::write(fake.path("201/stat"), "201 (x) S").unwrap();
    let err = reader(&fake, TreeDiscovery::ChildrenFiles)
        .read_tree(100)
        .unwrap_err();
    assert_eq!(err.reason_code(), "process_unreadable");
    let info = fabric_config::ErrorInfo::from(err);
    assert!(info.path().unwrap().ends_with("201/stat"));
}

#[test]
fn fixture_tree_that_changes_during_reads() {
    // A writer thread keeps moving child 201 between the host and pid 1 (children list and
    // stat), so some reads see a half-moved tree. Every successful reading must be one of
    // the two consistent trees; the change must be detected at least once.
    let fake = sample_tree();
    let root = fake.root().to_path_buf();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let root = root.clone();
        std::thread::spawn(move || {
            let stat_201 = std::fs::read_to_string(root.join("201/stat")).unwrap();
            let moved = stat_201.replacen(") S 100 ", ") S 1 ", 1);
            let mut flip = false;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                flip = !flip;
                // In-place rewrites: a torn read sees an empty file, which is either the
                // moved state (children list) or an unparsable stat (reported unreadable).
                let (init_children, stat) = if flip {
                    ("100 999 201 ", &moved)
                } else {
                    ("100 999 ", &stat_201)
                };
                std::fs::write(
                    root.join("100/task/101/children"),
                    if flip { "" } else { "201 " },
                )
                .unwrap();
                std::fs::write(root.join("1/task/1/children"), init_children).unwrap();
                std::fs::write(root.join("201/stat"), stat).unwrap();
            }
        })
    };
    let mut reader = reader(&fake, TreeDiscovery::ChildrenFiles);
    reader.set_max_attempts(1);
    let mut changed = 0;
    let mut ok = 0;
    until(Duration::from_secs(20), || {
        match reader.read_tree(100) {
            Ok(totals) => {
                ok += 1;
                assert!(
                    (totals.process_count, totals.resident_memory_bytes) == (3, 1250 * PAGE)
                        || (totals.process_count, totals.resident_memory_bytes) == (2, 1200 * PAGE),
                    "inconsistent reading {totals:?}"
                );
            }
            Err(StatsError::Unavailable {
                reason: UnavailableReason::TreeChanging { .. },
                ..
            }) => changed += 1,
            // A torn write of a stat or children file (the writer truncates then writes).
            Err(StatsError::Unavailable {
                reason: UnavailableReason::ProcessUnreadable { .. },
                ..
            }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
        (changed > 0 && ok > 0).then_some(())
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
}

#[test]
fn real_tree_children_lists_and_parent_scan_agree() {
    let tree = RealTree::spawn("sleep 30 & sleep 30 & (sleep 30 & wait) & wait");
    let pid = tree.pid();
    let mut children = ProcReader::new("/proc");
    children.set_discovery(TreeDiscovery::ChildrenFiles);
    let mut scan = ProcReader::new("/proc");
    scan.set_discovery(TreeDiscovery::ParentScan);
    // sh, sleep, sleep, subshell, sleep.
    let totals = until(Duration::from_secs(10), || {
        children
            .read_tree(pid)
            .ok()
            .filter(|t| t.process_count == 5)
    });
    assert!(totals.resident_memory_bytes > 0);
    // Both methods see the same settled tree (RSS settles once every child has exec'd).
    until(Duration::from_secs(10), || {
        let a = children.read_tree(pid).unwrap();
        let b = scan.read_tree(pid).unwrap();
        let c = children.read_tree(pid).unwrap();
        assert_eq!(b.process_count, 5);
        (a == b && b == c).then_some(())
    });
    let snapshot = children
        .snapshot(pid, "runtime-real", SystemTime::now())
        .unwrap();
    assert_eq!(snapshot.process_count, 5);
    assert!(snapshot.observed_at.ends_with('Z'));
}

#[test]
fn real_reaped_descendants_cpu_is_kept() {
    // The child burns CPU, exits and is reaped by sh: its time moves into sh's cutime.
    let tree = RealTree::spawn("i=0; (while [ $i -lt 200000 ]; do i=$((i+1)); done); sleep 30");
    let reader = ProcReader::new("/proc");
    let totals = until(Duration::from_secs(60), || {
        reader
            .read_tree(tree.pid())
            .ok()
            .filter(|t| t.process_count == 2 && t.cpu_ticks > 0)
    });
    assert!(totals.cpu_ticks > 0);
}

#[test]
fn real_dead_pid_is_unavailable() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    for discovery in [TreeDiscovery::Auto, TreeDiscovery::ParentScan] {
        let mut reader = ProcReader::new("/proc");
        reader.set_discovery(discovery);
        let err = reader
            .snapshot(pid, "runtime-1", SystemTime::now())
            .unwrap_err();
        assert_eq!(err.code(), "resource_observation_unavailable");
        assert_eq!(err.reason_code(), "host_exited");
    }
}

#[test]
fn real_zombie_host_is_unavailable() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    let reader = ProcReader::new("/proc");
    // Not yet reaped: a zombie, which has exited.
    let err = until(Duration::from_secs(10), || reader.read_tree(pid).err());
    assert_eq!(err.reason_code(), "host_exited");
    child.wait().unwrap();
}

#[test]
fn real_fork_loop_is_detected_as_changing() {
    let tree = RealTree::spawn("while :; do /bin/true; done");
    let mut reader = ProcReader::new("/proc");
    reader
        .set_discovery(TreeDiscovery::ChildrenFiles)
        .set_max_attempts(1);
    let mut changed = false;
    let mut ok = false;
    until(Duration::from_secs(30), || {
        match reader.read_tree(tree.pid()) {
            Ok(totals) => {
                assert!((1..=2).contains(&totals.process_count), "{totals:?}");
                ok = true;
            }
            Err(StatsError::Unavailable {
                reason: UnavailableReason::TreeChanging { .. },
                ..
            }) => changed = true,
            Err(other) => panic!("unexpected {other:?}"),
        }
        (changed && ok).then_some(())
    });
}

#[test]
fn missing_proc_root_is_unsupported() {
    let err = ProcReader::new("/nonexistent-proc-root")
        .read_tree(1)
        .unwrap_err();
    assert_eq!(err.code(), "resource_observation_unsupported");
}

#[test]
fn parent_scan_refuses_a_proc_that_hides_processes() {
    let fake = sample_tree();
    let root = std::fs::canonicalize(fake.root()).unwrap();
    std::fs::create_dir_all(fake.path("self")).unwrap();
    std::fs::write(
        fake.path("self/mountinfo"),
        format!(
            "21 1 0:5 / /dev rw - devtmpfs udev rw\n\
             22 1 0:21 / {} rw,nosuid,nodev,noexec - proc proc rw,hidepid=invisible\n",
            root.display()
        ),
    )
    .unwrap();
    let err = reader(&fake, TreeDiscovery::ParentScan)
        .read_tree(100)
        .unwrap_err();
    assert_eq!(
        err,
        StatsError::Unavailable {
            pid: 100,
            reason: UnavailableReason::ProcessTableHidden
        }
    );
    // Children lists still work: they name every child, hidden or not.
    expect_sample_totals(&reader(&fake, TreeDiscovery::ChildrenFiles));
    // Without hidepid the scan works.
    std::fs::write(
        fake.path("self/mountinfo"),
        format!("22 1 0:21 / {} rw - proc proc rw\n", root.display()),
    )
    .unwrap();
    expect_sample_totals(&reader(&fake, TreeDiscovery::ParentScan));
}

#[test]
fn cached_descriptors_follow_the_tree_between_readings() {
    // One reader across readings: cached descriptors of a killed child must not keep it in
    // the tree, and a new child must appear.
    let tree = RealTree::spawn("sleep 30 & sleep 30 & wait");
    let reader = ProcReader::new("/proc");
    until(Duration::from_secs(10), || {
        reader
            .read_tree(tree.pid())
            .ok()
            .filter(|t| t.process_count == 3)
    });
    let listed =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", tree.pid())).unwrap();
    let victim = listed.split_whitespace().next().unwrap().to_owned();
    std::process::Command::new("kill")
        .args(["-s", "KILL", &victim])
        .status()
        .unwrap();
    until(Duration::from_secs(10), || {
        reader
            .read_tree(tree.pid())
            .ok()
            .filter(|t| t.process_count == 2)
    });
    // The host itself exiting is seen through its cached descriptor too.
    drop(tree);
}
