#!/usr/bin/env python3
"""Runs every fenced example marked `runnable` in README.md and docs/*.md (docs/examples.md).

A block whose info string holds the word `runnable` (```` ```python runnable ````) is run in a
fresh temporary directory that holds a copy of `examples/` and `tests/fixtures/`, a link
`target` to the build, and `node_modules/fabric-core` linking the TypeScript package; with the
built `fabric` first on PATH and the Python binding importable (PYTHONPATH, FABRIC_CORE_LIB),
as an installed package would be. The block must exit 0 within its timeout; when the next
block of the document is a ```` ```text output ```` block, the output must equal it.

    python3 scripts/docs-test.py [FILE.md ...]

Languages: python (the interpreter of $FABRIC_TEST_PYTHON, else this one), bash and sh
(`bash -euo pipefail`), js (an ES module; CommonJS when it calls `require`). Stdlib only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "runnable"
TIMEOUT_SECONDS = 60
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass
class Block:
    file: Path
    line: int
    language: str
    code: str
    expected: str | None


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    fences = list(FENCE.finditer(text))
    found = []
    for index, fence in enumerate(fences):
        words = fence.group(1).split()
        if MARKER not in words[1:]:
            continue
        expected = None
        if index + 1 < len(fences) and fences[index + 1].group(1).split() == ["text", "output"]:
            expected = fences[index + 1].group(2)
        line = text.count("\n", 0, fence.start()) + 1
        found.append(Block(path, line, words[0], fence.group(2), expected))
    return found


def workspace(base: Path) -> Path:
    """A clean directory with what the examples name (copies, so nothing is written into the
    checkout) and links to the build."""
    work = Path(tempfile.mkdtemp(prefix="fabric-docs-", dir=base))
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("out"))
    shutil.copytree(ROOT / "tests" / "fixtures", work / "tests" / "fixtures")
    (work / "target").symlink_to(ROOT / "target")
    (work / "node_modules").mkdir()
    (work / "node_modules" / "fabric-core").symlink_to(ROOT / "bindings" / "typescript")
    return work


def environment() -> dict[str, str]:
    env = dict(os.environ)
    debug = ROOT / "target" / "debug"
    env["PATH"] = f"{debug}{os.pathsep}{env.get('PATH', '')}"
    env["FABRIC_CORE_LIB"] = str(debug / "libfabric_ffi.so")
    python_path = str(ROOT / "bindings" / "python" / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (python_path, env.get("PYTHONPATH")) if p)
    return env


def command(block: Block, work: Path) -> list[str]:
    if block.language == "python":
        script = work / "example.py"
        script.write_text(block.code, encoding="utf-8")
        return [os.environ.get("FABRIC_TEST_PYTHON") or sys.executable, str(script)]
    if block.language in ("bash", "sh"):
        script = work / "example.sh"
        script.write_text(block.code, encoding="utf-8")
        return ["bash", "-euo", "pipefail", str(script)]
    if block.language == "js":
        suffix = ".cjs" if "require(" in block.code else ".mjs"
        script = work / f"example{suffix}"
        script.write_text(block.code, encoding="utf-8")
        return ["node", str(script)]
    raise SystemExit(
        f"{block.file.relative_to(ROOT)}:{block.line}: `{block.language} {MARKER}` is not a "
        "language docs-test.py runs (python, bash, sh, js)"
    )


def run(block: Block, base: Path) -> str | None:
    """Runs one block; the failure text, or None."""
    work = workspace(base)
    try:
        result = subprocess.run(
            command(block, work),
            cwd=work,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return f"did not finish within {TIMEOUT_SECONDS} s"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if result.returncode != 0:
        return f"exit {result.returncode}\n{result.stdout}{result.stderr}"
    if block.expected is not None and result.stdout != block.expected:
        return f"printed\n{result.stdout}\ninstead of the document's output\n{block.expected}"
    return None


def main(argv: list[str]) -> int:
    files = [Path(arg).resolve() for arg in argv] or [ROOT / "README.md"] + sorted(
        (ROOT / "docs").glob("*.md")
    )
    found = [block for path in files for block in blocks(path)]
    if not found:
        print(f"error: no fenced example marked `{MARKER}` in {len(files)} files", file=sys.stderr)
        return 1
    failures = 0
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fabric-docs-") as base:
        for block in found:
            where = f"{block.file.relative_to(ROOT)}:{block.line} ({block.language})"
            started = time.monotonic()
            failure = run(block, Path(base))
            took = time.monotonic() - started
            if failure is None:
                print(f"ok   {where} {took:.1f} s")
            else:
                failures += 1
                print(f"FAIL {where} {took:.1f} s: {failure}")
    total = time.monotonic() - began
    print(f"{len(found) - failures} of {len(found)} runnable examples passed in {total:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
