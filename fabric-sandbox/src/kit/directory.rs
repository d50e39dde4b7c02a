//! The environment directory: where it is created, how a reference names it, how it is
//! recognized and how it is described.

use fabric_config::codes;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use fabric_config::config::JsonObject;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::ProviderEnvironment;
use serde_json::Value;

use super::{Description, Environment, Failure, SOCKET};

/// Longest unix socket path (`sun_path`, NUL included).
const SOCKET_PATH_MAX: usize = 108;

/// `settings.root`: the directory new environments are created in (default: the system
/// temporary directory).
pub fn settings_root(settings: &JsonObject) -> Result<PathBuf, Failure> {
    match settings.get("root") {
        Some(Value::String(root)) => Ok(PathBuf::from(root)),
        Some(_) => Err((
            codes::INVALID_SETTINGS,
            "`settings.root` must be a directory path".into(),
        )),
        None => Ok(std::env::temp_dir()),
    }
}

/// `resource.directory` of a reference.
pub fn reference_directory(reference: &EnvironmentReference) -> Result<PathBuf, Failure> {
    match reference.resource.get("directory") {
        Some(Value::String(dir)) => Ok(PathBuf::from(dir)),
        _ => Err((
            "invalid_reference",
            "`resource.directory` must be the environment directory".into(),
        )),
    }
}

/// Creates a new environment directory `fabric-env-<unique>` under `root` (mode 0700) with
/// `workspace/` and `artifacts/`; returns its id (the directory name) and path. Refuses a
/// root whose socket path would exceed the unix limit.
pub fn create_environment_dir(root: &Path) -> Result<(String, PathBuf), Failure> {
    let id = format!("fabric-env-{}", unique_suffix());
    let dir = root.join(&id);
    let socket = dir.join(SOCKET);
    if socket.as_os_str().len() >= SOCKET_PATH_MAX {
        return Err((
            codes::SOCKET_PATH_TOO_LONG,
            format!(
                "the runtime server socket `{}` would exceed the {SOCKET_PATH_MAX}-byte unix socket path limit; choose a shorter `settings.root`",
                socket.display()
            ),
        ));
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.mode(0o700);
    for path in [dir.clone(), dir.join("workspace"), dir.join("artifacts")] {
        builder.create(&path).map_err(|error| {
            (
                codes::PREPARE_FAILED,
                format!("cannot create `{}`: {error}", path.display()),
            )
        })?;
    }
    Ok((id, dir))
}

/// The environment id of a directory (its name).
pub fn environment_id(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || "environment".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Refuses, as `environment_not_found`, a directory to attach that has no `workspace/`:
/// it is no environment of `provider`.
pub fn require_workspace(dir: &Path, provider: &str) -> Result<(), Failure> {
    if dir.join("workspace").is_dir() {
        Ok(())
    } else {
        Err((
            codes::ENVIRONMENT_NOT_FOUND,
            format!("`{}` is not a {provider} environment", dir.display()),
        ))
    }
}

/// A `prepare` / `attach` / `inspect` output: the environment's [`Description`] with the
/// members the kit adds (see there).
pub(super) fn describe(provider: &str, id: &str, env: &impl Environment, owned: bool) -> Value {
    let Description {
        mut resource,
        workspace,
        artifacts,
        mut connection,
    } = env.describe(id);
    let path = |p: PathBuf| Value::String(p.to_string_lossy().into_owned());
    resource.insert("directory".to_owned(), path(env.dir().to_path_buf()));
    connection.insert("socket".to_owned(), path(env.dir().join(SOCKET)));
    connection.insert("owned".to_owned(), Value::Bool(owned));
    let environment = ProviderEnvironment {
        environment_id: id.to_owned(),
        reference: EnvironmentReference {
            provider: provider.into(),
            resource,
        },
        workspace: Some(workspace),
        artifacts: Some(artifacts),
        connection,
    };
    serde_json::to_value(environment).unwrap_or(Value::Null)
}

/// A unique suffix without a random-number dependency: pid, time and a counter.
fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos & 0xffff_ffff,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
