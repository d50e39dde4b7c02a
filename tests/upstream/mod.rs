//! Upstream NeMo Fabric 0.5.0 as a test oracle, and the one skip policy of the tests that
//! need it. Included by each test crate's `tests/all/support` module (and by `bench/plan`):
//!
//! ```ignore
//! #[path = "../../../../tests/upstream/mod.rs"]
//! pub mod upstream;
//! ```
//!
//! The interpreter is `FABRIC_TEST_PYTHON`, else the repository's `.venv/bin/python` (made
//! by `scripts/setup.sh`). It must have `nemo-fabric`, `nemo-fabric-adapter-catalog` and
//! `nemo-fabric-adapters-common` 0.5.0; `tests/upstream/oracle.py` checks that and answers
//! every question (the installed catalog, upstream's descriptor normalization and
//! fingerprints, upstream's agent schema) at test time.
//!
//! Policy: when that interpreter is unusable, [`require`] applies the one rule for a missing
//! dependency (`tests/dependency.rs`): the test fails with the reason and how to get the
//! oracles, unless `FABRIC_ALLOW_SKIPS=1` turns it into a loud `SKIPPED <test>: <reason>`.

#![allow(dead_code)]

#[path = "../dependency.rs"]
pub mod dependency;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// How to get the oracles, printed with every failure (or skip).
pub const HOW: &str = "run scripts/setup.sh or set FABRIC_TEST_PYTHON";

/// The workspace root: the nearest ancestor of the including crate that holds this file.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("tests/upstream/oracle.py").is_file())
        .expect("workspace root with tests/upstream/oracle.py")
        .to_path_buf()
}

fn oracle_script() -> PathBuf {
    workspace_root().join("tests/upstream/oracle.py")
}

/// Applies the rule for a missing dependency (`tests/dependency.rs`): panics, or with
/// `FABRIC_ALLOW_SKIPS=1` prints `SKIPPED <test>: <reason>` once per test and returns.
pub fn skip_or_fail(reason: &str) {
    dependency::unavailable(reason);
}

/// An interpreter with upstream 0.5.0 installed, and what it reported about itself.
pub struct Upstream {
    python: PathBuf,
    catalog_path: PathBuf,
}

/// The upstream oracle, or `None` after [`skip_or_fail`] allowed a skip (the caller returns).
pub fn require() -> Option<&'static Upstream> {
    match locate() {
        Ok(upstream) => Some(upstream),
        Err(reason) => {
            skip_or_fail(reason);
            None
        }
    }
}

/// The upstream oracle, or the reason it is unusable (no policy applied; for benches).
pub fn locate() -> Result<&'static Upstream, &'static str> {
    static FOUND: OnceLock<Result<Upstream, String>> = OnceLock::new();
    FOUND.get_or_init(probe).as_ref().map_err(String::as_str)
}

