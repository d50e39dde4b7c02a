//! Descriptor discovery with provenance.
//!
//! Sources, highest precedence first (DESIGN §4):
//!
//! 1. `explicit_local` — `FabricConfig.discovery.local_paths`, resolved against `base_dir`;
//!    each entry is a descriptor file (`*.fabric-adapter.json` / `*.fabric-target.json`) or a
//!    directory searched recursively. A missing entry is an error.
//! 2. `env_path` — `FABRIC_ADAPTER_PATH`, colon-separated files or directories.
//! 3. `interpreter_prefix` — `<prefix>/share/nemo-fabric/{adapters,targets}/**` for the
//!    calling Python interpreter's prefix (`CallOptions.python_prefix`; the Python binding
//!    sends `sysconfig.get_path("data")`), so an adapter installed in the caller's virtual
//!    environment is found without activating it, as upstream's SDK does.
//! 4. `installed_package` — `<prefix>/share/nemo-fabric/{adapters,targets}/**` for each
//!    prefix: `$VIRTUAL_ENV`, the prefix of the Python interpreter (`$ADAPTER_PYTHON`, else
//!    `python3` on `PATH`; prefix = the parent of its `bin/` directory, no process is
//!    spawned), then `/usr/local`. A prefix already searched as `interpreter_prefix` is
//!    skipped.
//! 5. `bundled` — `$FABRIC_BUNDLED_ADAPTERS` when set (and nothing else); otherwise, in
//!    order: `adapters/` or `share/nemo-fabric/adapters/` next to the loaded core library or
//!    the running executable (or in one of their five parent directories); the adapters
//!    compiled into the running executable (`builtin.rs`: the `fabric` CLI's scripted
//!    adapter); in development builds, the adapters of the checkout the build came from
//!    (rules and examples in `bundled.rs`).
//!
//! The first source that has a record for the requested id wins. Within that source,
//! records whose normalized descriptors are identical are merged (each file is listed in
//! the provenance); different records with the same id are an ambiguity error naming both
//! files. Repeated planning neither reads nor parses again what did not change: descriptor
//! files are kept parsed (schemas compiled, fingerprint computed) per path, and directory
//! searches per root, both validated on every use by the stamps (device, inode, size,
//! nanosecond modification and change times) of the files and of every directory searched,
//! and both bounded (`cache.rs`, which also covers writes too quick for the file system's
//! clock).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use fabric_config::path::resolve_path;
use fabric_config::plan::{DescriptorProvenance, DescriptorSource};

pub use crate::bundled::{bundled_overridden, bundled_root, development_root};
use crate::cache::{FileCache, SearchCache, SearchedDirs, Stamp};
use crate::error::PlanError;
use crate::load::{self, DescriptorFileKind, LoadedAdapter, LoadedTarget};

/// Environment variable listing extra descriptor files/directories (colon-separated).
pub const ADAPTER_PATH_ENV: &str = "FABRIC_ADAPTER_PATH";

/// Environment variable overriding the bundled adapters directory.
pub const BUNDLED_ADAPTERS_ENV: &str = "FABRIC_BUNDLED_ADAPTERS";

const MAX_DEPTH: usize = 8;

/// Where to look for descriptors. Build it with [`DiscoveryOptions::from_env`] or by hand
/// (tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryOptions {
    /// `discovery.local_paths`, already resolved against the base directory.
    pub local_paths: Vec<PathBuf>,
    /// `FABRIC_ADAPTER_PATH` entries.
    pub env_paths: Vec<PathBuf>,
    /// The calling interpreter's prefix (`CallOptions.python_prefix`); searched before
    /// `installed_prefixes`, with provenance source `interpreter_prefix`.
    pub interpreter_prefix: Option<PathBuf>,
    /// Installed prefixes; `<prefix>/share/nemo-fabric/{adapters,targets}` are searched.
    pub installed_prefixes: Vec<PathBuf>,
    /// The bundled adapters directory: `$FABRIC_BUNDLED_ADAPTERS`, or the one beside the
    /// loaded library or the running executable ([`bundled_root`]).
    pub bundled_root: Option<PathBuf>,
    /// Whether the adapters compiled into this executable are offered, after `bundled_root`
    /// ([`crate::register_builtin_adapters`]).
    pub builtin: bool,
    /// The development fallback: the adapters directory of the checkout this build came
    /// from, searched last (still at the `bundled` level).
    pub development_root: Option<PathBuf>,
}

