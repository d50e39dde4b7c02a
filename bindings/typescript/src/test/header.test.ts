import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  errorFromStatus,
  FabricCapabilityError,
  FabricConfigError,
  FabricError,
  FabricNativeUnavailableError,
  FabricRuntimeError,
  FabricStateError,
  ResourceObservationUnavailableError,
  ResourceObservationUnsupportedError,
  Status,
} from "../errors";
import { ERROR_CODES } from "../generated";

type ErrorClass = new (...args: never[]) => FabricError;
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

test("error classes come from the generated status and code tables", () => {
  const info = (code: string) => JSON.stringify({ stage: "invoke", code, message: "m", retryable: false, metadata: { k: 1 } });
  const cases: [number, string, ErrorClass][] = [
    [Status.CONFIG, "unknown_field", FabricConfigError],
    [Status.CAPABILITY, "config_incompatible", FabricCapabilityError],
    [Status.RUNTIME, "host_crashed", FabricRuntimeError],
    [Status.STATE, "runtime_busy", FabricStateError],
    [Status.RESOURCE_UNAVAILABLE, "resource_observation_unavailable", ResourceObservationUnavailableError],
    [Status.RESOURCE_UNSUPPORTED, "resource_observation_unsupported", ResourceObservationUnsupportedError],
    [Status.INVALID_ARGUMENT, "invalid_utf8", FabricConfigError],
    [Status.INVALID_ARGUMENT, "null_argument", FabricConfigError],
    [Status.INVALID_ARGUMENT, "null_handle", FabricStateError],
    [Status.INVALID_ARGUMENT, "stale_handle", FabricStateError],
    [Status.INVALID_ARGUMENT, "unknown_handle", FabricStateError],
    [Status.INVALID_ARGUMENT, "wrong_handle_kind", FabricStateError],
    [Status.INTERNAL, "internal_panic", FabricRuntimeError],
    [Status.END, "x", FabricError],
    [999, "x", FabricError],
  ];
  for (const [status, code, cls] of cases) {
    const error = errorFromStatus(status, info(code));
    assert.equal(error.constructor, cls, `${status} ${code}: ${error.name}`);
    assert.deepEqual([error.stage, error.code, error.status, error.details], ["invoke", code, status, { k: 1 }]);
  }
  // Statuses the registry names, and no unknown code overrides a class.
  assert.equal(errorFromStatus(Status.INVALID_ARGUMENT, info("toString")).constructor, FabricConfigError);
  assert.equal(errorFromStatus(Status.CONFIG, "not json").constructor, FabricConfigError);
  assert.equal(errorFromStatus(Status.CONFIG, null).message, "native call failed with status 1");
  for (const [code, entry] of Object.entries(ERROR_CODES)) {
    if (entry.classOverride === "state") assert.ok(errorFromStatus(Status.INVALID_ARGUMENT, info(code)) instanceof FabricStateError, code);
  }
  assert.ok(new FabricNativeUnavailableError("x") instanceof FabricRuntimeError);
});
