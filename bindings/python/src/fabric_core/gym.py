"""NeMo Gym rollout observations: map one rollout's results to Gym's contract.

``observations(results, task_id=..., rollout_id=..., atof=...)`` returns plain dicts:
``{"ng_agent_observations": bundle, "trajectory": record}``. The bundle is what an Agent
Server returns under :data:`NG_AGENT_OBSERVATIONS_KEY`; the trajectory is Gym's
``TrajectoryRecord`` (schema version ``"1.0"``). The mapping runs in the native core
(``fabric_gym_observations``), the same for every binding; rules are in ``docs/gym.md``.
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


__all__ = ["NG_AGENT_OBSERVATIONS_KEY", "observations"]
