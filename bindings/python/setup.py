"""Build glue for the native library (the project metadata is in pyproject.toml).

Two modes:

* default: setuptools-rust builds the fabric-ffi cdylib with cargo and bundles it as
  ``fabric_core/_native*.so``;
* ``FABRIC_CORE_PREBUILT_LIB=<path to libfabric_ffi.so>``: that file is bundled as is as
  ``fabric_core/libfabric_ffi.so`` (no cargo run), and ``FABRIC_CORE_WHEEL_ADAPTERS=<dir>`` adds each subdirectory of ``<dir>`` (a
  descriptor with its files) as ``<prefix>/share/nemo-fabric/adapters/<name>/``, where
  discovery finds adapters installed in the calling interpreter's environment.
  scripts/package.sh uses this mode with the ``dist`` cargo profile.

Either way the wheel is tagged ``py3-none-<platform>``: the library is loaded with ctypes, so
any Python 3 interpreter works, but the library is platform specific.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

PREBUILT = os.environ.get("FABRIC_CORE_PREBUILT_LIB")
ADAPTERS = os.environ.get("FABRIC_CORE_WHEEL_ADAPTERS")


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: no Python ABI dependency, one platform."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True


class BundlePrebuilt(build_py):
    """Copies the prebuilt library into the package under its own name (``libfabric_ffi.so``)."""

    def run(self) -> None:
        super().run()
        assert PREBUILT is not None
        self.copy_file(PREBUILT, str(Path(self.build_lib, "fabric_core", Path(PREBUILT).name)))


def adapter_data_files(root: str) -> list[tuple[str, list[str]]]:
    here = Path(__file__).resolve().parent
    entries = []
    for adapter in sorted(Path(root).resolve().iterdir()):
        if adapter.is_dir():
            # setuptools takes data file sources relative to setup.py only.
            files = sorted(os.path.relpath(f, here) for f in adapter.iterdir() if f.is_file())
            entries.append((f"share/nemo-fabric/adapters/{adapter.name}", files))
    return entries


if PREBUILT:
    if not Path(PREBUILT).is_file():
        raise SystemExit(f"FABRIC_CORE_PREBUILT_LIB={PREBUILT} is not a file")
    setup(
        cmdclass={"build_py": BundlePrebuilt, "bdist_wheel": PlatformWheel},
        distclass=BinaryDistribution,
        data_files=adapter_data_files(ADAPTERS) if ADAPTERS else [],
    )
else:
    from setuptools_rust import Binding, RustExtension

    setup(
        cmdclass={"bdist_wheel": PlatformWheel},
        rust_extensions=[
            RustExtension(
                "fabric_core._native",
                path="../../fabric-ffi/Cargo.toml",
                binding=Binding.NoBinding,
                py_limited_api=False,
            )
        ],
    )
