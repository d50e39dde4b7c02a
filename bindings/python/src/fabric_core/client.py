"""``Fabric``: the SDK entry point, and ``inspect_adapter``."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
from collections.abc import Mapping
from typing import Any

from fabric_core import _ffi, _operation
from fabric_core._codes import Code
from fabric_core._mapping import FabricMapping
from fabric_core._sdk_model import foreign_model
from fabric_core._util import (
    call_blocking,
    capture_options,
    config_json,
    dumps,
    json_mapping,
    options_arg,
    request_payload,
    to_thread,
)
from fabric_core.environment import EnvironmentHandle
from fabric_core.errors import FabricConfigError, FabricStateError
from fabric_core.models import CheckRequest, FabricConfig, RunRequest
from fabric_core.prewarm import Prewarm
from fabric_core.runtime import Runtime
from fabric_core.runtime import _backstop as _runtime_backstop
from fabric_core.service import Service, ServiceStatus
from fabric_core.types import (
    AdapterCapabilityProfile,
    CheckReport,
    ConformanceReport,
    DoctorReport,
    EnvironmentInfo,
    EnvironmentReference,
    RunPlan,
    RunResult,
    ServiceHandle,
    ServiceReference,
)

PathArg = str | os.PathLike[str] | None


class Fabric:
    """The SDK entry point: a lightweight, reusable facade (no cleanup needed).

    ``plan`` is synchronous; every call that may block on adapter processes is a
    coroutine that runs the native call in a worker thread (``asyncio.to_thread``), so
    independent runtimes progress concurrently.
    """

    def __init__(self) -> None:
        # The last plan's JSON text and its decoded RunPlan (see ``plan``).
        self._last_plan: tuple[str, RunPlan] | None = None

    @staticmethod
    def _lib() -> _ffi.Library:
        return _ffi.library()

    def validate(self, config: FabricConfig, *, base_dir: PathArg = None) -> FabricConfig:
        """Validate a config with the native core and return its canonical form.

        With ``base_dir``, relative paths (skills, workspace, artifacts, discovery, Relay
        output) come back resolved against it; without, they stay as written. Raises ``FabricConfigError`` naming the offending field path.
        """

        text = self._lib().fabric_validate(config_json(config), options_arg(base_dir=base_dir), _ffi.out_slot())
        decoded = json.loads(text)
        canonical = decoded.get("config", decoded) if isinstance(decoded, Mapping) else decoded
        return FabricConfig.from_mapping(canonical)

    def plan(self, config: FabricConfig, *, base_dir: PathArg = None) -> RunPlan:
        """Resolve a config into an immutable ``RunPlan`` (adapter, capabilities).

        Does not start a runtime. Raises ``FabricConfigError`` or
        ``FabricCapabilityError``.
        """

        text = self._lib().fabric_plan(config_json(config), options_arg(base_dir=base_dir), _ffi.out_slot())
        # Planning the same config again returns the same text (the core keeps the plan
        # while its inputs are unchanged): the decoded plan, immutable, is reused then.
        last = self._last_plan
        if last is not None and last[0] == text:
            return last[1]
        plan = RunPlan._from_json(json.loads(text))
        self._last_plan = (text, plan)
        return plan

    async def doctor(self, config: FabricConfig, *, base_dir: PathArg = None) -> DoctorReport:
        """Preflight diagnostics (adapter resolution, requirements) without starting a
        runtime."""

        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir)
        text = await call_blocking(lambda: library.fabric_doctor(payload, options, _ffi.out_slot()))
        return DoctorReport._from_json(json.loads(text))

    async def check_adapter(
        self,
        adapter_id: str | None = None,
        *,
        descriptor: PathArg = None,
        config: FabricConfig | None = None,
        base_dir: PathArg = None,
        only: list[str] | None = None,
        model_stub: bool | Mapping[str, Any] | None = None,
        stop_deadline_seconds: float | None = None,
    ) -> ConformanceReport:
        """Run the adapter conformance checks (docs/checking-adapters.md), as
        ``fabric adapters check`` does, and return the ``ConformanceReport``.

        Name the adapter by ``adapter_id`` (as discovery finds it) or ``descriptor`` (a
        file). ``config`` is the accepted config to start from (default: built from the
        descriptor); ``only`` limits the groups. ``model_stub`` serves the config's models from
        the core's stub model servers (``True`` for the default reply, or a reply script such
        as ``{"replies": [{"text": "done"}]}``, docs/stub-model.md) so the target checks can
        run; ``stop_deadline_seconds`` is how long the adapter has to exit after ``stop`` or
        EOF (default 2). A failing check is in the report (``summary.failed``), not an
        exception; bad input raises ``FabricConfigError``.
        """

        request: dict[str, Any] = {}
        if adapter_id is not None:
            request["adapter_id"] = adapter_id
        if descriptor is not None:
            request["descriptor"] = os.fspath(descriptor)
        if config is not None:
            request["config"] = json.loads(config_json(config))
        if base_dir is not None:
            request["base_dir"] = os.fspath(base_dir)
        if only:
            request["only"] = list(only)
        if model_stub is True:
            request["model_stub"] = {}
        elif model_stub:
            request["model_stub"] = model_stub.to_dict() if isinstance(model_stub, FabricMapping) else dict(model_stub)
        if stop_deadline_seconds is not None:
            request["stop_deadline_seconds"] = stop_deadline_seconds
        library = self._lib()
        payload = dumps(request)
        text = await call_blocking(lambda: library.fabric_adapter_check(payload, _ffi.out_slot()))
        return ConformanceReport._from_json(json.loads(text))

    async def run(
        self,
        config: FabricConfig,
        *,
        base_dir: PathArg = None,
        input: Any = None,
        request: RunRequest | None = None,
        expected_descriptor_sha256: str | None = None,
        start_timeout_seconds: float | None = None,
        capture_model_calls: bool = False,
        max_model_calls: int | None = None,
        max_total_tokens: int | None = None,
        model_call_body_bytes: int | None = None,
    ) -> RunResult:
        """Start a runtime, invoke it once, stop it, and return the ``RunResult``.

        ``input`` and ``request`` are mutually exclusive (neither = empty input). The
        runtime is stopped even when the invocation fails; a stop failure after a
        successful turn is reported in the result (``error.stage == "stop"``).
        ``start_timeout_seconds`` bounds the adapter host's answer to ``start`` (default 90).

        ``capture_model_calls=True`` puts the core's model-call gateway between the harness
        and each model with a ``base_url``: calls are forwarded unchanged and recorded in
        the invocation's ``model-calls.jsonl`` (``RunResult.model_calls``,
        ``RunResult.model_call_records()``); ``max_model_calls`` and ``max_total_tokens``
        are per-invocation budgets (an over-budget call gets HTTP 429 and the result a
        ``budget_exceeded`` event); ``model_call_body_bytes`` caps a recorded body
        (docs/model-calls.md).
        """

        library = self._lib()
        payload = config_json(config)
        options = options_arg(
            base_dir=base_dir,
            expected_descriptor_sha256=expected_descriptor_sha256,
            start_timeout_seconds=start_timeout_seconds,
            capture=capture_options(
                capture_model_calls, max_model_calls, max_total_tokens, model_call_body_bytes
            ),
        )
        request_bytes = dumps(request_payload(input=input, request=request))
        # Without a worker thread: the core runs it on its own threads and the event loop
        # watches the operation's readiness descriptor.
        text = await _operation.call(
            library,
            lambda queue, operation: library.fabric_run_begin(
                payload, request_bytes, options, queue, operation, _ffi.out_slot()
            ),
            lambda: library.fabric_run(payload, request_bytes, options, _ffi.out_slot()),
        )
        return RunResult._from_json(json.loads(text))

    def prewarm(
        self,
        config: FabricConfig,
        *,
        hosts: int = 1,
        base_dir: PathArg = None,
        expected_descriptor_sha256: str | None = None,
        start_timeout_seconds: float | None = None,
    ) -> Prewarm:
        """Launch ``hosts`` adapter hosts (1 to 64) of ``config`` ahead of time.

        Returns a ``Prewarm`` (a context manager; ``close()`` terminates the hosts still
        waiting). Later ``run``/``start_runtime`` calls with the same config and options
        take a waiting host (and the core launches a replacement in the background); results,
        evidence and stats are those of a cold start. Returns once the hosts are launched.
        Raises ``FabricConfigError`` (``hosts`` out of range: ``details["path"] == "hosts"``)
        or ``FabricCapabilityError`` (``prewarm_unsupported``: a non-local environment
        provider).
        """

        if isinstance(hosts, bool) or not isinstance(hosts, int) or not 0 <= hosts < 2**32:
            raise FabricConfigError(
                "hosts must be an integer from 1 to 64", stage="config", code=Code.INVALID_ARGUMENT
            )
        library = self._lib()
        options = options_arg(
            base_dir=base_dir,
            expected_descriptor_sha256=expected_descriptor_sha256,
            start_timeout_seconds=start_timeout_seconds,
        )
        slot = ctypes.c_uint64(0)
        text = library.fabric_prewarm_start(
            config_json(config), options, hosts, ctypes.byref(slot), _ffi.out_slot()
        )
        return Prewarm(library=library, handle=slot.value, info=json.loads(text))

    def batch(
        self,
        config: FabricConfig,
        items: Any,
        *,
        concurrency: int | None = None,
        isolation: str | None = None,
        attempts: int | None = None,
        retry_failed: bool | None = None,
        timeout_seconds: float | None = None,
        grace_seconds: float | None = None,
        prewarm: bool | None = None,
        output: str | os.PathLike[str] | None = None,
        base_dir: PathArg = None,
        capture_model_calls: bool = False,
        max_model_calls: int | None = None,
        max_total_tokens: int | None = None,
        model_call_body_bytes: int | None = None,
    ) -> Any:
        """Run a data set of items through ``config`` on the core's batch engine:
        ``async for done in fabric.batch(config, items, concurrency=8): ...`` yields a
        ``BatchLine`` per finished item (``id``, ``attempts``, ``result`` or ``error``) in
        completion order; the returned ``Batch`` holds the ``summary`` afterwards.
        ``prewarm=False`` starts every ``fresh`` item cold (by default up to
        ``concurrency`` hosts are launched ahead of the items). ``capture_model_calls``
        and its budgets apply to every item's runtime as for ``run``: each result carries
        its ``model_calls`` and the summary their totals. See ``fabric_core.batch`` and
        docs/batches.md."""

        from fabric_core.batch import Batch, batch_settings

        settings = batch_settings(
            concurrency=concurrency,
            isolation=isolation,
            attempts=attempts,
            retry_failed=retry_failed,
            timeout_seconds=timeout_seconds,
            grace_seconds=grace_seconds,
            prewarm=prewarm,
            output=None if output is None else os.fspath(output),
            base_dir=base_dir,
            capture=capture_options(capture_model_calls, max_model_calls, max_total_tokens, model_call_body_bytes),
        )
        return Batch(config, items, settings)

    async def start_runtime(
        self,
        config: FabricConfig,
        *,
        base_dir: PathArg = None,
        overrides: Mapping[str, Any] | None = None,
        expected_descriptor_sha256: str | None = None,
        start_timeout_seconds: float | None = None,
        streaming: bool = False,
        launch_collector: bool | None = None,
        completion_wait_timeout: float | None = None,
        collector_memory_budget_bytes: int | None = None,
        service: Service | None = None,
        capture_model_calls: bool = False,
        max_model_calls: int | None = None,
        max_total_tokens: int | None = None,
        model_call_body_bytes: int | None = None,
    ) -> Runtime:
        """Start a stateful runtime for ordered invocations.

        Use the returned ``Runtime`` as an async context manager. ``overrides`` apply to
        every invocation below the request's own overrides. ``start_timeout_seconds``
        bounds the adapter host's answer to ``start`` (default 90; a timeout raises
        ``FabricRuntimeError`` with ``code == "timeout"`` and ``details["timeout_ms"]``).

        ``streaming=True`` (with Relay telemetry in ``config``) makes
        ``Runtime.invoke_stream()`` available: by default the core runs an embedded ATOF
        collector for the runtime; ``launch_collector=False`` uses the external collector
        named by the config's ``nemo-fabric-stream`` sink. ``completion_wait_timeout``
        (seconds, default 1) is validated and kept for upstream compatibility.
        ``collector_memory_budget_bytes`` (at least 1048576, default 64 MiB) bounds what the
        embedded collector holds (docs/telemetry.md, "The collector"). Without Relay, or
        ``launch_collector`` without streaming, raises ``FabricConfigError``.

        ``service`` (from ``prepare_service``/``attach_service``) connects the runtime to
        that shared service: its config must match the service's (name, models,
        environment, ``runtime.timeout_seconds``, adapter config), else
        ``FabricConfigError`` (code ``service_binding_mismatch``, the differing sections in
        ``details["fields"]``); a released service raises ``FabricConfigError`` ("service
        must be active").

        ``capture_model_calls=True`` puts the core's model-call gateway between the harness
        and each model with a ``base_url``: calls are forwarded unchanged and recorded in
        the invocation's ``model-calls.jsonl`` (``RunResult.model_calls``,
        ``RunResult.model_call_records()``); ``max_model_calls`` and ``max_total_tokens``
        are per-invocation budgets (an over-budget call gets HTTP 429 and the result a
        ``budget_exceeded`` event); ``model_call_body_bytes`` caps a recorded body
        (docs/model-calls.md).
        """

        if service is not None and not isinstance(service, Service):
            raise FabricConfigError(
                "service must be a Service", stage="start", code=Code.INVALID_ARGUMENT
            )
        library = self._lib()
        payload = config_json(config)
        options = options_arg(
            base_dir=base_dir,
            expected_descriptor_sha256=expected_descriptor_sha256,
            start_timeout_seconds=start_timeout_seconds,
            streaming=streaming,
            launch_collector=launch_collector,
            completion_wait_timeout=completion_wait_timeout,
            collector_memory_budget_bytes=collector_memory_budget_bytes,
            capture=capture_options(
                capture_model_calls, max_model_calls, max_total_tokens, model_call_body_bytes
            ),
        )
        runtime_overrides = json_mapping(overrides, "runtime overrides")

        if service is not None:
            return await self._start_on_service(
                service, payload, options, runtime_overrides
            )

        def start() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_runtime_start(payload, options, ctypes.byref(slot), _ffi.out_slot())
            return slot.value, text

        def begin(queue: int, operation: Any) -> None:
            library.fabric_runtime_start_begin(payload, options, queue, operation, _ffi.out_slot())

        handle, text = await _start_guarded(library, start, begin)
        return Runtime(
            library=library, handle=handle, info=json.loads(text), overrides=runtime_overrides
        )

    async def _start_on_service(
        self,
        service: Service,
        payload: bytes,
        options: bytes | None,
        overrides: dict[str, Any],
    ) -> Runtime:
        library = self._lib()
        async with service._lock:
            if service.status is not ServiceStatus.ACTIVE:
                raise FabricConfigError(
                    "service must be active", stage="start", code=Code.SERVICE_NOT_ACTIVE
                )
            service_handle = service._native_for_start()

            def start() -> tuple[int, str]:
                slot = ctypes.c_uint64(0)
                text = library.fabric_service_start_runtime(
                    service_handle, payload, options, ctypes.byref(slot), _ffi.out_slot()
                )
                return slot.value, text

            handle, text = await _start_guarded(library, start)
        runtime = Runtime(library=library, handle=handle, info=json.loads(text), overrides=overrides)
        runtime._service = service  # children hold their parent
        return runtime

    async def prepare_service(
        self,
        config: FabricConfig,
        *,
        base_dir: PathArg = None,
        start_timeout_seconds: float | None = None,
    ) -> Service:
        """Start a Fabric-owned shared service of the configured adapter (its descriptor
        must claim ``capabilities.service``, else ``FabricCapabilityError`` with code
        ``service_unsupported``). Use the result as an async context manager."""

        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir, start_timeout_seconds=start_timeout_seconds)

        def prepare() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_service_prepare(payload, options, ctypes.byref(slot), _ffi.out_slot())
            return slot.value, text

        handle, text = await _service_guarded(library, prepare)
        return Service(library=library, handle=handle, info=json.loads(text))

    async def attach_service(
        self,
        config: FabricConfig,
        reference: ServiceReference | Mapping[str, Any],
        *,
        base_dir: PathArg = None,
        start_timeout_seconds: float | None = None,
    ) -> Service:
        """Attach to a caller-owned service named by ``reference`` (``adapter_id``,
        ``service_type``, adapter-defined ``connection``, ``metadata``). Releasing the
        returned service detaches Fabric without stopping the caller's deployment."""

        reference_bytes = _reference_json(
            reference, ServiceReference, "service reference", "a ServiceReference", Code.INVALID_SERVICE_REFERENCE
        )
        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir, start_timeout_seconds=start_timeout_seconds)

        def attach() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_service_attach(
                payload, reference_bytes, options, ctypes.byref(slot), _ffi.out_slot()
            )
            return slot.value, text

        handle, text = await _service_guarded(library, attach)
        return Service(library=library, handle=handle, info=json.loads(text))

    async def prepare_environment(
        self, config: FabricConfig, *, base_dir: PathArg = None
    ) -> EnvironmentHandle:
        """Prepare the configured environment without starting an agent."""

        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir)

        def prepare() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_environment_prepare(payload, options, ctypes.byref(slot), _ffi.out_slot())
            return slot.value, text

        handle, text = await call_blocking(prepare)
        return EnvironmentHandle(library=library, handle=handle, info=json.loads(text))

    async def attach_environment(
        self,
        config: FabricConfig,
        reference: EnvironmentReference | Mapping[str, Any],
        *,
        base_dir: PathArg = None,
    ) -> EnvironmentHandle:
        """Attach to an existing environment named by ``reference`` (``provider`` = the
        config's ``environment.provider``, provider-specific ``resource``; the local provider
        takes ``resource.workspace``, an existing directory). The environment stays the
        caller's: ``release_environment`` only detaches. ``info["reference"]`` of any
        environment is a reference this method accepts."""

        reference_bytes = _reference_json(
            reference,
            EnvironmentReference,
            "environment reference",
            "an EnvironmentReference",
            Code.INVALID_ENVIRONMENT_REFERENCE,
        )
        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir)

        def attach() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_environment_attach(
                payload, reference_bytes, options, ctypes.byref(slot), _ffi.out_slot()
            )
            return slot.value, text

        handle, text = await call_blocking(attach)
        return EnvironmentHandle(library=library, handle=handle, info=json.loads(text))

    async def start_runtime_in(
        self,
        config: FabricConfig,
        environment: EnvironmentHandle,
        *,
        base_dir: PathArg = None,
        overrides: Mapping[str, Any] | None = None,
        start_timeout_seconds: float | None = None,
    ) -> Runtime:
        """Start a runtime inside a prepared environment (``start_timeout_seconds`` as
        :meth:`start_runtime`)."""

        if not isinstance(environment, EnvironmentHandle):
            raise FabricConfigError(
                "environment must be an EnvironmentHandle", stage="start", code=Code.INVALID_ARGUMENT
            )
        if environment.native_handle == 0:
            raise FabricStateError(
                "environment was already released", stage="start", code=Code.ENVIRONMENT_RELEASED
            )
        library = self._lib()
        payload = config_json(config)
        options = options_arg(base_dir=base_dir, start_timeout_seconds=start_timeout_seconds)
        runtime_overrides = json_mapping(overrides, "runtime overrides")
        env_handle = environment.native_handle

        def start() -> tuple[int, str]:
            slot = ctypes.c_uint64(0)
            text = library.fabric_environment_start_runtime(
                env_handle, payload, options, ctypes.byref(slot), _ffi.out_slot()
            )
            return slot.value, text

        handle, text = await _start_guarded(library, start)
        return Runtime(
            library=library,
            handle=handle,
            info=json.loads(text),
            overrides=runtime_overrides,
            environment=environment,
        )

    async def check(
        self,
        *,
        request: CheckRequest | Mapping[str, Any],
        environment: EnvironmentHandle | None = None,
        service: Service | ServiceHandle | Mapping[str, Any] | None = None,
    ) -> CheckReport:
        """Check the health of a runtime and return an immutable ``CheckReport``.

        ``environment`` is the prepared environment the runtime was started in
        (``start_runtime_in``), or ``None`` for runtimes from ``start_runtime``. Every
        outcome is a report, never an exception: ``passed``, ``failed``, ``unknown`` (e.g.
        ``runtime_unavailable``, ``probe_timeout``, ``observation_changed``) or
        ``unsupported`` (``unsupported_adapter``, ``unsupported_scope``). An invalid request
        raises ``FabricConfigError`` (code ``invalid_check_request``, the field in
        ``details["path"]``); a released environment raises ``FabricStateError`` (code
        ``environment_released``). Checks run on their own connection to the adapter host, so
        they complete while an invocation is pending. In a provider environment
        (``environment.provider`` other than ``local``) the environment's runtime server
        answers: it selects the runtime by id, and ``scope="server"`` checks the server
        itself (without such an environment that scope is ``unsupported/unsupported_scope``).

        ``service`` (a ``Service`` or its ``handle``) with ``scope="service"`` checks that
        service's host; a released service answers ``unknown/service_unavailable``.
        """

        if environment is not None and not isinstance(environment, EnvironmentHandle):
            raise FabricConfigError(
                "environment must be an EnvironmentHandle or None",
                stage="config",
                code=Code.INVALID_ARGUMENT,
            )
        if foreign_model(request):
            request = CheckRequest.model_validate(request)
        if isinstance(request, CheckRequest):
            payload = request.to_mapping()
        elif isinstance(request, Mapping):
            payload = json_mapping(request, "check request")
        else:
            raise FabricConfigError(
                "request must be a CheckRequest", stage="config", code=Code.INVALID_CHECK_REQUEST
            )
        if service is not None:
            if isinstance(service, Service):
                service_id = service.service_id
            elif isinstance(service, Mapping):
                service_id = service.get("service_id")
            else:
                raise FabricConfigError(
                    "service must be a Service or its handle",
                    stage="config",
                    code=Code.INVALID_CHECK_REQUEST,
                )
            if payload.get("service_id") != service_id:
                raise FabricConfigError(
                    "request.service_id must name the given service",
                    stage="config",
                    code=Code.INVALID_CHECK_REQUEST,
                    details={"path": "service_id"},
                )
        library = self._lib()
        env_handle = 0
        if environment is not None:
            env_handle = environment.native_handle
            if env_handle == 0:
                raise FabricStateError(
                    "environment was already released", stage="config", code=Code.ENVIRONMENT_RELEASED
                )
        request_bytes = dumps(payload)
        text = await call_blocking(
            lambda: library.fabric_check(env_handle, request_bytes, _ffi.out_slot())
        )
        return CheckReport._from_json(json.loads(text))

    async def release_environment(self, environment: EnvironmentHandle) -> None:
        """Release a prepared environment (after its runtimes stopped). Idempotent."""

        if not isinstance(environment, EnvironmentHandle):
            raise FabricConfigError(
                "environment must be an EnvironmentHandle", stage="release", code=Code.INVALID_ARGUMENT
            )
        if environment.released:
            return
        library = environment._library
        handle = environment.native_handle
        text = await call_blocking(lambda: library.fabric_environment_release(handle, _ffi.out_slot()))
        # The released info (with the provider's `sandbox_observation`) replaces the prepared one.
        environment._info = EnvironmentInfo.from_mapping(json.loads(text))
        environment._released = True
        environment._free()


