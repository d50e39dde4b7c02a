// Median latency of a `ready` health check through the Node binding, against the
// TypeScript listener (adapters/typescript-echo, serve()) and the Rust listener (the
// scripted adapter). Needs `cargo build --workspace` and both packages built:
//   node bindings/typescript/scripts/bench-check.js [iterations]
"use strict";
const path = require("node:path");
const { Fabric } = require(path.resolve(__dirname, "..", "dist", "index.js"));

const repo = path.resolve(__dirname, "..", "..", "..");
const targets = [
  ["typescript listener (typescript-echo)", "adapters/typescript-echo/typescript-echo.fabric-adapter.json", "fabric.typescript-echo"],
  ["rust listener (scripted)", "adapters/scripted/scripted.fabric-adapter.json", "fabric.scripted"],
];

async function main() {
  const iterations = Number(process.argv[2] ?? 300);
  const fabric = new Fabric();
  for (const [name, descriptor, adapterId] of targets) {
    const runtime = await fabric.startRuntime({
      metadata: { name: "bench-check" },
      harness: { adapter_id: adapterId },
      discovery: { local_paths: [path.join(repo, descriptor)] },
    });
    try {
      const times = [];
      for (let i = 0; i < iterations; i++) {
        const started = process.hrtime.bigint();
        const report = await fabric.check({ request: { scope: "runtime", runtime_id: runtime.runtimeId, level: "ready" } });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (report.outcome !== "passed") throw new Error(JSON.stringify(report));
      }
      times.sort((a, b) => a - b);
      const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(3);
      console.log(JSON.stringify({ target: name, iterations, median_ms: Number(at(0.5)), p90_ms: Number(at(0.9)) }));
    } finally {
      await runtime.stop();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
