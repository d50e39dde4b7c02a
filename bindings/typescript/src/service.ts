/**
 * Shared services: {@link Service}, from {@link Fabric.prepareService} (Fabric-owned) or
 * {@link Fabric.attachService} (caller-owned).
 *
 * ```ts
 * await using service = await fabric.prepareService(config);
 * await using first = await service.startRuntime(config);
 * await using second = await service.startRuntime(config);
 * ```
 */
import { FabricConfigError } from "./errors";
import { Code } from "./generated";
import type { FabricConfig, RuntimeInfo, ServiceHandle, ServiceInfo, ServiceStatus } from "./models";
import type { NativeLibrary } from "./native";
import { abortable, parse } from "./util";
import { Runtime, configText, optionsText, type CallOptions } from "./fabric";

/** GC backstop: frees handles of services dropped without `close()` (an active one's host stops). */
const serviceBackstop = new FinalizationRegistry<{ library: NativeLibrary; handle: number }>(({ library, handle }) => {
  library.serviceFree(handle);
});

/**
 * One prepared or attached long-lived adapter service that several runtimes connect to
 * (each with its own adapter host). `release()` stops a Fabric-owned service or detaches
 * from a caller-owned one and rejects with `ServiceInUseError` while a connected runtime
 * still runs (the service stays active); `await using` releases and frees it. The handle is
 * valid only in this process.
 */
export class Service implements AsyncDisposable {
  private info_: ServiceInfo;
  private status_: ServiceStatus = "active";
  private readonly library: NativeLibrary;
  private handle: number;
  private readonly token = {};
  private releasing: Promise<ServiceInfo> | null = null;

  /** @internal Created by {@link Fabric.prepareService} / {@link Fabric.attachService}. */
  constructor(library: NativeLibrary, handle: number, info: ServiceInfo) {
    this.library = library;
    this.handle = handle;
    this.info_ = info;
    serviceBackstop.register(this, { library, handle }, this.token);
  }

  /** The process-local service lifecycle id (`service-…`). */
  get serviceId(): string {
    return this.info_.service_id;
  }

  /** `active`, `releasing`, `released` or `failed`. */
  get status(): ServiceStatus {
    return this.status_;
  }

  /** The service handle: `service_id`, `service_binding`, `ownership`, `connection`, `metadata`. */
  get serviceHandle(): ServiceHandle {
    return this.info_.service;
  }

  /** What the core reported at the last call (host pid, FABRIC_HOME, status). */
  get info(): ServiceInfo {
    return this.info_;
  }

  /**
   * Starts a runtime connected to this service. The config must match the service's
   * (FabricConfigError `service_binding_mismatch`, the differing sections in
   * `details.fields`); a released service rejects with FabricConfigError
   * ("service must be active").
   */
  async startRuntime(config: FabricConfig | string, options: CallOptions = {}): Promise<Runtime> {
    if (this.handle === 0 || this.status_ !== "active") {
      throw new FabricConfigError("service must be active", { stage: "start", code: Code.SERVICE_NOT_ACTIVE });
    }
    options.signal?.throwIfAborted();
    const library = this.library;
    const work = library.callWithHandle("fabric_service_start_runtime", [this.handle, configText(config), optionsText(options)]);
    const started = await abortable(work, options.signal, (late) => {
      library.call("fabric_runtime_stop", [late.handle]).then(
        () => library.runtimeFree(late.handle),
        () => library.runtimeFree(late.handle),
      );
    });
    return new Runtime(library, started.handle, parse<RuntimeInfo>(started.text));
  }

  /** Stops (Fabric-owned) or detaches (caller-owned); idempotent after success. */
  release(): Promise<ServiceInfo> {
    if (this.status_ === "released" || this.status_ === "failed") return Promise.resolve(this.info_);
    if (this.releasing !== null) return this.releasing;
    if (this.handle === 0) return Promise.resolve(this.info_);
    this.status_ = "releasing";
    const work = this.library.call("fabric_service_release", [this.handle]).then(
      (text) => {
        this.info_ = parse<ServiceInfo>(text);
        this.status_ = this.info_.status;
        this.releasing = null;
        return this.info_;
      },
      (error: unknown) => {
        this.status_ = "active";
        this.releasing = null;
        throw error;
      },
    );
    this.releasing = work;
    return work;
  }

  /** Frees the handle (after `release()`; an active service's host is stopped); idempotent. */
  close(): void {
    if (this.handle !== 0) {
      const handle = this.handle;
      this.handle = 0;
      serviceBackstop.unregister(this.token);
      this.library.serviceFree(handle);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      if (this.handle !== 0) await this.release();
    } finally {
      this.close();
    }
  }
}
