//! The kit's dispatch through its public surface: a fake provider served with [`serve`] on
//! in-memory lines, so each test sees exactly the response lines a provider binary writes.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

use fabric_config::config::JsonObject;
use fabric_config::environment_ops::ExecRequest;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::ExecOutput;
use serde_json::{Value, json};

use crate::kit::{
    Description, Environment, Failure, Provider, environment_id, exec_beneath, reference_directory,
    serve, settings_root,
};

/// Environments that are directories `<settings.root>/<settings.name>` (so a test can name
/// them before they exist); `stop` is recorded, and fails for a directory named `stuck`.
struct Fake {
    stopped: Rc<RefCell<Vec<String>>>,
}

struct FakeEnv {
    dir: PathBuf,
    stopped: Rc<RefCell<Vec<String>>>,
}

impl Provider for Fake {
    type Env = FakeEnv;
    const PROVIDER: &'static str = "fake";
    const BINARY: &'static str = "fabric-env-fake";

    fn prepare(&self, settings: &JsonObject) -> Result<(String, FakeEnv), Failure> {
        let Some(Value::String(name)) = settings.get("name") else {
            return Err(("invalid_settings", "`settings.name` is required".into()));
        };
        let dir = settings_root(settings)?.join(name);
        for path in [dir.join("workspace"), dir.join("artifacts")] {
            std::fs::create_dir_all(&path).map_err(|e| ("prepare_failed", e.to_string()))?;
        }
        Ok((name.clone(), self.env(dir)))
    }

    fn attach(
        &self,
        reference: &EnvironmentReference,
        _settings: &JsonObject,
    ) -> Result<(String, FakeEnv), Failure> {
        let dir = reference_directory(reference)?;
        Ok((environment_id(&dir), self.env(dir)))
    }
}

impl Fake {
    fn env(&self, dir: PathBuf) -> FakeEnv {
        FakeEnv {
            dir,
            stopped: Rc::clone(&self.stopped),
        }
    }
}

impl Environment for FakeEnv {
    fn dir(&self) -> &Path {
        &self.dir
    }

    /// Sets `owned` and `socket` too, which the kit replaces.
    fn describe(&self, id: &str) -> Description {
        Description {
            resource: [("name".to_owned(), json!(id))].into(),
            workspace: "/w".into(),
            artifacts: "/a".into(),
            connection: [
                ("owned".to_owned(), json!("maybe")),
                ("socket".to_owned(), json!("elsewhere")),
                ("kind".to_owned(), json!("fake")),
            ]
            .into(),
        }
    }

    /// Runs here, in the workspace (no runtime server behind the fake).
    fn exec(&self, request: &ExecRequest) -> Result<ExecOutput, Failure> {
        exec_beneath(&self.dir, Path::new("workspace"), request, [("FAKE", "1")])
    }

    fn stop(&mut self) -> Result<(), Failure> {
        let name = environment_id(&self.dir);
        self.stopped.borrow_mut().push(name.clone());
        if name == "stuck" {
            return Err(("release_failed", "it would not stop".into()));
        }
        Ok(())
    }
}

/// One provider process fed `requests` (each a request without its envelope, numbered
/// `r1`, `r2`, ...) and then EOF: its exit code, response lines and the recorded stops.
fn session(requests: &[Value]) -> (ExitCode, Vec<String>, Vec<String>) {
    let mut input = String::new();
    for (n, request) in requests.iter().enumerate() {
        let mut line = json!({
            "protocol_version": "fabric.environment-provider.v1alpha1",
            "request_id": format!("r{}", n + 1),
        });
        for (key, value) in request.as_object().expect("a request object") {
            line[key] = value.clone();
        }
        input.push_str(&format!("{line}\n"));
    }
    raw_session(&input)
}

fn raw_session(input: &str) -> (ExitCode, Vec<String>, Vec<String>) {
    let fake = Fake {
        stopped: Rc::default(),
    };
    let mut output = Vec::new();
    let code = serve(&fake, input.as_bytes(), &mut output);
    let lines = String::from_utf8(output)
        .expect("utf-8 output")
        .lines()
        .map(str::to_owned)
        .collect();
    let stopped = fake.stopped.borrow().clone();
    (code, lines, stopped)
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).expect("a JSON response line")
}

