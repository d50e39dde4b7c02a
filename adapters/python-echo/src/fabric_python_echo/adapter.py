"""The echo runtime.

One `EchoRuntime` per host process (upstream's `lifecycle.serve` creates it on `start`).
It echoes the input text with an optional prefix, keeps a bounded per-runtime history so a
later turn can see the previous one, and honours a few per-invoke directives under
`request.context["scripted"]` (or `request.input["scripted"]` for object inputs), the same
convention as the Rust `fabric.scripted` adapter:

- `fail: {code, message, retryable?}` -> a failed AgentRunResult with that error
- `raise: {code, message}`           -> a lifecycle failure (the runtime is then latched)
- `exception: "text"`                -> raise `RuntimeError(text)` (an unexpected exception:
                                        `lifecycle_adapter_invoke_failed`, traceback on stderr)
- `sleep_ms: N`                      -> wait N ms before answering
- `usage: {...}`                     -> returned as AgentUsage
- `crash: true`                      -> exit at once without answering

Native OpenAI streaming (`invoke_openai_stream`, served by upstream's common host): the turn
runs exactly as `invoke`, then its response text is emitted as `chat.completion.chunk`s of
`request.context["scripted_stream"]["chunk_chars"]` characters (default 16) before the
result is returned.

Request extensions (`request.extensions`, from a caller's `overrides`; the descriptor declares
their `run_request` schema) are echoed back as `output["extensions"]` when present.

NeMo Relay (only when the runtime has Relay enabled and the core wrote a Relay config; see
`relay.py`): each invocation runs in one root Relay scope carrying the Fabric correlation ids,
with one mark per echoed chunk (`chunk_chars` as above); Relay file-sink outputs are listed in
`output["relay_artifacts"]`.

The `require_env` setting names an environment variable `start` needs (like a model-provider
credential): when it is unset, `start` raises `RuntimeError`, the way real harnesses fail.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from nemo_fabric_adapter_contract.models import AgentConfig
from nemo_fabric_adapter_contract.models import AgentRunError
from nemo_fabric_adapter_contract.models import AgentRunRequest
from nemo_fabric_adapter_contract.models import AgentRunResult
from nemo_fabric_adapter_contract.models import AgentRunStatus
from nemo_fabric_adapter_contract.models import AgentUsage
from nemo_fabric_adapter_contract.models import RuntimeContext
from nemo_fabric_adapters.common import lifecycle

from fabric_python_echo.relay import EchoRelay

ADAPTER_ID = "fabric.python-echo"
CRASH_EXIT_CODE = 70
DEFAULT_HISTORY_LIMIT = 64
MAX_HISTORY_LIMIT = 100_000
MAX_SLEEP_MS = 600_000
DEFAULT_CHUNK_CHARS = 16
MAX_CHUNK_CHARS = 1_000_000
_SETTINGS_KEYS = frozenset({"prefix", "history_limit", "require_env"})
_DIRECTIVE_KEYS = frozenset({"fail", "raise", "exception", "sleep_ms", "usage", "crash"})
_USAGE_KEYS = frozenset(
    {
        "input_tokens",
        "cached_input_tokens",
        "input_tokens_include_cache",
        "output_tokens",
        "total_tokens",
        "cost_usd",
    }
)


class _Invalid(ValueError):
    """A directive or setting that does not validate; `args[0]` names the field."""


def _is_int(value: Any, minimum: int, maximum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= maximum


def _parse_settings(settings: Mapping[str, Any]) -> tuple[str, int, str | None]:
    unknown = sorted(set(settings) - _SETTINGS_KEYS)
    if unknown:
        raise _Invalid(f"harness.settings.{unknown[0]}: unexpected field")
    prefix = settings.get("prefix", "")
    if not isinstance(prefix, str):
        raise _Invalid("harness.settings.prefix: must be a string")
    limit = settings.get("history_limit", DEFAULT_HISTORY_LIMIT)
    if not _is_int(limit, 1, MAX_HISTORY_LIMIT):
        raise _Invalid(f"harness.settings.history_limit: must be an integer in 1..={MAX_HISTORY_LIMIT}")
    require_env = settings.get("require_env")
    if require_env is not None and (not isinstance(require_env, str) or not require_env.strip()):
        raise _Invalid("harness.settings.require_env: must be a non-blank string")
    return prefix, limit, require_env


def _error_spec(value: Any, path: str) -> tuple[str, str, bool]:
    if not isinstance(value, Mapping):
        raise _Invalid(f"{path}: must be an object")
    unknown = sorted(set(value) - {"code", "message", "retryable"})
    if unknown:
        raise _Invalid(f"{path}.{unknown[0]}: unexpected field")
    code, message = value.get("code"), value.get("message")
    if not isinstance(code, str) or not code.strip():
        raise _Invalid(f"{path}.code: must be a non-blank string")
    if not isinstance(message, str) or not message.strip():
        raise _Invalid(f"{path}.message: must be a non-blank string")
    retryable = value.get("retryable", False)
    if not isinstance(retryable, bool):
        raise _Invalid(f"{path}.retryable: must be a boolean")
    return code, message, retryable


def _directives(request: AgentRunRequest) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    sources = []
    if isinstance(request.input, Mapping) and "scripted" in request.input:
        sources.append(("request.input.scripted", request.input["scripted"]))
    if "scripted" in request.context:
        sources.append(("request.context.scripted", request.context["scripted"]))
    for path, value in sources:
        if not isinstance(value, Mapping):
            raise _Invalid(f"{path}: must be an object")
        unknown = sorted(set(value) - _DIRECTIVE_KEYS)
        if unknown:
            raise _Invalid(f"{path}.{unknown[0]}: not a directive this adapter knows")
        merged.update(value)
    if "sleep_ms" in merged and not _is_int(merged["sleep_ms"], 0, MAX_SLEEP_MS):
        raise _Invalid(f"scripted.sleep_ms: must be an integer in 0..={MAX_SLEEP_MS}")
    if "crash" in merged and not isinstance(merged["crash"], bool):
        raise _Invalid("scripted.crash: must be a boolean")
    if "exception" in merged and not isinstance(merged["exception"], str):
        raise _Invalid("scripted.exception: must be a string")
    if "usage" in merged:
        usage = merged["usage"]
        if not isinstance(usage, Mapping) or set(usage) - _USAGE_KEYS:
            raise _Invalid("scripted.usage: must be an AgentUsage object")
        try:
            merged["usage"] = AgentUsage.from_mapping(dict(usage))
        except Exception as error:  # the contract's own validation
            raise _Invalid(f"scripted.usage: {error}") from error
    for key in ("fail", "raise"):
        if key in merged:
            merged[key] = _error_spec(merged[key], f"scripted.{key}")
    return merged


def _chunk_chars(request: AgentRunRequest) -> int:
    options = request.context.get("scripted_stream") or {}
    chunk_chars = options.get("chunk_chars", DEFAULT_CHUNK_CHARS) if isinstance(options, Mapping) else None
    if not _is_int(chunk_chars, 1, MAX_CHUNK_CHARS):
        raise lifecycle.LifecycleError(
            "scripted_invalid_directive",
            f"scripted_stream.chunk_chars: must be an integer in 1..={MAX_CHUNK_CHARS}",
        )
    return chunk_chars


def input_text(value: Any) -> str:
    """A string as is; an object's `text`/`input`/`prompt`/`message`; otherwise compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, Mapping):
        for key in ("text", "input", "prompt", "message"):
            if isinstance(value.get(key), str):
                return value[key]
        rest = {k: v for k, v in value.items() if k != "scripted"}
        return json.dumps(rest, separators=(",", ":")) if rest else ""
    return json.dumps(value, separators=(",", ":"))


