/**
 * Private: every C ABI symbol this package uses, declared once with koffi from the signatures
 * generated from include/fabric.h (`prototypes.ts`).
 *
 * `invoke` and `run` are non-blocking operations the event loop watches (see
 * {@link NativeLibrary.operate}); other blocking entry points run as koffi async calls (on
 * a worker thread) so the event loop never blocks. Library strings arrive as `void *`, are decoded as UTF-8 and always
 * released with `fabric_string_free` (never `koffi.free`). Handles are integer ids
 * (`uint64_t`, at most 2^53-1) and are passed around as JS numbers.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type * as KoffiModule from "koffi" with { "resolution-mode": "import" };
// koffi ships ESM types ("type": "module") and a CommonJS entry point; load the latter.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const koffi = require("koffi") as typeof KoffiModule;
import { errorFromStatus, FabricConfigError, FabricNativeUnavailableError, Status } from "./errors";
import { ABI_VERSION, Code } from "./generated";
import { PROTOTYPES, type NativeSymbol } from "./prototypes";
export type { NativeSymbol };

/**
 * koffi runs async calls on libuv's thread pool, which has 4 threads unless
 * `UV_THREADPOOL_SIZE` says otherwise; a fifth concurrent invocation (or any fs/dns work)
 * would wait for one of them to finish. Unless the program chose a size, ask for
 * {@link DEFAULT_THREADPOOL_SIZE} threads: libuv reads the variable when the pool first
 * starts, so this works when fabric-core is imported before the pool is used.
 */
export const DEFAULT_THREADPOOL_SIZE = 64;
if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = String(DEFAULT_THREADPOOL_SIZE);

/** The C ABI version this package was written against (generated from the Rust core). */
export const EXPECTED_ABI_VERSION: number = ABI_VERSION;

type NativeFunction = ((...args: unknown[]) => number) & {
  async: (...args: unknown[]) => void;
};

/**
 * Stack size for koffi's async calls. The core (debug builds especially) needs far more
 * than koffi's 128 KiB default: JSON Schema compilation and serde recursion overflow it.
 * Stacks are reserved, not committed, so the cost is address space.
 */
export const ASYNC_STACK_BYTES = 8 * 1024 * 1024;

function configureKoffi(): void {
  const current = koffi.config();
  if ((current.async_stack_size ?? 0) >= ASYNC_STACK_BYTES) return;
  try {
    koffi.config({ ...current, async_stack_size: ASYNC_STACK_BYTES });
  } catch (error) {
    throw new FabricNativeUnavailableError(
      `koffi was configured before fabric-core loaded and its async stack (${current.async_stack_size} bytes) is too small; ` +
        `create a Fabric before loading other koffi libraries`,
      { code: Code.NATIVE_LIBRARY_UNLOADABLE, stage: "config", cause: error },
    );
  }
}

/** Functions every supported library exports: loading fails without one. */
const REQUIRED: readonly NativeSymbol[] = [
  "fabric_validate",
  "fabric_plan",
  "fabric_doctor",
  "fabric_run",
  "fabric_runtime_start",
  "fabric_runtime_invoke",
  "fabric_runtime_stop",
  "fabric_runtime_status",
  "fabric_environment_prepare",
  "fabric_environment_attach",
  "fabric_environment_start_runtime",
  "fabric_environment_release",
];