fn prepare(root: &Path, name: &str) -> Value {
    json!({"operation": "prepare", "settings": {"root": root, "name": name}})
}

fn attach(dir: &Path) -> Value {
    json!({"operation": "attach", "reference": {"provider": "fake", "resource": {"directory": dir}}})
}

fn on(operation: &str, id: &str) -> Value {
    json!({"operation": operation, "environment_id": id})
}

#[test]
fn an_unknown_environment_id_is_environment_not_found_for_every_operation() {
    let (code, lines, stopped) = session(&[
        on("inspect", "nope"),
        json!({"operation": "runtime_control", "environment_id": "nope", "request": {}}),
        json!({"operation": "collect_artifacts", "environment_id": "nope", "paths": ["a"]}),
        json!({"operation": "exec", "environment_id": "nope", "argv": [], "timeout_ms": 10}),
        on("release", "nope"),
    ]);
    assert_eq!(code, ExitCode::SUCCESS);
    assert_eq!(lines.len(), 5);
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(
            line,
            &format!(
                r#"{{"error":{{"code":"environment_not_found","message":"no environment `nope`"}},"request_id":"r{}","status":"failed"}}"#,
                n + 1
            )
        );
    }
    assert!(stopped.is_empty());
}

#[test]
fn release_of_an_owned_environment_stops_it_and_deletes_its_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let (_, lines, stopped) = session(&[
        prepare(root.path(), "mine"),
        on("inspect", "mine"),
        on("release", "mine"),
        on("inspect", "mine"),
    ]);
    let prepared = parse(&lines[0]);
    assert_eq!(prepared["status"], "succeeded");
    assert_eq!(prepared["output"]["environment_id"], "mine");
    assert_eq!(prepared["output"]["connection"]["owned"], true);
    assert_eq!(parse(&lines[1])["output"], prepared["output"]);
    assert_eq!(
        lines[2],
        r#"{"output":{"deleted":true},"request_id":"r3","status":"succeeded"}"#
    );
    assert_eq!(parse(&lines[3])["error"]["code"], "environment_not_found");
    assert_eq!(stopped, ["mine"]);
    assert!(!root.path().join("mine").exists());
}

#[test]
fn a_description_is_the_providers_part_with_directory_socket_and_ownership() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("d");
    let (_, lines, _) = session(&[prepare(root.path(), "d"), attach(&dir)]);
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    for (line, owned) in [(&lines[0], true), (&lines[1], false)] {
        assert_eq!(
            parse(line)["output"],
            json!({
                "environment_id": "d",
                "reference": {
                    "provider": "fake",
                    "resource": {"name": "d", "directory": path(dir.clone())},
                },
                "workspace": "/w",
                "artifacts": "/a",
                "connection": {
                    "kind": "fake",
                    "owned": owned,
                    "socket": path(dir.join("fabric.sock")),
                },
            })
        );
    }
}

#[test]
fn release_of_an_attached_environment_only_forgets_it() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("theirs");
    std::fs::create_dir_all(dir.join("workspace")).expect("workspace");
    let (_, lines, stopped) = session(&[
        attach(&dir),
        on("release", "theirs"),
        on("release", "theirs"),
    ]);
    let attached = parse(&lines[0]);
    assert_eq!(attached["output"]["environment_id"], "theirs");
    assert_eq!(attached["output"]["connection"]["owned"], false);
    assert_eq!(
        lines[1],
        r#"{"output":{"deleted":false},"request_id":"r2","status":"succeeded"}"#
    );
    assert_eq!(parse(&lines[2])["error"]["code"], "environment_not_found");
    assert!(
        stopped.is_empty(),
        "an attached environment is the caller's"
    );
    assert!(dir.join("workspace").is_dir());
}

#[test]
fn a_release_whose_stop_fails_answers_that_failure_and_forgets_the_environment() {
    let root = tempfile::tempdir().expect("tempdir");
    let (_, lines, stopped) = session(&[
        prepare(root.path(), "stuck"),
        on("release", "stuck"),
        on("release", "stuck"),
    ]);
    assert_eq!(
        lines[1],
        r#"{"error":{"code":"release_failed","message":"it would not stop"},"request_id":"r2","status":"failed"}"#
    );
    assert_eq!(parse(&lines[2])["error"]["code"], "environment_not_found");
    assert_eq!(stopped, ["stuck"]);
    assert!(root.path().join("stuck").is_dir(), "nothing deleted");
}

