"""Private helpers shared by the client, runtime and environment modules."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import json
import os
import platform
import sys
import sysconfig
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fabric_core._codes import Code
from fabric_core._sdk_model import foreign_model
from fabric_core.errors import FabricConfigError
from fabric_core.models import FabricConfig, RunRequest

_R = TypeVar("_R")


def config_json(config: FabricConfig) -> bytes:
    """Serialize a typed config for the native core (raw mappings are rejected; a NeMo
    Fabric model is read through its ``model_dump``)."""

    if foreign_model(config):
        config = FabricConfig.model_validate(config)
    if not isinstance(config, FabricConfig):
        if isinstance(config, Mapping):
            raise FabricConfigError(
                "config mappings are not accepted directly; use FabricConfig.from_mapping(...) first",
                stage="config",
                code=Code.INVALID_CONFIG_TYPE,
            )
        raise FabricConfigError(
            "config must be a FabricConfig", stage="config", code=Code.INVALID_CONFIG_TYPE
        )
    return dumps(config.to_mapping())


def dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise FabricConfigError(
            f"value is not JSON-compatible: {error}", stage="config", code=Code.INVALID_JSON_VALUE
        ) from error


def options_arg(
    *,
    base_dir: str | os.PathLike[str] | None = None,
    expected_descriptor_sha256: str | None = None,
    start_timeout_seconds: float | None = None,
    streaming: bool | None = None,
    launch_collector: bool | None = None,
    completion_wait_timeout: float | None = None,
    collector_memory_budget_bytes: int | None = None,
    capture: Mapping[str, Any] | None = None,
) -> bytes:
    """The ``options_json`` argument of the planning calls (schema ``sdk/call-options``);
    the core enforces every option.

    Every options object carries the running interpreter: its prefix (``python_prefix``, a
    discovery source: ``<prefix>/share/nemo-fabric/{adapters,targets}``, as upstream's SDK
    searches) and its executable (``python_interpreter``, which runs ``python``-kind adapters
    unless ``ADAPTER_PYTHON`` is set), so adapters installed in a virtual environment work
    when that environment's interpreter is run without activating it. It also names the
    binding (``binding``: this package's name and version, and the interpreter's), which the
    core reports in ``RunResult.execution`` next to its own version."""

    if (
        base_dir is None
        and expected_descriptor_sha256 is None
        and start_timeout_seconds is None
        and not streaming
        and launch_collector is None
        and completion_wait_timeout is None
        and not capture
    ):
        return _default_options()
    options: dict[str, Any] = dict(_interpreter_options())
    if base_dir is not None:
        text = os.fspath(base_dir)
        if "\x00" in text:
            raise FabricConfigError("base_dir must not contain NUL", stage="config", code=Code.INVALID_ARGUMENT)
        options["base_dir"] = text
    if expected_descriptor_sha256 is not None:
        options["expected_descriptor_sha256"] = expected_descriptor_sha256
    if start_timeout_seconds is not None:
        options["start_timeout_seconds"] = start_timeout_seconds
    if streaming:
        options["streaming"] = True
    if launch_collector is not None:
        options["launch_collector"] = launch_collector
    if completion_wait_timeout is not None:
        options["completion_wait_timeout"] = completion_wait_timeout
    if collector_memory_budget_bytes is not None:
        options["collector_memory_budget_bytes"] = collector_memory_budget_bytes
    options.update(capture or {})
    return dumps(options)


def capture_options(
    capture_model_calls: bool,
    max_model_calls: int | None,
    max_total_tokens: int | None,
    model_call_body_bytes: int | None,
) -> dict[str, Any]:
    """The model-call capture members of an options object (absent ones left out; the
    core checks them, e.g. a budget without ``capture_model_calls``)."""

    members = {
        "capture_model_calls": True if capture_model_calls else None,
        "max_model_calls": max_model_calls,
        "max_total_tokens": max_total_tokens,
        "model_call_body_bytes": model_call_body_bytes,
    }
    return {key: value for key, value in members.items() if value is not None}


@functools.lru_cache(maxsize=1)
def _default_options() -> bytes:
    # The options of a call given none: the same text every time (and so the core's plan
    # memo sees the same options).
    return dumps(_interpreter_options())


@functools.lru_cache(maxsize=1)
def _interpreter_options() -> dict[str, Any]:
    # The running interpreter does not change: computed once, copied by each caller.
    from fabric_core import __version__

    options: dict[str, Any] = {
        "binding": {
            "name": "fabric-core",
            "version": __version__,
            "runtime_name": platform.python_implementation().lower(),
            "runtime_version": platform.python_version(),
        }
    }
    prefix = sysconfig.get_path("data") or sys.prefix
    if prefix and "\x00" not in prefix:
        options["python_prefix"] = prefix
    if sys.executable and "\x00" not in sys.executable:
        options["python_interpreter"] = sys.executable
    return options


def json_mapping(value: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FabricConfigError(f"{name} must be a JSON object", stage="config", code=Code.INVALID_REQUEST)
    try:
        decoded = json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as error:
        raise FabricConfigError(
            f"{name} must contain JSON-compatible values", stage="config", code=Code.INVALID_REQUEST
        ) from error
    return decoded


def merge_overrides(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    result = json_mapping(base, "overrides")
    for key, value in json_mapping(extra, "overrides").items():
        current = result.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            result[key] = merge_overrides(current, value)
        else:
            result[key] = value
    return result


def request_payload(
    *,
    input: Any,
    request: RunRequest | None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The request mapping for one invocation (``input`` and ``request`` are exclusive)."""

    if input is not None and request is not None:
        raise FabricConfigError(
            "input and request are mutually exclusive", stage="config", code=Code.INVALID_REQUEST
        )
    if request is not None:
        if foreign_model(request):
            request = RunRequest.model_validate(request)
        if not isinstance(request, RunRequest):
            raise FabricConfigError("request must be a RunRequest", stage="config", code=Code.INVALID_REQUEST)
        payload = request.to_mapping()
    else:
        payload = RunRequest(input=input).to_mapping()
    if overrides:
        merged = merge_overrides(overrides, payload.get("overrides"))
        if merged:
            payload["overrides"] = merged
    return payload


#: Worker threads for blocking native calls. Like ``asyncio.to_thread`` (the context is
#: copied), but on the binding's own pool: the default executor's ``min(32, cpus + 4)``
#: workers would silently cap how many runtimes progress at once, and the SDK must not
#: impose a concurrency limit. Idle workers are reused; they exit with the process.
_MAX_WORKERS = 512
_executor = concurrent.futures.ThreadPoolExecutor(
    max_workers=_MAX_WORKERS, thread_name_prefix="fabric-core"
)


def to_thread(function: Callable[[], _R]) -> asyncio.Future[_R]:
    """Start ``function`` in a worker thread and return its future (``asyncio.to_thread``
    semantics: runs in a copy of the current context)."""

    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return loop.run_in_executor(_executor, functools.partial(context.run, function))


async def call_blocking(function: Callable[[], _R]) -> _R:
    """Run a blocking native call in a worker thread.

    If the awaiting task is cancelled, the native call still finishes in its thread
    (native calls cannot be interrupted); the cancellation is re-raised once it has, so
    no native work outlives the awaiting coroutine.
    """

    worker = to_thread(function)
    try:
        return await asyncio.shield(worker)
    except asyncio.CancelledError:
        while not worker.done():
            try:
                await asyncio.shield(worker)
            except asyncio.CancelledError:
                continue
            except BaseException:
                break
        if not worker.cancelled():
            worker.exception()
        raise
