//! The container's policy from `environment.settings`: `network`, `resources` and
//! `read_only_root`, mapped to `podman run` options. Invalid values are `invalid_settings`
//! naming the setting.
//!
//! - `network`: `none` (default: no network at all), `bridge` or `host` (explicit opt-in
//!   to the engine's network), or `{"mode": "loopback", "allow_ports": [PORT, ...]}`: no
//!   network either, but each allow-listed port of the host's loopback answers on the
//!   container's `127.0.0.1:PORT` through a relay over a unix socket in the environment
//!   directory (`fabric_sandbox::kit::relay`; the container's half is started by
//!   `fabric-agent-ctl serve` from `FABRIC_LOOPBACK_PORTS`).
//! - `resources`: `cpus` (a number above 0), `memory_mib` (whole MiB, at least 6),
//!   `pids` (at least 8), `tmpfs_mib` (a size-capped tmpfs at `/tmp`).
//! - `read_only_root`: `true` mounts the image's root file system read-only (`/sandbox`
//!   stays writable; `/tmp` too when `resources.tmpfs_mib` is set).

use fabric_config::codes;
use fabric_config::config::JsonObject;
use fabric_sandbox::kit::Failure;
use fabric_sandbox::kit::relay::LOOPBACK_PORTS_VAR;
use serde_json::Value;

/// The policy of `settings`.
pub struct Policy {
    /// `podman run` options (the network's first).
    pub options: Vec<String>,
    /// The host loopback ports relayed into the container (`network` mode `loopback`).
    pub loopback_ports: Vec<u16>,
}

/// The `podman run` options of `settings` (the network's included) and the loopback ports.
pub fn run_options(settings: &JsonObject) -> Result<Policy, Failure> {
    let (mode, loopback_ports) = network(settings)?;
    let mut options = vec!["--network".to_owned(), mode.to_owned()];
    if !loopback_ports.is_empty() {
        let ports: Vec<String> = loopback_ports.iter().map(u16::to_string).collect();
        options.push("-e".to_owned());
        options.push(format!("{LOOPBACK_PORTS_VAR}={}", ports.join(",")));
    }
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
    Ok(Policy {
        options,
        loopback_ports,
    })
}

const NETWORKS: &str =
    "`none`, `bridge`, `host` or {\"mode\": \"loopback\", \"allow_ports\": [...]}";

/// The engine's network mode and the relayed loopback ports.
fn network(settings: &JsonObject) -> Result<(&'static str, Vec<u16>), Failure> {
    match settings.get("network") {
        None => Ok(("none", Vec::new())),
        Some(Value::String(value)) => match value.as_str() {
            "none" => Ok(("none", Vec::new())),
            "bridge" => Ok(("bridge", Vec::new())),
            "host" => Ok(("host", Vec::new())),
            "loopback" => Err(invalid(
                "network",
                "an object naming its ports for `loopback`: {\"mode\": \"loopback\", \"allow_ports\": [...]}",
            )),
            _ => Err(invalid("network", NETWORKS)),
        },
        Some(Value::Object(network)) => {
            if let Some(key) = network
                .keys()
                .find(|k| !["mode", "allow_ports"].contains(&k.as_str()))
            {
                return Err((
                    codes::INVALID_SETTINGS,
                    format!("`settings.network.{key}` is unknown (mode, allow_ports)"),
                ));
            }
            if network.get("mode").and_then(Value::as_str) != Some("loopback") {
                return Err(invalid(
                    "network.mode",
                    "`loopback` (the other modes are strings)",
                ));
            }
            let expected = "a non-empty list of distinct ports (1 to 65535)";
            let Some(Value::Array(ports)) = network.get("allow_ports") else {
                return Err(invalid("network.allow_ports", expected));
            };
            let mut allowed = Vec::new();
            for port in ports {
                match port.as_u64().and_then(|p| u16::try_from(p).ok()) {
                    Some(port) if port > 0 && !allowed.contains(&port) => allowed.push(port),
                    _ => return Err(invalid("network.allow_ports", expected)),
                }
            }
            if allowed.is_empty() {
                return Err(invalid("network.allow_ports", expected));
            }
            Ok(("none", allowed))
        }
        Some(_) => Err(invalid("network", NETWORKS)),
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
        run_options(&map.into_iter().collect()).map(|policy| policy.options)
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
    fn loopback_has_no_network_and_names_its_ports_to_the_container() {
        let policy = run_options(
            &[(
                "network".to_owned(),
                json!({"mode": "loopback", "allow_ports": [8080, 11434]}),
            )]
            .into_iter()
            .collect(),
        )
        .unwrap();
        assert_eq!(
            policy.options,
            [
                "--network",
                "none",
                "-e",
                "FABRIC_LOOPBACK_PORTS=8080,11434"
            ]
        );
        assert_eq!(policy.loopback_ports, [8080, 11434]);
    }

    #[test]
    fn invalid_values_name_the_setting() {
        for (settings, named) in [
            (json!({"network": "wide"}), "settings.network"),
            (json!({"network": "loopback"}), "settings.network"),
            (
                json!({"network": {"mode": "loopback"}}),
                "settings.network.allow_ports",
            ),
            (
                json!({"network": {"mode": "loopback", "allow_ports": [0]}}),
                "settings.network.allow_ports",
            ),
            (
                json!({"network": {"mode": "loopback", "allow_ports": [8080, 8080]}}),
                "settings.network.allow_ports",
            ),
            (
                json!({"network": {"mode": "bridge", "allow_ports": [80]}}),
                "settings.network.mode",
            ),
            (
                json!({"network": {"mode": "loopback", "allow_ports": [80], "dns": 1}}),
                "settings.network.dns",
            ),
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
