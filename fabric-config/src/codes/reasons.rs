//! Reason and diagnostic codes inside results.

use super::{ErrorCode, Origin as O, reason};

/// Reasons and diagnostics inside results.
pub(super) const REASONS: &[ErrorCode] = &[
    reason(
        "path_outside_base_dir",
        O::Plan,
        "doctor: a skills, workspace or artifacts path resolves outside the base directory (a warning)",
    ),
    reason(
        "provenance_reports_malformed",
        O::Config,
        "supplied provenance reports are not the documented shape",
    ),
    reason(
        "provenance_reports_too_many_contexts",
        O::Config,
        "supplied provenance reports name more than 16 contexts",
    ),
    reason(
        "provenance_reports_too_many_entries",
        O::Config,
        "supplied provenance reports hold more than 128 entries",
    ),
    reason(
        "provenance_reports_too_large",
        O::Config,
        "supplied provenance reports exceed 64 KiB",
    ),
    reason(
        "guest_report_missing",
        O::Host,
        "software evidence: the adapter host sent no `execution` report at start (an upstream-built host, or an older intermediary dropped it): a `guest_sdk` coverage gap",
    ),
    reason(
        "guest_report_malformed",
        O::Host,
        "software evidence: the adapter host's `execution` report is not the documented shape; it is left out and coverage is incomplete",
    ),
    reason(
        "evidence_contexts_dropped",
        O::Host,
        "software evidence: more than 16 inventories after composition; the later ones are dropped whole",
    ),
    reason(
        "evidence_entries_dropped",
        O::Host,
        "software evidence: more than 128 entries (or an entry that is not well formed); entries are dropped whole, versions are never shortened",
    ),
    reason(
        "evidence_too_large",
        O::Host,
        "software evidence: more than 64 KiB of compact JSON; the largest entries are dropped whole until it fits",
    ),
    reason(
        "version_command_not_declared",
        O::Host,
        "software evidence: a process adapter's executable version is unavailable because the descriptor declares no way to ask for it",
    ),
    reason(
        "lookup_limit_reached",
        O::Adapter,
        "software evidence (adapter collector): the selected package lookup limit (32) was reached; later packages are unknown",
    ),
    reason(
        "metadata_file_limit_reached",
        O::Adapter,
        "software evidence (adapter collector): the candidate metadata file limit (4,096 per target) or a byte limit (64 KiB headers, 512 KiB RECORD, 64 KiB manifest, 8 directory levels) was reached",
    ),
    reason(
        "collection_deadline_exceeded",
        O::Adapter,
        "software evidence (adapter collector): the 250 ms collection deadline passed; packages not looked up are unknown",
    ),
    reason(
        "metadata_not_found",
        O::Adapter,
        "software evidence (adapter collector): no installed metadata names the package (or an editable checkout shadows it)",
    ),
    reason(
        "artifact_collect_failed",
        O::Host,
        "a core-collected artifact (invocation log, workspace patch) could not be written; \
         reported as an `artifact_collect_failed` event, the invocation keeps its outcome",
    ),
    reason(
        "host_exited",
        O::Stats,
        "the adapter host exited before it could be read",
    ),
    reason(
        "process_unreadable",
        O::Stats,
        "a process of the tree could not be read",
    ),
    reason(
        "process_hidden",
        O::Stats,
        "a process of the tree is hidden from this user",
    ),
    reason(
        "process_table_unreadable",
        O::Stats,
        "the process table could not be read",
    ),
    reason(
        "process_table_hidden",
        O::Stats,
        "the process table is hidden from this user",
    ),
    reason(
        "tree_changing",
        O::Stats,
        "the process tree kept changing during the read",
    ),
    reason(
        "platform_unsupported",
        O::Stats,
        "no resource reader exists for this operating system",
    ),
    reason("proc_unavailable", O::Stats, "/proc is not mounted"),
    reason(
        "children_lists_unavailable",
        O::Stats,
        "the kernel lacks /proc/<pid>/task/<tid>/children",
    ),
    reason(
        "late_samples_discarded",
        O::Stats,
        "samples that arrived after the invocation ended were dropped",
    ),
    reason(
        "sample_unavailable",
        O::Stats,
        "a periodic sample could not be read",
    ),
    reason(
        "sample_write_failed",
        O::Stats,
        "the samples artifact could not be written",
    ),
    reason(
        "summary_write_failed",
        O::Stats,
        "the sampling summary artifact could not be written",
    ),
];