impl DiscoveryOptions {
    /// Options from the process environment and the config's `local_paths` (relative entries
    /// are resolved against `base_dir`).
    pub fn from_env(local_paths: &[String], base_dir: &Path) -> Self {
        DiscoveryOptions {
            local_paths: local_paths
                .iter()
                .map(|entry| resolve_path(base_dir, entry))
                .collect(),
            env_paths: std::env::var_os(ADAPTER_PATH_ENV)
                .map(|value| split_path_list(&value))
                .unwrap_or_default(),
            interpreter_prefix: None,
            installed_prefixes: installed_prefixes(),
            bundled_root: bundled_root(),
            builtin: !bundled_overridden(),
            development_root: development_root(),
        }
    }

    /// Only explicit paths (no environment, installed or bundled sources).
    pub fn explicit(local_paths: Vec<PathBuf>) -> Self {
        DiscoveryOptions {
            local_paths,
            ..DiscoveryOptions::default()
        }
    }

    fn levels(&self) -> Vec<Level> {
        let share_dirs = |prefix: &Path| {
            let share = prefix.join("share").join("nemo-fabric");
            [
                (share.join("adapters"), false),
                (share.join("targets"), false),
            ]
        };
        let interpreter: Vec<(PathBuf, bool)> = self
            .interpreter_prefix
            .iter()
            .flat_map(|prefix| share_dirs(prefix))
            .collect();
        let installed: Vec<(PathBuf, bool)> = self
            .installed_prefixes
            .iter()
            .filter(|prefix| self.interpreter_prefix.as_ref() != Some(*prefix))
            .flat_map(|prefix| share_dirs(prefix))
            .collect();
        let searched = |root: &Option<PathBuf>| root.iter().map(|p| (p.clone(), false)).collect();
        vec![
            Level::roots(
                DescriptorSource::ExplicitLocal,
                self.local_paths.iter().map(|p| (p.clone(), true)).collect(),
            ),
            Level::roots(
                DescriptorSource::EnvPath,
                self.env_paths.iter().map(|p| (p.clone(), false)).collect(),
            ),
            Level::roots(DescriptorSource::InterpreterPrefix, interpreter),
            Level::roots(DescriptorSource::InstalledPackage, installed),
            Level::roots(DescriptorSource::Bundled, searched(&self.bundled_root)),
            Level {
                source: DescriptorSource::Bundled,
                roots: Vec::new(),
                builtin: self.builtin,
            },
            Level::roots(DescriptorSource::Bundled, searched(&self.development_root)),
        ]
    }
}

/// One precedence level of discovery: directories and files, or the builtin adapters.
struct Level {
    source: DescriptorSource,
    roots: Vec<(PathBuf, bool)>,
    builtin: bool,
}

impl Level {
    fn roots(source: DescriptorSource, roots: Vec<(PathBuf, bool)>) -> Self {
        Level {
            source,
            roots,
            builtin: false,
        }
    }
}

fn split_path_list(value: &OsString) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|path| !path.as_os_str().is_empty())
        .collect()
}

/// The installed prefixes searched for `share/nemo-fabric`, in order, without duplicates.
pub fn installed_prefixes() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    let mut push = |path: PathBuf| {
        if !prefixes.contains(&path) {
            prefixes.push(path);
        }
    };
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        push(PathBuf::from(venv));
    }
    let interpreter = std::env::var_os("ADAPTER_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| find_on_path("python3"));
    if let Some(prefix) = interpreter
        .as_deref()
        .and_then(Path::parent)
        .filter(|bin| bin.file_name().is_some_and(|name| name == "bin"))
        .and_then(Path::parent)
    {
        push(prefix.to_path_buf());
    }
    push(PathBuf::from("/usr/local"));
    prefixes
}

/// The first executable file named `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_on(name, std::env::var_os("PATH").as_deref())
}

/// The first executable file named `name` on `path` (a `PATH` value); a name with a `/` is
/// a path of its own.
pub fn find_on(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return is_executable(&path).then_some(path);
    }
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// One discovered descriptor with every identical record's provenance.
#[derive(Debug, Clone)]
pub struct Discovered<T> {
    /// The loaded, validated descriptor.
    pub loaded: Arc<T>,
    /// Every file holding this (identical) descriptor at the winning precedence level.
    pub provenance: Vec<DescriptorProvenance>,
}

