//! Environment providers through `fabric_host`'s public API with the real `subprocess`
//! provider (`fabric-env-subprocess`, found through an explicit descriptor) and with fake
//! providers (shell scripts) that break the protocol: every limit and provider error code.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::provider::{
    code, config_with, descriptor, fake_descriptor, prepared, subprocess_descriptor, typed,
};
use fabric_config::FabricConfig;
use fabric_config::handles::EnvironmentReference;
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

fn config_for(dir: &Path, provider: &str, descriptor: &Path) -> FabricConfig {
    let config = config_with(dir, "provider", json!({}), provider, descriptor, json!({}));
    typed(dir, config).0
}

fn subprocess(dir: &Path) -> (FabricConfig, RunOptions) {
    let root = dir.join("environments");
    std::fs::create_dir(&root).expect("mkdir");
    let descriptor = subprocess_descriptor(dir);
    let environment = json!({"workspace": "relative/ws", "settings": {"root": root}});
    let config = config_with(
        dir,
        "provider",
        json!({}),
        "subprocess",
        &descriptor,
        environment,
    );
    typed(dir, config)
}

#[test]
fn the_subprocess_provider_prepares_attaches_and_releases_with_every_limit_enforced() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let (config, options) = subprocess(dir.path());
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options)
        .expect("prepare");
    let info = environment.info();
    assert_eq!(info.provider, "subprocess");
    assert_eq!(
        info.ownership,
        fabric_config::config::EnvironmentOwnership::FabricOwned
    );
    let reference = environment.reference();
    let directory = PathBuf::from(reference.resource["directory"].as_str().expect("directory"));
    assert!(directory.starts_with(dir.path().join("environments")));
    // The workspace is the provider's path in the environment, never base_dir/relative/ws.
    let workspace = info.workspace.clone().expect("workspace");
    assert_eq!(PathBuf::from(&workspace), directory.join("workspace"));
    assert!(
        environment
            .inspect()
            .expect("inspect")
            .environment_id
            .starts_with("fabric-env-")
    );

    // exec, and its output limit: each stream is cut at 1 MiB and flagged
    let hello = environment
        .exec(
            &["sh".into(), "-c".into(), "echo hi; pwd".into()],
            Duration::from_secs(10),
        )
        .expect("exec");
    assert_eq!(hello.stdout, format!("hi\n{workspace}\n"));
    assert_eq!(hello.exit_code, Some(0));
    let big = "head -c 3200000 /dev/zero | tr '\\0' a".to_owned();
    let cut = environment
        .exec(&["sh".into(), "-c".into(), big], Duration::from_secs(20))
        .expect("exec over the limit");
    assert_eq!(cut.stdout.len(), 1024 * 1024);
    assert!(cut.stdout_truncated && !cut.stderr_truncated);

    // a request above 256 KiB is refused unsent and the provider stays usable
    let error = environment
        .exec(
            &["echo".into(), "x".repeat(300 * 1024)],
            Duration::from_secs(10),
        )
        .expect_err("request too large");
    assert_eq!(code(error), "provider_request_too_large");
    assert_eq!(
        environment
            .exec(&["echo".into(), "still".into()], Duration::from_secs(10))
            .expect("exec after refusal")
            .stdout,
        "still\n"
    );

    // collect_artifacts and its limits: 16 files, 256 KiB each, 512 KiB in total
    let artifacts = directory.join("artifacts");
    for index in 0..17 {
        std::fs::write(
            artifacts.join(format!("f{index}.txt")),
            format!("file {index}"),
        )
        .expect("write");
    }
    std::fs::write(artifacts.join("big.bin"), vec![7u8; 300 * 1024]).expect("write");
    for index in 0..3 {
        std::fs::write(
            artifacts.join(format!("mid{index}.bin")),
            vec![1u8; 200 * 1024],
        )
        .expect("write");
    }
    let files = environment
        .collect_artifacts(&["f0.txt".into(), "f1.txt".into(), "missing.txt".into()])
        .expect("collect")
        .files;
    assert_eq!(
        files,
        vec![
            ("f0.txt".to_owned(), b"file 0".to_vec()),
            ("f1.txt".to_owned(), b"file 1".to_vec())
        ]
    );
    let seventeen: Vec<String> = (0..17).map(|i| format!("f{i}.txt")).collect();
    // a file above 256 KiB is refused on its own by the bundled providers (`path_refused`)
    let big = environment
        .collect_artifacts(&["big.bin".into(), "f0.txt".into()])
        .expect("collect");
    assert_eq!(big.files, vec![("f0.txt".to_owned(), b"file 0".to_vec())]);
    assert_eq!(big.refused[0].reason, "too_large");
    for paths in [
        seventeen,
        vec!["mid0.bin".into(), "mid1.bin".into(), "mid2.bin".into()],
    ] {
        let error = environment
            .collect_artifacts(&paths)
            .expect_err("over a limit");
        assert_eq!(code(error), "provider_output_too_large", "{paths:?}");
    }
    let error = environment
        .collect_artifacts(&["../escape".into()])
        .expect_err("escape");
    assert_eq!(code(error), "provider_error");

    // links, FIFOs and oversized files planted in artifacts/ are refused one by one
    support::provider::assert_artifact_escapes_refused(&environment, &artifacts);

    // runtime_control reaches the environment's own runtime server
    let response = environment
        .runtime_control(
            json!({"interface_version": 2, "operation": "check"}),
            Duration::from_secs(10),
        )
        .expect("runtime_control");
    assert_eq!(response["status"], "succeeded", "{response}");

    // a runtime starts through that server (tests/all/env_runtime.rs covers it in depth)
    let runtime = fabric
        .start_runtime_in(&config, &environment, &options)
        .expect("start");
    assert!(runtime.is_remote());
    assert!(runtime.stop().error.is_none());

    // attach keeps the caller's ownership; release only detaches
    let attached = fabric
        .attach_environment(&config, &reference, &options)
        .expect("attach");
    assert!(attached.info().attached);
    assert_eq!(
        attached.info().ownership,
        fabric_config::config::EnvironmentOwnership::CallerOwned
    );
    fabric.release_environment(&attached).expect("detach");
    assert!(
        directory.join("workspace").is_dir(),
        "detach must not delete"
    );
    let error = attached
        .exec(&["true".into()], Duration::from_secs(5))
        .expect_err("released");
    assert_eq!(code(error), "environment_released");

    // releasing the prepared environment deletes it (server stopped first)
    fabric.release_environment(&environment).expect("release");
    assert!(!directory.exists());
    let gone = EnvironmentReference {
        provider: "subprocess".into(),
        resource: reference.resource.clone(),
    };
    let error = fabric
        .attach_environment(&config, &gone, &options)
        .expect_err("gone");
    assert_eq!(code(error), "provider_error");
}

