"""Pydantic-v2-shaped methods shared by every public model (``SdkModel``).

Code written against NeMo Fabric's Pydantic models calls ``model_validate``,
``model_validate_json``, ``model_dump``, ``model_dump_json``, ``model_json_schema`` and
``model_copy(update=...)``. ``SdkModel`` gives both model families those methods with
Pydantic v2's semantics for the arguments people use, without depending on Pydantic:

* the config and request models (``fabric_core.models``, dataclasses): ``model_dump`` writes
  every field in declaration order (``None`` included unless ``exclude_none``), then the
  extension fields, as a Pydantic model with ``extra="allow"`` does; a field listed in the
  class's ``_omit_default`` is left out at that value (upstream's ``exclude_if``).
  ``model_validate`` checks required fields and the field types of the annotations (nested
  models included) and raises ``FabricConfigError`` naming the field (``details["path"]``);
  the native core still validates values (``Fabric.validate``/``plan``);
* the result models (``fabric_core._generated``, read-only mappings): ``model_dump`` is the
  document as the core wrote it (absent members stay absent); ``model_validate`` checks the
  members the schema requires (``_required``, generated).

``model_json_schema()`` is the JSON Schema generated from the Rust types
(``_model_schemas.json``, written by ``cargo xtask codegen`` from ``schemas/sdk``): the
model's definition with the ``$defs`` it reaches. An upstream model instance (anything with
a ``model_dump`` method) is accepted by ``model_validate`` through its JSON dump.

Not supported: ``exclude_unset`` on the dataclass models means "equal to the default" (they
do not record which arguments were given); ``strict``, ``context``, ``by_alias`` and
``round_trip`` are accepted and change nothing (no field has an alias).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal, TypeVar, Union

from fabric_core._codes import Code
from fabric_core.errors import FabricConfigError

_S = TypeVar("_S", bound="SdkModel")

#: Schema definitions by name, loaded on the first ``model_json_schema()``.
_SCHEMAS: dict[str, Any] | None = None
#: Resolved field annotations per dataclass model.
_HINTS: dict[type, dict[str, Any]] = {}


class SdkModel:
    """The Pydantic v2 model methods of every public model (see the module docs)."""

    __slots__ = ()

    @classmethod
    def model_validate(
        cls: type[_S],
        obj: Any,
        *,
        strict: bool | None = None,
        from_attributes: bool | None = None,
        context: Any = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> _S:
        """Build the model from a mapping, an instance (returned as is) or an upstream
        model; raises ``FabricConfigError`` naming the field (``details["path"]``)."""

        if isinstance(obj, cls):
            return obj
        data = _plain(obj, cls.__name__)
        if dataclasses.is_dataclass(cls):
            _check_fields(cls, data, "")
        else:
            missing = sorted(getattr(cls, "_required", frozenset()) - data.keys())
            if missing:
                raise _error(f"`{missing[0]}` is required", missing[0], Code.MISSING_FIELD, cls)
        return cls.from_mapping(data)  # type: ignore[attr-defined, no-any-return]

    @classmethod
    def model_validate_json(
        cls: type[_S],
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        context: Any = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> _S:
        """``model_validate`` of a JSON document; invalid JSON is ``invalid_json``."""

        import json

        try:
            data = json.loads(json_data)
        except (TypeError, ValueError) as error:
            raise FabricConfigError(
                f"{cls.__name__}: the input is not valid JSON", stage="config", code=Code.INVALID_JSON
            ) from error
        return cls.model_validate(data)

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] | str = "python",
        include: Any = None,
        exclude: Any = None,
        context: Any = None,
        by_alias: bool | None = None,
        exclude_unset: bool = False,
        exclude_defaults: bool = False,
        exclude_none: bool = False,
        round_trip: bool = False,
        warnings: bool | str = True,
        serialize_as_any: bool = False,
    ) -> dict[str, Any]:
        """The model as a dict; ``mode="json"`` gives JSON-compatible values only."""

        if mode not in ("python", "json"):
            raise ValueError(f"mode must be 'python' or 'json', not {mode!r}")
        options = _Dump(mode == "json", exclude_none, exclude_unset or exclude_defaults)
        return _dump_model(self, options, include, exclude)

    def model_dump_json(
        self,
        *,
        indent: int | None = None,
        include: Any = None,
        exclude: Any = None,
        context: Any = None,
        by_alias: bool | None = None,
        exclude_unset: bool = False,
        exclude_defaults: bool = False,
        exclude_none: bool = False,
        round_trip: bool = False,
        warnings: bool | str = True,
        serialize_as_any: bool = False,
    ) -> str:
        """``model_dump(mode="json")`` as JSON text (compact, or indented by ``indent``)."""

        import json

        data = self.model_dump(
            mode="json",
            include=include,
            exclude=exclude,
            exclude_unset=exclude_unset,
            exclude_defaults=exclude_defaults,
            exclude_none=exclude_none,
        )
        separators = (",", ":") if indent is None else (",", ": ")
        return json.dumps(data, indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)

    def model_copy(self: _S, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _S:
        """A copy (shallow unless ``deep``, as Pydantic) with ``update``'s fields replaced
        (not validated, as Pydantic; unknown names become extension fields)."""

        if not dataclasses.is_dataclass(self):
            data = self.to_mapping()  # type: ignore[attr-defined]
            data.update(update or {})
            return type(self).from_mapping(data)  # type: ignore[attr-defined, no-any-return]
        duplicate = copy.deepcopy(self) if deep else copy.copy(self)
        extra = dict(duplicate.extra_fields)  # type: ignore[attr-defined]
        names = {item.name for item in dataclasses.fields(duplicate)}
        for name, value in (update or {}).items():
            if name in names and name != "extra_fields":
                object.__setattr__(duplicate, name, value)
            else:
                extra[name] = value
        object.__setattr__(duplicate, "extra_fields", extra)
        return duplicate

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool = True,
        ref_template: str = "#/$defs/{model}",
        mode: Literal["validation", "serialization"] = "validation",
        **_: Any,
    ) -> dict[str, Any]:
        """The JSON Schema of this model (from the Rust types): its definition with the
        ``$defs`` it references."""

        defs = _schemas()
        name = _schema_name(cls, defs)
        if name is None:
            return _fallback_schema(cls)
        schema = copy.deepcopy(defs[name])
        schema.setdefault("title", name)
        reached: dict[str, Any] = {}
        pending = list(_refs(schema))
        while pending:
            ref = pending.pop()
            if ref in reached or ref not in defs:
                continue
            reached[ref] = copy.deepcopy(defs[ref])
            pending.extend(_refs(reached[ref]))
        if reached:
            schema["$defs"] = dict(sorted(reached.items()))
        if ref_template != "#/$defs/{model}":
            _retarget(schema, ref_template)
        return schema


class _Dump:
    __slots__ = ("json", "exclude_none", "skip_defaults")

    def __init__(self, json: bool, exclude_none: bool, skip_defaults: bool) -> None:
        self.json = json
        self.exclude_none = exclude_none
        self.skip_defaults = skip_defaults


def _dump_model(model: Any, options: _Dump, include: Any, exclude: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, value in _items(model, options):
        if include is not None and not _selected(include, name):
            continue
        if exclude is not None and _whole(exclude, name):
            continue
        if value is None and options.exclude_none:
            continue
        data[name] = _dump_value(value, options, _part(include, name), _part(exclude, name))
    return data


def _items(model: Any, options: _Dump) -> Any:
    """The (name, value) pairs a model dumps, in order."""

    if not dataclasses.is_dataclass(model):
        for name in model:
            yield name, model[name]
        return
    omitted = getattr(model, "_omit_default", {})
    hints = _hints(type(model))
    for item in dataclasses.fields(model):
        if item.name == "extra_fields":
            continue
        value = getattr(model, item.name)
        if type(value).__name__ == "_Unset":
            continue
        if item.name in omitted and value == omitted[item.name]:
            continue
        if options.skip_defaults and _is_default(item, value):
            continue
        if type(value) is int and _is_float(hints.get(item.name)):
            value = float(value)  # Pydantic stores a float field's int as a float
        yield item.name, value
    yield from model.extra_fields.items()


def _is_float(hint: Any) -> bool:
    if hint is float:
        return True
    origin = typing.get_origin(hint)
    return (origin is Union or origin is types.UnionType) and float in typing.get_args(hint)


def _is_default(item: dataclasses.Field[Any], value: Any) -> bool:
    if item.default is not dataclasses.MISSING:
        return bool(value == item.default)
    if item.default_factory is not dataclasses.MISSING:
        return bool(value == item.default_factory())
    return False


def _dump_value(value: Any, options: _Dump, include: Any, exclude: Any) -> Any:
    if isinstance(value, SdkModel):
        return _dump_model(value, options, include, exclude)
    if isinstance(value, Mapping):
        return {
            key: _dump_value(item, options, _part(include, key), _part(exclude, key))
            for key, item in value.items()
            if (include is None or _selected(include, key)) and (exclude is None or not _whole(exclude, key))
        }
    if isinstance(value, (list, tuple)):
        return [_dump_value(item, options, None, None) for item in value]
    if isinstance(value, PurePath):
        return str(value) if options.json else value
    if options.json and not isinstance(value, (str, int, float, bool, type(None))):
        raise FabricConfigError(
            f"a {type(value).__name__} value is not JSON-compatible", stage="config", code=Code.INVALID_JSON_VALUE
        )
    return value if options.json else copy.deepcopy(value)


def _selected(spec: Any, name: Any) -> bool:
    return name in spec if not isinstance(spec, Mapping) else spec.get(name) not in (None, False)


def _whole(spec: Any, name: Any) -> bool:
    if not isinstance(spec, Mapping):
        return name in spec
    return spec.get(name) is True or spec.get(name) is ...


def _part(spec: Any, name: Any) -> Any:
    if isinstance(spec, Mapping):
        part = spec.get(name)
        return part if isinstance(part, (Mapping, set, frozenset, list, tuple)) else None
    return None


def foreign_model(obj: Any) -> bool:
    """Whether ``obj`` is another library's model (NeMo Fabric's Pydantic models): not one of
    ours, not a mapping, with a ``model_dump`` method."""

    return not isinstance(obj, (SdkModel, Mapping)) and callable(getattr(obj, "model_dump", None))


def _plain(obj: Any, model: str) -> dict[str, Any]:
    """A mapping to validate: the object itself, or an upstream model's JSON dump."""

    if isinstance(obj, SdkModel) and hasattr(obj, "to_mapping"):
        obj = obj.to_mapping()  # type: ignore[attr-defined]
    elif foreign_model(obj):
        obj = obj.model_dump(mode="json")
    if not isinstance(obj, Mapping):
        raise FabricConfigError(
            f"{model} must be built from a mapping or a model, not {type(obj).__name__}",
            stage="config",
            code=Code.INVALID_CONFIG_TYPE,
        )
    return dict(obj)