fn probe() -> Result<Upstream, String> {
    let python = match std::env::var_os("FABRIC_TEST_PYTHON").filter(|p| !p.is_empty()) {
        Some(python) => {
            let python = PathBuf::from(python);
            if python.components().count() > 1 && !python.exists() {
                return Err(format!(
                    "upstream nemo-fabric venv not found: FABRIC_TEST_PYTHON={} does not exist ({HOW})",
                    python.display()
                ));
            }
            python
        }
        None => {
            let venv = workspace_root().join(".venv/bin/python");
            if !venv.exists() {
                return Err(format!(
                    "upstream nemo-fabric venv not found: FABRIC_TEST_PYTHON is unset and {} does not exist ({HOW})",
                    venv.display()
                ));
            }
            venv
        }
    };
    let output = Command::new(&python)
        .arg(oracle_script())
        .arg("probe")
        .output()
        .map_err(|e| {
            format!(
                "upstream nemo-fabric venv not usable: cannot run {}: {e} ({HOW})",
                python.display()
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "upstream nemo-fabric 0.5.0 not usable with {}: {} ({HOW})",
            python.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("oracle.py probe printed no JSON ({e})"))?;
    let catalog_path = PathBuf::from(
        report["catalog_path"]
            .as_str()
            .ok_or("oracle.py probe reported no catalog_path")?,
    );
    Ok(Upstream {
        python,
        catalog_path,
    })
}

impl Upstream {
    /// The interpreter (for tests that run their own upstream scripts).
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// `catalog.json` of the installed `nemo-fabric-adapter-catalog` package.
    pub fn catalog_path(&self) -> &Path {
        &self.catalog_path
    }

    /// The installed 0.5.0 adapter catalog (`adapters` and `targets`, each entry with its
    /// `descriptor` and catalog `sha256`).
    pub fn catalog(&self) -> Value {
        static CATALOG: OnceLock<Value> = OnceLock::new();
        CATALOG
            .get_or_init(|| {
                let text = std::fs::read_to_string(&self.catalog_path)
                    .unwrap_or_else(|e| panic!("{}: {e}", self.catalog_path.display()));
                serde_json::from_str(&text).expect("catalog JSON")
            })
            .clone()
    }

    /// Upstream's agent config schema: the JSON Schema of its `FabricConfig` model.
    pub fn agent_schema(&self) -> Value {
        serde_json::from_slice(&self.run(&["agent-schema"], None)).expect("schema JSON")
    }

    /// Upstream's verdict on each request (`{"descriptor", "adapter_id"?, "settings"?}`):
    /// `{"ok": true, "descriptor": <normalized>, "sha256": <fingerprint>}` or
    /// `{"ok": false, "error": <message>}`, in order.
    pub fn normalize(&self, requests: &[Value]) -> Vec<Value> {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("requests.json");
        std::fs::write(&input, serde_json::to_vec(requests).expect("json")).expect("write");
        let results: Vec<Value> =
            serde_json::from_slice(&self.run(&["normalize"], Some(&input))).expect("results");
        assert_eq!(results.len(), requests.len(), "oracle.py normalize");
        results
    }

    /// Upstream's normalized form and fingerprint of every catalog adapter, by id.
    pub fn catalog_fingerprints(&self) -> serde_json::Map<String, Value> {
        static PRINTS: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
        PRINTS
            .get_or_init(|| {
                let catalog = self.catalog();
                let adapters = catalog["adapters"].as_object().expect("adapters");
                let requests: Vec<Value> = adapters
                    .iter()
                    .map(|(id, entry)| {
                        serde_json::json!({
                            "adapter_id": id,
                            "descriptor": entry["descriptor"],
                            "settings": satisfying_settings(&entry["descriptor"]),
                        })
                    })
                    .collect();
                adapters
                    .keys()
                    .cloned()
                    .zip(self.normalize(&requests))
                    .map(|(id, result)| {
                        assert_eq!(
                            result["ok"],
                            Value::Bool(true),
                            "upstream on {id}: {result}"
                        );
                        (id, result)
                    })
                    .collect()
            })
            .clone()
    }

    /// Upstream's fingerprint of catalog adapter `id`.
    pub fn catalog_sha256(&self, id: &str) -> String {
        self.catalog_fingerprints()[id]["sha256"]
            .as_str()
            .unwrap_or_else(|| panic!("no fingerprint for {id}"))
            .to_owned()
    }

    fn run(&self, args: &[&str], file: Option<&Path>) -> Vec<u8> {
        let output = Command::new(&self.python)
            .arg(oracle_script())
            .args(args)
            .args(file)
            .output()
            .expect("run oracle.py");
        assert!(
            output.status.success(),
            "oracle.py {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    }
}

/// Harness settings that satisfy the `required` properties of a descriptor's
/// `settings_schema` (planning checks them; normalization does not depend on them).
pub fn satisfying_settings(descriptor: &Value) -> Value {
    let schema = &descriptor["settings_schema"];
    let mut settings = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().expect("required name");
        let property = &schema["properties"][name];
        let value = if let Some(first) = property["enum"].get(0) {
            first.clone()
        } else {
            match property["type"].as_str() {
                Some("boolean") => Value::Bool(true),
                Some("integer" | "number") => Value::from(1),
                Some("array") => Value::Array(Vec::new()),
                Some("object") => Value::Object(serde_json::Map::new()),
                _ => Value::from("http://127.0.0.1:9/v1"),
            }
        };
        settings.insert(name.to_owned(), value);
    }
    if settings.is_empty() {
        Value::Null
    } else {
        Value::Object(settings)
    }
}
