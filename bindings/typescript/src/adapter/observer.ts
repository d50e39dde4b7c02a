/**
 * Harness stop events for TypeScript adapters.
 *
 * A harness adapter reports that its harness hit its iteration limit through the observer
 * hook `onIterationLimitReached({ invocationId })` (Gym's `on_iteration_limit_reached(*,
 * invocation_id)`): it records `stop_reason = "max_iterations"` once on that invocation and
 * on no other. When the invocation's result is returned, `finish` puts the recorded reason
 * into the result's core-owned `nemo_fabric.stop_reason` extension, which the Fabric core
 * moves to `RunResult.metadata.stop_reason` and the NeMo Gym export to
 * `AgentInvocation.stop_reason` (docs/gym.md). The extension needs no descriptor schema.
 */
import type { AgentRunResult } from "./types";

/** The core-owned result extension that carries an invocation's stop reason. */
export const STOP_REASON_EXTENSION = "nemo_fabric.stop_reason";
/** The stop reason of an invocation that hit its iteration limit. */
export const MAX_ITERATIONS = "max_iterations";

/** Stop reasons recorded per invocation id until that invocation's result takes them. */
export class StopObserver {
  readonly #reasons = new Map<string, string>();

  /** The harness hit its iteration limit in `invocationId`; recorded once. */
  onIterationLimitReached({ invocationId }: { invocationId: string }): void {
    if (typeof invocationId !== "string" || invocationId === "") {
      throw new TypeError("invocationId must be a non-empty string");
    }
    if (!this.#reasons.has(invocationId)) this.#reasons.set(invocationId, MAX_ITERATIONS);
  }

  /** The reason recorded for `invocationId` and not yet taken by `finish`. */
  stopReason(invocationId: string): string | undefined {
    return this.#reasons.get(invocationId);
  }

  /** A copy of `result` with the reason recorded for `invocationId` (if any), which is forgotten. */
  finish(invocationId: string, result: AgentRunResult): AgentRunResult {
    const reason = this.#reasons.get(invocationId);
    if (reason === undefined) return result;
    this.#reasons.delete(invocationId);
    return { ...result, extensions: { ...(result.extensions ?? {}), [STOP_REASON_EXTENSION]: reason } };
  }
}
