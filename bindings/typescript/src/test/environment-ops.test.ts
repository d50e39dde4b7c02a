import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, FabricRuntimeError, type FabricConfig } from "../index";

const repoRoot = path.resolve(__dirname, "..", "..", "..", "..");
const SCRIPTED = path.join(repoRoot, "adapters", "scripted", "scripted.fabric-adapter.json");
const SUBPROCESS = path.join(repoRoot, "target", "debug", "fabric-env-subprocess");

function config(environment: Record<string, unknown>, extraPaths: string[] = []): FabricConfig {
  return {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "ops" },
    harness: { adapter_id: "fabric.scripted", settings: { replies: ["echo: {input}"] } as never },
    discovery: { local_paths: [SCRIPTED, ...extraPaths] },
    runtime: { timeout_seconds: 30 },
    environment: environment as never,
  };
}

function running(pid: string): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !"ZX".includes(stat.slice(stat.lastIndexOf(") ") + 2)[0]);
  } catch {
    return false;
  }
}

test("exec, files and a planted link in a subprocess environment, after a runtime ran", async () => {
  assert.ok(fs.existsSync(SUBPROCESS), "fabric-env-subprocess is not built; run `cargo build -p fabric-cli`");
  const dir = fs.mkdtempSync(path.join("/tmp", "fc-ts-"));
  const providers = path.join(dir, "providers");
  fs.mkdirSync(providers);
  fs.writeFileSync(
    path.join(providers, "subprocess.fabric-environment-provider.json"),
    JSON.stringify({
      schema_version: "fabric.environment-provider-descriptor/v1alpha1",
      provider: "subprocess",
      protocol_version: "fabric.environment-provider.v1alpha1",
      command: [SUBPROCESS],
      attach: true,
    }),
  );
  const root = path.join(dir, "envs");
  fs.mkdirSync(root);
  const cfg = config({ provider: "subprocess", settings: { root } }, [providers]);
  const fabric = new Fabric();
  await using environment = await fabric.prepareEnvironment(cfg);
  {
    await using runtime = await environment.startRuntime(cfg);
    await runtime.invoke({ input: "go" });
  }
  await environment.writeFile("task/check.sh", "read a < answer.txt; [ \"$a\" = 42 ]\n");
  await environment.exec(["sh", "-c", "echo 42 > answer.txt"], { cwd: "task" });
  const verdict = await environment.exec(["sh", "check.sh"], { cwd: "task" });
  assert.equal(verdict.exit_code, 0);
  assert.equal((await environment.readFile("task/answer.txt")).toString(), "42\n");
  const listing = await environment.list("task");
  assert.deepEqual(listing.entries.map((e) => e.name), ["answer.txt", "check.sh"]);
  const echoed = await environment.exec(["sh", "-c", "cat; echo \"$X\" >&2; exit 4"], { stdin: "in", env: { X: "y" } });
  assert.deepEqual([echoed.exit_code, echoed.stdout, echoed.stderr], [4, "in", "y\n"]);
  const cut = await environment.exec(["sh", "-c", "yes | head -c 4000"], { outputLimitBytes: 4 });
  assert.deepEqual([cut.stdout, cut.stdout_truncated], ["y\ny\n", true]);
  const slow = await environment.exec(["sh", "-c", "sh -c 'echo $$ > gc.pid; sleep 30' & sleep 30"], { timeoutSeconds: 0.5 });
  assert.equal(slow.timed_out, true);
  const grandchild = (await environment.readFile("gc.pid")).toString().trim();
  for (let i = 0; i < 100 && running(grandchild); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(running(grandchild), false);
  const secret = path.join(dir, "secret.txt");
  fs.writeFileSync(secret, "SECRET");
  await environment.exec(["ln", "-s", secret, "loot"]);
  await assert.rejects(environment.readFile("loot"), (error: unknown) => {
    assert.ok(error instanceof FabricRuntimeError, String(error));
    assert.equal(error.code, "path_refused");
    return true;
  });
  await environment.release();
  fs.rmSync(dir, { recursive: true, force: true });
});
