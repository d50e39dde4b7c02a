//! The workspace patch: `git` as a subprocess (2.15 or newer: porcelain v2 status,
//! `GIT_OPTIONAL_LOCKS`), never a re-implementation.
//!
//! Per invocation, when the workspace is inside a git checkout (a `.git` in it or an
//! ancestor; no subprocess otherwise):
//!
//! 1. `git -C <ws> status --porcelain=v2 -z --branch --untracked-files=all -- .` (one
//!    process). No entries: nothing is collected. Otherwise a signature is made of the
//!    HEAD commit, the status bytes and the `lstat` of every listed path; when it equals
//!    the previous invocation's, the previous files are hard-linked (or copied) and no
//!    other git process runs.
//! 2. Otherwise `git -C <ws> diff --binary HEAD -- .` (tracked changes, staged or not;
//!    `git diff --binary -- .` before the first commit), then for each untracked file (at
//!    most [`MAX_UNTRACKED`]) `git -C <ws> diff --binary --no-index -- /dev/null <file>`,
//!    as upstream 0.5.0 does. Output stops at [`PATCH_CAP`] bytes with a marker line.
//!
//! 3. `workspace-status.txt` is `git -C <ws> status --short` as upstream writes it (one more
//!    process, only when the patch was re-made).
//!
//! Every git process runs with `GIT_OPTIONAL_LOCKS=0` (never takes the
//! index lock the agent may want), stdin closed, stderr discarded, and is killed after
//! [`GIT_TIMEOUT`].

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::home::private_file;
use fabric_config::Stage;
use fabric_reactor::beneath::Beneath;

/// `workspace.patch`.
pub(crate) const PATCH_FILE: &str = "workspace.patch";
/// `workspace-status.txt`.
pub(crate) const STATUS_FILE: &str = "workspace-status.txt";
/// Largest patch kept (bytes, before the marker).
pub(crate) const PATCH_CAP: usize = 16 * 1024 * 1024;
/// Largest status read.
const STATUS_CAP: usize = 4 * 1024 * 1024;
/// Most untracked files diffed (one git process each).
pub(crate) const MAX_UNTRACKED: usize = 256;
/// Most status entries whose `lstat` makes the reuse signature (beyond: always re-diff).
const MAX_SIGNED: usize = 4096;
/// Longest a single git process may run.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A git checkout holding the workspace.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    /// The workspace (git runs with `-C` here).
    workspace: PathBuf,
    /// The workspace relative to the checkout's top level (`""` at the top).
    prefix: PathBuf,
}

/// Finds the checkout holding `workspace` by looking for `.git` in it and its ancestors.
pub(crate) fn find_checkout(workspace: &Path) -> Option<Checkout> {
    let real = workspace.canonicalize().ok()?;
    let top = real
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())?;
    Some(Checkout {
        prefix: real.strip_prefix(top).ok()?.to_path_buf(),
        workspace: real,
    })
}

/// What one collection wrote (kept to detect an unchanged workspace next time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    signature: Option<Vec<u8>>,
    /// The directory holding the files.
    dir: PathBuf,
    /// Bytes of the patch as written.
    pub patch_bytes: u64,
    /// The patch was cut at [`PATCH_CAP`] (or untracked files were left out).
    pub truncated: bool,
    /// The files were reused from the previous invocation.
    pub reused: bool,
}

