"""NeMo Gym rollout observations: map one rollout's results to Gym's contract.

``observations(results, task_id=..., rollout_id=..., atof=...)`` returns plain dicts:
``{"ng_agent_observations": bundle, "trajectory": record}``. The bundle is what an Agent
Server returns under :data:`NG_AGENT_OBSERVATIONS_KEY`; the trajectory is Gym's
``TrajectoryRecord`` (schema version ``"1.0"``). The mapping runs in the native core
(``fabric_gym_observations``), the same for every binding; rules are in ``docs/gym.md``.
``join_model_call_observations(bundle, calls)`` resolves a bundle's model-call references
against the calls a model server captured (``fabric_gym_join_model_calls``);
``join_assistant_message_calls(bundle, trajectory, calls)`` joins the assistant messages a
bundle and trajectory declare to those calls (``fabric_gym_join_assistant_messages``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from fabric_core import _ffi
from fabric_core._mapping import _thaw
from fabric_core._util import dumps

#: The key Gym reads an Agent Server's observation bundle from.
NG_AGENT_OBSERVATIONS_KEY = "ng_agent_observations"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _thaw(value)
    raise TypeError(f"expected a RunResult or a mapping, got {type(value).__name__}")


def observations(
    results: Iterable[Any],
    *,
    task_id: str,
    rollout_id: str,
    atof: Iterable[Mapping[str, Any]] | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """Map a rollout's RunResults (``RunResult`` models or mappings, in invocation order) and
    the raw ATOF records of their invocations (as ``invoke_stream`` yields them, any order)
    to ``{"ng_agent_observations": ..., "trajectory": ...}``.

    Raises :class:`fabric_core.FabricConfigError` for a blank ``task_id``/``rollout_id``
    (``gym_id_blank``), two results with one invocation id (``gym_invocation_id_duplicate``)
    or a value of the wrong shape (its ``path`` names the field).
    """

    request: dict[str, Any] = {
        "task_id": task_id,
        "rollout_id": rollout_id,
        "results": [_plain(result) for result in results],
        "atof": [_plain(record) for record in atof or ()],
    }
    if source is not None:
        request["source"] = source
    library = _ffi.library()
    text = library.fabric_gym_observations(dumps(request), _ffi.out_slot())
    return json.loads(text)


def join_model_call_observations(bundle: Mapping[str, Any], calls: Iterable[Any]) -> dict[str, Any]:
    """Resolve the model-call references of ``bundle`` (an ``ng_agent_observations`` value)
    against ``calls``, the model calls a model server captured for the same rollout (Gym
    ``ModelCallRecord`` mappings, or objects with ``model_dump()``, such as Gym's own
    models). Ownership is never guessed and nothing is matched by content or timing; what
    cannot be joined exactly is a gap. Returns the joined bundle (a new dict).

    Raises :class:`fabric_core.FabricConfigError` for a bundle that breaks Gym's identity
    rules (its ``path`` starts with ``bundle``) or a value of the wrong shape.
    """

    request = {"bundle": _document(bundle), "calls": [_document(call) for call in calls]}
    library = _ffi.library()
    text = library.fabric_gym_join_model_calls(dumps(request), _ffi.out_slot())
    return json.loads(text)


def join_assistant_message_calls(
    bundle: Mapping[str, Any], trajectory: Mapping[str, Any] | None, calls: Iterable[Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Join the persisted assistant messages that ``trajectory``'s turns
    (``source_message_id``) and ``bundle``'s compactions (``source_message_ids``) declare to
    the captured ``calls`` of the same rollout, by session, message and model-server ids,
    after resolving invocation ownership as :func:`join_model_call_observations` does.
    Arguments are mappings or objects with ``model_dump()``; ``trajectory`` may be ``None``
    (only compactions are joined). Returns ``(bundle, trajectory)``, new dicts (the
    trajectory ``None`` when none was given). What cannot be joined exactly is a gap; the
    rules are in ``docs/gym.md``.

    Raises :class:`fabric_core.FabricConfigError` for a bundle or trajectory that breaks
    Gym's identity rules (its ``path`` starts with ``bundle`` or ``trajectory``) or a value
    of the wrong shape.
    """

    request: dict[str, Any] = {
        "bundle": _document(bundle),
        "calls": [_document(call) for call in calls],
    }
    if trajectory is not None:
        request["trajectory"] = _document(trajectory)
    library = _ffi.library()
    text = library.fabric_gym_join_assistant_messages(dumps(request), _ffi.out_slot())
    joined = json.loads(text)
    return joined["bundle"], joined.get("trajectory")


def _document(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        return dump(mode="json", exclude_none=True)
    return _plain(value)


__all__ = [
    "NG_AGENT_OBSERVATIONS_KEY",
    "join_assistant_message_calls",
    "join_model_call_observations",
    "observations",
]
