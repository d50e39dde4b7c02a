"""Typed decoding of invocation system stats, resource snapshots and check reports (no
native library needed)."""

from __future__ import annotations

import pytest

from fabric_core import (
    CheckObservation,
    CheckReport,
    CheckRequest,
    InvocationSystemStats,
    ResourceObservation,
    ResourceObservationUnavailableError,
    ResourceObservationUnsupportedError,
    RunResult,
    RuntimeResourceSnapshot,
    SampledStats,
)
from fabric_core._ffi import error_from_status

# ---- decoding (no native library) -------------------------------------------------


def test_run_result_decodes_typed_stats_and_keeps_unknown_fields() -> None:
    snapshot = {
        "runtime_id": "runtime-1",
        "started_at": "2026-10-21T09:00:00.000Z",
        "observed_at": "2026-10-21T09:01:08.000Z",
        "resident_memory_bytes": 83886080,
        "process_count": 1,
        "cpu_time_seconds": 14.5,
    }
    data = {
        "runtime_id": "runtime-1",
        "status": "succeeded",
        "output": None,
        "system_stats": {
            "elapsed_seconds": 8.0,
            "before": {"status": "available", "snapshot": {**snapshot, "cpu_time_seconds": 12.0}},
            "after": {"status": "unavailable", "reason": "host_exited"},
            "cpu_time_seconds_estimate": None,
            "collected_groups": ["process"],
            "cgroup": None,
            "sampled": {
                "interval_ms": 10,
                "max_samples": 100,
                "retained_samples": 3,
                "dropped_samples": 0,
                "truncated": False,
                "resident_memory_bytes": {"sampled_peak": 400.0, "time_weighted_mean": 240.0},
                "samples": {"name": "system-stats.jsonl", "path": "/x/system-stats.jsonl"},
                "a_newer_field": 1,
            },
            "a_newer_field": {"x": 1},
        },
        "resource_snapshot": snapshot,
    }
    result = RunResult.from_mapping(data)
    stats = result.system_stats
    assert isinstance(stats, InvocationSystemStats)
    assert stats.elapsed_seconds == 8.0
    assert isinstance(stats.before, ResourceObservation)
    assert stats.before.available and stats.before.snapshot.cpu_time_seconds == 12.0
    assert isinstance(stats.before.snapshot, RuntimeResourceSnapshot)
    assert stats.after.status == "unavailable" and stats.after.reason == "host_exited"
    assert stats.after.snapshot is None
    assert stats.cpu_time_seconds_estimate is None
    assert stats.collected_groups == ("process",)
    assert isinstance(stats.sampled, SampledStats)
    assert stats.sampled.resident_memory_bytes.sampled_peak == 400.0
    assert stats.sampled.samples.path == "/x/system-stats.jsonl"
    assert stats.sampled.process_count is None
    assert stats.extra_fields == {"a_newer_field": {"x": 1}}
    assert isinstance(result.resource_snapshot, RuntimeResourceSnapshot)
    assert result.resource_snapshot.resident_memory_bytes == 83886080
    # Round trip, unknown fields kept.
    assert result.to_mapping()["system_stats"] == data["system_stats"]
    assert result.to_mapping()["resource_snapshot"] == data["resource_snapshot"]
    with pytest.raises(AttributeError):
        stats.elapsed_seconds = 1.0  # type: ignore[misc]
    # Absent stats stay absent and read as None.
    bare = RunResult.from_mapping({"status": "succeeded"})
    assert bare.system_stats is None and bare.resource_snapshot is None
    assert "system_stats" not in bare.to_mapping()


def test_check_report_and_request_models() -> None:
    report = CheckReport.from_mapping(
        {
            "schema_version": "fabric.check/v1alpha1",
            "scope": "runtime",
            "target": {"runtime_id": "runtime-1", "service_id": None},
            "level": "ready",
            "outcome": "failed",
            "reason": "not_ready",
            "checks": [
                {"level": "live", "outcome": "passed", "reason": None, "source_id": "s:l", "observed_at": "t"},
                {"level": "active", "outcome": "failed", "reason": "not_ready", "source_id": "s:a", "observed_at": "t"},
            ],
            "started_at": "t0",
            "finished_at": "t1",
            "elapsed_ms": 2,
            "activity": "busy",
            "future": True,
        }
    )
    assert not report.passed
    assert report.outcome == "failed" and report.reason == "not_ready"
    assert report["target"]["runtime_id"] == "runtime-1"
    assert all(isinstance(item, CheckObservation) for item in report.checks)
    assert [item.level for item in report.checks] == ["live", "active"]
    assert report.extra_fields == {"future": True}
    with pytest.raises(TypeError):
        report["target"]["runtime_id"] = "other"  # type: ignore[index]
    assert CheckRequest(runtime_id="r").to_mapping() == {"scope": "runtime", "runtime_id": "r", "level": "live"}
    assert CheckRequest(scope="server", level="ready", timeout_seconds=0.5).to_mapping() == {
        "scope": "server",
        "level": "ready",
        "timeout_seconds": 0.5,
    }


def test_resource_statuses_map_to_error_classes() -> None:
    unavailable = error_from_status(5, '{"code": "resource_observation_unavailable", "message": "m", "stage": "resource_snapshot"}')
    assert isinstance(unavailable, ResourceObservationUnavailableError)
    assert unavailable.code == "resource_observation_unavailable"
    assert isinstance(error_from_status(6, '{"code": "resource_observation_unsupported", "message": "m"}'), ResourceObservationUnsupportedError)