/** Newer functions: a library without them still loads; calling one rejects. */
const OPTIONAL: readonly NativeSymbol[] = [
  "fabric_runtime_resource_snapshot",
  "fabric_check",
  "fabric_environment_exec",
  "fabric_environment_write_file",
  "fabric_environment_read_file",
  "fabric_environment_list",
  "fabric_gym_observations",
  "fabric_gym_join_model_calls",
  "fabric_gym_join_assistant_messages",
  "fabric_adapter_check",
  "fabric_inspect",
  "fabric_runtime_invoke_openai_stream",
  "fabric_runtime_invoke_stream",
  "fabric_stream_next_batch",
  "fabric_stream_result",
  "fabric_stream_close",
  "fabric_stream_free",
  // Non-blocking operations (docs/abi.md "Non-blocking calls").
  "fabric_runtime_invoke_begin",
  "fabric_run_begin",
  "fabric_runtime_start_begin",
  "fabric_runtime_stop_begin",
  "fabric_operation_take",
  "fabric_operation_free",
  "fabric_completion_queue_new",
  "fabric_completion_queue_fd",
  "fabric_completion_queue_next",
  "fabric_service_prepare",
  "fabric_service_attach",
  "fabric_service_start_runtime",
  "fabric_service_release",
  "fabric_service_info",
  "fabric_prewarm_start",
  "fabric_prewarm_status",
  "fabric_prewarm_close",
  "fabric_prewarm_free",
  // Batches (docs/batches.md).
  "fabric_batch_start",
  "fabric_batch_push",
  "fabric_batch_close",
  "fabric_batch_cancel",
  "fabric_batch_next",
  "fabric_batch_next_lines",
  "fabric_batch_summary",
  "fabric_batch_free",
];

/**
 * The loaded library with its declared functions: each signature comes from `PROTOTYPES`
 * (generated from include/fabric.h); this class adds which functions may be missing, the
 * async calls and the freeing of library strings.
 */
export class NativeLibrary {
  readonly path: string;
  readonly version: string;
  readonly abiVersion: number;
  private readonly stringFree: (pointer: unknown) => void;
  private readonly functions: Record<string, NativeFunction> = {};
  private readonly missing = new Set<string>();
  readonly runtimeFree: (handle: number) => number;
  readonly serviceFree: (handle: number) => number;
  readonly environmentFree: (handle: number) => number;
  /** libc `dup`, when it could be loaded: the queue's descriptor is watched through a copy. */
  private readonly dup: ((fd: number) => number) | null;
  private queue: OperationQueue | null = null;

  constructor(libraryPath: string) {
    this.path = libraryPath;
    configureKoffi();
    const lib = koffi.load(libraryPath);
    const declare = (name: NativeSymbol): unknown => lib.func(PROTOTYPES[name]);
    const abiVersion = declare("fabric_abi_version") as () => number;
    this.abiVersion = abiVersion();
    if (this.abiVersion !== EXPECTED_ABI_VERSION) {
      throw new FabricNativeUnavailableError(
        `${libraryPath} has C ABI version ${this.abiVersion}; this package needs ${EXPECTED_ABI_VERSION}`,
        { code: Code.ABI_VERSION_MISMATCH, stage: "config" },
      );
    }
    this.version = (declare("fabric_version") as () => string)();
    this.stringFree = declare("fabric_string_free") as (pointer: unknown) => void;
    for (const name of REQUIRED) this.functions[name] = declare(name) as NativeFunction;
    // Newer symbols: a library without them still loads; calling them rejects.
    for (const name of OPTIONAL) {
      try {
        this.functions[name] = declare(name) as NativeFunction;
      } catch {
        this.missing.add(name);
      }
    }
    try {
      this.serviceFree = declare("fabric_service_free") as (handle: number) => number;
    } catch {
      this.serviceFree = () => 0;
    }
    this.dup = loadDup();
    this.environmentFree = declare("fabric_environment_free") as (handle: number) => number;
    this.runtimeFree = declare("fabric_runtime_free") as (handle: number) => number;
  }

  /** Decodes and frees one library string. */
  private take(pointer: unknown): string | null {
    if (pointer === null || pointer === undefined || pointer === 0n || pointer === 0) return null;
    try {
      return koffi.decode(pointer, "char", -1) as string;
    } finally {
      this.stringFree(pointer);
    }
  }

  private settle(status: number, pointer: unknown): string | null {
    const text = this.take(pointer);
    if (status !== Status.OK) throw errorFromStatus(status, text);
    return text;
  }

