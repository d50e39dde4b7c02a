//! Reason and diagnostic codes inside results.

use super::{Origin as O, declare, hints, reason};

declare! {
    /// Reasons and diagnostics inside results.
    pub(super) REASONS = [
        PATH_OUTSIDE_BASE_DIR = "path_outside_base_dir" => reason(
            O::Plan,
            "doctor: a skills, workspace or artifacts path resolves outside the base directory (a warning)",
        ),
        PROVENANCE_REPORTS_MALFORMED = "provenance_reports_malformed" => reason(
            O::Config,
            "supplied provenance reports are not the documented shape",
        ),
        PROVENANCE_REPORTS_TOO_MANY_CONTEXTS = "provenance_reports_too_many_contexts" => reason(
            O::Config,
            "supplied provenance reports name more than 16 contexts",
        ),
        PROVENANCE_REPORTS_TOO_MANY_ENTRIES = "provenance_reports_too_many_entries" => reason(
            O::Config,
            "supplied provenance reports hold more than 128 entries",
        ),
        PROVENANCE_REPORTS_TOO_LARGE = "provenance_reports_too_large" => reason(
            O::Config,
            "supplied provenance reports exceed 64 KiB",
        ),
        GUEST_REPORT_MISSING = "guest_report_missing" => reason(
            O::Host,
            "software evidence: the adapter host sent no `execution` report at start (an upstream-built host, or an older intermediary dropped it): a `guest_sdk` coverage gap",
        ),
        GUEST_REPORT_MALFORMED = "guest_report_malformed" => reason(
            O::Host,
            "software evidence: the adapter host's `execution` report is not the documented shape; it is left out and coverage is incomplete",
        ),
        EVIDENCE_CONTEXTS_DROPPED = "evidence_contexts_dropped" => reason(
            O::Host,
            "software evidence: more than 16 inventories after composition; the later ones are dropped whole",
        ),
        EVIDENCE_ENTRIES_DROPPED = "evidence_entries_dropped" => reason(
            O::Host,
            "software evidence: more than 128 entries (or an entry that is not well formed); entries are dropped whole, versions are never shortened",
        ),
        EVIDENCE_TOO_LARGE = "evidence_too_large" => reason(
            O::Host,
            "software evidence: more than 64 KiB of compact JSON; the largest entries are dropped whole until it fits",
        ),
        VERSION_COMMAND_NOT_DECLARED = "version_command_not_declared" => reason(
            O::Host,
            "software evidence: a process adapter's executable version is unavailable because the descriptor declares no way to ask for it",
        ),
        LOOKUP_LIMIT_REACHED = "lookup_limit_reached" => reason(
            O::Adapter,
            "software evidence (adapter collector): the selected package lookup limit (32) was reached; later packages are unknown",
        ),
        METADATA_FILE_LIMIT_REACHED = "metadata_file_limit_reached" => reason(
            O::Adapter,
            "software evidence (adapter collector): the candidate metadata file limit (4,096 per target) or a byte limit (64 KiB headers, 512 KiB RECORD, 64 KiB manifest, 8 directory levels) was reached",
        ),
        COLLECTION_DEADLINE_EXCEEDED = "collection_deadline_exceeded" => reason(
            O::Adapter,
            "software evidence (adapter collector): the 250 ms collection deadline passed; packages not looked up are unknown",
        ),
        METADATA_NOT_FOUND = "metadata_not_found" => reason(
            O::Adapter,
            "software evidence (adapter collector): no installed metadata names the package (or an editable checkout shadows it)",
        ),
        ARTIFACT_COLLECT_FAILED = "artifact_collect_failed" => reason(
            O::Host,
            "a core-collected artifact (invocation log, workspace patch) could not be written; reported as an `artifact_collect_failed` event, the invocation keeps its outcome",
        ),
        HOST_EXITED = "host_exited" => reason(
            O::Stats,
            "the adapter host exited before it could be read",
        )
        .with_hint(hints::HOST_DIED),
        PROCESS_UNREADABLE = "process_unreadable" => reason(
            O::Stats,
            "a process of the tree could not be read",
        ),
        PROCESS_HIDDEN = "process_hidden" => reason(
            O::Stats,
            "a process of the tree is hidden from this user",
        ),
        PROCESS_TABLE_UNREADABLE = "process_table_unreadable" => reason(
            O::Stats,
            "the process table could not be read",
        ),
        PROCESS_TABLE_HIDDEN = "process_table_hidden" => reason(
            O::Stats,
            "the process table is hidden from this user",
        ),
        TREE_CHANGING = "tree_changing" => reason(
            O::Stats,
            "the process tree kept changing during the read",
        ),
        PLATFORM_UNSUPPORTED = "platform_unsupported" => reason(
            O::Stats,
            "no resource reader exists for this operating system",
        ),
        PROC_UNAVAILABLE = "proc_unavailable" => reason(O::Stats, "/proc is not mounted"),
        CHILDREN_LISTS_UNAVAILABLE = "children_lists_unavailable" => reason(
            O::Stats,
            "the kernel lacks /proc/<pid>/task/<tid>/children",
        ),
        LATE_SAMPLES_DISCARDED = "late_samples_discarded" => reason(
            O::Stats,
            "samples that arrived after the invocation ended were dropped",
        ),
        SAMPLE_UNAVAILABLE = "sample_unavailable" => reason(
            O::Stats,
            "a periodic sample could not be read",
        ),
        SAMPLE_WRITE_FAILED = "sample_write_failed" => reason(
            O::Stats,
            "the samples artifact could not be written",
        ),
        SUMMARY_WRITE_FAILED = "summary_write_failed" => reason(
            O::Stats,
            "the sampling summary artifact could not be written",
        ),
    ];
}