fn fake(dir: &Path, behaviour: &str, attach: bool) -> (FabricConfig, RunOptions) {
    let descriptor = fake_descriptor(dir, behaviour, attach);
    (
        config_for(dir, "fake", &descriptor),
        RunOptions::with_base_dir(dir),
    )
}

#[test]
fn provider_failures_have_stable_codes_and_make_the_provider_terminal() {
    support::ensure_scripted_adapter();
    let fabric = Fabric::new();
    let cases = [
        ("garbage", "provider_protocol_error", true),
        ("other", "provider_protocol_error", true),
        ("exit", "provider_crashed", true),
        ("silent", "provider_timeout", true),
        ("fail", "provider_error", false),
    ];
    for (behaviour, expected, terminal) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (config, options) = fake(dir.path(), behaviour, false);
        let environment = fabric
            .prepare_environment(&config, &options)
            .expect("prepare");
        let error = environment
            .exec(&["true".into()], Duration::from_millis(100))
            .expect_err(behaviour);
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.code, expected, "{behaviour}: {info:?}");
        if behaviour == "fail" {
            assert_eq!(info.metadata["provider_code"], "quota");
        } else {
            assert!(
                info.metadata["stderr_tail"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("fake provider"),
                "{behaviour}: {info:?}"
            );
        }
        // after an uncertain outcome nothing is resent: the provider is terminal
        let next = environment.exec(&["true".into()], Duration::from_millis(100));
        match (terminal, next) {
            (true, Err(error)) => assert_eq!(code(error), "provider_failed", "{behaviour}"),
            (false, Err(error)) => assert_eq!(code(error), "provider_error", "{behaviour}"),
            (_, Ok(_)) => panic!("{behaviour}: the provider answered after a failure"),
        }
    }
}

#[test]
fn discovery_and_descriptor_errors_name_the_field() {
    support::ensure_scripted_adapter();
    let fabric = Fabric::new();
    let dir = tempfile::tempdir().expect("tempdir");

    let (config, options) = fake(dir.path(), "fail", false);
    let reference = EnvironmentReference {
        provider: "fake".into(),
        resource: Default::default(),
    };
    let error = fabric
        .attach_environment(&config, &reference, &options)
        .expect_err("no attach");
    assert_eq!(code(error), "environment_attach_unsupported");

    let nowhere = config_for(dir.path(), "nowhere", &dir.path().join("absent.json"));
    let info = fabric_config::ErrorInfo::from(
        fabric
            .prepare_environment(&nowhere, &options)
            .expect_err("no descriptor"),
    );
    assert_eq!(
        (info.code.as_str(), info.metadata["path"].as_str()),
        (
            "environment_provider_not_found",
            Some("environment.provider")
        )
    );

    let bad = descriptor(dir.path(), "bad", json!(["true"]), true);
    let mut text: Value =
        serde_json::from_str(&std::fs::read_to_string(&bad).expect("read")).expect("json");
    text["protocol_version"] = json!("fabric.environment-provider.v0");
    std::fs::write(&bad, text.to_string()).expect("write");
    let bad_config = config_for(dir.path(), "bad", &bad);
    let error = fabric
        .prepare_environment(&bad_config, &options)
        .expect_err("bad descriptor");
    assert_eq!(code(error), "invalid_provider_descriptor");

    let crash = descriptor(
        dir.path(),
        "crash",
        json!(["sh", "-c", "echo boom >&2; exit 3"]),
        true,
    );
    let crash_config = config_for(dir.path(), "crash", &crash);
    let info = fabric_config::ErrorInfo::from(
        fabric
            .prepare_environment(&crash_config, &options)
            .expect_err("crash"),
    );
    assert_eq!(info.code, "provider_crashed");
    assert!(
        info.metadata["stderr_tail"]
            .as_str()
            .unwrap_or_default()
            .contains("boom"),
        "{info:?}"
    );
}