async def _service_guarded(library: _ffi.Library, start: Any) -> tuple[int, str]:
    """Run a native service start; if the awaiting task is cancelled after the service
    started, release and free it instead of leaking it."""

    def release(handle: int) -> None:
        try:
            library.fabric_service_release(handle, _ffi.out_slot())
        finally:
            library.fabric_service_free(handle)

    return await _blocking_guarded(start, release)


async def _start_guarded(library: _ffi.Library, start: Any, begin: Any = None) -> tuple[int, str]:
    """Run a native start; if the awaiting task is cancelled after the runtime started,
    stop and free it instead of leaking it. With ``begin`` (a ``fabric_..._start_begin``
    call) the start runs without a worker thread (see ``_operation``); the take issues the
    runtime handle in the identity's ``handle``."""

    future = _operation.start(library, begin) if begin is not None else None
    if future is not None:
        try:
            text = await asyncio.shield(future)
        except asyncio.CancelledError:
            # The start finishes anyway; a runtime it started belongs to nobody: end it.
            try:
                text = await asyncio.shield(future)
            except BaseException:  # noqa: BLE001 - failed or interrupted again: nothing started
                raise asyncio.CancelledError from None
            handle = int(json.loads(text)["handle"])
            await _end_orphan(lambda orphan: _runtime_backstop(library, orphan), handle)
            raise
        return int(json.loads(text)["handle"]), text

    return await _blocking_guarded(start, lambda handle: _runtime_backstop(library, handle))


