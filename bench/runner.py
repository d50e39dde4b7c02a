#!/usr/bin/env python3
"""The one benchmark run behind README's performance table (bench/run.sh calls it).

Every compared row has the same caller on both sides, run the way a user runs it, and
rounds alternate the sides in fresh processes:

* **As users run it.** The interpreter's virtual environment is activated for every process
  (``VIRTUAL_ENV`` set, its ``bin`` first on ``PATH``) and nothing that changes only one
  side's behaviour is set: ``ADAPTER_PYTHON`` is removed from the environment (with it,
  upstream 0.5.0 starts ``python -c "import json, sysconfig; ..."`` on every plan).
* **A fresh non-checkout directory.** Every process (the Python workers, the binding benches,
  the Rust and Go bench programs, built first) starts in a new temporary directory: both
  SDKs resolve defaults against the working directory, and upstream runs git on every invoke
  when it is a git checkout.
* **A process guard.** Every process runs as PID 1 of its own PID namespace
  (``unshare --pid --fork --mount-proc``, bench/python/meter.py), so each timed loop reports
  how many tasks (processes and threads) it started; a row shows them per call, with the CPU
  time per call of the calling process and of everything it started (the adapter hosts), and
  its wall time is flagged when it exceeds the caller's CPU time more than 3 times.
* **Differences and ratios within each round.** "Cold run minus the adapter's start-up" and
  every ratio are computed per round (the same round's medians), then reported as the median
  over rounds with their spread (lowest–highest).

Rows:

* Python: our binding (``fabric_core``) vs upstream's SDK (``nemo_fabric`` 0.5.0), both
  driven by bench/python/side_by_side.py on the Python echo adapter: plan, warm invoke
  (plain loop; after 60 ms idle; alternating with a cold run), cold run, 64 runtimes x 20
  invokes, system stats on and off; the adapter's own start-up as the cold run's reference
  and where our cold run goes (from its RunResult's event timestamps); the echo host driven
  directly with no SDK (bench/python/bare_host.py: the bare spawn-start-invoke-stop-exit
  cycle, the cold run minus it per round, and the bare warm invoke, plain and after 60 ms
  idle) as the floor under both sides.
* Binding overhead: warm invoke on the Rust scripted adapter through the C ABI itself
  (bench/bindings/c_bench.c), Go, Node and Python vs our Rust call
  (bench/bindings/rust_bench.rs) with the same config.
* Rust in-process rows (plan, warm invoke with stats off) without a ratio.
* Scale (bench/host/scale.rs): start and stop of 200 scripted runtimes, then 2,000 live ones
  (``--quick``: 200): descriptors and RSS growth per runtime, reactor threads and the
  reactor's CPU over one idle second (``--only scale`` runs only these).
* Model gateway (bench/gateway/gateway.rs): the added latency of a non-streamed call and of
  a streamed call's first chunk through the capture gateway against the same loopback stub
  called directly, and 64 concurrent streams through it (``--only gateway``).
* Batches (bench/python/batch_bench.py): 1,000 echo items at concurrency 16 (``--quick``:
  40 at 4), ``fresh`` and ``reuse``, through our core's batch vs the asyncio loop a user
  writes over upstream's SDK; one run per side: items/s, ratio, CPU per item
  (``--only batch`` runs only these).

Per row: the median over rounds of each round's median and p90, and the CPU time
(user+sys) per call. The date, the machine (cores, load before and after) and the
environment both sides ran in are printed above the table. ``--quick`` runs few rounds and
samples (CI keeps the command working; nothing about time is asserted).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench/python"))
from meter import namespace_prefix  # noqa: E402
from userenv import activated  # noqa: E402

# Where our cold run goes (side_by_side.py's `phases`, from the RunResult's event timestamps).
COLD_PHASES = [
    ("to_start", "call → `runtime_start` (plan, spawn, the host's interpreter + imports, `start`)"),
    ("invoke", "`runtime_start` → `invocation_end` (the invoke)"),
    ("stop", "`invocation_end` → `runtime_stop` (`stop`, the host's own shutdown, the reap)"),
    ("after_stop", "`runtime_stop` → the call returns (the result's assembly, the binding's decoding)"),
]

# (key, label, phase, extra args, unit, better)
PYTHON_ROWS = [
    ("plan", "plan", "plan", [], "µs", "lower"),
    ("warm", "warm invoke, plain loop", "warm", [], "ms", "lower"),
    ("warm_off", "warm invoke, plain loop, system stats off", "warm", ["--stats-off"], "ms", "lower"),
    ("warm_idle", "warm invoke after 60 ms idle", "warm", ["--gap", "sleep"], "ms", "lower"),
    ("warm_alt", "warm invoke alternating with a cold run", "warm", ["--gap", "run"], "ms", "lower"),
    ("cold", "cold run (`run()`: start, invoke, stop)", "cold", [], "ms", "lower"),
    (
        "prewarm",
        "run with a prewarmed host (ours: `prewarm(config, hosts=2)`; upstream: its cold `run()`; both idle 100 ms untimed before each run)",
        "cold",
        ["--prewarm", "2", "--idle-ms", "100"],
        "ms",
        "lower",
    ),
    ("fanout", "{fanout} runtimes × 20 invokes, invoke phase", "fanout", [], "/s", "higher"),
    ("fanout_off", "{fanout} runtimes × 20 invokes, system stats off", "fanout", ["--stats-off"], "/s", "higher"),
]


def run_json(command: list[str], cwd: str, env: dict[str, str]) -> list[dict[str, Any]]:
    output = subprocess.run([*NAMESPACE, *command], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return [json.loads(line) for line in output.stdout.splitlines() if line.startswith("{")]


# The prefix that runs a benchmark process as PID 1 of its own PID namespace (meter.py).
NAMESPACE: list[str] = []

# A wall time more than this many times the caller's CPU time per call is flagged.
WALL_OVER_CPU = 3.0


def machine() -> str:
    load = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "/s":
        return f"{value:,.0f}/s"
    if unit == "µs":
        return f"{value:,.0f} µs"
    if unit == "×":
        return f"{value:.1f}×"
    return f"{value:,.2f} ms"


def spread(values: list[float], unit: str) -> str:
    """The median of per-round values with their lowest–highest range."""
    if not values:
        return "n/a"
    text = fmt(statistics.median(values), unit)
    if len(values) > 1:
        text += f" ({fmt(min(values), unit)} – {fmt(max(values), unit)})"
    return text


def tasks_per_call(results: list[dict[str, Any]]) -> str:
    per_call = [r["tasks"] / r["n"] for r in results if r.get("tasks") is not None and r.get("n")]
    if not per_call:
        return "n/a"
    value = statistics.median(per_call)
    return "0" if value == 0 else f"{value:.2f}"


def flagged(wall: float | None, cpu: float | None) -> str:
    """The flag of a wall time above WALL_OVER_CPU times the caller's CPU time."""
    return " †" if wall is not None and cpu is not None and wall > WALL_OVER_CPU * cpu else ""


