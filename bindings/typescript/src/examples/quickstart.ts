// Run the scripted adapter once, then hold a runtime for a two-turn conversation.
// Build first: `cargo build --workspace` and `cd bindings/typescript && npm run build`;
// then `node dist/examples/quickstart.js`.
import { Fabric, FabricError, type FabricConfig } from "fabric-core";

const config: FabricConfig = {
  metadata: { name: "quickstart" },
  harness: {
    adapter_id: "fabric.scripted",
    settings: { replies: ["you said {input}", "before that you said {previous_input}"] },
  },
};

async function main(): Promise<void> {
  const fabric = new Fabric();

  const plan = await fabric.plan(config);
  console.log("adapter:", plan.adapter_descriptor?.descriptor.adapter_id);

  const once = await fabric.run(config, { input: "hello" });
  console.log("run:", once.status, (once.output as { response: string }).response);

  await using runtime = await fabric.startRuntime(config);
  for (const input of ["first", "second"]) {
    const result = await runtime.invoke({ input });
    console.log(`turn ${input}:`, (result.output as { response: string }).response);
  }
} // `await using` stops the runtime here.

main().catch((error: unknown) => {
  if (error instanceof FabricError) {
    console.error(`${error.name}: ${error.message} (stage ${error.stage}, code ${error.code})`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
