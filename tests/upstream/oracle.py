#!/usr/bin/env python3
"""Test oracles computed by upstream NeMo Fabric 0.5.0, as installed by scripts/setup.sh.

The Rust tests (through `tests/upstream/mod.rs`) and the `bench/plan` scripts run this file
with the interpreter of the venv that holds `nemo-fabric`, `nemo-fabric-adapter-catalog` and
`nemo-fabric-adapters-common` 0.5.0. Nothing here is a copy of upstream data: every answer is
read from the installed packages or computed by upstream's own code when it is asked for.

    oracle.py probe              versions and the catalog location (exit 3 when unusable)
    oracle.py catalog-path       the installed adapter catalog (`catalog.json` of the package)
    oracle.py agent-schema       JSON Schema of upstream's `FabricConfig` (its pydantic model)
    oracle.py normalize FILE     FILE: JSON list of {"descriptor", "adapter_id"?, "settings"?};
                                 prints, for each, upstream's verdict on the descriptor: the
                                 core-normalized descriptor, its fingerprint and the same
                                 hash over the raw descriptor, or the error
"""

from __future__ import annotations

import json
import sys
import tempfile
from importlib import metadata
from pathlib import Path

REQUIRED = {
    "nemo-fabric": "0.5.0",
    "nemo-fabric-adapter-catalog": "0.5.0",
    "nemo-fabric-adapters-common": "0.5.0",
}


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(3)


def probe() -> dict:
    versions = {}
    for name, wanted in REQUIRED.items():
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            fail(f"{name}=={wanted} is not installed in {sys.executable}")
        if versions[name] != wanted:
            fail(f"{name} {versions[name]} is installed in {sys.executable}; the tests need {wanted}")
    try:
        import nemo_fabric  # noqa: F401
        from nemo_fabric import _native  # noqa: F401
    except ImportError as error:
        fail(f"nemo_fabric does not import in {sys.executable}: {error}")
    return {"python": sys.executable, "versions": versions, "catalog_path": str(catalog_path())}


def catalog_path() -> Path:
    from importlib.resources import files

    path = Path(str(files("nemo_fabric_adapter_catalog").joinpath("catalog.json")))
    if not path.is_file():
        fail(f"nemo_fabric_adapter_catalog has no catalog.json at {path}")
    return path


def agent_schema() -> dict:
    from nemo_fabric import FabricConfig

    return FabricConfig.model_json_schema()


def normalize(items: list[dict]) -> list[dict]:
    """Upstream's descriptor admission: the native core's `inspect_adapter_metadata` (what
    `nemo_fabric.capabilities.inspect_adapter` runs) normalizes the descriptor, and the
    fingerprint is upstream's own `_descriptor_sha256` of that form. When the public
    `inspect_adapter` accepts the config too, its fingerprint must be the same."""
    from nemo_fabric import FabricConfig
    from nemo_fabric import _native
    from nemo_fabric.capabilities import _descriptor_sha256, inspect_adapter

    results = []
    with tempfile.TemporaryDirectory(prefix="fabric-oracle-") as directory:
        path = Path(directory) / "oracle.fabric-adapter.json"
        for item in items:
            descriptor = item["descriptor"]
            adapter_id = item.get("adapter_id") or descriptor.get("adapter_id") or "unknown"
            harness = {"adapter_id": adapter_id}
            if item.get("settings") is not None:
                harness["settings"] = item["settings"]
            config = {
                "schema_version": "fabric.agent/v1alpha1",
                "metadata": {"name": "oracle"},
                "harness": harness,
                "runtime": {},
            }
            path.write_text(json.dumps(descriptor), encoding="utf-8")
            try:
                inspection = json.loads(_native.inspect_adapter_metadata(json.dumps(config), str(path)))
            except Exception as error:  # upstream rejected the descriptor (or the config)
                results.append({"ok": False, "error": str(error)})
                continue
            normalized = inspection["descriptor"]
            sha256 = _descriptor_sha256(normalized)
            try:
                profile = inspect_adapter(FabricConfig.from_mapping(config), descriptor)
            except Exception:
                profile = None
            if profile is not None and profile.descriptor_sha256 != sha256:
                fail(f"{adapter_id}: inspect_adapter fingerprint {profile.descriptor_sha256} != {sha256}")
            results.append(
                {
                    "ok": True,
                    "descriptor": normalized,
                    "sha256": sha256,
                    "raw_sha256": _descriptor_sha256(descriptor),
                }
            )
    return results


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "probe":
        print(json.dumps(probe()))
    elif command == "catalog-path":
        print(catalog_path())
    elif command == "agent-schema":
        print(json.dumps(agent_schema()))
    elif command == "normalize" and len(sys.argv) == 3:
        print(json.dumps(normalize(json.loads(Path(sys.argv[2]).read_text(encoding="utf-8")))))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