/// Every adapter and target discovered, per id (the highest-precedence source wins).
#[derive(Debug, Default)]
pub struct Catalog {
    /// Adapter id → descriptor.
    pub adapters: BTreeMap<String, Discovered<LoadedAdapter>>,
    /// Target id → descriptor.
    pub targets: BTreeMap<String, Discovered<LoadedTarget>>,
    /// Descriptor files found in searched directories that failed to load (skipped).
    pub invalid: Vec<PlanError>,
}

/// A descriptor file found by discovery; `explicit` when it was named directly.
struct Candidate {
    file: PathBuf,
    explicit: bool,
}

/// Loads a candidate. Invalid files found by a directory search are skipped (`Ok(None)`,
/// recorded in `skipped`) unless their raw JSON names `wanted`; explicitly named files fail.
fn load_candidate<T>(
    candidate: &Candidate,
    load: fn(&Path) -> Result<Arc<T>, PlanError>,
    id_key: &str,
    wanted: Option<&str>,
    skipped: &mut Vec<PlanError>,
) -> Result<Option<Arc<T>>, PlanError> {
    match load(&candidate.file) {
        Ok(loaded) => Ok(Some(loaded)),
        Err(error) if candidate.explicit => Err(error),
        Err(error) => {
            let named = std::fs::read(&candidate.file)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .and_then(|value| {
                    value
                        .get(id_key)
                        .and_then(|id| id.as_str())
                        .map(str::to_owned)
                });
            if wanted.is_some() && named.as_deref() == wanted {
                return Err(error);
            }
            skipped.push(error);
            Ok(None)
        }
    }
}

fn not_found_suffix(skipped: &[PlanError]) -> Vec<PathBuf> {
    skipped
        .iter()
        .filter_map(|error| error.file().map(Path::to_path_buf))
        .collect()
}

/// What discovery needs to know about one descriptor kind (adapters or targets).
struct Kind<T> {
    /// `adapter` or `target` (ambiguity errors).
    name: &'static str,
    file_kind: DescriptorFileKind,
    /// The raw JSON key holding the id (used when a file fails to load).
    id_key: &'static str,
    load: fn(&Path) -> Result<Arc<T>, PlanError>,
    id: fn(&T) -> &String,
    sha256: fn(&T) -> &String,
    not_found: fn(String, Vec<String>, Vec<PathBuf>) -> PlanError,
    /// The records compiled into the executable (adapters only).
    builtin: fn() -> Vec<Result<Record<T>, PlanError>>,
}

/// A loaded descriptor and the file it came from (for a builtin record, the executable).
type Record<T> = (Arc<T>, PathBuf);

fn builtin_adapters() -> Vec<Result<Record<LoadedAdapter>, PlanError>> {
    crate::builtin::builtin_adapters()
        .iter()
        .map(|builtin| match builtin {
            Ok((loaded, file)) => Ok((Arc::clone(loaded), file.clone())),
            Err(reason) => Err(crate::builtin::load_error(reason)),
        })
        .collect()
}

const ADAPTERS: Kind<LoadedAdapter> = Kind {
    name: "adapter",
    file_kind: DescriptorFileKind::Adapter,
    id_key: "adapter_id",
    load: cached_adapter,
    id: |a| &a.descriptor.adapter_id,
    sha256: |a| &a.sha256,
    not_found: |adapter_id, available, skipped| PlanError::AdapterNotFound {
        adapter_id,
        available,
        skipped,
    },
    builtin: builtin_adapters,
};

const TARGETS: Kind<LoadedTarget> = Kind {
    name: "target",
    file_kind: DescriptorFileKind::Target,
    id_key: "id",
    load: cached_target,
    id: |t| &t.descriptor.id,
    sha256: |t| &t.sha256,
    not_found: |target_id, available, skipped| PlanError::TargetNotFound {
        target_id,
        available,
        skipped,
    },
    builtin: Vec::new,
};

