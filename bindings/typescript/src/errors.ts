/**
 * The SDK error hierarchy, mapped from C ABI status codes. Every error carries the native
 * ErrorInfo fields as structured properties: `stage`, `code`, `retryable`, `details`
 * (ErrorInfo `metadata`). As in the Python SDK, state, capability and native-unavailable
 * errors are subclasses of {@link FabricRuntimeError}.
 */

export interface ErrorInfo {
  stage?: string;
  code?: string;
  message?: string;
  retryable?: boolean;
  metadata?: Record<string, unknown>;
}

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

/** C ABI status codes (DESIGN §8; numbers never change). */
export const Status = {
  OK: 0,
  CONFIG: 1,
  CAPABILITY: 2,
  RUNTIME: 3,
  STATE: 4,
  RESOURCE_UNAVAILABLE: 5,
  RESOURCE_UNSUPPORTED: 6,
  INVALID_ARGUMENT: 7,
  INTERNAL: 8,
  END: 100,
  TIMEOUT: 101,
} as const;

const HANDLE_CODES = new Set(["null_handle", "stale_handle", "unknown_handle", "wrong_handle_kind"]);

type ErrorClass = new (message: string, options?: FabricErrorOptions) => FabricError;

const STATUS_CLASSES: Record<number, ErrorClass> = {
  [Status.CONFIG]: FabricConfigError,
  [Status.CAPABILITY]: FabricCapabilityError,
  [Status.RUNTIME]: FabricRuntimeError,
  [Status.STATE]: FabricStateError,
  [Status.RESOURCE_UNAVAILABLE]: ResourceObservationUnavailableError,
  [Status.RESOURCE_UNSUPPORTED]: ResourceObservationUnsupportedError,
  [Status.INTERNAL]: FabricRuntimeError,
};

/** The error for a failed native call, from its status and ErrorInfo JSON text. */
export function errorFromStatus(status: number, text: string | null): FabricError {
  let info: ErrorInfo = {};
  if (text) {
    try {
      const decoded: unknown = JSON.parse(text);
      if (typeof decoded === "object" && decoded !== null && !Array.isArray(decoded)) info = decoded as ErrorInfo;
    } catch {
      info = {};
    }
  }
  const code = typeof info.code === "string" ? info.code : null;
  let cls: ErrorClass;
  if (status === Status.INVALID_ARGUMENT) {
    cls = code !== null && HANDLE_CODES.has(code) ? FabricStateError : FabricConfigError;
  } else {
    cls = STATUS_CLASSES[status] ?? FabricError;
  }
  const message = typeof info.message === "string" && info.message ? info.message : `native call failed with status ${status}`;
  const metadata = info.metadata;
  return new cls(message, {
    stage: typeof info.stage === "string" ? info.stage : null,
    code,
    retryable: info.retryable === true,
    details: typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? metadata : {},
    status,
  });
}
