import asyncio
import signal

from nemo_fabric_adapter_contract.models import AgentConfig, AgentRunResult, AgentRunStatus
from nemo_fabric_adapters.common import lifecycle


class StubbornRuntime:
    async def start(self, payload):
        return None

    async def invoke(self, request, context):
        if request.input == "sleep":
            await asyncio.sleep(30)
        return AgentRunResult(status=AgentRunStatus.SUCCEEDED, output={"echo": request.input})

    async def stop(self):
        await asyncio.sleep(3600)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lifecycle.serve(StubbornRuntime, config_loader=AgentConfig.from_mapping)
