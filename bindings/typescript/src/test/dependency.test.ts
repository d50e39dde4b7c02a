/**
 * The rule for a missing dependency (`dependencySkip` of fabric-core/testing, issue 33
 * item 10), proven on a small node --test run: a test whose tool (named by
 * `FABRIC_DEPENDENCY_PROBE`) does not exist FAILS naming what to install, `CI` changes
 * nothing, and `FABRIC_ALLOW_SKIPS=1` turns it into a skip.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";

const TESTING = path.resolve(__dirname, "..", "testing.js");

const PROBE = `
const fs = require("node:fs");
const { test } = require("node:test");
const { dependencySkip } = require(${JSON.stringify(TESTING)});
const tool = process.env.FABRIC_DEPENDENCY_PROBE;
const skip = dependencySkip(fs.existsSync(tool), tool, "apt-get install fabric-probe-tool");
test("needs the probe tool", { skip }, () => {});
`;

function probe(env: Record<string, string>): { status: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-dependency-"));
  try {
    const file = path.join(dir, "probe.test.js");
    fs.writeFileSync(file, PROBE);
    const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
    childEnv.FABRIC_DEPENDENCY_PROBE = "/nonexistent/fabric-probe-tool";
    for (const key of ["FABRIC_ALLOW_SKIPS", "CI"]) if (!(key in env)) delete childEnv[key];
    delete childEnv.NODE_TEST_CONTEXT; // the child is its own test run, not a subtest
    const run = spawnSync(process.execPath, ["--test", file], { encoding: "utf8", env: childEnv, timeout: 60_000 });
    return { status: run.status, out: `${run.stdout}${run.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("a missing dependency fails naming what to install unless FABRIC_ALLOW_SKIPS=1", () => {
  const cases: Record<string, string>[] = [{}, { CI: "true" }, { FABRIC_ALLOW_SKIPS: "0" }];
  for (const env of cases) {
    const { status, out } = probe(env);
    assert.notEqual(status, 0, `${JSON.stringify(env)}: ${out}`);
    assert.match(out, /is missing; install it: apt-get install fabric-probe-tool/, out);
    assert.match(out, /FABRIC_ALLOW_SKIPS=1/, out);
  }
  const { status, out } = probe({ FABRIC_ALLOW_SKIPS: "1" });
  assert.equal(status, 0, out);
  assert.match(out, /# skipped 1/, out);
  assert.match(out, /apt-get install fabric-probe-tool/, out);
});
