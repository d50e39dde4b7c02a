"""Software evidence for Python adapter hosts (standard library only).

An adapter host reports the software it runs with: the executing interpreter and the
installed distributions of the modules the adapter has *imported* (package presence alone
does not establish use). The host takes this snapshot once, at ``start``, and only when the
core asks for it (``payload["provenance"] == {"enabled": True}``); it travels back as the
``execution`` member of the ``start`` output, where the Fabric core composes it into
``RunResult.execution``. ``provenance.enabled: false`` skips the collector before any
lookup work. See ``docs/provenance.md``.

Bounds (per snapshot): at most ``MAX_LOOKUPS`` (32) selected targets; per target at most
``MAX_METADATA_FILES`` (4,096) candidate ``*.dist-info`` entries, ``MAX_HEADER_BYTES``
(64 KiB) of ``METADATA`` headers and ``MAX_RECORD_BYTES`` (512 KiB) of ``RECORD`` data; a
``DEADLINE_SECONDS`` (250 ms) deadline; at most one outstanding daemon worker thread per
process. Anything over a bound is an explicit ``unknown`` version with a reason, never an
error and never a changed start outcome.

A module is attributed to a distribution only when that distribution's ``RECORD`` lists the
loaded module's file, so a source tree shadowing an installed package (or an editable
checkout) is reported as ``unavailable`` (``metadata_not_found``), not as the installed
version.

Use::

    from fabric_core.adapter_evidence import serve
    serve(MyRuntime, config_loader=AgentConfig.from_mapping)   # upstream serve + evidence

``fabric_core.adapter_health.serve`` reports evidence too. This module must stay importable
without the native Fabric library, and importing it loads nothing else of the package: the
functions that report a reason import ``fabric_core._codes`` (the generated code constants,
standard library only) when they run.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

MAX_LOOKUPS = 32
MAX_METADATA_FILES = 4096
MAX_HEADER_BYTES = 64 * 1024
MAX_RECORD_BYTES = 512 * 1024
DEADLINE_SECONDS = 0.25

SOURCE = "python:dist-info"
DEFAULT_TARGETS = ("nemo_fabric_adapters.common", "nemo_fabric_adapter_contract", "fabric_core")

# A lookup: import name -> (distribution name, version); raises _Missing(reason).
Lookup = Callable[[str], "tuple[str, str]"]

_worker_lock = threading.Lock()
_worker_busy = False
_worker: threading.Thread | None = None


def last_worker() -> threading.Thread | None:
    """The most recent collector worker thread (tests join it)."""
    return _worker


class _Missing(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _read_headers(path: str, budget: list[int]) -> dict[str, str]:
    """Reads ``METADATA`` headers (up to the first blank line) within ``budget[0]`` bytes."""
    from fabric_core._codes import Code

    headers: dict[str, str] = {}
    with open(path, "rb") as handle:
        while True:
            line = handle.readline(budget[0] + 1)
            if not line:
                break
            budget[0] -= len(line)
            if budget[0] < 0:
                raise _Missing(Code.METADATA_FILE_LIMIT_REACHED)
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if not text:
                break
            key, sep, value = text.partition(":")
            if sep and key in ("Name", "Version") and key not in headers:
                headers[key] = value.strip()
    return headers


def _record_lists(path: str, relative: str, budget: list[int]) -> bool:
    """Whether ``RECORD`` lists ``relative``, reading at most ``budget[0]`` bytes."""
    from fabric_core._codes import Code

    with open(path, "rb") as handle:
        for line in handle:
            budget[0] -= len(line)
            if budget[0] < 0:
                raise _Missing(Code.METADATA_FILE_LIMIT_REACHED)
            entry = line.decode("utf-8", "replace").split(",", 1)[0]
            if entry == relative:
                return True
    return False


def attribute(
    site_dir: str,
    relative: str,
    import_name: str,
    *,
    max_files: int = MAX_METADATA_FILES,
    max_header_bytes: int = MAX_HEADER_BYTES,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> tuple[str, str]:
    """The distribution under ``site_dir`` whose ``RECORD`` lists ``relative`` (the loaded
    module's file, relative to ``site_dir``), as ``(name, version)``.

    Candidates named like the import name's top-level package are read first. Raises
    ``_Missing`` with a reason when none does or a bound is reached."""
    from fabric_core._codes import Code

    try:
        with os.scandir(site_dir) as entries:
            candidates = []
            for count, entry in enumerate(entries, start=1):
                if count > max_files:
                    raise _Missing(Code.METADATA_FILE_LIMIT_REACHED)
                if entry.name.endswith(".dist-info"):
                    candidates.append(entry.name)
    except OSError:
        raise _Missing(Code.METADATA_NOT_FOUND) from None
    top = _normalize(import_name.split(".", 1)[0])
    candidates.sort(key=lambda name: (not _normalize(name).startswith(top), name))
    headers_budget, record_budget = [max_header_bytes], [max_record_bytes]
    for name in candidates:
        directory = os.path.join(site_dir, name)
        try:
            if not _record_lists(os.path.join(directory, "RECORD"), relative, record_budget):
                continue
            headers = _read_headers(os.path.join(directory, "METADATA"), headers_budget)
        except OSError:
            continue
        if headers.get("Name") and headers.get("Version"):
            return headers["Name"], headers["Version"]
    raise _Missing(Code.METADATA_NOT_FOUND)


def installed_lookup(import_name: str) -> tuple[str, str]:
    """The default lookup: attributes an imported module to its installed distribution."""
    from fabric_core._codes import Code

    module = sys.modules.get(import_name)
    file = getattr(module, "__file__", None)
    if not file:
        raise _Missing(Code.METADATA_NOT_FOUND)
    file = os.path.realpath(file)
    for entry in sorted({p for p in sys.path if p}, key=len, reverse=True):
        site_dir = os.path.realpath(entry)
        if file.startswith(site_dir + os.sep):
            relative = os.path.relpath(file, site_dir).replace(os.sep, "/")
            return attribute(site_dir, relative, import_name)
    raise _Missing(Code.METADATA_NOT_FOUND)


def _observed(value: str, at: str) -> dict[str, str]:
    return {"value": value, "source": SOURCE, "origin": "adapter", "observed_at": at}


def _missing(status: str, reason: str) -> dict[str, str]:
    return {"status": status, "reason": reason}


def _interpreter_entry(at: str) -> dict[str, Any]:
    return {
        "role": "interpreter",
        "kind": "runtime",
        "name": platform.python_implementation().lower(),
        "version": {
            "value": platform.python_version(),
            "source": "python:platform",
            "origin": "adapter",
            "observed_at": at,
        },
    }


def collect(
    targets: Iterable[str],
    *,
    lookup: Lookup | None = None,
    deadline: float = DEADLINE_SECONDS,
    max_lookups: int = MAX_LOOKUPS,
) -> dict[str, Any]:
    """An ``ExecutionEvidence`` mapping: one inventory (participants ``guest_sdk`` and
    ``adapter``) with the interpreter and one entry per *imported* target.

    Lookups run on one daemon worker thread; the caller waits at most ``deadline`` seconds
    and reports unfinished targets as ``unknown/collection_deadline_exceeded``. While an
    earlier worker is still running, no new one starts (every target is then unknown).
    ``lookup`` replaces the installed-metadata lookup (tests inject slow or failing ones)."""
    global _worker_busy, _worker
    from fabric_core._codes import Code

    lookup = lookup or installed_lookup
    at = _now()
    selected = [t for t in dict.fromkeys(targets) if t in sys.modules or lookup is not installed_lookup]
    looked_up, over = selected[:max_lookups], selected[max_lookups:]
    results: dict[str, tuple[str, dict[str, str]]] = {}
    results_lock = threading.Lock()
    gaps: list[dict[str, str]] = []

    def work() -> None:
        global _worker_busy
        try:
            for target in looked_up:
                try:
                    name, version = lookup(target)
                    found = (name, _observed(version, at))
                except _Missing as missing:
                    found = (target, _missing("unavailable", missing.reason))
                except Exception:  # a failing lookup never fails the start
                    found = (target, _missing("unavailable", Code.METADATA_NOT_FOUND))
                with results_lock:
                    results[target] = found
        finally:
            with _worker_lock:
                _worker_busy = False

    with _worker_lock:
        busy = _worker_busy
        if not busy and looked_up:
            _worker_busy = True
    if looked_up and not busy:
        thread = threading.Thread(target=work, name="fabric-evidence", daemon=True)
        _worker = thread
        thread.start()
        thread.join(deadline)
    with results_lock:
        finished = dict(results)
    entries = [_interpreter_entry(at)]
    for target in looked_up:
        if target in finished:
            name, version = finished[target]
        else:
            name, version = target, _missing("unknown", Code.COLLECTION_DEADLINE_EXCEEDED)
            _add_gap(gaps, Code.COLLECTION_DEADLINE_EXCEEDED)
        entries.append({"role": "dependency", "kind": "package", "name": name, "version": version})
    for target in over:
        entries.append(
            {
                "role": "dependency",
                "kind": "package",
                "name": target,
                "version": _missing("unknown", Code.LOOKUP_LIMIT_REACHED),
            }
        )
        _add_gap(gaps, Code.LOOKUP_LIMIT_REACHED)
    for _, version in finished.values():
        if version.get("reason") == Code.METADATA_FILE_LIMIT_REACHED:
            _add_gap(gaps, Code.METADATA_FILE_LIMIT_REACHED)
    observed = sum(1 for e in entries if "value" in e["version"])
    availability = "available" if observed == len(entries) else "partial"
    coverage: dict[str, Any] = {"status": "incomplete" if gaps else "complete"}
    if gaps:
        coverage["gaps"] = gaps
    inventory = {
        "context_ref": "adapter",
        "participants": ["guest_sdk", "adapter"],
        "availability": availability,
        "coverage": coverage,
        "entries": entries,
    }
    return {"inventories": [inventory], "coverage": coverage}


def _add_gap(gaps: list[dict[str, str]], reason: str) -> None:
    gap = {"participant": "guest_sdk", "reason": reason}
    if gap not in gaps:
        gaps.append(gap)


def requested(payload: Any) -> bool:
    """Whether the ``start`` payload asks for a report (``provenance.enabled`` is ``True``)."""
    provenance = payload.get("provenance") if isinstance(payload, dict) else None
    return isinstance(provenance, dict) and provenance.get("enabled") is True


def attach(output: Any, report: dict[str, Any] | None) -> Any:
    """Adds ``report`` to a ``start`` output (``None`` becomes a mapping; other non-mapping
    outputs cannot carry it and are returned unchanged)."""
    if report is None:
        return output
    if output is None:
        return {"execution": report}
    if isinstance(output, dict) and "execution" not in output:
        return {**output, "execution": report}
    return output


def runtime_targets(runtime: Any, extra: Sequence[str] = ()) -> list[str]:
    """The adapter's selected targets: its runtime class's top-level module, ``extra``, then
    the shared host and contract packages and this library."""
    inner = getattr(runtime, "_inner", runtime)
    module = type(inner).__module__.split(".", 1)[0]
    return list(dict.fromkeys([module, *extra, *DEFAULT_TARGETS]))


class EvidenceRuntime:
    """Wraps an upstream-style runtime: after its ``start()`` succeeds, the start output
    carries the host's evidence snapshot when the core asked for it."""

    def __init__(self, inner: Any, targets: Sequence[str] = (), collector: Callable[..., Any] = collect) -> None:
        self._inner = inner
        self._targets = targets
        self._collector = collector

    async def start(self, payload: dict[str, Any]) -> Any:
        output = await self._inner.start(payload)
        if not requested(payload):
            return output
        return attach(output, self._collector(runtime_targets(self._inner, self._targets)))

    async def invoke(self, request: Any, context: Any) -> Any:
        return await self._inner.invoke(request, context)

    async def stop(self) -> None:
        await self._inner.stop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def serve(runtime_factory: Callable[[], Any], *, evidence_targets: Sequence[str] = (), **kwargs: Any) -> None:
    """Upstream ``nemo_fabric_adapters.common.lifecycle.serve`` plus software evidence.

    ``evidence_targets`` adds import names to the selection; other keyword arguments
    (``config_loader``, streams) are passed through."""
    from nemo_fabric_adapters.common.lifecycle import serve as upstream_serve

    upstream_serve(lambda: EvidenceRuntime(runtime_factory(), evidence_targets), **kwargs)
