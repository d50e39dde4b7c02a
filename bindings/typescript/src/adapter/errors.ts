import type { JsonObject } from "./types";

/**
 * A lifecycle failure safe to return across the protocol. Adapters throw it to choose
 * the code; any other exception becomes `lifecycle_adapter_<operation>_failed`.
 */
export class LifecycleError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly metadata: JsonObject;

  constructor(code: string, message: string, options: { retryable?: boolean; metadata?: JsonObject } = {}) {
    super(message);
    this.name = "LifecycleError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.metadata = { ...(options.metadata ?? {}) };
  }
}