  private missingSymbol(name: string): FabricNativeUnavailableError {
    return new FabricNativeUnavailableError(`${this.path} does not export ${name}`, { code: Code.NATIVE_SYMBOL_MISSING, stage: "config" });
  }

  /** Calls `name(...args, &out)` on a worker thread; resolves with the `*out` text. */
  call(name: string, args: unknown[]): Promise<string | null> {
    if (this.missing.has(name)) return Promise.reject(this.missingSymbol(name));
    const fn = this.functions[name] as NativeFunction;
    const out: unknown[] = [null];
    return this.callAsync(fn, args, out, (status) => this.settle(status, out[0]));
  }

  /**
   * A call that also writes a handle (`fabric_runtime_start`, `fabric_environment_prepare`,
   * `fabric_environment_start_runtime`): `name(...args, &handle, &out)` on a worker thread.
   */
  callWithHandle(name: string, args: unknown[]): Promise<{ handle: number; text: string | null }> {
    if (this.missing.has(name)) return Promise.reject(this.missingSymbol(name));
    const fn = this.functions[name] as NativeFunction;
    const handleOut: unknown[] = [0];
    const out: unknown[] = [null];
    return this.callAsync(fn, [...args, handleOut], out, (status) => {
      const text = this.settle(status, out[0]);
      return { handle: toHandle(handleOut[0]), text };
    });
  }

  /**
   * Runs `fn(...args, &out)` on a worker thread and resolves with `finish(status)` (which
   * takes `*out`); when koffi fails to make the call, `*out` is still taken and freed.
   */
  private callAsync<T>(fn: NativeFunction, args: unknown[], out: unknown[], finish: (status: number) => T): Promise<T> {
    return new Promise((resolve, reject) => {
      fn.async(...args, out, (error: unknown, status: number) => {
        if (error) {
          // koffi failed to make the call; a string may still have been written.
          try {
            this.take(out[0]);
          } finally {
            reject(error);
          }
          return;
        }
        try {
          resolve(finish(status));
        } catch (failure) {
          reject(failure);
        }
      });
    });
  }

  /**
   * `fabric_stream_next_batch(stream, 0, 0, &out)` on the calling thread: never blocks (the
   * core returns TIMEOUT rather than waiting or finishing the stream). Resolves the status
   * (OK with a JSON array text, END, TIMEOUT); an error status throws its SDK error.
   */
  streamPoll(stream: number): StreamPull {
    if (this.missing.has("fabric_stream_next_batch")) throw this.missingSymbol("fabric_stream_next_batch");
    const fn = this.functions.fabric_stream_next_batch as NativeFunction;
    const out: unknown[] = [null];
    return this.pulled(fn(stream, 0, 0, out), out[0]);
  }

  /** `fabric_stream_next_batch(stream, timeout_ms, 0, &out)` on a worker thread (waits). */
  streamWait(stream: number, timeoutMs: number): Promise<StreamPull> {
    if (this.missing.has("fabric_stream_next_batch")) return Promise.reject(this.missingSymbol("fabric_stream_next_batch"));
    const fn = this.functions.fabric_stream_next_batch as NativeFunction;
    const out: unknown[] = [null];
    return this.callAsync(fn, [stream, timeoutMs, 0], out, (status) => this.pulled(status, out[0]));
  }

