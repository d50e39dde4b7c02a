import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, FabricConfigError, type AgentObservationBundle, type GymObservationsRequest, type ModelCallKeys } from "../index";

function result(invocation: string) {
  return {
    agent_name: "a", harness: "h", adapter_kind: "process", runtime_id: "runtime-1",
    invocation_id: invocation, request_id: `request-${invocation}`, status: "succeeded",
    output: { response: "ok" }, artifacts: { root: null, artifacts: [] }, events: [], telemetry: [],
  };
}

test("gymObservations maps results and ATOF records to the Gym contract", async () => {
  const request = {
    task_id: "t", rollout_id: "r", results: [result("i1")],
    atof: [
      { kind: "scope", scope_category: "start", uuid: "root", parent_uuid: null, category: "agent", name: "r",
        timestamp: "2026-01-01T00:00:00Z", metadata: { nemo_fabric_request_id: "request-i1" } },
      { kind: "scope", scope_category: "start", uuid: "t", parent_uuid: "root", category: "tool", name: "grep",
        timestamp: "2026-01-01T00:00:01Z", category_profile: { tool_call_id: "call-1" } },
      { kind: "scope", scope_category: "end", uuid: "t", parent_uuid: "root", category: "tool", name: "grep",
        timestamp: "2026-01-01T00:00:01.25Z" },
    ],
  } as unknown as GymObservationsRequest;
  const out = await new Fabric().gymObservations(request);
  const records = out.ng_agent_observations.records as { kind: string; duration_ms?: number }[];
  assert.deepEqual(records.map((r) => r.kind), ["agent_invocation", "tool_call"]);
  assert.equal(records[1]?.duration_ms, 250);
  assert.equal(out.trajectory.schema_version, "1.0");
  assert.equal(out.trajectory.turns?.[0]?.turn_no, 1);
});

test("gymObservations reports duplicate invocation ids as a config error", async () => {
  const request = { task_id: "t", rollout_id: "r", results: [result("i"), result("i")] } as unknown as GymObservationsRequest;
  await assert.rejects(new Fabric().gymObservations(request), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "gym_invocation_id_duplicate");
    return true;
  });
});

test("joinModelCallObservations joins the shared rollout as tests/fixtures/gym-join.json expects", async () => {
  const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "..", "tests", "fixtures", "gym-join.json"), "utf8"));
  const joined = await new Fabric().joinModelCallObservations(fixture.bundle as AgentObservationBundle, fixture.calls as ModelCallKeys[]);
  assert.deepEqual(joined, fixture.joined);
});

test("joinModelCallObservations refuses a bundle that breaks Gym's identity rules", async () => {
  const twice = { kind: "agent_invocation", invocation_id: "a", status: "completed", model_calls: [], conversation: [] };
  const bundle = { source: "s", records: [twice, twice] } as unknown as AgentObservationBundle;
  await assert.rejects(new Fabric().joinModelCallObservations(bundle, []), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "gym_invocation_id_duplicate");
    assert.equal(error.details.path, "bundle.records[1].invocation_id");
    return true;
  });
});
