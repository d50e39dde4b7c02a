//! The container's policy from `environment.settings`: `network`, `resources` and
//! `read_only_root`, mapped to `podman run` options. Invalid values are `invalid_settings`
//! naming the setting.
//!
//! - `network`: `none` (default: no network at all), `bridge` or `host` (explicit opt-in
//!   to the engine's network). `loopback` (only allow-listed host loopback ports) is not
//!   offered by this provider yet and is refused naming `settings.network`.
//! - `resources`: `cpus` (a number above 0), `memory_mib` (whole MiB, at least 6),
//!   `pids` (at least 8), `tmpfs_mib` (a size-capped tmpfs at `/tmp`).
//! - `read_only_root`: `true` mounts the image's root file system read-only (`/sandbox`
//!   stays writable; `/tmp` too when `resources.tmpfs_mib` is set).

use fabric_config::codes;
use fabric_config::config::JsonObject;
use fabric_sandbox::kit::Failure;
use serde_json::Value;

/// The `podman run` options of `settings` (the network's included).
pub fn run_options(settings: &JsonObject) -> Result<Vec<String>, Failure> {
    let mut options = vec!["--network".to_owned(), network(settings)?.to_owned()];
    if let Some(resources) = settings.get("resources") {
        let Value::Object(resources) = resources else {
            return Err(invalid("resources", "an object"));
        };
        for (key, value) in resources {
            let (flag, value) = match key.as_str() {
                "cpus" => match value.as_f64() {
                    Some(cpus) if cpus > 0.0 => ("--cpus", cpus.to_string()),
                    _ => return Err(invalid("resources.cpus", "a number above 0")),
                },
                "memory_mib" => ("--memory", format!("{}m", whole(value, key, 6)?)),
                "pids" => ("--pids-limit", whole(value, key, 8)?.to_string()),
                "tmpfs_mib" => ("--tmpfs", format!("/tmp:size={}m", whole(value, key, 1)?)),
                _ => {
                    return Err((
                        codes::INVALID_SETTINGS,
                        format!(
                            "`settings.resources.{key}` is unknown (cpus, memory_mib, pids, tmpfs_mib)"
                        ),
                    ));
                }
            };
            options.push(flag.to_owned());
            options.push(value);
        }
    }
    match settings.get("read_only_root") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => options.push("--read-only".to_owned()),
        Some(_) => return Err(invalid("read_only_root", "a boolean")),
    }
    Ok(options)
}

fn network(settings: &JsonObject) -> Result<&'static str, Failure> {
    match settings.get("network") {
        None => Ok("none"),
        Some(Value::String(value)) => match value.as_str() {
            "none" => Ok("none"),
            "bridge" => Ok("bridge"),
            "host" => Ok("host"),
            "loopback" => Err((
                codes::INVALID_SETTINGS,
                "`settings.network`: `loopback` is not supported by the container provider yet (use `none`, `bridge` or `host`)".into(),
            )),
            _ => Err(invalid("network", "`none`, `bridge` or `host`")),
        },
        Some(_) => Err(invalid("network", "`none`, `bridge` or `host`")),
    }
}

/// A whole number of at least `least` at `settings.resources.<key>`.
fn whole(value: &Value, key: &str, least: u64) -> Result<u64, Failure> {
    value.as_u64().filter(|n| *n >= least).ok_or_else(|| {
        (
            codes::INVALID_SETTINGS,
            format!("`settings.resources.{key}` must be a whole number of at least {least}"),
        )
    })
}

fn invalid(setting: &str, expected: &str) -> Failure {
    (
        codes::INVALID_SETTINGS,
        format!("`settings.{setting}` must be {expected}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(settings: Value) -> Result<Vec<String>, Failure> {
        let Value::Object(map) = settings else {
            unreachable!()
        };
        run_options(&map.into_iter().collect())
    }

    #[test]
    fn settings_map_to_run_options() {
        assert_eq!(options(json!({})).unwrap(), ["--network", "none"]);
        let all = json!({"network": "host", "read_only_root": true,
            "resources": {"cpus": 1.5, "memory_mib": 64, "pids": 32, "tmpfs_mib": 16}});
        assert_eq!(
            options(all).unwrap(),
            [
                "--network",
                "host",
                "--cpus",
                "1.5",
                "--memory",
                "64m",
                "--pids-limit",
                "32",
                "--tmpfs",
                "/tmp:size=16m",
                "--read-only"
            ]
        );
    }

    #[test]
    fn invalid_values_name_the_setting() {
        for (settings, named) in [
            (json!({"network": "wide"}), "settings.network"),
            (json!({"network": "loopback"}), "settings.network"),
            (
                json!({"resources": {"memory_mib": "64"}}),
                "settings.resources.memory_mib",
            ),
            (json!({"resources": {"pids": 2}}), "settings.resources.pids"),
            (json!({"resources": {"cpus": 0}}), "settings.resources.cpus"),
            (json!({"resources": {"gpus": 1}}), "settings.resources.gpus"),
            (json!({"resources": []}), "settings.resources"),
            (json!({"read_only_root": "yes"}), "settings.read_only_root"),
        ] {
            let (code, message) = options(settings).unwrap_err();
            assert_eq!(code, codes::INVALID_SETTINGS);
            assert!(message.contains(&format!("`{named}")), "{message}");
        }
    }
}
