//! `fabric doctor` warns on config paths that resolve outside the base directory (issue 21
//! item 6): `..`, absolute paths and symlinks leading out. The paths stay valid (the
//! author's choice) and the report is a warning, not a failure.

use crate::support;

use crate::support::{fabric, stdout_json};
use serde_json::{Value, json};

fn outside_paths(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["code"] == "path_outside_base_dir")
        .map(|check| {
            assert_eq!(check["status"], "warn", "{check}");
            check["path"].as_str().expect("path").to_owned()
        })
        .collect()
}

#[test]
fn doctor_warns_on_paths_outside_the_base_dir() {
    let root = tempfile::tempdir().expect("tempdir");
    let base = root.path().join("job");
    for dir in ["job/skills/review", "job/ws", "outside/skill", "outside/ws"] {
        std::fs::create_dir_all(root.path().join(dir)).expect("dir");
    }
    std::os::unix::fs::symlink(
        root.path().join("outside/skill"),
        base.join("skills/escape"),
    )
    .expect("symlink");
    let config_path = support::scripted_config(&base, "doctor-paths", json!({}));
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).expect("read")).expect("json");
    config["skills"] = json!({"paths": [
        "skills/review",
        "../outside/skill",
        "skills/escape",
        "skills/review/../../skills/review"
    ]});
    config["environment"] = json!({
        "workspace": root.path().join("outside/ws").to_str().expect("utf8"),
        "artifacts": "out/artifacts"
    });
    std::fs::write(&config_path, config.to_string()).expect("write");

    let output = fabric(&["doctor", &config_path]);
    let report = stdout_json(&output);
    assert_eq!(
        output.status.code(),
        Some(0),
        "a warning, not a failure: {report}"
    );
    assert_eq!(
        outside_paths(&report),
        [
            "skills.paths[1]",
            "skills.paths[2]",
            "environment.workspace"
        ],
        "{report}"
    );
    // Warnings name the field, never the path value.
    let root_text = root.path().to_str().expect("utf8");
    for check in report["checks"].as_array().expect("checks") {
        if check["code"] == "path_outside_base_dir" {
            let message = check["message"].as_str().expect("message");
            assert!(
                !message.contains(root_text) && !message.contains("outside/"),
                "{message}"
            );
        }
    }

    // The same config with everything inside the base dir: no warning.
    config["skills"] = json!({"paths": ["skills/review"]});
    config["environment"] = json!({"workspace": "ws"});
    std::fs::write(&config_path, config.to_string()).expect("write");
    let output = fabric(&["doctor", &config_path]);
    assert!(outside_paths(&stdout_json(&output)).is_empty());
}
