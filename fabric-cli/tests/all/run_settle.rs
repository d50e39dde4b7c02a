//! `fabric run` prints the result as soon as `run()` returns (at the host's answer to
//! `stop`), then waits before exiting for the background part of the stop: the host's exit
//! and reap and its temporary FABRIC_HOME's removal (nothing left to PR_SET_PDEATHSIG or
//! the sweeper).

use std::path::Path;

use crate::support::{self, ensure_scripted_adapter, fabric, stdout_json};
use serde_json::json;

#[test]
fn run_exits_after_the_lingering_host_ended_and_its_home_is_removed() {
    ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    // The host answers `stop`, then keeps running for 0.5 s before exiting on its own.
    let config = support::scripted_config(dir.path(), "cli-settle", json!({"exit_delay_ms": 500}));
    let output = fabric(&["run", &config, "--input", "x"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["status"], "succeeded", "{result}");
    let pid = result["metadata"]["host_pid"].as_u64().expect("host_pid");
    let home = result["metadata"]["fabric_home"]
        .as_str()
        .expect("fabric_home");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the host outlived `fabric run`"
    );
    assert!(
        !Path::new(home).exists(),
        "the temporary FABRIC_HOME outlived `fabric run`"
    );
}
