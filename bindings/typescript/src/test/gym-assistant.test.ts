import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Fabric, FabricConfigError, type AgentObservationBundle, type ModelCallKeys, type TrajectoryRecord } from "../index";

// tests/fixtures/gym-join-assistant.json: one rule of docs/gym.md per turn or call, with the
// expected join (no released nemo-gym has join_assistant_message_calls to compare with).
const fixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "..", "..", "..", "tests", "fixtures", "gym-join-assistant.json"), "utf8"),
);
const bundle = fixture.bundle as AgentObservationBundle;
const trajectory = fixture.trajectory as TrajectoryRecord;
const calls = fixture.calls as ModelCallKeys[];

function turnCalls(record: TrajectoryRecord, invocation: string, turnNo: number): string[] {
  const turn = (record.turns ?? []).find((t) => t.invocation_id === invocation && t.turn_no === turnNo);
  assert.ok(turn);
  return (turn.model_calls ?? []).map((reference) => reference.model_call_id ?? "");
}

test("joinAssistantMessageCalls joins the shared rollout as tests/fixtures/gym-join-assistant.json expects", async () => {
  const joined = await new Fabric().joinAssistantMessageCalls(bundle, trajectory, calls);
  assert.deepEqual(joined, fixture.joined);
  assert.ok(joined.trajectory);
  assert.deepEqual(turnCalls(joined.trajectory, "root", 1), ["mc-retry-1", "mc-retry-2"]);
  assert.deepEqual(turnCalls(joined.trajectory, "root", 2), ["mc-one"]);
  assert.deepEqual(turnCalls(joined.trajectory, "sub", 1), ["mc-sub"]);
  const codes = (joined.bundle.gaps ?? []).map((gap) => `${gap.code} ${gap.detail}`);
  assert.ok(codes.includes("message_model_ref_mismatch source_message_id:msg-judged:mc-judged"), codes.join("\n"));
  assert.ok(codes.includes("model_call_reference_ambiguous source_message_id:msg-twice"), codes.join("\n"));
});

test("joinAssistantMessageCalls without a trajectory joins only compactions", async () => {
  const joined = await new Fabric().joinAssistantMessageCalls(bundle, null, calls);
  assert.equal(joined.trajectory, undefined);
  const compaction = (joined.bundle.records ?? [])[2] as { model_calls: { model_call_id?: string }[] };
  assert.deepEqual(compaction.model_calls.map((reference) => reference.model_call_id), ["mc-summary"]);
});

test("joinAssistantMessageCalls refuses a trajectory that breaks Gym's identity rules", async () => {
  const broken = structuredClone(trajectory);
  (broken.turns ?? [])[1].turn_no = 1;
  await assert.rejects(new Fabric().joinAssistantMessageCalls(bundle, broken, calls), (error: unknown) => {
    assert.ok(error instanceof FabricConfigError);
    assert.equal(error.code, "gym_turn_invalid");
    assert.match(String(error.details.path), /^trajectory\.turns\[1\]/);
    return true;
  });
});