def _error(message: str, path: str, code: str, model: type) -> FabricConfigError:
    return FabricConfigError(f"{model.__name__}: {message}", stage="config", code=code, details={"path": path})


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        _HINTS[cls] = hints
    return hints


def _check_fields(cls: type, data: Mapping[str, Any], path: str) -> None:
    """Required fields and annotated types of a dataclass model's mapping (extension keys
    are the core's to judge)."""

    hints = _hints(cls)
    for item in dataclasses.fields(cls):
        name = item.name
        if name == "extra_fields":
            continue
        where = f"{path}.{name}" if path else name
        if name not in data:
            if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING:
                raise _error(f"`{where}` is required", where, Code.MISSING_FIELD, cls)
            continue
        _check(data[name], hints.get(name, Any), where, cls)


def _check(value: Any, hint: Any, path: str, model: type) -> None:
    if _conforms(value, hint, path, model):
        return
    raise _error(
        f"`{path}` must be {_describe(hint)}, not {type(value).__name__}", path, Code.INVALID_CONFIG_TYPE, model
    )


def _conforms(value: Any, hint: Any, path: str, model: type) -> bool:
    """Whether ``value`` fits ``hint``; a nested model's own errors are raised with their path."""

    if hint is Any or hint is object:
        return True
    if hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        nested: FabricConfigError | None = None
        for arg in args:
            try:
                if _conforms(value, arg, path, model):
                    return True
            except FabricConfigError as error:
                nested = nested or error
        if nested is not None:
            raise nested
        return False
    if origin is Literal:
        return value in args
    if origin in (list, tuple, Sequence):
        if not isinstance(value, (list, tuple)):
            return False
        for index, item in enumerate(value):
            _check(item, args[0] if args else Any, f"{path}[{index}]", model)
        return True
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            return False
        for key, item in value.items():
            if not isinstance(key, str):
                raise _error(f"`{path}` keys must be strings", path, Code.INVALID_CONFIG_TYPE, model)
            _check(item, args[1] if len(args) == 2 else Any, f"{path}.{key}", model)
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and issubclass(hint, SdkModel):
        if isinstance(value, hint):
            return True
        if isinstance(value, Mapping):
            _check_fields(hint, value, path)
            return True
        return False
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in typing.get_args(hint))
    if origin in (dict, Mapping):
        return "an object"
    if origin is not None:
        return "an array"
    if hint is type(None):
        return "null"
    return getattr(hint, "__name__", str(hint))


