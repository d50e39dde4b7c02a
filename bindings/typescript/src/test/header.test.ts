import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Status } from "../errors";
import { EXPECTED_ABI_VERSION } from "../native";

const HEADER = path.resolve(__dirname, "..", "..", "..", "..", "include", "fabric.h");

test("status codes and ABI version match include/fabric.h", () => {
  const header = fs.readFileSync(HEADER, "utf8");
  const fromHeader: Record<string, number> = {};
  for (const match of header.matchAll(/^\s*FABRIC_STATUS_([A-Z_]+)\s*=\s*(\d+),/gm)) {
    fromHeader[match[1] as string] = Number(match[2]);
  }
  assert.deepEqual(fromHeader, { ...Status });
  const abi = /#define FABRIC_ABI_VERSION (\d+)/.exec(header);
  assert.equal(Number(abi?.[1]), EXPECTED_ABI_VERSION);
});
