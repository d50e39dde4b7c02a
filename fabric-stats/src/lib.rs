//! Process-tree resource snapshots, cgroup v2 readings, sampling and reductions.