# The echo host driven directly, no SDK (side_by_side.py's bare phases, bare_host.py):
# (key, phase, extra args); run once per round like the start-up reference.
BARE_ROWS = [
    ("bare_cycle", "bare-cycle", []),
    ("bare_invoke", "bare-invoke", []),
    ("bare_invoke_idle", "bare-invoke", ["--gap", "sleep"]),
]
BARE_LABELS = {
    "bare_cycle": "the bare host cycle (the echo host driven directly: spawn, `start`, one `invoke`, `stop`, exit)",
    "bare_invoke": "the bare host's warm invoke (one request line, one answer line, blocking reads)",
    "bare_invoke_idle": "the bare host's warm invoke after 60 ms idle",
}


def differences(cold: dict[str, list[dict[str, Any]]], reference: list[dict[str, Any]], what: str) -> list[str]:
    """Within each round: that round's cold-run median minus that round's ``reference``
    median, for each side (median over rounds, lowest – highest)."""
    lines = []
    for sdk, who in (("fabric_core", "ours"), ("nemo_fabric", "upstream")):
        values = [run["median"] - ref["median"] for run, ref in zip(cold[sdk], reference, strict=False)]
        cell = spread(values, "ms")
        row = f"| cold run minus {what}, per round ({who}; lowest – highest) |"
        lines.append(row + (f" {cell} | | | | | | |" if who == "ours" else f" | | | {cell} | | | |"))
    return lines