class EchoRuntime:
    """One echo runtime; its state lives until `stop`."""

    def __init__(self) -> None:
        self._prefix = ""
        self._history: collections.deque[str] = collections.deque(maxlen=DEFAULT_HISTORY_LIMIT)
        self._turn = 0
        self._system: dict[str, str] | None = None
        self._relay: EchoRelay | None = None

    async def start(self, payload: dict[str, Any]) -> None:
        config: AgentConfig = payload["config"]
        settings = config.harness.settings if config.harness is not None else {}
        try:
            self._prefix, limit, require_env = _parse_settings(settings)
        except _Invalid as error:
            raise lifecycle.LifecycleError(
                "invalid_settings", str(error), metadata={"path": str(error).split(":", 1)[0]}
            ) from None
        if require_env is not None and not os.environ.get(require_env):
            # An unexpected exception: lifecycle.serve reports `lifecycle_adapter_start_failed`
            # and prints the traceback to stderr.
            raise RuntimeError(f"the model-provider credential env var {require_env!r} is not set")
        self._history = collections.deque(maxlen=limit)
        self._relay = EchoRelay.from_start(payload)
        system = config.instructions.system if config.instructions is not None else None
        if system is not None:
            self._system = {"content": system.content, "mode": system.mode}
        return None

    async def invoke(self, request: AgentRunRequest, context: RuntimeContext) -> AgentRunResult:
        if self._relay is None:
            return await self._invoke(request, context)
        chunk_chars = _chunk_chars(request)
        async with self._relay.invocation(request, context) as mark:
            result = await self._invoke(request, context)
            text = result.output.get("response") if isinstance(result.output, Mapping) else None
            for start in range(0, len(text or ""), chunk_chars):
                mark(text[start : start + chunk_chars])
        artifacts = self._relay.artifacts()
        if artifacts and isinstance(result.output, dict):
            result.output["relay_artifacts"] = artifacts
        return result

    async def _invoke(self, request: AgentRunRequest, context: RuntimeContext) -> AgentRunResult:
        self._turn += 1
        try:
            directives = _directives(request)
        except _Invalid as error:
            return AgentRunResult(
                status=AgentRunStatus.FAILED,
                output=None,
                error=AgentRunError(code="scripted_invalid_directive", message=str(error)),
            )
        if directives.get("sleep_ms"):
            await asyncio.sleep(directives["sleep_ms"] / 1000)
        if directives.get("crash"):
            print("fabric.python-echo: crash directive; exiting without an answer", file=sys.stderr)
            sys.stderr.flush()
            os._exit(CRASH_EXIT_CODE)
        if "exception" in directives:
            raise RuntimeError(directives["exception"])
        if "raise" in directives:
            code, message, retryable = directives["raise"]
            raise lifecycle.LifecycleError(code, message, retryable=retryable)
        usage = directives.get("usage")
        if "fail" in directives:
            code, message, retryable = directives["fail"]
            return AgentRunResult(
                status=AgentRunStatus.FAILED,
                output=None,
                error=AgentRunError(code=code, message=message, retryable=retryable),
                usage=usage,
            )
        text = input_text(request.input)
        metadata: dict[str, Any] = {"adapter_id": ADAPTER_ID, "runtime_id": context.runtime_id}
        if self._system is not None:
            metadata["system_instruction"] = dict(self._system)
        output = {
            "response": self._prefix + text,
            "turn": self._turn,
            "history": len(self._history),
            "previous_input": self._history[-1] if self._history else None,
            "metadata": metadata,
        }
        if request.extensions:
            output["extensions"] = dict(request.extensions)
        self._history.append(text)
        return AgentRunResult(status=AgentRunStatus.SUCCEEDED, output=output, usage=usage)

    async def invoke_openai_stream(
        self,
        request: AgentRunRequest,
        context: RuntimeContext,
        emit: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> AgentRunResult:
        chunk_chars = _chunk_chars(request)
        result = await self.invoke(request, context)
        output = result.output
        text = output.get("response") if isinstance(output, Mapping) else None
        created = int(time.time())
        for start in range(0, len(text or ""), chunk_chars):
            delta: dict[str, Any] = {"content": text[start : start + chunk_chars]}
            if start == 0:
                delta["role"] = "assistant"
            await emit(
                {
                    "id": f"chatcmpl-{context.invocation_id}",
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": ADAPTER_ID,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                }
            )
        return result

    async def stop(self) -> None:
        self._history.clear()


def main() -> None:
    # With fabric_core's adapter helpers importable, the host also reports its software
    # evidence at start (docs/provenance.md); otherwise upstream's host serves it as is.
    try:
        from fabric_core.adapter_evidence import serve
    except ImportError:
        serve = lifecycle.serve
    serve(EchoRuntime, config_loader=AgentConfig.from_mapping)
