"""What one timed loop of a benchmark cost beyond its wall time: CPU and new tasks.

``Meter.start()`` before a timed loop and ``Meter.stop()`` after it return a dict with

* ``cpu_caller`` — CPU time (user+sys, seconds) of the calling process, all its threads;
* ``cpu_thread`` — CPU time of the thread that called ``start`` and ``stop`` alone (the
  caller's own thread: for an asyncio benchmark, the event loop's); ``cpu_caller`` minus it
  is what the SDK's other threads did (for ours, the core's reactor and batch workers);
* ``cpu_all`` — CPU time of every process the caller started as well: live tasks' CPU from
  ``/proc/<pid>/task/<tid>/schedstat`` (nanoseconds) plus the reaped children's
  (``RUSAGE_CHILDREN``). It includes the adapter hosts, so a row's wall time can be compared
  with the work done for it;
* ``tasks`` — how many tasks (processes and threads) were created during the loop, or None.

The task count needs the benchmark to run as the first process of its own PID namespace
(``bench/runner.py`` starts every worker with ``unshare --pid --fork --mount-proc``; see
``namespace_prefix``): PIDs are then allocated only to the benchmark's own tasks, one after
the other, so the difference of ``/proc/sys/kernel/ns_last_pid`` before and after the loop is
the number of tasks started in it — every ``fork``, ``execve``'d helper and thread, however
short-lived. Outside such a namespace the count is None (a global counter would include the
rest of the machine), and ``cpu_all`` covers only the caller's descendants.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

PROC = Path("/proc")
NS_LAST_PID = PROC / "sys/kernel/ns_last_pid"


def in_own_pid_namespace() -> bool:
    """True when this process is PID 1 of a PID namespace with its own /proc mounted."""

    return os.getpid() == 1 and NS_LAST_PID.exists()


def _last_pid() -> int | None:
    if not in_own_pid_namespace():
        return None
    try:
        return int(NS_LAST_PID.read_text())
    except (OSError, ValueError):
        return None


def _pids() -> list[int]:
    """Every process of this namespace (all of /proc in our own namespace), or this process
    and its descendants otherwise."""

    if in_own_pid_namespace():
        return [int(name) for name in os.listdir(PROC) if name.isdigit()]
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            for task in os.listdir(PROC / str(pid) / "task"):
                todo.extend(int(c) for c in (PROC / str(pid) / "task" / task / "children").read_text().split())
        except OSError:
            continue
    return found


def _tasks_cpu_ns() -> int:
    total = 0
    for pid in _pids():
        try:
            tasks = os.listdir(PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tasks:
            try:
                total += int((PROC / str(pid) / "task" / tid / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Meter:
    """CPU and task counts of one timed loop (see the module docs)."""

    def start(self) -> None:
        self._last_pid = _last_pid()
        self._children = _children_cpu()
        self._tasks_ns = _tasks_cpu_ns()
        self._caller = time.process_time()
        self._thread = time.thread_time()

    def stop(self) -> dict[str, Any]:
        caller = time.process_time() - self._caller
        thread = time.thread_time() - self._thread
        tasks_ns = _tasks_cpu_ns() - self._tasks_ns
        children = _children_cpu() - self._children
        last = _last_pid()
        tasks = None
        if last is not None and self._last_pid is not None:
            # Reading ns_last_pid creates no task; the Meter itself starts none.
            tasks = last - self._last_pid
        return {
            "cpu_caller": caller,
            "cpu_thread": thread,
            "cpu_all": max(caller, tasks_ns / 1e9 + children),
            "tasks": tasks,
        }


def namespace_prefix() -> list[str]:
    """The command prefix that runs a benchmark as PID 1 of a new PID namespace with its own
    /proc (so ``Meter`` counts its tasks), or ``[]`` when this machine does not allow it
    (no ``unshare``, or neither root nor unprivileged user namespaces)."""

    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    namespaces = ["--pid", "--fork", "--mount-proc", "--kill-child"]
    candidates = [[unshare, *namespaces]]
    if os.geteuid() != 0:
        # A user namespace first (util-linux 2.38 has --map-current-user; older ones map
        # the caller to root inside, which changes nothing the benchmarks look at).
        candidates = [
            [unshare, "--user", "--map-current-user", *namespaces],
            [unshare, "--user", "--map-root-user", *namespaces],
        ]
    for prefix in candidates:
        probe = subprocess.run([*prefix, "true"], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return []
