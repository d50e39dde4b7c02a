/**
 * Software evidence of a TypeScript adapter host: the Node runtime and the versions of the
 * selected packages, read from their `package.json` manifests. `serve()` takes this snapshot
 * once, after a successful `start()`, and only when the core asks for it
 * (`payload.provenance.enabled === true`); it travels back as the `execution` member of the
 * `start` output and the core composes it into `RunResult.execution` (docs/provenance.md).
 *
 * Bounds: at most {@link MAX_TARGETS} (32) selected packages, each looked up through at most
 * {@link MAX_LEVELS} (8) `node_modules` ancestor levels, manifests read up to
 * {@link MAX_MANIFEST_BYTES} (64 KiB), all within a {@link DEADLINE_MS} (250 ms) deadline.
 * Reads are asynchronous. Over a bound a version is an explicit `unknown` with a reason;
 * collection never fails or delays `start` beyond the deadline.
 */
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { Code } from "../generated";

export const MAX_TARGETS = 32;
export const MAX_LEVELS = 8;
export const MAX_MANIFEST_BYTES = 64 * 1024;
export const DEADLINE_MS = 250;
export const SOURCE = "node:package.json";
/** Packages selected by default: this library (the shared host and contract code). */
export const DEFAULT_TARGETS: readonly string[] = ["fabric-core"];

export interface VersionObservation {
  value?: string;
  source?: string;
  origin?: string;
  observed_at?: string;
  status?: "unavailable" | "unknown";
  reason?: string;
}

export interface EvidenceEntry {
  role: string;
  kind: string;
  name: string;
  version: VersionObservation;
}

export interface CoverageGap {
  participant: string;
  reason: string;
}

export interface EvidenceCoverage {
  status: "complete" | "incomplete";
  gaps?: CoverageGap[];
}

export interface ExecutionEvidenceReport {
  inventories: {
    context_ref: string;
    participants: string[];
    availability: "available" | "partial" | "unavailable";
    coverage: EvidenceCoverage;
    entries: EvidenceEntry[];
  }[];
  coverage: EvidenceCoverage;
}

/** Result of one package lookup: a version, or why there is none. */
export type LookupResult = { version: string } | { missing: "unavailable" | "unknown"; reason: string };

export interface CollectOptions {
  /** Directory the lookup starts from (the adapter's own). Default: the main module's. */
  fromDir?: string;
  deadlineMs?: number;
  maxTargets?: number;
  maxLevels?: number;
  maxManifestBytes?: number;
  /** Replaces the manifest lookup (tests inject slow or failing ones). */
  lookup?: (name: string) => Promise<LookupResult>;
}

/** Reads one manifest's `version`, at most `maxBytes` of it; `null` when it does not exist. */
async function readManifest(file: string, maxBytes: number): Promise<LookupResult | null> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, "r");
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes + 1, 0);
    if (bytesRead > maxBytes) return { missing: "unknown", reason: Code.METADATA_FILE_LIMIT_REACHED };
    const parsed: unknown = JSON.parse(buffer.subarray(0, bytesRead).toString("utf8"));
    const version = (parsed as { version?: unknown }).version;
    if (typeof version === "string" && version.trim() !== "") return { version };
    return { missing: "unavailable", reason: Code.METADATA_NOT_FOUND };
  } catch {
    return { missing: "unavailable", reason: Code.METADATA_NOT_FOUND };
  } finally {
    await handle.close();
  }
}

/** Reads `<dir>/node_modules/<name>/package.json` through at most `maxLevels` ancestors. */
export async function lookupManifest(
  name: string,
  fromDir: string,
  maxLevels: number = MAX_LEVELS,
  maxBytes: number = MAX_MANIFEST_BYTES,
): Promise<LookupResult> {
  let dir = path.resolve(fromDir);
  for (let level = 0; level < maxLevels; level += 1) {
    const found = await readManifest(path.join(dir, "node_modules", name, "package.json"), maxBytes);
    if (found !== null) return found;
    const parent = path.dirname(dir);
    if (parent === dir) return { missing: "unavailable", reason: Code.METADATA_NOT_FOUND };
    dir = parent;
  }
  return { missing: "unknown", reason: Code.METADATA_FILE_LIMIT_REACHED };
}

