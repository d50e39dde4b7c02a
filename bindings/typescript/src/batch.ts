/**
 * `fabric.batch(config, items, options)`: a data set of items through one config over the
 * core's batch engine (`fabric_batch_*`). Concurrency, retries, per-item timeouts, resume
 * and the summary are the core's; this module feeds items as the core frees slots
 * (back-pressure: a generator of a million items is never read ahead) and yields finished
 * lines in completion order.
 *
 * ```ts
 * const batch = fabric.batch(config, items, { concurrency: 8, attempts: 3 });
 * for await (const done of batch) console.log(done.id, done.attempts, done.result ?? done.error);
 * console.log(batch.summary);
 * ```
 */

import type { BatchLine, BatchSettings, BatchSummary } from "./generated";
import { Status } from "./generated";
import { errorFromStatus } from "./errors";
import { cString, type NativeLibrary } from "./native";

/** Options of `fabric.batch` (the BatchSettings document; `call` as for `startRuntime`). */
export type BatchOptions = BatchSettings;

/** What an item may be: a RunRequest object, `{id, requests}`, or any other JSON value (the input). */
export type BatchItem = unknown;

/** A running batch: iterate it with `for await`; `summary` is set once the iteration ends. */
export class Batch implements AsyncIterable<BatchLine> {
  /** The BatchSummary, once the iteration ended. */
  summary: BatchSummary | null = null;
  private handle = 0;

  constructor(
    private readonly library: NativeLibrary,
    private readonly config: string,
    private readonly items: Iterable<BatchItem> | AsyncIterable<BatchItem>,
    private readonly options: BatchOptions,
  ) {}

  /** First call: stop taking items (in-flight ones get `grace_seconds`); second: stop them now. */
  cancel(): void {
    if (this.handle) this.library.statusNow("fabric_batch_cancel", this.handle);
  }

  [Symbol.asyncIterator](): AsyncIterator<BatchLine> {
    return this.run();
  }

  private async feed(): Promise<void> {
    const { library, handle } = this;
    try {
      for await (const item of this.items) {
        const line = cString(JSON.stringify(item), "item");
        let pushed = await library.pull("fabric_batch_push", [handle, line, 0], false);
        if (pushed.status === Status.TIMEOUT) pushed = await library.pull("fabric_batch_push", [handle, line, -1], true);
        if (pushed.status === Status.END) return;
      }
    } finally {
      library.statusNow("fabric_batch_close", handle);
    }
  }

  private async *run(): AsyncGenerator<BatchLine> {
    const { library } = this;
    const started = await library.callWithHandle("fabric_batch_start", [this.config, JSON.stringify(this.options)]);
    const handle = started.handle;
    this.handle = handle;
    let feedError: unknown = null;
    const feeding = this.feed().catch((error: unknown) => {
      feedError = error;
      this.cancel();
      this.cancel();
    });
    let finished = false;
    try {
      for (;;) {
        // Every line ready now in one call (one JSON array), so a burst costs one pull.
        let pulled = await library.pull("fabric_batch_next_lines", [handle, 0, 0], false);
        if (pulled.status === Status.TIMEOUT) pulled = await library.pull("fabric_batch_next_lines", [handle, 200, 0], true);
        if (pulled.status === Status.END) break;
        if (pulled.status === Status.OK && pulled.text !== null) {
          for (const line of JSON.parse(pulled.text) as BatchLine[]) yield line;
        }
      }
      const summary = await library.pull("fabric_batch_summary", [handle, -1], true);
      const raw = JSON.parse(summary.text ?? "{}") as BatchSummary;
      this.summary = raw;
      finished = true;
      await feeding;
      if (feedError) throw feedError;
      if (raw.input_error) throw errorFromStatus(Status.CONFIG, JSON.stringify(raw.input_error));
    } finally {
      if (!finished) {
        this.cancel();
        this.cancel();
      }
      await feeding;
      await library.callStatus("fabric_batch_free", handle);
    }
  }
}
