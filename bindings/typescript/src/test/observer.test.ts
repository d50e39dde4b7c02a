import { test } from "node:test";
import * as assert from "node:assert/strict";
import { MAX_ITERATIONS, STOP_REASON_EXTENSION, StopObserver } from "../adapter";

test("onIterationLimitReached records max_iterations once, on that invocation only", () => {
  const observer = new StopObserver();
  observer.onIterationLimitReached({ invocationId: "child" });
  observer.onIterationLimitReached({ invocationId: "child" });
  assert.equal(observer.stopReason("child"), MAX_ITERATIONS);
  assert.equal(observer.stopReason("root"), undefined);

  const root = { status: "succeeded" as const, output: "ok" };
  assert.equal(observer.finish("root", root), root);
  const child = observer.finish("child", { status: "succeeded", output: "ok", extensions: { x: 1 } });
  assert.deepEqual(child.extensions, { x: 1, [STOP_REASON_EXTENSION]: "max_iterations" });
  // Taken: a later result of the same invocation carries nothing.
  assert.deepEqual(observer.finish("child", { status: "succeeded", output: null }), { status: "succeeded", output: null });
  assert.throws(() => observer.onIterationLimitReached({ invocationId: "" }), TypeError);
});