async def _blocking_guarded(start: Any, end: Any) -> tuple[int, str]:
    """Run a blocking native start ``() -> (handle, text)`` in a worker; if the awaiting
    task is cancelled after it produced a handle, ``end(handle)`` disposes of it."""

    started: list[tuple[int, str]] = []

    def run() -> tuple[int, str]:
        outcome = start()
        started.append(outcome)
        return outcome

    try:
        return await call_blocking(run)
    except asyncio.CancelledError:
        if started:
            await _end_orphan(end, started[0][0])
        raise


async def _end_orphan(end: Any, handle: int) -> None:
    """Dispose of what an abandoned start produced (in a worker, even if cancelled again)."""

    try:
        await asyncio.shield(to_thread(lambda: end(handle)))
    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - best effort
        pass


def inspect_adapter(
    config: FabricConfig,
    descriptor: Mapping[str, Any] | None,
    target_descriptor: Mapping[str, Any] | None = None,
) -> AdapterCapabilityProfile:
    """Inspect declared adapter support for a config from descriptor metadata alone.

    ``descriptor`` is the adapter's canonical descriptor (for example from the adapter
    catalog); ``None`` permits basic execution with false capability claims but rejects
    requested skills, MCP or telemetry. ``target_descriptor`` is required for a config that
    selects a registered workflow. Does not import the harness or read task-local paths.
    """

    library = _ffi.library()
    descriptor_bytes = None if descriptor is None else dumps(dict(descriptor))
    target_bytes = None if target_descriptor is None else dumps(dict(target_descriptor))
    text = library.fabric_inspect(config_json(config), descriptor_bytes, target_bytes, _ffi.out_slot())
    return AdapterCapabilityProfile._from_json(json.loads(text))


__all__ = ["Fabric", "inspect_adapter"]


def _reference_json(reference: Any, model: type[Any], what: str, expected: str, code: str) -> bytes:
    """A service or environment reference (its model or a plain mapping) as the C ABI's JSON."""

    if isinstance(reference, model):
        return dumps(reference.to_mapping())
    if isinstance(reference, Mapping):
        return dumps(json_mapping(reference, what))
    raise FabricConfigError(f"reference must be {expected}", stage="config", code=code)
