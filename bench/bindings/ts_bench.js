// Warm invocations of the scripted adapter through the TypeScript binding (fabric-core,
// built in bindings/typescript/dist). Prints one JSON line per measure, like the Go and
// Python benches. Usage: node bench/bindings/ts_bench.js [n] [warmup]
"use strict";
const path = require("node:path");
const { Fabric } = require(path.join(__dirname, "..", "..", "bindings", "typescript", "dist", "index.js"));

const n = Number(process.argv[2] ?? 2000);
const warmup = Number(process.argv[3] ?? 200);
const descriptor = path.resolve(__dirname, "..", "..", "adapters", "scripted", "scripted.fabric-adapter.json");

// Tasks (processes and threads) allocated so far in this PID namespace, or null: counted
// only when this program is PID 1 of its own namespace (bench/runner.py runs it so;
// bench/python/meter.py explains the count).
function lastPid() {
  if (process.pid !== 1) return null;
  try {
    return Number(require("node:fs").readFileSync("/proc/sys/kernel/ns_last_pid", "utf8"));
  } catch {
    return null;
  }
}

async function measure(call) {
  const before = lastPid();
  const cpu = process.cpuUsage();
  const samples = [];
  for (let i = 0; i < n; i += 1) {
    const started = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  samples.sort((a, b) => a - b);
  const sum = samples.reduce((total, value) => total + value, 0);
  return {
    n,
    median_us: samples[Math.floor(samples.length / 2)],
    p90_us: samples[Math.floor((samples.length * 9) / 10)],
    mean_us: sum / samples.length,
    min_us: samples[0],
    cpu_per_call_us: ((used) => (used.user + used.system) / n)(process.cpuUsage(cpu)),
    tasks: ((after) => (before === null || after === null ? null : after - before))(lastPid()),
  };
}

(async () => {
  const fabric = new Fabric();
  const runtime = await fabric.startRuntime({
    metadata: { name: "bench-ts" },
    harness: { adapter_id: "fabric.scripted" },
    discovery: { local_paths: [descriptor] },
  });
  try {
    const invoke = async () => {
      const result = await runtime.invoke({ input: "ping" });
      if (result.status !== "succeeded") throw new Error(`status ${result.status}`);
    };
    for (let i = 0; i < warmup; i += 1) await invoke();
    // Decoding one RunResult's JSON (re-encoded from a real result; the binding's results
    // are the parsed objects): the binding's own share of an invoke.
    const text = JSON.stringify(await runtime.invoke({ input: "ping" }));
    const decode = async () => JSON.parse(text);
    for (const [name, call] of [
      ["warm_invoke_us", invoke],
      ["status_call_us", () => runtime.status()],
      ["result_decode_us", decode],
    ]) {
      console.log(JSON.stringify({ binding: "typescript", measure: name, ...(await measure(call)) }));
    }
  } finally {
    await runtime.stop();
  }
})().catch((error) => {
  console.error("error:", error);
  process.exit(1);
});
