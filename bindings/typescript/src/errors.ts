/**
 * The SDK error hierarchy, mapped from C ABI status codes. Every error carries the native
 * ErrorInfo fields as structured properties: `stage`, `code`, `retryable`, `details`
 * (ErrorInfo `metadata`). As in the Python SDK, state, capability and native-unavailable
 * errors are subclasses of {@link FabricRuntimeError}.
 */

import { Code, ERROR_CODES, STATUS_CLASSES, Status, type ErrorClassKey, type ErrorInfo } from "./generated";

export { Status };
export type { ErrorInfo };

export interface FabricErrorOptions {
  stage?: string | null;
  code?: string | null;
  retryable?: boolean;
  details?: Record<string, unknown>;
  /** The C ABI status that produced this error, when it came from the library. */
  status?: number | null;
  cause?: unknown;
}

/** Base class of every error this package raises. */
export class FabricError extends Error {
  readonly stage: string | null;
  readonly code: string | null;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  readonly status: number | null;

  constructor(message: string, options: FabricErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.stage = options.stage ?? null;
    this.code = options.code ?? null;
    this.retryable = options.retryable ?? false;
    this.details = { ...(options.details ?? {}) };
    this.status = options.status ?? null;
  }
}

/** Invalid config, request, override or argument. */
export class FabricConfigError extends FabricError {}

/** Runtime start, invocation or stop failed before a normalized result. */
export class FabricRuntimeError extends FabricError {}

/** Invalid lifecycle transition: overlapping invokes, invoking a stopped runtime, ... */
export class FabricStateError extends FabricRuntimeError {}

/** The selected adapter does not support the requested operation. */
export class FabricCapabilityError extends FabricRuntimeError {}

/** The native library is missing, not loadable, or has another ABI version. */
export class FabricNativeUnavailableError extends FabricRuntimeError {}

/** A resource observation could not be read. */
export class ResourceObservationUnavailableError extends FabricRuntimeError {}

/** No resource reader exists for this adapter kind, provider or operating system. */
export class ResourceObservationUnsupportedError extends FabricRuntimeError {}

/**
 * `Service.release()` was refused: runtimes connected to the service still run (code
 * `service_in_use`, stage `stop`; `details.fields` lists their ids). The service stays active.
 */
export class ServiceInUseError extends FabricRuntimeError {}

type ErrorClass = new (message: string, options?: FabricErrorOptions) => FabricError;

/** The class of each error class key of the generated registry (`STATUS_CLASSES`, `ERROR_CODES`). */
const CLASSES: Record<ErrorClassKey, ErrorClass> = {
  config: FabricConfigError,
  capability: FabricCapabilityError,
  runtime: FabricRuntimeError,
  state: FabricStateError,
  resource_unavailable: ResourceObservationUnavailableError,
  resource_unsupported: ResourceObservationUnsupportedError,
  native_unavailable: FabricNativeUnavailableError,
};

/**
 * The class of a failed call: the status's class, unless the code's registry entry
 * overrides it (handle and lifecycle-state codes are state errors); {@link FabricError}
 * for a status the registry does not know.
 */
function errorClass(status: number, code: string | null): ErrorClass {
  const override = code !== null && Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code]?.classOverride : null;
  const key = override ?? STATUS_CLASSES[status];
  return key === undefined ? FabricError : CLASSES[key];
}

/** The error for a failed native call, from its status and ErrorInfo JSON text. */
export function errorFromStatus(status: number, text: string | null): FabricError {
  let info: Partial<Record<keyof ErrorInfo, unknown>> = {};
  if (text) {
    try {
      const decoded: unknown = JSON.parse(text);
      if (typeof decoded === "object" && decoded !== null && !Array.isArray(decoded)) info = decoded as typeof info;
    } catch {
      info = {};
    }
  }
  const code = typeof info.code === "string" ? info.code : null;
  const cls = code === Code.SERVICE_IN_USE ? ServiceInUseError : errorClass(status, code);
  const message = typeof info.message === "string" && info.message ? info.message : `native call failed with status ${status}`;
  const metadata = info.metadata;
  return new cls(message, {
    stage: typeof info.stage === "string" ? info.stage : null,
    code,
    retryable: info.retryable === true,
    details: typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {},
    status,
  });
}
