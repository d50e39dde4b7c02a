"""The immutable mapping base of every result model, and the model registry.

Every model is a read-only ``Mapping`` with attribute access (``result.status`` and
``result["status"]``). Unknown fields are kept (visible through ``extra_fields`` and
``to_mapping()``) so newer cores do not break older bindings. Nested JSON objects are
read-only (``MappingProxyType``) and lists are tuples; ``to_mapping()`` returns a detached,
mutable, JSON-compatible copy. The fields of each model are generated
(``fabric_core._generated``); behaviour is added in ``fabric_core.types``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from fabric_core._sdk_model import SdkModel

_T = TypeVar("_T", bound="FabricMapping")


_SCALARS = (str, int, float, bool, type(None))


def _freeze(value: Any) -> Any:
    # Exact type checks first: decoded JSON is plain dict/list/scalars, and ABC
    # isinstance checks dominate decoding time otherwise.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if kind is list or kind is tuple:
        return tuple([_freeze(item) for item in value])
    if isinstance(value, FabricMapping):
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, FabricMapping):
        return value.to_mapping()
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return copy.deepcopy(value)


class FabricMapping(SdkModel, Mapping[str, Any]):
    """Immutable mapping-compatible base of results and snapshots (with the Pydantic-shaped
    methods of ``SdkModel``)."""

    #: Field names this model knows (others are extension fields).
    _fields: ClassVar[frozenset[str]] = frozenset()
    #: Members the schema requires (``model_validate`` checks them).
    _required: ClassVar[frozenset[str]] = frozenset()
    #: Members holding models: name -> (model name, "one" | "list" | "map"). Model names are
    #: resolved through :data:`MODELS`, so a behaviour subclass registered later is used.
    _nested: ClassVar[dict[str, tuple[str, str]]] = {}

    # `_data` holds the normalized values as decoded (private: copied from callers'
    # mappings, or JSON decoded by the binding); read-only views are built lazily on first
    # access and cached in `_views`, so decoding large results and plans stays cheap.
    __slots__ = ("_data", "_views")

    def __init__(self, mapping: Mapping[str, Any]) -> None:
        if not isinstance(mapping, Mapping):
            raise TypeError(f"{type(self).__name__} requires a mapping")
        self._init(copy.deepcopy(dict(mapping)))

    def _init(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", self._normalize(data))
        object.__setattr__(self, "_views", {})

    @classmethod
    def _model_name(cls) -> str:
        """The boundary type this class decodes (the generated class's name)."""

        for klass in cls.__mro__:
            if klass.__module__ == "fabric_core._generated":
                return klass.__name__
        return cls.__name__

    @classmethod
    def from_mapping(cls: type[_T], mapping: Mapping[str, Any]) -> _T:
        """Decode a mapping into this model (unknown keys are kept; the input is copied)."""

        if isinstance(mapping, cls):
            return mapping
        return cls(mapping)

    @classmethod
    def _from_json(cls: type[_T], data: Any) -> _T:
        """Wrap a freshly decoded JSON object without copying it (binding-internal)."""

        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__} requires a JSON object")
        model = cls.__new__(cls)
        model._init(data)
        return model

    @classmethod
    def _wrap(cls: type[_T], value: Mapping[str, Any]) -> _T:
        """Nested conversion inside ``_normalize`` (the data is already private)."""

        if isinstance(value, cls):
            return value
        if type(value) is dict:
            return cls._from_json(value)
        return cls(value)

    @classmethod
    def _normalize(cls, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def __getitem__(self, key: str) -> Any:
        views = self._views
        try:
            return views[key]
        except KeyError:
            value = self._data[key]
            nested = self._nested.get(key)
            # Nested models are decoded on first access, like every other view: a result's
            # deep members (system stats, plans) cost nothing until they are read.
            view = _freeze(value) if nested is None else _nested_view(value, *nested)
            views[key] = view
            return view

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_data", "_views"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            if name in self._fields:
                return None
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_mapping()!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FabricMapping):
            return self.to_mapping() == other.to_mapping()
        if isinstance(other, Mapping):
            return self.to_mapping() == _thaw(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def extra_fields(self) -> Mapping[str, Any]:
        """Fields this binding does not know (kept from newer cores)."""

        return MappingProxyType(
            {key: _thaw(value) for key, value in self._data.items() if key not in self._fields}
        )

    def to_mapping(self) -> dict[str, Any]:
        """A detached, JSON-compatible copy."""

        return {key: _thaw(value) for key, value in self._data.items()}

    def to_dict(self) -> dict[str, Any]:
        """Same as ``to_mapping()``."""

        return self.to_mapping()


def _nested_view(value: Any, name: str, shape: str) -> Any:
    model = MODELS[name]
    if shape == "one":
        return model._wrap(value) if isinstance(value, Mapping) else _freeze(value)
    if shape == "list" and isinstance(value, (list, tuple)):
        return tuple(model._wrap(item) if isinstance(item, Mapping) else _freeze(item) for item in value)
    if shape == "map" and isinstance(value, Mapping):
        return MappingProxyType(
            {key: model._wrap(item) if isinstance(item, Mapping) else _freeze(item) for key, item in value.items()}
        )
    return _freeze(value)


#: Model name -> the class that decodes it (the behaviour subclass once registered).
MODELS: dict[str, type[FabricMapping]] = {}


def register(model: type[_T]) -> type[_T]:
    """Make ``model`` the class that decodes documents of its name (last one wins)."""

    MODELS[model._model_name()] = model
    return model
