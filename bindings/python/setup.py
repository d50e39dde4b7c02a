"""Build glue for the native library (the project metadata is in pyproject.toml).

The package bundles the fabric-ffi cdylib under exactly one name, ``fabric_core/libfabric_ffi.so``
(``.dylib`` on macOS), the only file ``fabric_core._ffi`` loads. Two modes:

* default: ``cargo build -p fabric-ffi`` in this checkout (profile ``release``;
  ``FABRIC_CORE_CARGO_PROFILE=dev`` reuses a debug build), and that library is bundled;
* ``FABRIC_CORE_PREBUILT_LIB=<path to libfabric_ffi.so>``: that file is bundled as is (no cargo
  run). ``FABRIC_CORE_WHEEL_ADAPTERS=<dir>`` adds each subdirectory of ``<dir>`` (a descriptor
  with its files) as ``<prefix>/share/nemo-fabric/adapters/<name>/``, where discovery finds
  adapters installed in the calling interpreter's environment, and
  ``FABRIC_CORE_WHEEL_BIN=<dir>`` installs each file of ``<dir>`` (the ``fabric`` CLI and
  ``fabric-agent-ctl``) as a script, in ``<prefix>/bin`` on the user's ``PATH``.
  scripts/package.sh uses this mode with the ``dist`` cargo profile, from a clean copy of
  this directory.

Either way the wheel is tagged ``py3-none-<platform>``: the library is loaded with ctypes, so
any Python 3 interpreter works, but the library is platform specific. Libraries of earlier
builds left in ``build/`` are removed before the bundled one is copied.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from distutils.command.build_scripts import build_scripts  # setuptools ships distutils

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
LIBRARY = "libfabric_ffi.dylib" if sys.platform == "darwin" else "libfabric_ffi.so"
PREBUILT = os.environ.get("FABRIC_CORE_PREBUILT_LIB")
ADAPTERS = os.environ.get("FABRIC_CORE_WHEEL_ADAPTERS")
BIN = os.environ.get("FABRIC_CORE_WHEEL_BIN")


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


def cargo_library() -> Path:
    """Builds fabric-ffi in this checkout and returns the library cargo wrote."""

    workspace = HERE.parent.parent
    profile = os.environ.get("FABRIC_CORE_CARGO_PROFILE", "release")
    cargo = os.environ.get("CARGO", "cargo")
    manifest = workspace / "Cargo.toml"
    subprocess.run(
        [cargo, "build", "--profile", profile, "-p", "fabric-ffi", "--manifest-path", str(manifest)],
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR") or workspace / "target")
    return target / ("debug" if profile == "dev" else profile) / LIBRARY


class BundleLibrary(build_py):
    """Copies the library into the package as ``LIBRARY``, and nothing else of its kind."""

    def run(self) -> None:
        super().run()
        library = Path(PREBUILT) if PREBUILT else cargo_library()
        package = Path(self.build_lib, "fabric_core")
        for stale in [*package.glob("_native*"), *package.glob("libfabric_ffi*")]:
            stale.unlink()
        self.copy_file(str(library), str(package / LIBRARY))


class CopyCommands(build_scripts):
    """Installs the native commands as they are (no shebang to rewrite), executable."""

    def copy_scripts(self) -> tuple[list[str], list[str]]:
        self.mkpath(self.build_dir)
        copied = []
        for script in self.scripts:
            target = os.path.join(self.build_dir, os.path.basename(script))
            self.copy_file(script, target)
            os.chmod(target, 0o755)
            copied.append(target)
        return copied, copied


def relative_files(directory: Path) -> list[str]:
    # setuptools takes data file and script sources relative to setup.py only.
    return sorted(os.path.relpath(f, HERE) for f in directory.iterdir() if f.is_file())


def adapter_data_files(root: str) -> list[tuple[str, list[str]]]:
    return [
        (f"share/nemo-fabric/adapters/{adapter.name}", relative_files(adapter))
        for adapter in sorted(Path(root).resolve().iterdir())
        if adapter.is_dir()
    ]


if PREBUILT and not Path(PREBUILT).is_file():
    raise SystemExit(f"FABRIC_CORE_PREBUILT_LIB={PREBUILT} is not a file")
setup(
    cmdclass={
        "build_py": BundleLibrary,
        "build_scripts": CopyCommands,
        "bdist_wheel": PlatformWheel,
    },
    distclass=BinaryDistribution,
    data_files=adapter_data_files(ADAPTERS) if ADAPTERS else [],
    scripts=relative_files(Path(BIN).resolve()) if BIN else [],
)
