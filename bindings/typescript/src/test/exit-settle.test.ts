import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";

// A program that exits right after `run()` (here by `process.exit`) does not cut the
// background stop short: the library waits at exit (bounded) for the host's own exit and
// removes its temporary FABRIC_HOME, instead of leaving the host to PR_SET_PDEATHSIG and the
// home to the next core's sweeper.

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");

test("a program calling process.exit right after run() lets its host exit and leaves no home", () => {
  const config = {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "ts-exit-settle" },
    // The host answers `stop`, then keeps running for 0.5 s before exiting on its own.
    harness: { adapter_id: "fabric.scripted", settings: { replies: ["echo: {input}"], exit_delay_ms: 500 } },
    discovery: { local_paths: [SCRIPTED] },
    runtime: { timeout_seconds: 30 },
  };
  const script = `
    const { Fabric } = require(${JSON.stringify(path.join(__dirname, "..", "index.js"))});
    (async () => {
      const result = await new Fabric().run(${JSON.stringify(config)}, { input: "x" });
      const meta = result.metadata;
      console.log(JSON.stringify({ status: result.status, pid: meta.host_pid, home: meta.fabric_home, returned: Date.now() }));
      process.exit(0);
    })();
  `;
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), "ts-exit-settle-"));
  let pid = 0;
  try {
    const child = spawnSync(process.execPath, ["-e", script], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir },
      encoding: "utf8",
      timeout: 30_000,
    });
    const exited = Date.now();
    assert.equal(child.status, 0, child.stderr);
    const report = JSON.parse(child.stdout);
    pid = Number(report.pid);
    assert.equal(report.status, "succeeded");
    assert.ok(String(report.home).startsWith(runtimeDir), report.home);
    assert.ok(exited - report.returned >= 400, "the exit did not wait for the host");
    assert.ok(!fs.existsSync(`/proc/${pid}`), `host ${pid} outlived its program`);
    assert.ok(!fs.existsSync(report.home), "the temporary FABRIC_HOME outlived its program");
    assert.deepEqual(fs.readdirSync(runtimeDir).filter((name) => name.startsWith("fabric-runtime-")), []);
  } finally {
    if (pid && fs.existsSync(`/proc/${pid}`)) process.kill(pid, "SIGKILL");
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  }
});
