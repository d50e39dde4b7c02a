//! `GET /api/index`: the index as the page lists it.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{Entry, Index, Kind, Shared};
use crate::wire::{
    BatchEntry, GymExportEntry, IndexAnswer, Problem, RunEntry, Totals, TrajectoryEntry,
};

/// What other entries of the index say about an entry.
struct Seen<'a> {
    /// Invocations a RunResult or a batch line shows.
    invocations: &'a HashSet<&'a str>,
    /// The run listing each trajectory.
    trajectories: &'a HashMap<&'a Path, &'a str>,
}

/// Entries one list of the index answer holds (the answer stays bounded).
const MAX_LISTED: usize = 5_000;

/// Cuts `list` to [`MAX_LISTED`]; its full length.
fn bound<T>(list: &mut Vec<T>) -> u64 {
    let total = list.len() as u64;
    list.truncate(MAX_LISTED);
    total
}

/// A batch without a summary whose file grew this recently is shown as running.
const RUNNING_FOR: Duration = Duration::from_secs(5);

impl Shared {
    /// A path as the page shows it: relative to the root it is under.
    pub(crate) fn label(&self, path: &Path) -> String {
        for (_, root) in &self.roots {
            if let Ok(rest) = path.strip_prefix(root) {
                let name = root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return if rest.as_os_str().is_empty() {
                    name
                } else {
                    Path::new(&name).join(rest).display().to_string()
                };
            }
        }
        path.display().to_string()
    }

    /// The whole listing.
    pub(crate) fn listing(&self) -> IndexAnswer {
        let index = self.read();
        let mut answer = IndexAnswer {
            generation: index.generation,
            roots: self.roots.iter().map(|(given, _)| given.clone()).collect(),
            problems: index.walk_problems.clone(),
            ..IndexAnswer::default()
        };
        // Invocations a RunResult or a batch line already shows are not listed twice (batch
        // lines are looked at only when there are invocation directories).
        let invocations: HashSet<&str> = index
            .entries
            .values()
            .filter_map(|entry| match &entry.kind {
                Kind::Invocation(meta) => meta.invocation_id.as_deref(),
                _ => None,
            })
            .collect();
        let mut shown: HashSet<&str> = HashSet::new();
        if !invocations.is_empty() {
            for entry in index.entries.values() {
                match &entry.kind {
                    Kind::Result(meta) => shown.extend(meta.invocation_id.as_deref()),
                    Kind::Batch(batch) => shown.extend(
                        batch
                            .items
                            .iter()
                            .filter_map(|item| item.invocation_id.as_deref())
                            .filter(|id| invocations.contains(id)),
                    ),
                    _ => {}
                }
            }
        }
        // The run listing each trajectory.
        let mut listed_by: HashMap<&Path, &str> = HashMap::new();
        for entry in index.entries.values() {
            if let Kind::Result(meta) = &entry.kind {
                for trajectory in &meta.trajectories {
                    listed_by.insert(trajectory.as_path(), entry.id.as_str());
                }
            }
        }
        let seen = Seen {
            invocations: &shown,
            trajectories: &listed_by,
        };
        for (path, entry) in &index.entries {
            self.list(&index, path, entry, &seen, &mut answer);
        }
        answer.totals = Totals {
            batches: bound(&mut answer.batches),
            runs: bound(&mut answer.runs),
            trajectories: bound(&mut answer.trajectories),
            gym_exports: bound(&mut answer.gym_exports),
            problems: bound(&mut answer.problems),
        };
        answer
    }

    fn list(
        &self,
        index: &Index,
        path: &Path,
        entry: &Entry,
        seen: &Seen<'_>,
        answer: &mut IndexAnswer,
    ) {
        let label = self.label(path);
        let shown_path = path.display().to_string();
        match &entry.kind {
            Kind::Batch(batch) => {
                let summary = summary_of(index, path);
                answer.batches.push(BatchEntry {
                    id: entry.id.clone(),
                    path: shown_path.clone(),
                    label,
                    items: batch.items.len() as u64,
                    counts: batch.counts.clone(),
                    running: summary.is_none() && batch.grew_at.elapsed() < RUNNING_FOR,
                    summary,
                });
                answer.problems.extend(batch.problems.iter().cloned());
            }
            Kind::Result(meta) | Kind::Invocation(meta) => {
                let invocation = matches!(entry.kind, Kind::Invocation(_));
                if invocation
                    && meta
                        .invocation_id
                        .as_deref()
                        .is_some_and(|i| seen.invocations.contains(i))
                {
                    return;
                }
                answer.runs.push(RunEntry {
                    id: entry.id.clone(),
                    kind: if invocation {
                        "invocation"
                    } else {
                        "run_result"
                    },
                    label,
                    status: meta.status.clone(),
                    runtime_id: meta.runtime_id.clone(),
                    invocation_id: meta.invocation_id.clone(),
                    started_at: meta.started_at,
                    duration_ms: meta.duration_ms,
                    path: shown_path,
                });
            }
            Kind::Atif | Kind::Atof => {
                let run_id = seen.trajectories.get(path).map(|id| (*id).to_owned());
                answer.trajectories.push(TrajectoryEntry {
                    id: entry.id.clone(),
                    kind: if matches!(entry.kind, Kind::Atif) {
                        "atif"
                    } else {
                        "atof"
                    },
                    label,
                    path: shown_path,
                    file_id: entry.id.clone(),
                    run_id,
                });
            }
            Kind::Gym { records } => answer.gym_exports.push(GymExportEntry {
                id: entry.id.clone(),
                label,
                path: shown_path,
                file_id: entry.id.clone(),
                records: *records,
            }),
            Kind::Problem(message) => answer.problems.push(Problem {
                path: shown_path,
                message: message.clone(),
            }),
            Kind::Summary(_) | Kind::Other => {}
        }
    }
}

/// The summary of the batch at `path`: a summary document in the same directory, the one
/// whose name starts with the batch file's stem (`results.summary.json`), else the only one.
pub(crate) fn summary_of(index: &Index, path: &Path) -> Option<Value> {
    let dir = path.parent()?;
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let summaries: Vec<(&Path, &Value)> = index
        .entries
        .range(dir.to_path_buf()..)
        .take_while(|(other, _)| other.starts_with(dir))
        .filter(|(other, _)| other.parent() == Some(dir))
        .filter_map(|(other, entry)| match &entry.kind {
            Kind::Summary(value) => Some((other.as_path(), value)),
            _ => None,
        })
        .collect();
    let named = summaries.iter().find(|(other, _)| {
        other
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&stem))
    });
    match (named, summaries.as_slice()) {
        (Some((_, value)), _) => Some((*value).clone()),
        (None, [(_, value)]) => Some((*value).clone()),
        _ => None,
    }
}

/// The id a file under the index is served by when it is an indexed document itself.
pub(crate) fn served_entry(index: &Index, id: &str) -> Option<std::path::PathBuf> {
    let (path, entry) = index.entry(id)?;
    match entry.kind {
        Kind::Batch(_)
        | Kind::Result(_)
        | Kind::Atif
        | Kind::Atof
        | Kind::Gym { .. }
        | Kind::Summary(_) => Some(path.to_path_buf()),
        // Not ours (a config), unreadable, or a directory.
        Kind::Other | Kind::Problem(_) | Kind::Invocation(_) => None,
    }
}