/// Collects into `dir`. `Ok(None)`: nothing to collect (no changes, or an empty patch).
/// `root` is the artifact root `dir` is under: nothing below it is written or read through
/// a symbolic link.
pub(crate) fn collect(
    checkout: &Checkout,
    last: Option<&Snapshot>,
    root: &Path,
    dir: &Path,
) -> Result<Option<Snapshot>, String> {
    let status = git(
        checkout,
        &[
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--untracked-files=all",
            "--",
            ".",
        ],
        STATUS_CAP,
    )?;
    if status.truncated {
        return Err("git status output exceeds its bound".into());
    }
    let parsed = parse_status(&status.stdout, &checkout.prefix);
    if parsed.entries.is_empty() {
        return Ok(None);
    }
    let signature = signature(checkout, &status.stdout, &parsed);
    if let (Some(last), Some(signature)) = (last, &signature)
        && last.signature.as_ref() == Some(signature)
        && reuse(root, &last.dir, dir).is_ok()
    {
        return Ok(Some(Snapshot {
            dir: dir.to_path_buf(),
            reused: true,
            ..last.clone()
        }));
    }
    let mut patch = Vec::new();
    let mut truncated = false;
    let tracked: &[&str] = if parsed.head.is_some() {
        &["diff", "--binary", "HEAD", "--", "."]
    } else {
        &["diff", "--binary", "--", "."]
    };
    let out = git(checkout, tracked, PATCH_CAP)?;
    patch.extend_from_slice(&out.stdout);
    truncated |= out.truncated;
    for (i, file) in parsed.untracked.iter().enumerate() {
        if truncated {
            break;
        }
        if i == MAX_UNTRACKED {
            truncated = true;
            break;
        }
        let mut args: Vec<&OsStr> = ["diff", "--binary", "--no-index", "--", "/dev/null"]
            .iter()
            .map(OsStr::new)
            .collect();
        args.push(file.as_os_str());
        let out = git_os(checkout, &args, PATCH_CAP - patch.len())?;
        patch.extend_from_slice(&out.stdout);
        truncated |= out.truncated || patch.len() >= PATCH_CAP;
    }
    if patch.is_empty() {
        return Ok(None);
    }
    let patch_bytes = patch.len() as u64;
    if truncated {
        patch.extend_from_slice(
            format!(
                "\n# fabric: workspace.patch truncated (cap {PATCH_CAP} bytes, at most {MAX_UNTRACKED} untracked files)\n"
            )
            .as_bytes(),
        );
    }
    private_file(root, &dir.join(PATCH_FILE), &patch, Stage::Artifact)
        .map_err(|e| e.to_string())?;
    let mut short = git(checkout, &["status", "--short"], STATUS_CAP)?;
    if short.truncated {
        short
            .stdout
            .extend_from_slice(b"\n# fabric: workspace-status.txt truncated\n");
    }
    private_file(root, &dir.join(STATUS_FILE), &short.stdout, Stage::Artifact)
        .map_err(|e| e.to_string())?;
    Ok(Some(Snapshot {
        signature,
        dir: dir.to_path_buf(),
        patch_bytes,
        truncated,
        reused: false,
    }))
}

