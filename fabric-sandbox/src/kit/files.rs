//! `write_file`, `read_file` and `list_files`: files beneath an environment's workspace or
//! artifact root, for its caller.
//!
//! Code inside the environment controls both roots, so every path goes through
//! [`fabric_reactor::beneath`]: resolved beneath the base without following a symbolic link
//! anywhere (the root's own name included for a provider's environment directory), only
//! regular files read or written (`path_refused` otherwise, `metadata.reason` in the
//! message), reads bounded (`truncated`), listings bounded. The local provider calls these
//! with its workspace as the base and no prefix.

use std::path::{Component, Path, PathBuf};

use fabric_config::codes;
use fabric_config::environment_ops::{
    FileContent, FileEntry, FileListRequest, FileListing, FileReadRequest, FileWriteRequest,
    MAX_LIST_ENTRIES,
};
use fabric_reactor::beneath::{Beneath, Refusal};
use std::io::Read;

use super::Failure;

/// Default permission bits of a written file.
const DEFAULT_MODE: u32 = 0o644;

/// Writes `request`'s file beneath `base`/`prefix`.
pub fn write_file(base: &Path, prefix: &Path, request: &FileWriteRequest) -> Result<(), Failure> {
    write_or_append(base, prefix, request, false)
}

/// Writes `request`'s file beneath `base`/`prefix`, or appends its content to the existing
/// regular file there when `append` (a later chunk of a large write).
pub fn write_or_append(
    base: &Path,
    prefix: &Path,
    request: &FileWriteRequest,
    append: bool,
) -> Result<(), Failure> {
    let bytes = request.check().map_err(invalid)?;
    let root = open(base)?;
    let path = joined(prefix, &request.path);
    let written = if append {
        root.append_existing(&path, &bytes)
    } else {
        root.write(&path, &bytes, request.mode.unwrap_or(DEFAULT_MODE))
    };
    written.map_err(|refusal| refused(&request.path, refusal))
}

/// Reads `request`'s file beneath `base`/`prefix`, at most `max_bytes` of it.
pub fn read_file(
    base: &Path,
    prefix: &Path,
    request: &FileReadRequest,
) -> Result<FileContent, Failure> {
    request.check().map_err(invalid)?;
    let root = open(base)?;
    let file = root
        .open_file(&joined(prefix, &request.path))
        .map_err(|refusal| refused(&request.path, refusal))?;
    let size = file
        .metadata()
        .map_err(|error| refused(&request.path, Refusal::Io(error)))?
        .len();
    let mut bytes = Vec::new();
    file.take(request.max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|error| refused(&request.path, Refusal::Io(error)))?;
    Ok(FileContent {
        path: request.path.clone(),
        truncated: size > bytes.len() as u64,
        content_hex: hex::encode(&bytes),
        size,
    })
}

/// Lists `request`'s directory beneath `base`/`prefix` (links are listed, never followed).
pub fn list_files(
    base: &Path,
    prefix: &Path,
    request: &FileListRequest,
) -> Result<FileListing, Failure> {
    request.check().map_err(invalid)?;
    let root = open(base)?;
    let relative = joined(prefix, &request.path);
    let dir = if relative.as_os_str().is_empty() {
        root
    } else {
        root.open_dir(&relative)
            .map_err(|refusal| refused(&request.path, refusal))?
    };
    let read = dir
        .read_dir()
        .map_err(|error| refused(&request.path, Refusal::Io(error)))?;
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in read.flatten() {
        if entries.len() == MAX_LIST_ENTRIES {
            truncated = true;
            break;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let kind = meta.file_type();
        let kind = if kind.is_symlink() {
            "symlink"
        } else if kind.is_dir() {
            "directory"
        } else if kind.is_file() {
            "file"
        } else {
            "other"
        };
        entries.push(FileEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind: kind.to_owned(),
            size: meta.len(),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(FileListing {
        path: request.path.clone(),
        entries,
        truncated,
    })
}

/// `prefix` and `path` without `.` components (checked requests hold no `..`).
fn joined(prefix: &Path, path: &str) -> PathBuf {
    prefix
        .components()
        .chain(Path::new(path).components())
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

fn open(base: &Path) -> Result<Beneath, Failure> {
    Beneath::open(base).map_err(|error| {
        (
            codes::FILE_NOT_FOUND,
            format!("cannot open the environment's directory: {error}"),
        )
    })
}

/// A request check's fault (its message names the field).
pub(super) fn invalid((_field, reason): (&'static str, String)) -> Failure {
    (codes::INVALID_ENVIRONMENT_REQUEST, reason)
}

/// A refusal as a provider failure naming the path.
fn refused(path: &str, refusal: Refusal) -> Failure {
    match refusal {
        Refusal::Missing => (codes::FILE_NOT_FOUND, format!("no file at `{path}`")),
        Refusal::Io(error) => ("read_failed", format!("`{path}`: {error}")),
        refusal => (
            codes::PATH_REFUSED,
            format!("`{path}` refused ({}): {refusal}", refusal.reason()),
        ),
    }
}

/// Refuses an `exec` working directory `cwd` beneath `base`/`prefix` that is missing, not
/// a directory, or reached through a link.
pub fn check_dir(base: &Path, prefix: &Path, cwd: &str) -> Result<(), Failure> {
    let relative = joined(prefix, cwd);
    if relative.as_os_str().is_empty() {
        return Ok(());
    }
    open(base)?
        .open_dir(&relative)
        .map(drop)
        .map_err(|refusal| refused(cwd, refusal))
}