/// Finds the adapter `adapter_id`.
pub fn find_adapter(
    options: &DiscoveryOptions,
    adapter_id: &str,
) -> Result<Discovered<LoadedAdapter>, PlanError> {
    find(options, &ADAPTERS, adapter_id)
}

/// Finds the target `target_id`.
pub fn find_target(
    options: &DiscoveryOptions,
    target_id: &str,
) -> Result<Discovered<LoadedTarget>, PlanError> {
    find(options, &TARGETS, target_id)
}

fn find<T>(
    options: &DiscoveryOptions,
    kind: &Kind<T>,
    wanted: &str,
) -> Result<Discovered<T>, PlanError> {
    let mut available = Vec::new();
    let mut skipped = Vec::new();
    for level in options.levels() {
        let mut found: Option<Discovered<T>> = None;
        for (loaded, file) in records(kind, &level, Some(wanted), &mut skipped)? {
            let id = (kind.id)(&loaded);
            if id != wanted {
                available.push(id.clone());
                continue;
            }
            merge(kind, wanted, &mut found, loaded, level.source, &file)?;
        }
        if let Some(found) = found {
            return Ok(found);
        }
    }
    available.sort();
    available.dedup();
    Err((kind.not_found)(
        wanted.to_owned(),
        available,
        not_found_suffix(&skipped),
    ))
}

/// Discovers every adapter and target from every source. Invalid files found by directory
/// searches are listed in [`Catalog::invalid`]; explicitly named invalid files fail.
pub fn discover_all(options: &DiscoveryOptions) -> Result<Catalog, PlanError> {
    let mut catalog = Catalog::default();
    for level in options.levels() {
        discover_level(
            &ADAPTERS,
            &level,
            &mut catalog.adapters,
            &mut catalog.invalid,
        )?;
        discover_level(&TARGETS, &level, &mut catalog.targets, &mut catalog.invalid)?;
    }
    Ok(catalog)
}

/// Adds every `kind` descriptor of one precedence level to `catalog` (ids already found at a
/// higher level keep their record).
fn discover_level<T>(
    kind: &Kind<T>,
    level: &Level,
    catalog: &mut BTreeMap<String, Discovered<T>>,
    invalid: &mut Vec<PlanError>,
) -> Result<(), PlanError> {
    let mut found: BTreeMap<String, Discovered<T>> = BTreeMap::new();
    for (loaded, file) in records(kind, level, None, invalid)? {
        let id = (kind.id)(&loaded).clone();
        let mut slot = found.remove(&id);
        merge(kind, &id, &mut slot, loaded, level.source, &file)?;
        if let Some(slot) = slot {
            found.insert(id, slot);
        }
    }
    for (id, found) in found {
        catalog.entry(id).or_insert(found);
    }
    Ok(())
}

/// The loaded `kind` records of one level with the file each came from (for a builtin
/// record, the executable). Files that fail to load are handled by [`load_candidate`];
/// builtin records that fail are added to `skipped`.
fn records<T>(
    kind: &Kind<T>,
    level: &Level,
    wanted: Option<&str>,
    skipped: &mut Vec<PlanError>,
) -> Result<Vec<Record<T>>, PlanError> {
    let mut records = Vec::new();
    for candidate in collect_files(&level.roots, kind.file_kind)? {
        if let Some(loaded) = load_candidate(&candidate, kind.load, kind.id_key, wanted, skipped)? {
            records.push((loaded, candidate.file));
        }
    }
    if level.builtin {
        for builtin in (kind.builtin)() {
            match builtin {
                Ok(record) => records.push(record),
                Err(error) => skipped.push(error),
            }
        }
    }
    Ok(records)
}

