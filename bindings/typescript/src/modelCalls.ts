import * as fs from "node:fs";
import type { ModelCallRecord, RunResult } from "./models";

/**
 * The invocation's captured model calls (a run with `captureModelCalls: true`), read from
 * `result.model_calls.path`, one `ModelCallRecord` per line of `model-calls.jsonl`; empty
 * when none was recorded or capture was off. A line that is not JSON throws, naming it.
 */
export function modelCallRecords(result: RunResult): ModelCallRecord[] {
  const file = result.model_calls?.path;
  if (!file) return [];
  const records: ModelCallRecord[] = [];
  fs.readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, index) => {
      if (!line.trim()) return;
      try {
        records.push(JSON.parse(line) as ModelCallRecord);
      } catch (error) {
        throw new Error(`${file}: line ${index + 1} is not a record: ${(error as Error).message}`);
      }
    });
  return records;
}