/// Copies the previous invocation's files into `dir` (both under `root`, where the
/// adapter can write: read and written without following a link, the patch capped).
fn reuse(root: &Path, from: &Path, dir: &Path) -> Result<(), String> {
    let cap = (PATCH_CAP + 4096) as u64;
    for name in [PATCH_FILE, STATUS_FILE] {
        let (src, dst) = (from.join(name), dir.join(name));
        let relative = src
            .strip_prefix(root)
            .map_err(|_| "outside the root".to_owned())?;
        let bytes = Beneath::open(root)
            .map_err(|e| e.to_string())?
            .read(relative, cap)
            .map_err(|e| e.to_string())?;
        private_file(root, &dst, &bytes, Stage::Artifact).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[derive(Debug, Default, PartialEq)]
struct Status {
    /// `branch.oid` (None before the first commit).
    head: Option<String>,
    /// Paths relative to the top level, as listed (new path of a rename).
    entries: Vec<PathBuf>,
    /// Untracked files relative to the workspace.
    untracked: Vec<PathBuf>,
}

/// Parses `status --porcelain=v2 -z --branch` output.
fn parse_status(bytes: &[u8], prefix: &Path) -> Status {
    use std::os::unix::ffi::OsStrExt;
    let mut status = Status::default();
    let mut records = bytes.split(|&b| b == 0).filter(|r| !r.is_empty());
    let path_of = |bytes: &[u8]| PathBuf::from(OsStr::from_bytes(bytes));
    while let Some(record) = records.next() {
        let rest = |n: usize| record.splitn(n + 1, |&b| b == b' ').nth(n).unwrap_or(b"");
        match record.first() {
            Some(b'#') => {
                if let Some(oid) = record.strip_prefix(b"# branch.oid ")
                    && oid != b"(initial)"
                {
                    status.head = Some(String::from_utf8_lossy(oid).into_owned());
                }
            }
            Some(b'1') => status.entries.push(path_of(rest(8))),
            Some(b'2') => {
                status.entries.push(path_of(rest(9)));
                status.entries.push(path_of(records.next().unwrap_or(b"")));
            }
            Some(b'u') => status.entries.push(path_of(rest(10))),
            Some(b'?') => {
                let path = path_of(rest(1));
                // Untracked files are diffed from the workspace: relative to it.
                let local = path.strip_prefix(prefix).unwrap_or(&path).to_path_buf();
                status.entries.push(path);
                status.untracked.push(local);
            }
            _ => {}
        }
    }
    status
}

/// HEAD + status bytes + `lstat` (size, mtime, ctime, inode, mode) of every listed path.
/// `None` (always re-diff) when too many paths are listed.
fn signature(checkout: &Checkout, raw: &[u8], status: &Status) -> Option<Vec<u8>> {
    if status.entries.len() > MAX_SIGNED {
        return None;
    }
    let top = checkout
        .prefix
        .components()
        .fold(checkout.workspace.clone(), |dir, _| {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        });
    let mut signature = raw.to_vec();
    for path in &status.entries {
        match top.join(path).symlink_metadata() {
            Ok(m) => {
                for value in [
                    m.size(),
                    m.mtime() as u64,
                    m.mtime_nsec() as u64,
                    m.ctime() as u64,
                    m.ctime_nsec() as u64,
                    m.ino(),
                    u64::from(m.mode()),
                ] {
                    signature.extend_from_slice(&value.to_le_bytes());
                }
            }
            Err(_) => signature.push(0xff),
        }
    }
    Some(signature)
}

struct GitOutput {
    stdout: Vec<u8>,
    truncated: bool,
}

fn git(checkout: &Checkout, args: &[&str], cap: usize) -> Result<GitOutput, String> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    git_os(checkout, &args, cap)
}

/// Runs `git -C <workspace> <args>`, reading at most `cap` bytes of stdout (then the
/// process is killed), killed after [`GIT_TIMEOUT`]. `diff --no-index` exits 1 when files
/// differ: exit codes 0 and 1 are success.
fn git_os(checkout: &Checkout, args: &[&OsStr], cap: usize) -> Result<GitOutput, String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(&checkout.workspace)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let (done, watch) = mpsc::channel::<()>();
    // The watchdog only signals before `wait` reaps the child, so the pid is still ours.
    let watchdog = std::thread::spawn(move || {
        if watch.recv_timeout(GIT_TIMEOUT) == Err(mpsc::RecvTimeoutError::Timeout) && pid > 0 {
            let _ = fabric_reactor::sys::signal_process(pid, libc::SIGKILL);
            return true;
        }
        false
    });
    let mut stdout = Vec::new();
    let read = child.stdout.take().map_or(Ok(0), |out| {
        out.take(cap as u64 + 1).read_to_end(&mut stdout)
    });
    let truncated = stdout.len() > cap;
    if truncated {
        stdout.truncate(cap);
        let _ = child.kill();
    }
    let _ = done.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let status = child.wait().map_err(|e| format!("git: {e}"))?;
    read.map_err(|e| format!("git output: {e}"))?;
    if timed_out {
        return Err(format!("git {} timed out", first(args)));
    }
    if !truncated && !matches!(status.code(), Some(0 | 1)) {
        return Err(format!("git {} failed ({status})", first(args)));
    }
    Ok(GitOutput { stdout, truncated })
}

fn first(args: &[&OsStr]) -> String {
    args.first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_porcelain_v2_entries() {
        let raw = b"# branch.oid 0123abcd\0# branch.head main\0\
1 .M N... 100644 100644 100644 aaa aaa a.txt\0\
1 D. N... 100644 000000 000000 bbb 000 sub/b.txt\0\
2 R. N... 100644 100644 100644 ccc ccc R100 sub/new name.txt\0sub/old.txt\0\
? sub/untracked.bin\0";
        let status = parse_status(raw, Path::new("sub"));
        assert_eq!(status.head.as_deref(), Some("0123abcd"));
        assert_eq!(status.untracked, vec![PathBuf::from("untracked.bin")]);
        assert_eq!(status.entries.len(), 5);
        let initial = parse_status(b"# branch.oid (initial)\0? x\0", Path::new(""));
        assert_eq!(initial.head, None);
        assert!(
            parse_status(b"# branch.oid 1\0", Path::new(""))
                .entries
                .is_empty()
        );
    }
}
