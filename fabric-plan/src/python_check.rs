//! `doctor`'s import check for `python` adapters: the interpreter that would run the host
//! (the rule of [`python_interpreter`]) is asked, in a child process bounded by
//! [`IMPORT_CHECK_TIMEOUT`], whether it can find `runner.module`. Only `doctor` spawns it;
//! planning and running never do.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fabric_config::FabricConfig;
use fabric_config::descriptor::AdapterKind;
use fabric_config::plan::{DoctorCheck, DoctorStatus};
use serde_json::Value;

use crate::discovery::find_on_path;

/// How long the interpreter may take to answer.
pub const IMPORT_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Finds the module without running it (`importlib.util.find_spec`); a parent package that
/// fails to import is reported with its exception. Exit 0: found, 3: not found.
const FIND_MODULE: &str = "import importlib.util, sys
try:
    found = importlib.util.find_spec(sys.argv[1]) is not None
except Exception as error:
    print(f'{type(error).__name__}: {error}', file=sys.stderr)
    found = False
if not found:
    print(f'No module named {sys.argv[1]}', file=sys.stderr)
sys.exit(0 if found else 3)
";

/// The interpreter for `python` adapters when none is configured: `$ADAPTER_PYTHON`, else
/// `caller` (the calling interpreter), else `$VIRTUAL_ENV/bin/python`, else `python3` on
/// `PATH` (the host launch rule, docs/hosting.md).
pub fn python_interpreter(caller: Option<&Path>) -> OsString {
    if let Some(python) = std::env::var_os("ADAPTER_PYTHON").filter(|v| !v.is_empty()) {
        return python;
    }
    if let Some(caller) = caller.filter(|path| !path.as_os_str().is_empty()) {
        return caller.as_os_str().to_owned();
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        let candidate = PathBuf::from(venv).join("bin/python");
        if candidate.is_file() {
            return candidate.into_os_string();
        }
    }
    find_on_path("python3")
        .map(PathBuf::into_os_string)
        .unwrap_or_else(|| OsString::from("python3"))
}

fn item(status: DoctorStatus, code: &str, message: String) -> DoctorCheck {
    let mut check = crate::doctor::check("requirement.python_module", status, code, message);
    check.path = Some("runner.module".to_owned());
    check
}

/// The import check of a `python` adapter (nothing for other kinds).
pub(crate) fn module_check(
    config: &FabricConfig,
    adapter_kind: AdapterKind,
    runner: &serde_json::Map<String, Value>,
    caller: Option<&Path>,
) -> Option<DoctorCheck> {
    if adapter_kind != AdapterKind::Python {
        return None;
    }
    let module = runner.get("module").and_then(Value::as_str)?;
    let python = python_interpreter(caller);
    let shown = python.to_string_lossy().into_owned();
    let mut command = Command::new(&python);
    command
        .args(["-c", FIND_MODULE, module])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // The host gets the config's literal variables too (PYTHONPATH, for example).
    if let Some(environment) = &config.environment {
        command.envs(&environment.env);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Some(item(
                DoctorStatus::Fail,
                "python_unavailable",
                format!(
                    "the interpreter `{shown}` for module `{module}` cannot be run ({error}); \
                     set ADAPTER_PYTHON to the python of the adapter's environment"
                ),
            ));
        }
    };
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if began.elapsed() < IMPORT_CHECK_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let cause = stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or("no diagnostics");
    Some(match status {
        Some(status) if status.success() => item(
            DoctorStatus::Pass,
            "ok",
            format!("python module `{module}` is importable by `{shown}`"),
        ),
        Some(_) => item(
            DoctorStatus::Fail,
            "python_module_missing",
            format!(
                "`{shown}` cannot import module `{module}` ({cause}); activate the virtual \
                 environment the adapter is installed in, or set ADAPTER_PYTHON to its python"
            ),
        ),
        None => item(
            DoctorStatus::Warn,
            "python_import_check_timeout",
            format!(
                "`{shown}` did not answer whether it can import `{module}` within {} s",
                IMPORT_CHECK_TIMEOUT.as_secs()
            ),
        ),
    })
}