/// The children of `pid` (`/proc/<pid>/task/*/children`).
/// Waits (at most 10 s) until `pid` is gone or a zombie.
fn wait_dead(pid: u32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit(") ").next().map(|rest| rest.starts_with('Z')));
        if state.unwrap_or(true) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{pid} never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[test]
fn a_server_killed_mid_start_leaves_the_marker_and_the_next_server_reports_cleanup_unconfirmed() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let (config, options) = subprocess(dir.path());
    let fabric = Fabric::new();
    let (environment, directory) = prepared(&fabric, &config, &options);
    let server: u32 = std::fs::read_to_string(directory.join("server.pid"))
        .expect("server.pid")
        .trim()
        .parse()
        .expect("pid");

    // A start the scripted adapter holds for 20 s, through runtime_control.
    let descriptor = support::repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    let start = json!({
        "interface_version": 2,
        "operation": "start",
        "agent": "slow",
        "config": {
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "slow"},
            "harness": {"adapter_id": "fabric.scripted", "settings": {"start_delay_ms": 20000}},
            "discovery": {"local_paths": [descriptor]},
        },
    });
    let starting = std::sync::Arc::clone(&environment);
    let thread =
        std::thread::spawn(move || starting.runtime_control(start, Duration::from_secs(60)));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while children(server).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the adapter host never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let hosts = children(server);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let response = thread
        .join()
        .expect("thread")
        .expect("the provider answers");
    assert_eq!(response["status"], "failed", "{response}");
    assert_eq!(response["error"]["effects"], "unknown", "{response}");
    assert!(
        directory.join("fabric.unclean").is_file(),
        "the marker stays"
    );

    // The killed server and the hosts it started end (their parent-death signal) before the
    // next server looks: until then the old lock can still be held.
    for pid in std::iter::once(server).chain(hosts) {
        wait_dead(pid);
    }

    // The next server in that directory refuses: cleanup is unconfirmed.
    let next = std::process::Command::new(env!("CARGO_BIN_EXE_fabric-agent-ctl"))
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", directory.join("fabric.sock"))
        .output()
        .expect("serve");
    assert_eq!(next.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&next.stderr).contains("cleanup_unconfirmed"),
        "{next:?}"
    );

    // Nothing answers in that environment any more: attach says so; release still deletes it.
    let error = fabric
        .attach_environment(&config, &environment.reference(), &options)
        .expect_err("attach");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(
        (info.code.as_str(), info.metadata["provider_code"].as_str()),
        ("provider_error", Some("environment_not_found"))
    );
    fabric.release_environment(&environment).expect("release");
    assert!(!directory.exists());
}

#[test]
fn the_subprocess_provider_codes_are_the_errors_own_through_fabric_env_prepare() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = subprocess_descriptor(dir.path());
    let long_root = dir.path().join("r".repeat(100));
    std::fs::create_dir(&long_root).expect("mkdir");
    let cases = [
        (json!({"root": 5}), "invalid_settings", 2, "settings.root"),
        (
            json!({"root": long_root}),
            "socket_path_too_long",
            2,
            "settings.root",
        ),
        (
            json!({"root": dir.path().join("absent")}),
            "prepare_failed",
            3,
            "cannot create",
        ),
    ];
    for (settings, expected, exit, named) in cases {
        let environment = json!({"settings": settings});
        config_with(
            dir.path(),
            "provider",
            json!({}),
            "subprocess",
            &descriptor,
            environment,
        );
        let config = dir.path().join("fabric.json");
        let output = support::fabric(&["env", "prepare", config.to_str().expect("utf-8")]);
        assert_eq!(output.status.code(), Some(exit), "{expected}: {output:?}");
        let error = &support::stdout_json(&output)["error"];
        assert_eq!(error["code"], expected, "{error}");
        assert_eq!(error["metadata"]["provider_code"], expected, "{error}");
        assert_eq!(error["stage"], "prepare", "{error}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains(named), "{message}");
    }
    assert_eq!(
        std::fs::read_dir(&long_root).expect("root").count(),
        0,
        "a refused prepare leaves nothing"
    );
}
