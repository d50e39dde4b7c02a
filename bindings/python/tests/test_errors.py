"""Every SDK error class, raised by real native calls where the core can produce it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

import fabric_core
from fabric_core import (
    Fabric,
    FabricCapabilityError,
    FabricConfig,
    FabricConfigError,
    FabricError,
    FabricNativeUnavailableError,
    FabricRuntimeError,
    FabricStateError,
    ResourceObservationUnavailableError,
    ResourceObservationUnsupportedError,
    RunRequest,
)
from fabric_core import _ffi


def test_hierarchy_matches_nemo_fabric() -> None:
    for cls in (
        FabricConfigError,
        FabricRuntimeError,
        FabricStateError,
        FabricCapabilityError,
        FabricNativeUnavailableError,
        ResourceObservationUnavailableError,
        ResourceObservationUnsupportedError,
    ):
        assert issubclass(cls, FabricError)
    for cls in (
        FabricStateError,
        FabricCapabilityError,
        FabricNativeUnavailableError,
        ResourceObservationUnavailableError,
        ResourceObservationUnsupportedError,
    ):
        assert issubclass(cls, FabricRuntimeError)
    assert not issubclass(FabricConfigError, FabricRuntimeError)
    # Planning rejections: NeMo Fabric raises FabricConfigError, so both clauses catch it.
    assert issubclass(FabricCapabilityError, FabricConfigError)
    error = FabricError("m", stage="invoke", code="c", retryable=True, details={"k": [1]})
    assert (error.stage, error.code, error.retryable, error.details) == ("invoke", "c", True, {"k": [1]})


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (_ffi.STATUS_CONFIG, "x", FabricConfigError),
        (_ffi.STATUS_CAPABILITY, "x", FabricCapabilityError),
        (_ffi.STATUS_RUNTIME, "timeout", FabricRuntimeError),
        (_ffi.STATUS_STATE, "runtime_busy", FabricStateError),
        (_ffi.STATUS_RESOURCE_UNAVAILABLE, "x", ResourceObservationUnavailableError),
        (_ffi.STATUS_RESOURCE_UNSUPPORTED, "x", ResourceObservationUnsupportedError),
        (_ffi.STATUS_INVALID_ARGUMENT, "stale_handle", FabricStateError),
        (_ffi.STATUS_INVALID_ARGUMENT, "invalid_utf8", FabricConfigError),
        (_ffi.STATUS_INTERNAL, "internal_panic", FabricRuntimeError),
    ],
)
def test_status_maps_to_class(status: int, code: str, cls: type) -> None:
    text = json.dumps(
        {"stage": "invoke", "code": code, "message": "m", "retryable": True, "metadata": {"path": "p"}}
    )
    error = _ffi.error_from_status(status, text)
    assert type(error) is cls
    assert (error.stage, error.code, error.retryable, error.details) == ("invoke", code, True, {"path": "p"})
    assert str(error) == "m"


def test_config_error_from_native(scripted) -> None:
    config = scripted()
    config.runtime.max_turns = 0
    with pytest.raises(FabricConfigError) as info:
        Fabric().plan(config)
    assert info.value.code == "max_turns_out_of_range"
    assert info.value.details["path"] == "runtime.max_turns"


def test_config_error_for_raw_mapping_and_conflicting_inputs(scripted) -> None:
    with pytest.raises(FabricConfigError):
        Fabric().plan({"metadata": {"name": "x"}})  # type: ignore[arg-type]
    with pytest.raises(FabricConfigError):
        asyncio.run(Fabric().run(scripted(), input="a", request=RunRequest(input="b")))


def test_capability_error_from_native(scripted) -> None:
    config = scripted()
    config.add_mcp_server("gh", transport="stdio", url="mcp")
    with pytest.raises(FabricCapabilityError) as info:
        Fabric().plan(config)
    assert info.value.stage == "plan"
    assert "mcp" in str(info.value)


def test_runtime_error_from_failed_start(scripted) -> None:
    config = scripted(start_fail={"code": "boom", "message": "start failed on purpose"})
    with pytest.raises(FabricRuntimeError) as info:
        asyncio.run(Fabric().start_runtime(config))
    assert not isinstance(info.value, FabricStateError)
    assert info.value.stage == "start"
    assert info.value.code == "boom"


def test_runtime_error_from_crashed_host(scripted) -> None:
    async def main() -> None:
        runtime = await Fabric().start_runtime(scripted())
        with pytest.raises(FabricRuntimeError) as info:
            await runtime.invoke(request=RunRequest(input="x", context={"scripted": {"crash": True}}))
        assert info.value.code == "host_crashed"
        assert info.value.stage == "invoke"
        assert runtime.status.value == "failed"
        with pytest.raises(FabricStateError):
            await runtime.invoke(input="after crash")
        await runtime.stop()

    asyncio.run(main())


def test_state_error_after_stop(scripted) -> None:
    async def main() -> None:
        runtime = await Fabric().start_runtime(scripted())
        await runtime.stop()
        with pytest.raises(FabricStateError):
            await runtime.invoke(input="late")

    asyncio.run(main())


def test_native_unavailable_when_library_missing(tmp_path) -> None:
    script = textwrap.dedent(
        """
        import asyncio, fabric_core
        from fabric_core import Fabric, FabricNativeUnavailableError, FabricConfig
        config = FabricConfig.from_mapping({"metadata": {"name": "x"}, "harness": {"adapter_id": "a"}})
        try:
            Fabric().plan(config)
        except FabricNativeUnavailableError as error:
            print("unavailable", error.code)
        """
    )
    env = dict(os.environ, FABRIC_CORE_LIB=str(tmp_path / "missing-libfabric_ffi.so"))
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "unavailable native_library_missing"


def test_the_package_loads_only_its_one_library_name(tmp_path, monkeypatch) -> None:
    """A stale ``_native*.so`` from another build beside the library is never loaded."""

    from fabric_core import _ffi

    monkeypatch.delenv("FABRIC_CORE_LIB", raising=False)
    (tmp_path / "_native.cpython-311-x86_64-linux-gnu.so").write_bytes(b"stale")
    assert _ffi._candidates(str(tmp_path)) == []
    (tmp_path / _ffi.LIBRARY_NAME).write_bytes(b"library")
    assert _ffi._candidates(str(tmp_path)) == [str(tmp_path / _ffi.LIBRARY_NAME)]


def test_native_unavailable_on_abi_mismatch(tmp_path) -> None:
    """A library with another C ABI version is refused at load."""

    source = tmp_path / "fake.c"
    source.write_text(
        "#include <stdint.h>\n"
        "uint32_t fabric_abi_version(void) { return 999; }\n"
        "const char *fabric_version(void) { return \"9.9.9\"; }\n"
        "void fabric_string_free(char *s) { (void)s; }\n"
    )
    library = tmp_path / "libfake_fabric.so"
    compiled = subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True, text=True
    )
    if compiled.returncode != 0:
        pytest.skip(f"a C compiler (cc) is missing; install it: apt-get install gcc ({compiled.stderr.strip()})")
    script = textwrap.dedent(
        """
        from fabric_core import FabricNativeUnavailableError, native_version
        for _ in range(2):  # the failure is remembered
            try:
                native_version()
            except FabricNativeUnavailableError as error:
                print(error.code, "999" in str(error))
        """
    )
    env = dict(os.environ, FABRIC_CORE_LIB=str(library))
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["abi_version_mismatch", "True", "abi_version_mismatch", "True"]


def test_library_reports_versions() -> None:
    library = _ffi.library()
    assert library.version == fabric_core.native_version()
    assert library._lib.fabric_abi_version() == _ffi.ABI_VERSION
