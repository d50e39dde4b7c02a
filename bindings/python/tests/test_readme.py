"""The Python examples of bindings/python/README.md and docs/python.md run and print what
the documents say."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fcsupport import REPO


def blocks(path: Path, language: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def run_example(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_readme_example_prints_the_documented_output(scripted_built) -> None:
    readme = REPO / "bindings" / "python" / "README.md"
    (code,) = blocks(readme, "python")
    (expected,) = blocks(readme, "text")
    assert run_example(code) == expected


@pytest.mark.parametrize("index", range(len(blocks(REPO / "docs" / "python.md", "python"))))
def test_docs_python_examples_run(scripted_built, index: int) -> None:
    code = blocks(REPO / "docs" / "python.md", "python")[index]
    run_example(code)


def test_docs_telemetry_python_example_prints_the_documented_output(scripted_built) -> None:
    doc = REPO / "docs" / "telemetry.md"
    code, _streaming = blocks(doc, "python")
    expected, _streamed = blocks(doc, "text")
    out = REPO / "examples" / "relay" / "out"
    try:
        assert run_example(code) == expected
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_docs_telemetry_streaming_example_prints_the_documented_output() -> None:
    doc = REPO / "docs" / "telemetry.md"
    _, code = blocks(doc, "python")
    _, expected = blocks(doc, "text")
    out = REPO / "examples" / "relay-stream" / "out"
    try:
        assert run_example(code) == expected
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_docs_services_example_prints_the_documented_output(scripted_built) -> None:
    doc = REPO / "docs" / "services.md"
    (code,) = blocks(doc, "python")
    (expected,) = blocks(doc, "text")
    assert run_example(code) == expected
