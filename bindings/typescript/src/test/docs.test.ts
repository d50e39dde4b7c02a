import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";

const PACKAGE = path.resolve(__dirname, "..", "..");
const DOC = path.resolve(PACKAGE, "..", "..", "docs", "typescript.md");

test("docs/typescript.md shows the quickstart example verbatim", () => {
  const doc = fs.readFileSync(DOC, "utf8");
  const example = fs.readFileSync(path.join(PACKAGE, "src", "examples", "quickstart.ts"), "utf8");
  assert.ok(doc.includes(example.trim()), "docs/typescript.md must contain src/examples/quickstart.ts");
});

test("the quickstart example runs", () => {
  const child = spawnSync(process.execPath, [path.join(__dirname, "..", "examples", "quickstart.js")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(child.stdout.trim().split("\n"), [
    "adapter: fabric.scripted",
    "run: succeeded you said hello",
    "turn first: you said first",
    "turn second: before that you said first",
  ]);
});

test("docs/typescript.md shows the health example verbatim, and it runs", () => {
  const doc = fs.readFileSync(DOC, "utf8");
  const example = fs.readFileSync(path.join(PACKAGE, "src", "examples", "health.ts"), "utf8");
  assert.ok(doc.includes(example.trim()), "docs/typescript.md must contain src/examples/health.ts");
  const child = spawnSync(process.execPath, [path.join(__dirname, "..", "examples", "health.js")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(child.stdout.trim().split("\n"), [
    "processes: 1 rss > 0: true",
    "after: available sampled peak >= 350 MiB: true",
    "check: passed live,active,ready",
  ]);
});

test("docs/typescript.md shows the streaming example verbatim, and it runs", () => {
  const doc = fs.readFileSync(DOC, "utf8");
  const example = fs.readFileSync(path.join(PACKAGE, "src", "examples", "stream.ts"), "utf8");
  assert.ok(doc.includes(example.trim()), "docs/typescript.md must contain src/examples/stream.ts");
  const child = spawnSync(process.execPath, [path.join(__dirname, "..", "examples", "stream.js")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(child.stdout.trim().split("\n"), [
    "streaming: true",
    "Streaming, one small piece at a time.",
    "7 chunks, succeeded",
    "first: Stream",
    "whole: Streaming, one small piece at a time.",
  ]);
});