fn merge<T>(
    kind: &Kind<T>,
    id: &str,
    found: &mut Option<Discovered<T>>,
    loaded: Arc<T>,
    source: DescriptorSource,
    file: &Path,
) -> Result<(), PlanError> {
    let sha = kind.sha256;
    let provenance = provenance(source, file);
    match found {
        None => {
            *found = Some(Discovered {
                loaded,
                provenance: vec![provenance],
            });
        }
        Some(existing) if sha(&existing.loaded) == sha(&loaded) => {
            if !existing
                .provenance
                .iter()
                .any(|p| p.path == provenance.path)
            {
                existing.provenance.push(provenance);
            }
        }
        Some(existing) => {
            return Err(PlanError::DescriptorAmbiguous {
                kind: kind.name,
                id: id.to_owned(),
                first: PathBuf::from(&existing.provenance[0].path),
                second: file.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Where a descriptor was found, as its canonical path (symlinks and `..` resolved: a
/// checkout's `fabric-plan/../adapters` reads `adapters`), or as found when it cannot be
/// resolved.
fn provenance(source: DescriptorSource, file: &Path) -> DescriptorProvenance {
    let canonical = std::fs::canonicalize(file);
    let file = canonical.as_deref().unwrap_or(file);
    DescriptorProvenance {
        source,
        path: file.display().to_string(),
        root: file
            .parent()
            .map(|dir| dir.display().to_string())
            .unwrap_or_default(),
    }
}

/// Descriptor files of `kind` under `roots`, sorted, without duplicates. `required` roots
/// must exist; a required file root must carry a descriptor suffix.
fn collect_files(
    roots: &[(PathBuf, bool)],
    kind: DescriptorFileKind,
) -> Result<Vec<Candidate>, PlanError> {
    let mut files: Vec<Candidate> = Vec::new();
    for (root, required) in roots {
        let meta = match std::fs::metadata(root) {
            Ok(meta) => meta,
            Err(source) if *required => {
                return Err(PlanError::DescriptorRead {
                    file: root.clone(),
                    source,
                });
            }
            Err(_) => continue,
        };
        if meta.is_file() {
            match load::kind_of(root) {
                Some(found) if found == kind => files.push(Candidate {
                    file: absolute(root),
                    explicit: *required,
                }),
                Some(_) => {}
                None if *required => {
                    return Err(PlanError::invalid(
                        root,
                        "discovery.local_paths",
                        "descriptor files must end in .fabric-adapter.json or .fabric-target.json",
                    ));
                }
                None => {}
            }
        } else if meta.is_dir() {
            let found = search_cache().files(root, kind, |dirs| {
                let mut found = Vec::new();
                walk(root, kind, 0, &mut found, dirs)?;
                found.sort();
                Ok(found)
            })?;
            files.extend(found.iter().map(|file| Candidate {
                file: file.clone(),
                explicit: false,
            }));
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|candidate| seen.insert(candidate.file.clone()));
    Ok(files)
}

/// Appends the `kind` descriptor files under `dir` to `out`, and each directory read, with
/// its stamp taken before the read, to `dirs` (what validates the search cache).
fn walk(
    dir: &Path,
    kind: DescriptorFileKind,
    depth: usize,
    out: &mut Vec<PathBuf>,
    dirs: &mut SearchedDirs,
) -> Result<(), PlanError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    dirs.push((dir.to_path_buf(), Stamp::read(dir)?));
    let entries = std::fs::read_dir(dir).map_err(|source| PlanError::DescriptorRead {
        file: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let is_dir = file_type.is_dir() || (file_type.is_symlink() && path.is_dir());
        if is_dir {
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            walk(&path, kind, depth + 1, out, dirs)?;
        } else if load::kind_of(&path) == Some(kind) {
            out.push(absolute(&path));
        }
    }
    Ok(())
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

fn adapter_cache() -> &'static FileCache<LoadedAdapter> {
    static CACHE: OnceLock<FileCache<LoadedAdapter>> = OnceLock::new();
    CACHE.get_or_init(FileCache::new)
}

fn target_cache() -> &'static FileCache<LoadedTarget> {
    static CACHE: OnceLock<FileCache<LoadedTarget>> = OnceLock::new();
    CACHE.get_or_init(FileCache::new)
}

fn search_cache() -> &'static SearchCache<DescriptorFileKind> {
    static CACHE: OnceLock<SearchCache<DescriptorFileKind>> = OnceLock::new();
    CACHE.get_or_init(SearchCache::new)
}

/// Loads an adapter descriptor file through the per-file cache (`cache.rs`).
pub fn cached_adapter(file: &Path) -> Result<Arc<LoadedAdapter>, PlanError> {
    adapter_cache().load(file, load::adapter_from_bytes)
}

/// Loads a target descriptor file through the per-file cache (`cache.rs`).
pub fn cached_target(file: &Path) -> Result<Arc<LoadedTarget>, PlanError> {
    target_cache().load(file, load::target_from_bytes)
}
