// Stream a reply as native OpenAI chunks, take the separate result, then leave a second
// stream early (the turn still runs to its end). Build first: `cargo build --workspace`
// and `cd bindings/typescript && npm run build`; then `node dist/examples/stream.js`.
import { Fabric, type FabricConfig } from "fabric-core";

const config: FabricConfig = {
  metadata: { name: "stream" },
  harness: {
    adapter_id: "fabric.scripted",
    settings: { replies: ["Streaming, one small piece at a time."], stream: { chunk_chars: 6 } },
  },
};

async function main(): Promise<void> {
  await using runtime = await new Fabric().startRuntime(config);
  console.log("streaming:", runtime.supportsOpenAIStreaming);

  const stream = await runtime.invokeOpenAIStream({ input: "hi" });
  let pieces = 0;
  for await (const chunk of stream) {
    process.stdout.write(chunk.choices[0]?.delta.content ?? "");
    pieces += 1;
  }
  const result = await stream.result();
  console.log(`\n${pieces} chunks, ${result.status}`);

  // Leaving `for await` early closes the stream without cancelling the turn.
  await using early = await runtime.invokeOpenAIStream({ input: "again" });
  for await (const chunk of early) {
    console.log("first:", chunk.choices[0]?.delta.content);
    break;
  }
  console.log("whole:", ((await early.result()).output as { response: string }).response);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