#[test]
fn a_provider_failure_is_answered_as_is_and_adds_no_environment() {
    let (_, lines, _) = session(&[
        json!({"operation": "prepare", "settings": {"root": 5, "name": "x"}}),
        json!({"operation": "attach", "reference": {"provider": "fake", "resource": {}}}),
        on("inspect", "x"),
    ]);
    assert_eq!(
        lines[0],
        r#"{"error":{"code":"invalid_settings","message":"`settings.root` must be a directory path"},"request_id":"r1","status":"failed"}"#
    );
    assert_eq!(parse(&lines[1])["error"]["code"], "invalid_reference");
    assert_eq!(parse(&lines[2])["error"]["code"], "environment_not_found");
}

#[test]
fn exec_runs_the_environments_command_after_checking_argv() {
    let root = tempfile::tempdir().expect("tempdir");
    let (_, lines, _) = session(&[
        prepare(root.path(), "e"),
        json!({"operation": "exec", "environment_id": "e", "argv": [], "timeout_ms": 1000}),
        json!({"operation": "exec", "environment_id": "e", "argv": ["sh", "-c", "pwd; echo $FAKE$X >&2; exit 3"], "env": {"X": "2"}, "timeout_ms": 20000}),
    ]);
    assert_eq!(
        lines[1],
        r#"{"error":{"code":"invalid_environment_request","message":"`argv` must name a program"},"request_id":"r2","status":"failed"}"#
    );
    let output = &parse(&lines[2])["output"];
    assert_eq!(output["exit_code"], 3);
    assert_eq!(output["stderr"], "12\n");
    let workspace = root
        .path()
        .join("e/workspace")
        .canonicalize()
        .expect("path");
    assert_eq!(
        output["stdout"],
        format!("{}\n", workspace.to_string_lossy())
    );
}

#[test]
fn artifacts_and_runtime_control_use_the_environment_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut requests = vec![prepare(root.path(), "a")];
    requests.extend([
        json!({"operation": "collect_artifacts", "environment_id": "a", "paths": ["out.txt", "missing"]}),
        json!({"operation": "collect_artifacts", "environment_id": "a", "paths": ["../a"]}),
        json!({"operation": "runtime_control", "environment_id": "a", "request": {"bad": 1}}),
    ]);
    std::fs::create_dir_all(root.path().join("a/artifacts")).expect("artifacts");
    std::fs::write(root.path().join("a/artifacts/out.txt"), "hi").expect("write");
    let (_, lines, _) = session(&requests);
    assert_eq!(
        parse(&lines[1])["output"],
        json!({"files": [{"path": "out.txt", "content_hex": "6869"}]})
    );
    assert_eq!(parse(&lines[2])["error"]["code"], "invalid_path");
    assert_eq!(parse(&lines[3])["error"]["code"], "invalid_request");
}

#[test]
fn another_protocol_version_is_refused_and_the_loop_goes_on() {
    let input = concat!(
        r#"{"protocol_version":"v0","request_id":"old","operation":"inspect","environment_id":"x"}"#,
        "\n",
        r#"{"protocol_version":"fabric.environment-provider.v1alpha1","request_id":"new","operation":"inspect","environment_id":"x"}"#,
        "\n",
    );
    let (code, lines, _) = raw_session(input);
    assert_eq!(code, ExitCode::SUCCESS);
    assert_eq!(
        lines[0],
        r#"{"error":{"code":"protocol_unsupported","message":"only fabric.environment-provider.v1alpha1"},"request_id":"old","status":"failed"}"#
    );
    assert_eq!(parse(&lines[1])["error"]["code"], "environment_not_found");
}

#[test]
fn a_line_that_is_not_a_request_ends_the_process_unanswered() {
    let (code, lines, _) = raw_session("{not json\n");
    assert_eq!(code, ExitCode::FAILURE);
    assert!(lines.is_empty());
    let (code, lines, _) = raw_session("");
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(lines.is_empty());
}
