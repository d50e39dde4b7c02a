/**
 * Prewarmed hosts: {@link Prewarm}, from {@link Fabric.prewarm}.
 *
 * ```ts
 * await using pool = await fabric.prewarm(config, { hosts: 2 });
 * const result = await fabric.run(config, { input: "hi" }); // takes a waiting host
 * ```
 */
import type { PrewarmInfo } from "./models";
import type { NativeLibrary } from "./native";
import { parse } from "./util";

/** GC backstop: frees (and so closes) pools dropped without `close()`. */
const prewarmBackstop = new FinalizationRegistry<{ library: NativeLibrary; handle: number }>(({ library, handle }) => {
  library.callStatus("fabric_prewarm_free", handle).catch(() => undefined);
});

/**
 * A pool of adapter hosts launched ahead of time, each exactly as `startRuntime` would
 * launch it and waiting for the adapter's `start`. While it is open, `run` and
 * `startRuntime` with the same config and options (no `streaming`) take a waiting host and
 * the core launches a replacement in the background; anything else starts cold. `close()`
 * (or `await using`) terminates the hosts still waiting; it is idempotent.
 */
export class Prewarm implements AsyncDisposable {
  private readonly library: NativeLibrary;
  private handle: number;
  private last: PrewarmInfo;
  private readonly token = {};
  private closing: Promise<PrewarmInfo> | null = null;

  /** @internal Created by {@link Fabric.prewarm}. */
  constructor(library: NativeLibrary, handle: number, info: PrewarmInfo) {
    this.library = library;
    this.handle = handle;
    this.last = info;
    prewarmBackstop.register(this, { library, handle }, this.token);
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.closing !== null;
  }

  /** The pool now: `hosts`, the pids of the waiting hosts (`ready_pids`), `claimed`. */
  async status(): Promise<PrewarmInfo> {
    if (this.closing !== null) return this.closing;
    this.last = parse<PrewarmInfo>(await this.library.call("fabric_prewarm_status", [this.handle]));
    return this.last;
  }

  /** Terminates the hosts still waiting and frees the pool; resolves with its final status. */
  close(): Promise<PrewarmInfo> {
    if (this.closing === null) {
      const handle = this.handle;
      this.handle = 0;
      prewarmBackstop.unregister(this.token);
      this.closing = this.library
        .call("fabric_prewarm_close", [handle])
        .then((text) => {
          this.last = parse<PrewarmInfo>(text);
          return this.last;
        })
        .finally(() => this.library.callStatus("fabric_prewarm_free", handle));
      this.closing.catch(() => undefined);
    }
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