/** This library's own version: the executing host's context, not the adapter's. */
async function ownManifest(maxBytes: number): Promise<LookupResult> {
  const found = await readManifest(path.join(__dirname, "..", "..", "package.json"), maxBytes);
  return found ?? { missing: "unavailable", reason: Code.METADATA_NOT_FOUND };
}

function addGap(gaps: CoverageGap[], reason: string): void {
  if (!gaps.some((gap) => gap.reason === reason)) gaps.push({ participant: "guest_sdk", reason });
}

/** Collects one `ExecutionEvidence` report (one inventory: Node and the selected packages). */
export async function collectEvidence(targets: readonly string[], options: CollectOptions = {}): Promise<ExecutionEvidenceReport> {
  const observedAt = new Date().toISOString();
  const fromDir = options.fromDir ?? require.main?.path ?? process.cwd();
  const maxTargets = options.maxTargets ?? MAX_TARGETS;
  const maxBytes = options.maxManifestBytes ?? MAX_MANIFEST_BYTES;
  const lookup =
    options.lookup ??
    ((name: string) =>
      name === "fabric-core" ? ownManifest(maxBytes) : lookupManifest(name, fromDir, options.maxLevels ?? MAX_LEVELS, maxBytes));
  const selected = [...new Set(targets)];
  const looked = selected.slice(0, maxTargets);
  const over = selected.slice(maxTargets);
  const results = new Map<string, LookupResult>();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.deadlineMs ?? DEADLINE_MS);
  });
  const work = Promise.all(
    looked.map(async (name) => {
      let result: LookupResult;
      try {
        result = await lookup(name);
      } catch {
        result = { missing: "unavailable", reason: Code.METADATA_NOT_FOUND };
      }
      results.set(name, result);
    }),
  );
  await Promise.race([work, deadline]);
  clearTimeout(timer);
  const gaps: CoverageGap[] = [];
  const entries: EvidenceEntry[] = [
    {
      role: "interpreter",
      kind: "runtime",
      name: "node",
      version: { value: process.versions.node, source: "node:process.versions", origin: "adapter", observed_at: observedAt },
    },
  ];
  for (const name of looked) {
    const result = results.get(name);
    let version: VersionObservation;
    if (result === undefined) {
      version = { status: "unknown", reason: Code.COLLECTION_DEADLINE_EXCEEDED };
      addGap(gaps, Code.COLLECTION_DEADLINE_EXCEEDED);
    } else if ("version" in result) {
      version = { value: result.version, source: SOURCE, origin: "adapter", observed_at: observedAt };
    } else {
      version = { status: result.missing, reason: result.reason };
      if (result.reason === Code.METADATA_FILE_LIMIT_REACHED) addGap(gaps, result.reason);
    }
    entries.push({ role: "dependency", kind: "package", name, version });
  }
  for (const name of over) {
    entries.push({ role: "dependency", kind: "package", name, version: { status: "unknown", reason: Code.LOOKUP_LIMIT_REACHED } });
    addGap(gaps, Code.LOOKUP_LIMIT_REACHED);
  }
  const observed = entries.filter((entry) => entry.version.value !== undefined).length;
  const coverage: EvidenceCoverage = gaps.length > 0 ? { status: "incomplete", gaps } : { status: "complete" };
  return {
    inventories: [
      {
        context_ref: "adapter",
        participants: ["guest_sdk", "adapter"],
        availability: observed === entries.length ? "available" : "partial",
        coverage,
        entries,
      },
    ],
    coverage,
  };
}

/** Whether a `start` payload asks for a report (`provenance.enabled === true`). */
export function evidenceRequested(payload: Record<string, unknown>): boolean {
  const provenance = payload.provenance;
  return typeof provenance === "object" && provenance !== null && (provenance as { enabled?: unknown }).enabled === true;
}

/** Adds a report to a `start` output (`null`/`undefined` becomes an object; other non-object
 * outputs cannot carry it and are returned unchanged). */
export function attachEvidence(output: unknown, report: ExecutionEvidenceReport): unknown {
  if (output === undefined || output === null) return { execution: report };
  if (typeof output === "object" && !Array.isArray(output) && !("execution" in (output as object))) {
    return { ...(output as Record<string, unknown>), execution: report };
  }
  return output;
}
