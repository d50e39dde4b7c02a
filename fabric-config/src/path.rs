//! The one rule for anchoring config paths at `base_dir`.

use std::path::{Component, Path, PathBuf};

/// Anchors `path` at `base_dir`: the rule every relative path of a config follows (skills,
/// workspace, artifacts, discovery paths, relay output), in validation, planning, doctor and
/// hosting alike.
///
/// - An absolute `path` is kept; a relative one is joined to `base_dir` (itself kept as
///   given: a relative `base_dir` gives a relative result).
/// - `.` components are removed.
/// - `..` components are kept. Collapsing `a/..` lexically is wrong when `a` is a symlink
///   (the kernel resolves `..` against the link's target, not against `a`'s parent), and the
///   file system is not consulted here, so the path names what the OS will open.
/// - A blank `path` (empty or only white space) is not a path and is returned unchanged, so
///   validation still reports it.
///
/// ```
/// use std::path::{Path, PathBuf};
/// use fabric_config::path::resolve_path;
///
/// let base = Path::new("/srv/job");
/// assert_eq!(resolve_path(base, "./skills/./review"), PathBuf::from("/srv/job/skills/review"));
/// assert_eq!(resolve_path(base, "ws/../work"), PathBuf::from("/srv/job/ws/../work"));
/// assert_eq!(resolve_path(base, "/opt/adapters"), PathBuf::from("/opt/adapters"));
/// ```
pub fn resolve_path(base_dir: &Path, path: &str) -> PathBuf {
    if path.trim().is_empty() {
        return PathBuf::from(path);
    }
    let mut resolved = PathBuf::new();
    for component in base_dir.join(path).components() {
        if component != Component::CurDir {
            resolved.push(component.as_os_str());
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(base: &str, path: &str) -> PathBuf {
        resolve_path(Path::new(base), path)
    }

    #[test]
    fn absolute_paths_are_kept() {
        assert_eq!(resolve("/b", "/abs/x"), PathBuf::from("/abs/x"));
        assert_eq!(resolve("/b", "/abs/./x/../y"), PathBuf::from("/abs/x/../y"));
    }

    #[test]
    fn relative_paths_are_anchored_at_base_dir() {
        assert_eq!(
            resolve("/srv/job", "skills"),
            PathBuf::from("/srv/job/skills")
        );
        assert_eq!(resolve("/srv/job", "a/b"), PathBuf::from("/srv/job/a/b"));
        // A relative base gives a relative result.
        assert_eq!(resolve("b", "x"), PathBuf::from("b/x"));
    }

    #[test]
    fn dot_components_are_removed() {
        assert_eq!(resolve("b", "./x/./y"), PathBuf::from("b/x/y"));
        assert_eq!(resolve("/srv/./job", "."), PathBuf::from("/srv/job"));
        assert_eq!(resolve("/srv/job/", "./"), PathBuf::from("/srv/job"));
    }

    #[test]
    fn dot_dot_components_are_kept() {
        assert_eq!(
            resolve("/srv/job", "ws/../work"),
            PathBuf::from("/srv/job/ws/../work")
        );
        assert_eq!(
            resolve("/srv/job", "../common"),
            PathBuf::from("/srv/job/../common")
        );
        assert_eq!(resolve("/srv/job/..", "x"), PathBuf::from("/srv/job/../x"));
    }

    #[test]
    fn blank_paths_are_returned_unchanged() {
        assert_eq!(resolve("/srv/job", ""), PathBuf::from(""));
        assert_eq!(resolve("/srv/job", "  "), PathBuf::from("  "));
    }
}
