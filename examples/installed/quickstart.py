# pip install fabric_core-*.whl, then: python quickstart.py
import asyncio

from fabric_core import Fabric, FabricConfig, HarnessConfig, MetadataConfig

config = FabricConfig(
    metadata=MetadataConfig(name="hello"),
    harness=HarnessConfig(
        adapter_id="fabric.scripted",
        settings={"replies": ["Hello! You said: {input}"]},
    ),
)


async def main() -> None:
    result = await Fabric().run(config, input="Hello, Fabric")
    print(result.status, result.output.response)


asyncio.run(main())
