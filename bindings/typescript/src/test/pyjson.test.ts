import { test } from "node:test";
import * as assert from "node:assert/strict";
import { pythonJsonDumps, toPlainJson } from "../adapter/pyjson";

// Expected strings were produced by CPython's json.dumps(value, sort_keys=True).
const GOLDEN: [unknown, string][] = [
  [{ b: [1, 2.5, null], a: { z: true, y: "x" } }, '{"a": {"y": "x", "z": true}, "b": [1, 2.5, null]}'],
  ['é\u{1F600}\n\u0001\u007f"\\', '"\\u00e9\\ud83d\\ude00\\n\\u0001\\u007f\\"\\\\"'],
  [[], "[]"],
  [{}, "{}"],
  [1e-7, "1e-07"],
  [1e21, "1e+21"],
  [123456789, "123456789"],
  [-1.5, "-1.5"],
  [{ "\u00e9": 1, z: 2, A: 3 }, '{"A": 3, "z": 2, "\\u00e9": 1}'],
];

test("pythonJsonDumps matches CPython json.dumps(sort_keys=True)", () => {
  for (const [value, expected] of GOLDEN) {
    assert.equal(pythonJsonDumps(value), expected);
  }
});

test("toPlainJson rejects what JSON cannot carry", () => {
  assert.throws(() => toPlainJson({ a: 1n }), /BigInt|serialize/);
  assert.throws(() => toPlainJson({ a: Number.NaN }), /non-finite/);
  assert.throws(() => toPlainJson({ a: () => 1 }), /function/);
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.throws(() => toPlainJson(cycle));
  assert.deepEqual(toPlainJson({ a: undefined, b: new Date(0) }), { b: "1970-01-01T00:00:00.000Z" });
});
