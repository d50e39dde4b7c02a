// Read a runtime's resource snapshot, sample a memory spike and check the runtime's health
// with the scripted adapter. Build first (`cargo build --workspace`, `npm run build`);
// then `node dist/examples/health.js`.
import { Fabric, type FabricConfig } from "fabric-core";

const config: FabricConfig = {
  metadata: { name: "health" },
  harness: { adapter_id: "fabric.scripted" },
  system_stats: { sampling: { interval_ms: 10 } },
};

async function main(): Promise<void> {
  const fabric = new Fabric();
  await using runtime = await fabric.startRuntime(config);

  const snapshot = await runtime.resourceSnapshot();
  console.log("processes:", snapshot.process_count, "rss > 0:", snapshot.resident_memory_bytes > 0);

  const spike = { scripted: { memory_mib: [80, 400, 80], step_ms: 200 } };
  const result = await runtime.invoke({ request: { input: "x", context: spike } });
  const peak = result.system_stats?.sampled?.resident_memory_bytes?.sampled_peak ?? 0;
  console.log("after:", result.system_stats?.after.status, "sampled peak >= 350 MiB:", peak >= 350 * 2 ** 20);

  const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready" } });
  console.log("check:", report.outcome, report.checks.map((check) => check.level).join(","));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
