"""The hand-written request models agree with the schemas generated from the Rust types.

Result models are generated (``fabric_core._generated``); the config-building and request
models stay idiomatic, so this test holds them to the same source of truth: every field of
a model is a property of the schema object of the same name, and every required property
is a field.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from fabric_core import _generated, models
from fcsupport import REPO

SCHEMAS = REPO / "schemas" / "sdk"


def _definitions() -> dict[str, dict]:
    found: dict[str, dict] = {}
    for name in ("agent", "run-request", "check-request"):
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        found[schema["title"]] = schema
        found.update(schema.get("$defs", {}))
    return found


DEFINITIONS = _definitions()
MODELS = [
    cls
    for cls in vars(models).values()
    if isinstance(cls, type)
    and dataclasses.is_dataclass(cls)
    and issubclass(cls, models._Model)
    and cls.__name__ in DEFINITIONS
]


def test_most_request_models_have_a_schema() -> None:
    assert len(MODELS) >= 25, [cls.__name__ for cls in MODELS]
    for name in ("FabricConfig", "RunRequest", "CheckRequest", "McpServerConfig"):
        assert name in [cls.__name__ for cls in MODELS]


@pytest.mark.parametrize("model", MODELS, ids=lambda cls: cls.__name__)
def test_request_model_fields_match_the_schema(model: type) -> None:
    schema = DEFINITIONS[model.__name__]
    properties = set(schema.get("properties", {}))
    fields = set(model._field_names())
    extra = fields - properties
    if schema.get("additionalProperties") is True:
        # An open object is a declared extension point (Relay-owned keys, the `type` tag of
        # a tagged sink): the binding may model keys the core passes through unchanged.
        extra = set()
    assert not extra, f"{model.__name__}: not in the schema: {extra}"
    required = set(schema.get("required", []))
    assert required <= fields, f"{model.__name__}: required but missing: {required - fields}"


def test_generated_tables_match_the_core() -> None:
    from fabric_core import _ffi

    assert _generated.STAGES == (
        "config", "plan", "prepare", "start", "invoke", "stop", "release", "artifact",
    )
    assert _ffi.Library.__name__ == "Library"
    assert _generated.ERROR_CODES["stale_handle"][2] == "state"
    assert _generated.STATUS_CLASSES[1] == "config"
