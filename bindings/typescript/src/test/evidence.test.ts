/**
 * Software evidence on the TypeScript adapter side (`fabric-core/adapter`): manifest lookup
 * through at most 8 node_modules levels, the 64 KiB manifest limit, 32 targets, the deadline
 * (an injected lookup that never settles until released, so no timing assertion), the
 * `start` report only when asked, and the report in `RunResult.execution` through the
 * binding (issue 18).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  EVIDENCE_MAX_TARGETS,
  collectEvidence,
  lookupManifest,
  type LookupResult,
} from "../adapter";
import { HostProcess, startMessage, stopMessage } from "../testing";

function tree(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "fabric-ts-evidence-"));
}

function install(root: string, name: string, manifest: unknown): void {
  const dir = path.join(root, "node_modules", name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), typeof manifest === "string" ? manifest : JSON.stringify(manifest));
}

test("a package is found through node_modules ancestors, at most 8 levels up", async () => {
  const root = tree();
  install(root, "near", { name: "near", version: "1.2.3-beta.4" });
  const seven = path.join(root, "a", "b", "c", "d", "e", "f", "g");
  const eight = path.join(seven, "h");
  fs.mkdirSync(eight, { recursive: true });
  assert.deepEqual(await lookupManifest("near", seven), { version: "1.2.3-beta.4" });
  assert.deepEqual(await lookupManifest("near", eight), { missing: "unknown", reason: "metadata_file_limit_reached" });
  assert.deepEqual(await lookupManifest("absent", root), { missing: "unavailable", reason: "metadata_not_found" });
});

test("a manifest over 64 KiB is not parsed", async () => {
  const root = tree();
  install(root, "huge", JSON.stringify({ name: "huge", version: "1.0.0", padding: "x".repeat(70_000) }));
  assert.deepEqual(await lookupManifest("huge", root), { missing: "unknown", reason: "metadata_file_limit_reached" });
});

test("more than 32 targets: the rest are unknown", async () => {
  const targets = Array.from({ length: EVIDENCE_MAX_TARGETS + 1 }, (_, i) => `t${i}`);
  const report = await collectEvidence(targets, { lookup: async () => ({ version: "1.0.0" }) });
  const entries = report.inventories[0].entries.slice(1);
  assert.equal(entries.filter((e) => e.version.value === "1.0.0").length, 32);
  assert.deepEqual(entries[32].version, { status: "unknown", reason: "lookup_limit_reached" });
  assert.deepEqual(report.coverage, { status: "incomplete", gaps: [{ participant: "guest_sdk", reason: "lookup_limit_reached" }] });
});

test("the deadline leaves unfinished lookups unknown", async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const lookup = async (name: string): Promise<LookupResult> => {
    if (name === "slow") await held;
    return { version: "2.0.0" };
  };
  try {
    const report = await collectEvidence(["fast", "slow"], { lookup, deadlineMs: 20 });
    const [interpreter, fast, slow] = report.inventories[0].entries;
    assert.equal(interpreter.name, "node");
    assert.equal(fast.version.value, "2.0.0");
    assert.deepEqual(slow.version, { status: "unknown", reason: "collection_deadline_exceeded" });
  } finally {
    release();
  }
});

test("serve reports evidence in the start output only when the core asks", async () => {
  const probe = path.join(__dirname, "fixtures", "probe-adapter.js");
  for (const enabled of [true, false, undefined]) {
    const host = new HostProcess(process.execPath, [probe], {});
    // Each start is answered by its own host process (one runtime per host).
    try {
      const message = startMessage("runtime-e");
      if (enabled !== undefined) (message.payload as Record<string, unknown>).provenance = { enabled };
      const start = await host.request(message);
      assert.equal(start.outcome.status, "succeeded");
      if (enabled === true) {
        const inventory = start.outcome.output.execution.inventories[0];
        assert.deepEqual(inventory.participants, ["guest_sdk", "adapter"]);
        assert.equal(inventory.entries[0].version.value, process.versions.node);
        assert.equal(inventory.entries[1].name, "fabric-core");
        const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
        assert.equal(inventory.entries[1].version.value, manifest.version);
      } else {
        assert.equal(start.outcome.output, null);
      }
      await host.request(stopMessage("runtime-e"));
      assert.equal(await host.exit(), 0);
    } finally {
      host.kill();
    }
  }
});