# The warm rows and the bare host's round trip they cannot beat (same round, same host).
CEILINGS = (("warm", "bare_invoke", "warm invoke"), ("warm_idle", "bare_invoke_idle", "warm invoke after 60 ms idle"))


def ceilings(rounds: dict[str, dict[str, list[dict[str, Any]]]], bare: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Within each round: upstream's median divided by the bare host's median of the same
    kind. An SDK's invoke includes the host's own round trip, so this is the highest
    upstream ÷ ours any core could reach with this adapter on this machine (a core that cost
    nothing at all)."""
    lines = []
    for key, reference, what in CEILINGS:
        values = [
            up["median"] / ref["median"]
            for up, ref in zip(rounds[key]["nemo_fabric"], bare[reference], strict=False)
            if up and ref and ref["median"]
        ]
        if values:
            lines.append(
                f"| ceiling of the {what} ratio: upstream ÷ the bare host's own round trip, per round (a core that cost nothing) "
                f"| | | | | | | {spread(values, '×')} |"
            )
    return lines


def python_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    worker = str(ROOT / "bench/python/side_by_side.py")
    sizes = {"plan": args.samples * 5, "warm": args.samples, "cold": max(3, args.samples // 10)}
    sdks = ("fabric_core", "nemo_fabric")
    # rounds[key][sdk][i]: round i's result (None when the row was skipped).
    rounds: dict[str, dict[str, list[dict[str, Any]]]] = {key: {sdk: [] for sdk in sdks} for key, *_ in PYTHON_ROWS}
    startup: list[dict[str, Any]] = []
    bare: dict[str, list[dict[str, Any]]] = {key: [] for key, *_ in BARE_ROWS}
    # Compile the adapter's and the binding's bytecode once, as an installed package has it
    # (pip compiles at install): hosts run with PYTHONDONTWRITEBYTECODE=1, so a source tree
    # without bytecode would be compiled again by every host (and by the reference). With
    # compileall, not by importing: an import writes nothing when the caller's environment
    # has PYTHONDONTWRITEBYTECODE too, and it would miss modules a host imports only at
    # `start` (the evidence report's `fabric_core._codes`).
    sources = [str(ROOT / "bindings/python/src"), str(ROOT / "adapters/python-echo/src")]
    subprocess.run([args.python, "-m", "compileall", "-q", *sources], cwd=cwd, env=env, check=True)
    for index in range(args.rounds):
        sides = list(sdks)
        if index % 2:
            sides.reverse()
        for key, _label, phase, extra, _unit, _better in PYTHON_ROWS:
            if args.quick and key in ("warm_alt", "fanout_off"):
                continue
            if args.rows and key not in args.rows:
                continue
            n = sizes.get(phase, 1)
            if key == "warm_alt":
                n = max(3, args.samples // 10)
            size = ["--runtimes", str(args.fanout), "--invokes", "20"] if phase == "fanout" else ["-n", str(n)]
            for sdk in sides:
                command = [args.python, worker, "--sdk", sdk, "--phase", phase, *size, *extra]
                rounds[key][sdk].extend(run_json(command, cwd, env))
        startup.extend(
            run_json([args.python, worker, "--sdk", "fabric_core", "--phase", "startup", "-n", "3"], cwd, env)
        )
        for key, phase, extra in BARE_ROWS:
            n = sizes["cold"] if phase == "bare-cycle" else sizes["warm"] // (10 if extra else 1)
            command = [args.python, worker, "--sdk", "fabric_core", "--phase", phase, "-n", str(max(3, n)), *extra]
            bare[key].extend(run_json(command, cwd, env))
        print(f"python round {index + 1}/{args.rounds} done ({machine()})", file=sys.stderr)
    lines = [
        "| measure (Python: `fabric_core` vs `nemo_fabric` 0.5.0, same script, same adapter) "
        "| ours median (p90) | ours CPU/call: caller / all | ours tasks/call "
        "| upstream median (p90) | upstream CPU/call: caller / all | upstream tasks/call "
        "| upstream ÷ ours, per round (lowest – highest) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, label, phase, _extra, unit, better in PYTHON_ROWS:
        cells = []
        per_round: dict[str, list[float]] = {}
        for sdk in sdks:
            results = rounds[key][sdk]
            if not results:
                cells += ["n/a", "n/a", "n/a"]
                per_round[sdk] = []
                continue
            cpu_unit = "µs" if unit == "µs" else "ms"
            caller = median([r["cpu_per_call"] for r in results])
            everything = median([r.get("cpu_all_per_call") for r in results])
            if phase == "fanout":
                per_round[sdk] = [r["invocations_per_s"] for r in results]
                wall = median([r.get("wall_per_call") for r in results])
                cells.append(fmt(median(per_round[sdk]), unit) + flagged(wall, caller))
            else:
                per_round[sdk] = [r["median"] for r in results]
                value = median(per_round[sdk])
                p90 = median([r["p90"] for r in results])
                cells.append(f"{fmt(value, unit)} ({fmt(p90, unit)}){flagged(value, caller)}")
            cells.append(f"{fmt(caller, cpu_unit)} / {fmt(everything, cpu_unit)}")
            cells.append(tasks_per_call(results))
        ours, theirs = per_round["fabric_core"], per_round["nemo_fabric"]
        ratios = [
            (t / o if better == "lower" else o / t) for o, t in zip(ours, theirs, strict=False) if o and t
        ]
        label = label.format(fanout=args.fanout)
        lines.append(f"| {label} | {' | '.join(cells)} | {spread(ratios, '×')} |")
    lines.append(
        "| reference: the adapter's own start-up (a fresh interpreter importing what its host imports, until it exits) "
        f"| {fmt(median([r['median'] for r in startup]), 'ms')} | | {tasks_per_call(startup)} | | | | |"
    )
    lines += differences(rounds["cold"], startup, "the adapter's start-up")
    for key, label in BARE_LABELS.items():
        results = bare[key]
        value = median([r["median"] for r in results])
        p90 = median([r["p90"] for r in results])
        caller = median([r["cpu_per_call"] for r in results])
        everything = median([r.get("cpu_all_per_call") for r in results])
        lines.append(
            f"| reference: {label} | {fmt(value, 'ms')} ({fmt(p90, 'ms')}) "
            f"| {fmt(caller, 'ms')} / {fmt(everything, 'ms')} | {tasks_per_call(results)} | | | | |"
        )
    lines += differences(rounds["cold"], bare["bare_cycle"], "the bare host cycle")
    lines += ceilings(rounds, bare)
    phases = [r["phases"] for r in rounds["cold"]["fabric_core"] if "phases" in r]
    for key, label in COLD_PHASES:
        value = median([p.get(key) for p in phases])
        lines.append(f"| our cold run, {label} | {fmt(value, 'ms')} | | | | | | |")
    lines += [
        "",
        f"† the median wall time is more than {WALL_OVER_CPU:.0f}× the calling process's CPU time per call: "
        "the call waits on other processes (the adapter host, or a helper: see tasks/call). "
        "Expected for cold runs (the host's interpreter start-up); a plan or warm invoke so flagged "
        "is spending its time outside the caller.",
    ]
    return lines


BINDINGS = ("rust", "c", "go", "typescript", "python")


def phase(name: str, rows):
    """Runs one phase's rows, noting the machine's load before and after it on stderr (as
    the rounds of the other phases do): a row far off its usual value is first checked
    against what else the machine ran then."""
    print(f"{name} rows begin ({machine()})", file=sys.stderr)
    result = rows()
    print(f"{name} rows done ({machine()})", file=sys.stderr)
    return result


def c_bench(args: argparse.Namespace, cwd: str) -> str:
    """Compiles bench/bindings/c_bench.c against the library under test; returns the program."""
    library = ROOT / "target" / args.profile
    program = str(Path(cwd) / "c_bench")
    command = [
        os.environ.get("CC", "cc"), "-std=c11", "-O2", f"-I{ROOT / 'include'}",
        str(ROOT / "bench/bindings/c_bench.c"), "-o", program,
        f"-L{library}", "-lfabric_ffi", f"-Wl,-rpath,{library}",
    ]
    subprocess.run(command, check=True)
    return program


def rust_bench(args: argparse.Namespace, name: str = "bindings", package: str = "fabric-host") -> str:
    """Builds ``package``'s bench program ``name`` (bench/bindings/rust_bench.rs,
    bench/host/scale.rs, or fabric-gateway's bench/gateway/gateway.rs; optimized, or debug
    with --quick); returns the program, so it runs from the neutral directory like every
    other bench."""
    command = [
        "cargo", "bench" if not args.quick else "test", "-q", "-p", package, "--bench", name,
        "--no-run", "--message-format=json",
    ]
    output = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in output.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        if message.get("reason") == "compiler-artifact" and message.get("target", {}).get("name") == name:
            if message.get("executable"):
                return str(message["executable"])
    raise SystemExit(f"cargo built no `{name}` bench program")


def scale_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    """Scale on one machine (bench/host/scale.rs): start and stop of 200 scripted runtimes,
    then what many live ones cost this process and its reactor (no upstream counterpart)."""
    live = "200" if args.quick else "2000"
    program = rust_bench(args, "scale")
    result = run_json([program], cwd, dict(env, FABRIC_BENCH_SCALE_RUNTIMES=live))[0]
    return [
        f"| scale (Rust, scripted adapter, one process; {result['live']:,} live runtimes) | ours |",
        "| --- | ---: |",
        f"| start of 200 runtimes, one after another | {result['start_200_s']:.3f} s |",
        f"| stop of those 200 | {result['stop_200_s']:.3f} s |",
        f"| core-side memory per live runtime (this process's RSS growth) | {result['core_bytes_per_runtime']:,} B |",
        f"| descriptors per live runtime (this process) | {result['fds_per_runtime']:.1f} |",
        f"| reactor threads; the reactor's CPU over 1 s idle with every runtime live | {result['reactor_threads']}; {result['reactor_idle_ticks_per_s']} ticks |",
    ]


def gateway_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    """The model-call capture gateway (bench/gateway/gateway.rs): the median added latency of
    a non-streamed call and of a streamed call's first chunk through it against the same
    loopback stub called directly (goal: 150 µs each), with client and stub keeping their
    connections (the main rows, as SDKs and model servers do; calls back to back, and each
    after a quiet pause), with a new connection per call to a stub that closes (the extra
    rows), and 64 concurrent streams through it."""
    program = rust_bench(args, "gateway", "fabric-gateway")
    rounds = "20" if args.quick else str(args.samples)
    result = run_json([program], cwd, dict(env, FABRIC_BENCH_GATEWAY_ROUNDS=rounds))[0]

    def row(label: str, key: str) -> str:
        direct, gateway = result[f"{key}_direct_us"], result[f"{key}_gateway_us"]
        return f"| {label} | {direct:.0f} µs | {gateway:.0f} µs | {gateway - direct:.0f} µs |"

    return [
        f"| model gateway (Rust, loopback stub; median of {result['rounds']} calls each) | direct | through the gateway | added |",
        "| --- | ---: | ---: | ---: |",
        row("non-streamed call, kept connections", "kept_call"),
        row(f"non-streamed call, kept connections, to the answer's end (gateway CPU {result['kept_cpu_per_call_us']:.0f} µs per call)", "kept_end"),
        row("streamed call, kept connections, first chunk", "kept_chunk"),
        row(f"non-streamed call, kept connections, after {result['quiet_ms']} ms without a call", "quiet_call"),
        row(f"streamed call, kept connections, after {result['quiet_ms']} ms without a call, first chunk", "quiet_chunk"),
        row("non-streamed call, a new connection per call", "new_call"),
        row(f"non-streamed call, a new connection per call, to the answer's end (gateway CPU {result['new_cpu_per_call_us']:.0f} µs per call)", "new_end"),
        row("streamed call, a new connection per call, first chunk", "new_chunk"),
        f"| {result['streams']} concurrent streams of 20 chunks: answers not as sent; records | | | {result['streams_lost']}; {result['streams_recorded']} |",
    ]


def go_bench(cwd: str, env: dict[str, str]) -> str:
    """Builds bindings/go/examples/bench into the neutral directory; returns the program."""
    program = str(Path(cwd) / "go_bench")
    subprocess.run(["go", "build", "-o", program, "./examples/bench"], cwd=ROOT / "bindings/go", env=env, check=True)
    return program


def binding_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    n, warmup = str(args.samples * 5), str(args.samples)
    go_env = dict(env, PKG_CONFIG_PATH=env.get("PKG_CONFIG_PATH_GO", ""))
    descriptor = str(ROOT / "adapters/scripted/scripted.fabric-adapter.json")
    commands = {
        "rust": (lambda: [rust_bench(args), n, warmup]),
        "c": (lambda: [c_bench(args, cwd), str(ROOT), n, warmup]),
        "go": (lambda: [go_bench(cwd, go_env), "-n", n, "-warmup", warmup, "-descriptor", descriptor]),
        "typescript": (lambda: ["node", str(ROOT / "bench/bindings/ts_bench.js"), n, warmup]),
        "python": (lambda: [args.python, str(ROOT / "bench/bindings/py_bench.py"), n, warmup]),
    }
    order = [binding for binding in commands if binding in args.bindings]
    built = {binding: commands[binding]() for binding in order}
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for index in range(args.rounds):
        for binding in order[index % len(order):] + order[: index % len(order)]:
            for line in run_json(built[binding], cwd, env):
                results.setdefault(line["measure"], {}).setdefault(binding, []).append(line)
        print(f"binding round {index + 1}/{args.rounds} done ({machine()})", file=sys.stderr)

    def cell(measure: str, binding: str) -> tuple[float | None, str, str, str]:
        lines = results.get(measure, {}).get(binding, [])
        if not lines:
            return None, "n/a", "n/a", "n/a"
        value = median([r["median_us"] for r in lines])
        p90 = median([r["p90_us"] for r in lines])
        cpu = median([r.get("cpu_per_call_us") for r in lines])
        text = f"{fmt(value, 'µs')} ({fmt(p90, 'µs')}){flagged(value, cpu)}"
        return value, text, fmt(cpu, "µs"), tasks_per_call(lines)

    rust, rust_text, rust_cpu, rust_tasks = cell("warm_invoke_us", "rust")
    lines = [
        "| warm invoke, Rust scripted adapter, same config | median (p90) | CPU/call | tasks/call | over our Rust call |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| our Rust call (`fabric_host::Runtime::invoke`) | {rust_text} | {rust_cpu} | {rust_tasks} | |",
    ]
    for measure, binding, label in (
        ("warm_invoke_hook_us", "rust", "our Rust call without spinning (`begin_invoke`, hook, `finish_invoke`)"),
        ("warm_invoke_us", "c", "C ABI, blocking `fabric_runtime_invoke`"),
        ("warm_invoke_queue_us", "c", "C ABI, `_begin` + completion queue + `poll(2)` + take"),
        ("warm_invoke_us", "go", "Go binding"),
        ("warm_invoke_us", "typescript", "Node binding"),
        ("warm_invoke_us", "python", "Python binding"),
    ):
        if binding not in args.bindings:
            continue
        value, text, cpu, tasks = cell(measure, binding)
        over = "n/a" if value is None or rust is None else f"{value - rust:+,.0f} µs"
        lines.append(f"| {label} | {text} | {cpu} | {tasks} | {over} |")
    lines += [
        "",
        "| Rust in-process (no upstream counterpart in this process) | median (p90) | CPU/call | tasks/call |",
        "| --- | ---: | ---: | ---: |",
    ]
    for measure, label in (
        ("plan_in_process_us", "plan of the scripted config"),
        ("warm_invoke_stats_off_us", "warm invoke, Rust scripted adapter, system stats off"),
        ("run_result_json_us", "one RunResult encoded as the C ABI's JSON"),
    ):
        _value, text, cpu, tasks = cell(measure, "rust")
        lines.append(f"| {label} | {text} | {cpu} | {tasks} |")
    return lines


def env_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    """`exec` in warm subprocess and container environments against `podman exec` of the
    same container (bench/python/env_exec.py, one process, blocks alternated)."""
    samples = str(max(args.samples // 3, 10))
    warmup = str(max(args.samples // 30, 2))
    env = dict(env, FABRIC_AGENT_CTL_BIN=str(ROOT / "target" / args.profile / "fabric-agent-ctl"))
    command = [args.python, str(ROOT / "bench/python/env_exec.py"), "--samples", samples, "--warmup", warmup]
    # Not in a PID namespace of its own (run_json): podman and the providers' servers need
    # the machine's.
    output = subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout
    lines = {line["measure"]: line for line in map(json.loads, output.splitlines()) if "measure" in line}
    labels = (
        ("exec_subprocess", "`exec` of `sh -c :` in a warm subprocess environment (Python binding)"),
        ("exec_container", "`exec` of `sh -c :` in a warm container environment (Python binding)"),
        ("podman_exec_same_container", "`podman exec` of `sh -c :` in the same container"),
    )
    rows = ["| environment exec | median (p90) |", "| --- | ---: |"]
    for measure, label in labels:
        line = lines.get(measure)
        text = "n/a" if line is None else f"{line['median_ms']:,.2f} ms ({line['p90_ms']:,.2f} ms)"
        rows.append(f"| {label} | {text} |")
    return rows


def batch_rows(args: argparse.Namespace, cwd: str, env: dict[str, str]) -> list[str]:
    """Issue 31's batch rows (bench/python/batch_bench.py): N echo items at concurrency C,
    `fresh` and `reuse`, our core's batch vs the asyncio loop over upstream's SDK; one run
    per side (a process each, in the neutral directory)."""
    n, concurrency = (40, 4) if args.quick else (1000, 16)
    worker = str(ROOT / "bench/python/batch_bench.py")
    cores = os.cpu_count() or 1
    rows = [
        f"| batch of {n:,} echo items, concurrency {concurrency} | ours items/s | upstream items/s | ours / upstream "
        "| our CPU/item: core threads / the caller's thread (Python) | our CPU/item incl. adapter hosts "
        f"| upstream CPU/item: process / incl. adapter hosts | ceiling of ours / upstream on {cores} cores (the hosts' own CPU) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for isolation in ("fresh", "reuse"):
        measured = {}
        for sdk in ("fabric_core", "nemo_fabric"):
            command = [args.python, worker, "--sdk", sdk, "--isolation", isolation, "-n", str(n)]
            measured[sdk] = run_json([*command, "--concurrency", str(concurrency)], cwd, env)[-1]
            print(f"batch {isolation} {sdk} done ({machine()})", file=sys.stderr)
        ours, theirs = measured["fabric_core"], measured["nemo_fabric"]
        ratio = ours["items_per_s"] / theirs["items_per_s"]
        # The adapter hosts' CPU per item (start-ups included): with every core busy running
        # only them, no scheduler could finish items faster than cores / that.
        hosts_ms = ours["cpu_all_per_item_ms"] - ours["cpu_per_item_ms"]
        ceiling = cores * 1e3 / hosts_ms / theirs["items_per_s"] if hosts_ms > 0 else float("nan")
        rows.append(
            f"| `{isolation}` | {ours['items_per_s']:,.1f} | {theirs['items_per_s']:,.1f} | {ratio:.2f}x "
            f"| {ours['cpu_other_threads_per_item_ms']:.3f} ms / {ours['cpu_thread_per_item_ms']:.3f} ms "
            f"| {ours['cpu_all_per_item_ms']:.2f} ms "
            f"| {theirs['cpu_per_item_ms']:.2f} ms / {theirs['cpu_all_per_item_ms']:.2f} ms | {ceiling:.2f}x |"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds and samples (CI)")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--samples", type=int)
    parser.add_argument("--fanout", type=int, help="runtimes in the fan-out rows (default 64)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with both SDKs")
    parser.add_argument("--profile", default="release", choices=["release", "debug"])
    parser.add_argument("--skip-python", action="store_true")
    parser.add_argument("--skip-bindings", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-env", action="store_true", help="no environment exec rows (they need podman)")
    parser.add_argument("--skip-gateway", action="store_true", help="no model-gateway rows")
    parser.add_argument("--skip-batch", action="store_true", help="no batch rows")
    parser.add_argument(
        "--only",
        choices=["python", "bindings", "scale", "env", "gateway", "batch"],
        help="only the Python-vs-upstream rows, the binding-overhead rows, the scale rows, the environment exec rows, the model-gateway rows or the batch rows",
    )
    parser.add_argument(
        "--bindings",
        default=",".join(BINDINGS),
        help=f"comma-separated callers of the binding rows (default {','.join(BINDINGS)}; rust is the reference)",
    )
    parser.add_argument(
        "--rows",
        default="",
        help=f"comma-separated keys of the Python rows to run (default all: {','.join(k for k, *_ in PYTHON_ROWS)})",
    )
    args = parser.parse_args()
    args.rows = [r for r in args.rows.split(",") if r]
    unknown_rows = sorted(set(args.rows) - {k for k, *_ in PYTHON_ROWS})
    if unknown_rows:
        parser.error(f"unknown --rows {unknown_rows}")
    args.bindings = [b for b in args.bindings.split(",") if b]
    unknown = sorted(set(args.bindings) - set(BINDINGS))
    if unknown:
        parser.error(f"unknown --bindings {unknown}; choose from {','.join(BINDINGS)}")
    if args.only is not None:
        args.skip_python = args.only != "python"
        args.skip_bindings = args.only != "bindings"
        args.skip_scale = args.only != "scale"
        args.skip_env = args.only != "env"
        args.skip_gateway = args.only != "gateway"
        args.skip_batch = args.only != "batch"
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.samples = args.samples or (10 if args.quick else 300)
    args.fanout = args.fanout or (4 if args.quick else 64)
    library = ROOT / "target" / args.profile / "libfabric_ffi.so"
    env = dict(os.environ)
    env["FABRIC_CORE_LIB"] = str(library)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "bindings/python/src"), str(ROOT / "adapters/python-echo/src"), env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    dropped = "ADAPTER_PYTHON" in env
    env = activated(args.python, env)
    NAMESPACE[:] = namespace_prefix()
    started = machine()
    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as cwd:
        python = [] if args.skip_python else python_rows(args, cwd, env)
        bindings = [] if args.skip_bindings else binding_rows(args, cwd, env)
        scale = [] if args.skip_scale else phase("scale", lambda: scale_rows(args, cwd, env))
        environments = [] if args.skip_env else phase("env", lambda: env_rows(args, cwd, env))
        gateway = [] if args.skip_gateway else phase("gateway", lambda: gateway_rows(args, cwd, env))
        batches = [] if args.skip_batch else batch_rows(args, cwd, env)
    mode = "--quick" if args.quick else "full"
    if args.quick:
        print(
            "SMOKE TEST, not a measurement: --quick runs a debug build for one round of a few "
            "samples to show that every row works; its times and ratios mean nothing "
            "(README's table comes from `bash bench/run.sh` on a quiet machine)."
        )
    print(f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `bash bench/run.sh{' --quick' if args.quick else ''}` ({mode}; rounds: {args.rounds}, samples: {args.samples}, {args.profile} library)")
    print(f"Machine: {platform.machine()} {platform.system()} {platform.release()}; {os.cpu_count()} cores; load before: {started}; after: {machine()}")
    removed = " (removed from the caller's environment)" if dropped else ""
    counted = f"a PID namespace per process (`{' '.join(NAMESPACE)}`)" if NAMESPACE else "unavailable here (n/a)"
    print(
        f"Both sides: VIRTUAL_ENV={env.get('VIRTUAL_ENV', '(none)')} with its bin first on PATH, "
        f"no ADAPTER_PYTHON{removed}, a new temporary directory as the working directory; "
        f"tasks counted by {counted}"
    )
    print()
    for line in python:
        print(line)
    if python and bindings:
        print()
    for line in bindings:
        print(line)
    if scale and (python or bindings):
        print()
    for line in scale:
        print(line)
    if environments and (python or bindings or scale):
        print()
    for line in environments:
        print(line)
    if gateway and (python or bindings or scale or environments):
        print()
    for line in gateway:
        print(line)
    if batches and (python or bindings or scale or environments or gateway):
        print()
    for line in batches:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
