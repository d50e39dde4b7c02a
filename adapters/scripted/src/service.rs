//! Service mode: a key-value store shared by every runtime connected to one service.
//!
//! - `prepare`: the service host creates `scripted-kv.json` (`{}`, mode 0600) in its
//!   FABRIC_HOME and writes `{"store": <path>}` to `service.connection_path`; it answers
//!   `{adapter_id: "fabric.scripted", service_type: "scripted_kv", connection: {store},
//!   metadata: {ready: true}}` and removes the store at `stop`.
//! - `attach`: `reference.connection.store` names an existing store (another service's);
//!   the host answers the same shape and leaves the store alone at `stop`.
//! - `connect`: the runtime reads the store path from `connection_path`.
//!
//! A connected runtime's invocation with `request.context.scripted_kv = {"op": "get" |
//! "set" | "incr", "key": K, "value": V}` works on the store and answers
//! `output.response` = the key's value after the operation (JSON `null` when unset). Each
//! update holds a lock directory (`<store>.lock`, created atomically) and replaces the file
//! by rename, so concurrent runtimes never lose an update.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::wire::LifecycleError;

const STORE_FILE: &str = "scripted-kv.json";
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// A host's link to the store.
#[derive(Debug)]
pub struct Link {
    store: PathBuf,
    /// The service host that created the store (removes it at stop).
    owned: bool,
}

fn error(code: &str, message: impl Into<String>) -> LifecycleError {
    LifecycleError::new(code, message)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())
}

/// Handles the start payload's `service` member. Returns the link (if any) and the start
/// output (service information for `prepare`/`attach`, null otherwise).
pub fn start(payload: &Map<String, Value>) -> Result<(Option<Link>, Value), LifecycleError> {
    let Some(service) = payload.get("service") else {
        return Ok((None, Value::Null));
    };
    let operation = service.get("operation").and_then(Value::as_str);
    let connection_path = service
        .get("connection_path")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| {
            error(
                "scripted_service_invalid",
                "service.connection_path is required",
            )
        })?;
    let io = |e: std::io::Error| error("scripted_service_io", format!("service store: {e}"));
    let (link, store) = match operation {
        Some("connect") => {
            let text = fs::read_to_string(&connection_path).map_err(io)?;
            let store = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("store").and_then(Value::as_str).map(PathBuf::from))
                .ok_or_else(|| {
                    error(
                        "scripted_service_invalid",
                        "the connection file names no store",
                    )
                })?;
            return Ok((
                Some(Link {
                    store,
                    owned: false,
                }),
                Value::Null,
            ));
        }
        Some("prepare") => {
            let home = std::env::var_os("FABRIC_HOME")
                .map(PathBuf::from)
                .ok_or_else(|| error("scripted_service_invalid", "FABRIC_HOME is not set"))?;
            let store = home.join(STORE_FILE);
            write_private(&store, "{}").map_err(io)?;
            (
                Link {
                    store: store.clone(),
                    owned: true,
                },
                store,
            )
        }
        Some("attach") => {
            let store = service
                .pointer("/reference/connection/store")
                .and_then(Value::as_str)
                .map(PathBuf::from)
                .filter(|p| p.is_file())
                .ok_or_else(|| {
                    error(
                        "scripted_service_unreachable",
                        "reference.connection.store must name an existing store",
                    )
                })?;
            (
                Link {
                    store: store.clone(),
                    owned: false,
                },
                store,
            )
        }
        _ => {
            return Err(error(
                "scripted_service_invalid",
                "service.operation must be prepare, attach or connect",
            ));
        }
    };
    let connection = json!({"store": store.to_string_lossy()});
    write_private(&connection_path, &connection.to_string()).map_err(io)?;
    let info = json!({
        "adapter_id": "fabric.scripted",
        "service_type": "scripted_kv",
        "connection": connection,
        "metadata": {"ready": true},
    });
    Ok((Some(link), info))
}

impl Link {
    /// At `stop`: the owning service removes its store.
    pub fn stop(&self) {
        if self.owned {
            let _ = fs::remove_file(&self.store);
        }
    }

    /// Applies one `scripted_kv` operation; answers the key's value afterwards.
    pub fn apply(&self, op: &Value) -> Result<Value, LifecycleError> {
        let invalid = |m: &str| error("scripted_kv_invalid", m.to_owned());
        let verb = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("op is required"))?;
        let key = op
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("key must be a string"))?
            .to_owned();
        let value = op.get("value").cloned().unwrap_or(Value::Null);
        if !matches!(verb, "get" | "set" | "incr") {
            return Err(invalid("op must be get, set or incr"));
        }
        self.update(|map| {
            match verb {
                "set" => {
                    map.insert(key.clone(), value);
                }
                "incr" => {
                    let now = map.get(&key).map_or(Some(0), Value::as_i64);
                    let now = now.ok_or_else(|| invalid("incr needs an integer value"))?;
                    map.insert(key.clone(), Value::from(now.saturating_add(1)));
                }
                _ => {}
            }
            Ok(map.get(&key).cloned().unwrap_or(Value::Null))
        })
    }

    fn update(
        &self,
        f: impl FnOnce(&mut Map<String, Value>) -> Result<Value, LifecycleError>,
    ) -> Result<Value, LifecycleError> {
        let io = |e: std::io::Error| error("scripted_service_io", format!("service store: {e}"));
        let lock = self.store.with_extension("lock");
        let began = Instant::now();
        while let Err(e) = fs::create_dir(&lock) {
            if e.kind() != std::io::ErrorKind::AlreadyExists || began.elapsed() > LOCK_WAIT {
                return Err(io(e));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let outcome = (|| {
            let text = fs::read_to_string(&self.store).map_err(io)?;
            let mut map = match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                _ => {
                    return Err(error(
                        "scripted_service_io",
                        "the store is not a JSON object",
                    ));
                }
            };
            let answer = f(&mut map)?;
            let next = self.store.with_extension("next");
            write_private(&next, &Value::Object(map).to_string()).map_err(io)?;
            fs::rename(&next, &self.store).map_err(io)?;
            Ok(answer)
        })();
        let _ = fs::remove_dir(&lock);
        outcome
    }
}
