"""NeMo Relay ATOF for fabric.python-echo, through upstream's Relay helpers.

Only when the runtime has Relay enabled (`runtime_context.telemetry.relay_enabled`) and the
core wrote a Relay config (`FABRIC_RELAY_CONFIG_PATH`, which needs an artifact root):
`nemo_relay` is imported then and only then, so Relay stays an optional dependency.

The plugin config is loaded and normalized by `nemo_fabric_adapters.common.utils`
(`load_relay_plugin_config`), ambient and inherited Relay plugin configs are refused as
upstream's adapters refuse them, and each invocation runs inside one Relay plugin
activation and one root `Agent` scope whose metadata carries the Fabric correlation ids
(`relay_request_context` + `relay_correlation_metadata`). The invocation adds one mark per
echoed chunk. The activation ends (and Relay flushes its sinks) before the result is
returned, so a collector has every record by the time the invocation completes.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from nemo_fabric_adapter_contract.models import AgentRunRequest
from nemo_fabric_adapter_contract.models import RuntimeContext

SCOPE_NAME = "python-echo-request"
MARK_NAME = "python-echo.chunk"


class EchoRelay:
    """The Relay plugin config of one runtime."""

    def __init__(self, plugin_config: dict[str, Any]) -> None:
        self._plugin_config = plugin_config

    @classmethod
    def from_start(cls, payload: dict[str, Any]) -> EchoRelay | None:
        """The runtime's Relay setup, or `None` when Relay is off or has no config file."""

        context = payload.get("runtime_context") or {}
        telemetry = context.get("telemetry") if isinstance(context, dict) else None
        if not isinstance(telemetry, dict) or telemetry.get("relay_enabled") is not True:
            return None
        if not os.environ.get("FABRIC_RELAY_CONFIG_PATH"):
            return None
        if importlib.util.find_spec("nemo_relay") is None:
            raise RuntimeError(
                "Relay is enabled but the 'nemo-relay' package is not installed "
                "(pip install 'fabric-python-echo[relay]')"
            )
        from nemo_fabric_adapters.common import utils

        utils.reject_ambient_relay_plugin_config()
        config = payload.get("config")
        models = {}
        for role, model in (getattr(config, "models", None) or {}).items():
            models[role] = {"model": getattr(model, "model", None)}
        plugin_config = utils.load_relay_plugin_config(
            {
                "agent_name": payload.get("agent_name"),
                "base_dir": payload.get("base_dir") or os.getcwd(),
                "config": {"models": models},
                "runtime_context": context,
            }
        )
        return cls(plugin_config)

    @asynccontextmanager
    async def invocation(
        self, request: AgentRunRequest, context: RuntimeContext
    ) -> AsyncIterator[Callable[[str], None]]:
        """Runs the body inside the invocation's root scope; yields `mark(text)`."""

        from nemo_fabric_adapters.common import utils
        from nemo_relay import ScopeType, plugin, scope

        async with plugin.activate(self._plugin_config) as activation:
            utils.reject_inherited_relay_plugin_config(activation.report)
            request_context, metadata = utils.relay_request_context(
                context.request_id, request.relay_session_root
            )
            metadata.update(utils.relay_correlation_metadata(context))
            with request_context:
                with scope.scope(
                    SCOPE_NAME, ScopeType.Agent, metadata=metadata, input={"input": request.input}
                ) as handle:

                    def mark(text: str) -> None:
                        scope.event(MARK_NAME, handle=handle, data={"text": text})

                    yield mark

    def artifacts(self) -> list[dict[str, str]]:
        """The Relay files (ATOF/ATIF file sinks) written so far, as `relay_artifacts`."""

        from nemo_fabric_adapters.common import utils

        return utils.collect_relay_artifacts(self._plugin_config)