def _schemas() -> dict[str, Any]:
    global _SCHEMAS
    if _SCHEMAS is None:
        import json
        from importlib import resources

        text = resources.files("fabric_core").joinpath("_model_schemas.json").read_text("utf-8")
        _SCHEMAS = json.loads(text)["$defs"]
    return _SCHEMAS


def _schema_name(cls: type, defs: Mapping[str, Any]) -> str | None:
    """The definition of a model: its boundary name, else its class name, else that name
    without the ``Config`` suffix (``McpAuthenticationConfig`` -> ``McpAuthentication``)."""

    named = getattr(cls, "_model_name", None)
    candidates = [named()] if callable(named) else []
    for klass in cls.__mro__:
        if klass is SdkModel:
            break
        candidates.append(klass.__name__)
        candidates.append(klass.__name__.removesuffix("Config"))
    return next((name for name in candidates if name in defs), None)


def _fallback_schema(cls: type) -> dict[str, Any]:
    """A model the Rust types do not name (a typed view of a free-form member): its fields,
    extension members allowed."""

    if dataclasses.is_dataclass(cls):
        names = [item.name for item in dataclasses.fields(cls) if item.name != "extra_fields"]
    else:
        names = sorted(getattr(cls, "_fields", ()))
    properties: dict[str, Any] = {name: {} for name in names}
    schema: dict[str, Any] = {"title": cls.__name__, "type": "object", "properties": properties}
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    schema["additionalProperties"] = True
    return schema


def _refs(schema: Any) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.append(ref[len("#/$defs/") :])
        for item in schema.values():
            found.extend(_refs(item))
    elif isinstance(schema, list):
        for item in schema:
            found.extend(_refs(item))
    return found


def _retarget(schema: Any, template: str) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema["$ref"] = template.format(model=ref[len("#/$defs/") :])
        for item in schema.values():
            _retarget(item, template)
    elif isinstance(schema, list):
        for item in schema:
            _retarget(item, template)