  /**
   * A call whose END and TIMEOUT are answers (`fabric_batch_push`, `_next`, `_summary`):
   * `name(...args, &out)` on the calling thread when `wait` is false (the caller passes a
   * zero timeout, so it never blocks), else on a worker thread.
   */
  pull(name: string, args: unknown[], wait: boolean): Promise<StreamPull> {
    if (this.missing.has(name)) return Promise.reject(this.missingSymbol(name));
    const fn = this.functions[name] as NativeFunction;
    const out: unknown[] = [null];
    if (!wait) {
      try {
        return Promise.resolve(this.pulled(fn(...args, out), out[0]));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.callAsync(fn, args, out, (status) => this.pulled(status, out[0]));
  }

  /** `name(handle)` returning a status only, on the calling thread (never blocks). */
  statusNow(name: string, handle: number): number {
    if (this.missing.has(name)) throw this.missingSymbol(name);
    return (this.functions[name] as unknown as (handle: number) => number)(handle);
  }

  private pulled(status: number, pointer: unknown): StreamPull {
    const text = this.take(pointer);
    if (status === Status.OK || status === Status.END || status === Status.TIMEOUT) return { status, text };
    throw errorFromStatus(status, text);
  }

  /** `name(handle)` without `*out` (`fabric_stream_close`, `fabric_stream_free`) on a worker thread. */
  callStatus(name: string, handle: number): Promise<number> {
    if (this.missing.has(name)) return Promise.reject(this.missingSymbol(name));
    const fn = this.functions[name] as NativeFunction;
    return new Promise((resolve, reject) => {
      fn.async(handle, (error: unknown, status: number) => (error ? reject(error) : resolve(status)));
    });
  }

  /** Whether `name` can run as a non-blocking operation watched by the event loop. */
  canOperate(name: string): boolean {
    return (
      this.dup !== null &&
      !this.missing.has(name) &&
      !this.missing.has("fabric_operation_take") &&
      !this.missing.has("fabric_completion_queue_next")
    );
  }

  /**
   * The process's completion queue, made on first use: one descriptor for every operation.
   * libuv watches a `dup` of it through one `net.Socket` (koffi has no way to watch a
   * descriptor, and libuv watches one only through a handle that owns it); the socket is
   * referenced only while operations are pending, so an idle program can exit.
   */
  private completionQueue(): OperationQueue {
    if (this.queue) return this.queue;
    const queueOut: unknown[] = [0];
    const out: unknown[] = [null];
    this.settle((this.functions.fabric_completion_queue_new as NativeFunction)(queueOut, out), out[0]);
    const handle = toHandle(queueOut[0]);
    const fdOut: unknown[] = [-1];
    const fdText: unknown[] = [null];
    this.settle((this.functions.fabric_completion_queue_fd as NativeFunction)(handle, fdOut, fdText), fdText[0]);
    const fd = (this.dup as (fd: number) => number)(Number(fdOut[0]));
    if (fd < 0) throw new FabricNativeUnavailableError("dup() of the completion queue descriptor failed", { code: Code.ENGINE_UNAVAILABLE });
    // The socket owns the copy; the core's descriptor stays with the queue (never freed:
    // it lives as long as this library object, i.e. the process).
    const socket = new net.Socket({ fd, readable: true, writable: false });
    const queue: OperationQueue = { handle, socket, waiting: new Map() };
    socket.on("data", () => this.drainQueue(queue));
    socket.on("error", (error) => {
      for (const [, waiter] of queue.waiting) waiter.reject(error);
      queue.waiting.clear();
      if (this.queue === queue) this.queue = null;
    });
    socket.unref();
    this.queue = queue;
    return queue;
  }

  /** Takes every finished operation of the queue (the socket was readable). */
  private drainQueue(queue: OperationQueue): void {
    const next = this.functions.fabric_completion_queue_next as NativeFunction;
    const take = this.functions.fabric_operation_take as NativeFunction;
    const free = this.functions.fabric_operation_free as NativeFunction;
    for (;;) {
      const operationOut: unknown[] = [0];
      const out: unknown[] = [null];
      const status = next(queue.handle, operationOut, out);
      this.take(out[0]);
      if (status !== Status.OK) break;
      const operation = Number(operationOut[0]);
      const waiter = queue.waiting.get(operation);
      if (!waiter) continue;
      queue.waiting.delete(operation);
      const takeOut: unknown[] = [null];
      const taken = take(operation, takeOut);
      free(operation);
      try {
        if (taken === Status.END) throw errorFromStatus(Status.INTERNAL, null);
        waiter.resolve(this.settle(taken, takeOut[0]));
      } catch (failure) {
        waiter.reject(failure);
      }
    }
    if (queue.waiting.size === 0) queue.socket.unref();
  }

  /**
   * Begins `name(...args, queue, &operation, &out)` (a `fabric_..._begin` call) on this
   * thread and resolves with the outcome's `*out` text once the core finished it: the core
   * queues the operation on the process's completion queue, whose descriptor libuv watches,
   * so no worker thread waits and no descriptor is spent per call. Begin errors reject at
   * once. Falls back to `fallback` (the blocking twin on a worker thread) when the library
   * or libc lacks a symbol.
   */
  operate(name: string, args: unknown[], fallback: string): Promise<string | null> {
    if (!this.canOperate(name)) return this.call(fallback, args);
    let queue: OperationQueue;
    let operation: number;
    try {
      queue = this.completionQueue();
      const operationOut: unknown[] = [0];
      const out: unknown[] = [null];
      this.settle((this.functions[name] as NativeFunction)(...args, queue.handle, operationOut, out), out[0]);
      operation = toHandle(operationOut[0]);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      queue.waiting.set(operation, { resolve, reject });
      queue.socket.ref();
    });
  }

  /**
   * Starts a runtime: `fabric_runtime_start_begin` on the completion queue (no worker thread;
   * the take issues the handle in the identity's `handle`), else `fabric_runtime_start` on a
   * worker thread. Resolves with the handle and the identity JSON.
   */
  startRuntime(configJson: string, optionsJson: string): Promise<{ handle: number; text: string | null }> {
    if (!this.canOperate("fabric_runtime_start_begin")) {
      return this.callWithHandle("fabric_runtime_start", [configJson, optionsJson]);
    }
    return this.operate("fabric_runtime_start_begin", [configJson, optionsJson], "fabric_runtime_start").then((text) => {
      const identity = JSON.parse(text ?? "null") as { handle?: unknown } | null;
      return { handle: toHandle(identity?.handle), text };
    });
  }

  /** Stops a runtime: `fabric_runtime_stop_begin` on the completion queue, else `fabric_runtime_stop` on a worker thread. */
  stopRuntime(handle: number): Promise<string | null> {
    return this.operate("fabric_runtime_stop_begin", [handle], "fabric_runtime_stop");
  }
}

/**
 * libc's `dup` through koffi. koffi cannot watch a descriptor itself (it has no poll API),
 * and libuv watches a descriptor only through a handle that owns it; a `net.Socket` on a
 * copy of the operation's socket is that handle, and closing it never closes the core's.
 */
function loadDup(): ((fd: number) => number) | null {
  const names = process.platform === "darwin" ? ["libSystem.B.dylib"] : ["libc.so.6", "libc.so"];
  for (const name of names) {
    try {
      return koffi.load(name).func("int dup(int fd)") as (fd: number) => number;
    } catch {
      // try the next name
    }
  }
  return null;
}

/** The process's completion queue and the operations waiting on it. */
interface OperationQueue {
  handle: number;
  socket: net.Socket;
  waiting: Map<number, { resolve: (text: string | null) => void; reject: (error: unknown) => void }>;
}

/** One `fabric_stream_next_batch` answer: OK (a JSON array of items), END or TIMEOUT. */
export interface StreamPull {
  status: number;
  text: string | null;
}

function toHandle(value: unknown): number {
  const handle = typeof value === "bigint" ? Number(value) : Number(value);
  if (!Number.isSafeInteger(handle) || handle <= 0) {
    throw new FabricNativeUnavailableError("the library returned an invalid runtime handle", { code: Code.INVALID_NATIVE_JSON });
  }
  return handle;
}

/** Rejects strings the C ABI cannot carry (NUL characters). */
export function cString(value: string, what: string): string {
  if (value.includes("\u0000")) {
    throw new FabricConfigError(`${what} must not contain NUL characters`, { code: Code.INVALID_ARGUMENT, stage: "config" });
  }
  return value;
}

/** The prebuild directory name for this process, `<platform>-<arch>` (the koffi/napi convention). */
export function platformKey(platform: string = process.platform, arch: string = process.arch): string {
  return `${platform}-${arch}`;
}

/** Where {@link resolveLibrary} looks; the defaults describe this process and package. */
export interface LibrarySearch {
  /** `$FABRIC_CORE_LIB`: a library path that overrides every other place. */
  override?: string | undefined;
  platform?: string;
  arch?: string;
  /** The package directory (holding `dist/` and, when packed, `prebuilds/`). */
  packageRoot?: string;
}

/** The library to load, or why there is none (`problem`, with `path` the place expected). */
export interface LibraryLocation {
  path: string;
  problem?: string;
}

/**
 * Finds the native library: `$FABRIC_CORE_LIB`; else the package's
 * `prebuilds/<platform>-<arch>/libfabric_ffi.{so,dylib}` (scripts/package.sh puts the build
 * platform's there); else, in a checkout, `<repo>/target/debug`.
 */
export function resolveLibrary(search: LibrarySearch = {}): LibraryLocation {
  const override = "override" in search ? search.override : process.env.FABRIC_CORE_LIB;
  if (override) {
    const file = path.resolve(override);
    return fs.existsSync(file) ? { path: file } : { path: file, problem: `native library not found at ${file} (FABRIC_CORE_LIB)` };
  }
  const platform = search.platform ?? process.platform;
  const key = platformKey(platform, search.arch ?? process.arch);
  const name = platform === "darwin" ? "libfabric_ffi.dylib" : "libfabric_ffi.so";
  // __dirname is <package>/dist.
  const packageRoot = search.packageRoot ?? path.resolve(__dirname, "..");
  const prebuilds = path.join(packageRoot, "prebuilds");
  const prebuilt = path.join(prebuilds, key, name);
  if (fs.existsSync(prebuilt)) return { path: prebuilt };
  // In the repository, the package sits at <repo>/bindings/typescript.
  const repo = path.resolve(packageRoot, "..", "..");
  if (fs.existsSync(path.join(repo, "fabric-ffi", "Cargo.toml"))) {
    const built = path.join(repo, "target", "debug", name);
    return fs.existsSync(built)
      ? { path: built }
      : { path: built, problem: `native library not found at ${built}; build it with 'cargo build -p fabric-ffi' or set FABRIC_CORE_LIB` };
  }
  const shipped = fs.existsSync(prebuilds) ? fs.readdirSync(prebuilds).sort() : [];
  const has = shipped.length > 0 ? `it has prebuilds for ${shipped.join(", ")} only` : "it has no prebuilds";
  return {
    path: prebuilt,
    problem:
      `this fabric-core package has no native library for ${key} (${has}, in ${prebuilds}); ` +
      `install the package built for ${key} or set FABRIC_CORE_LIB to a libfabric_ffi built for it`,
  };
}

/** The native library this process loads (see {@link resolveLibrary}); it may not exist. */
export function libraryPath(): string {
  return resolveLibrary().path;
}

let loaded: NativeLibrary | undefined;
let loadError: FabricNativeUnavailableError | undefined;

/** The library, loaded once; throws {@link FabricNativeUnavailableError} when unusable. */
export function nativeLibrary(): NativeLibrary {
  if (loaded) return loaded;
  if (loadError) throw loadError;
  const { path: file, problem } = resolveLibrary();
  try {
    if (problem !== undefined) {
      throw new FabricNativeUnavailableError(problem, { code: Code.NATIVE_LIBRARY_MISSING, stage: "config" });
    }
    loaded = new NativeLibrary(file);
    return loaded;
  } catch (error) {
    loadError =
      error instanceof FabricNativeUnavailableError
        ? error
        : new FabricNativeUnavailableError(`cannot load ${file}: ${(error as Error).message}`, {
            code: Code.NATIVE_LIBRARY_UNLOADABLE,
            stage: "config",
            cause: error,
          });
    throw loadError;
  }
}
