//! The runtime server's `exec` over the raw socket (the bridge operation behind a provider
//! environment's caller `exec`): the command runs beneath the server's `workspace/` in its
//! own process group with its deadline and bounds; a program that cannot start is
//! `exec_failed`, a bad member or a refused working directory names the request field;
//! `fabric-agent-ctl exec` is no command.

use std::path::Path;
use std::time::Instant;

use crate::support::agent_ctl::{AGENT_CTL, Serve, code, ctl_at, raw, response};
use serde_json::{Value, json};

/// One `exec` request line with `request` as its members.
fn exec(socket: &Path, request: Value) -> Value {
    let line = json!({"interface_version": 2, "operation": "exec", "request": request});
    raw(socket, format!("{line}\n").as_bytes())
}

/// The failure of `answer`: its code and message, after checking it changed nothing.
fn failure(answer: &Value) -> (&str, &str) {
    assert_eq!(answer["status"], "failed", "{answer}");
    assert_eq!(answer["error"]["effects"], "none", "{answer}");
    (
        code(answer).expect("code"),
        answer["error"]["message"].as_str().expect("message"),
    )
}

#[test]
fn the_server_runs_exec_in_its_workspace_with_deadline_and_bounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let socket = dir.path().join("fabric.sock");
    let workspace = dir
        .path()
        .join("workspace")
        .canonicalize()
        .expect("workspace");

    let ran = exec(
        &socket,
        json!({"argv": ["sh", "-c", "pwd; echo $GREETING >&2; cat; exit 4"],
               "env": {"GREETING": "hi"}, "stdin_hex": hex::encode("in\n")}),
    );
    assert_eq!(
        (&ran["operation"], &ran["status"], &ran["changed"]),
        (&json!("exec"), &json!("succeeded"), &Value::Null),
        "{ran}"
    );
    let result = &ran["result"];
    assert_eq!(result["exit_code"], 4, "{ran}");
    assert_eq!(result["stdout"], format!("{}\nin\n", workspace.display()));
    assert_eq!(result["stderr"], "hi\n");

    let cut = exec(
        &socket,
        json!({"argv": ["sh", "-c", "yes | head -c 5000"], "output_limit_bytes": 6}),
    );
    assert_eq!(
        (&cut["result"]["stdout"], &cut["result"]["stdout_truncated"]),
        (&json!("y\ny\ny\n"), &json!(true)),
        "{cut}"
    );

    // the deadline kills the whole group: the backgrounded sleep too (else the pipe stays
    // open and the answer waits for it)
    let began = Instant::now();
    let slow = exec(
        &socket,
        json!({"argv": ["sh", "-c", "sleep 30 & sleep 30"], "timeout_seconds": 0.3}),
    );
    assert_eq!(
        (&slow["result"]["timed_out"], &slow["result"]["exit_code"]),
        (&json!(true), &Value::Null),
        "{slow}"
    );
    assert!(began.elapsed().as_secs() < 10, "{:?}", began.elapsed());

    let missing = exec(&socket, json!({"argv": ["no-such-program-41d0"]}));
    let (failed, message) = failure(&missing);
    assert_eq!(failed, "exec_failed", "{missing}");
    assert!(message.contains("`request.argv`"), "{missing}");

    std::os::unix::fs::symlink("/etc", dir.path().join("workspace/etc")).expect("symlink");
    let cases = [
        (
            json!({"argv": ["true"], "cwd": "etc"}),
            "path_refused",
            "`request.cwd`",
        ),
        (
            json!({"argv": ["true"], "timeout_seconds": 0}),
            "invalid_request",
            "`request.timeout_seconds`",
        ),
        (json!({"argv": []}), "invalid_request", "`request.argv`"),
        (
            json!({"argv": ["true"], "shell": true}),
            "invalid_request",
            "`request`",
        ),
    ];
    for (request, expected, field) in cases {
        let answer = exec(&socket, request);
        let (failed, message) = failure(&answer);
        assert_eq!(failed, expected, "{answer}");
        assert!(message.contains(field), "{answer}");
    }

    // the bridge command has no `exec`: it is the providers' operation
    let output = ctl_at(
        AGENT_CTL,
        dir.path(),
        &["exec", "--request", "-"],
        Some(b"{}"),
    );
    assert!(!output.status.success());
    let refused = response(&output);
    assert_eq!(code(&refused), Some("invalid_request"), "{refused}");
    drop(serve);
}
