/**
 * Runtime validation of untrusted lifecycle input against the generated JSON Schemas in
 * `schemas/adapter-contract/` (JSON Schema 2020-12, checked with ajv).
 *
 * Schema lookup: `$FABRIC_ADAPTER_CONTRACT_SCHEMAS` when set (and only it); else the
 * copy bundled in this package (`dist/schemas/adapter-contract/`, made by
 * `npm run build`), then the repository's `schemas/adapter-contract/`. Error messages name the JSON path and the
 * rule, never the offending value.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type Ajv2020Type from "ajv/dist/2020";
import type { ErrorObject, ValidateFunction } from "ajv";

/** The contract shapes {@link serve} checks, each named by schema file and JSON pointer. */
export const CONTRACT_SHAPES = {
  agentConfig: { file: "agent-config.schema.json", pointer: "" },
  runtimeContext: { file: "runtime-context.schema.json", pointer: "" },
  agentRunRequest: { file: "agent-run-request.schema.json", pointer: "" },
  agentRunResult: { file: "agent-run-result.schema.json", pointer: "" },
} as const;

export type ContractShape = keyof typeof CONTRACT_SHAPES;

/** A failed check: where (JSON pointer into the checked value) and which rule. */
export interface ValidationIssue {
  path: string;
  rule: string;
}

export class SchemaUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaUnavailableError";
  }
}

/** Candidate schema directories, most specific first. */
export function schemaDirectories(): string[] {
  const fromEnv = process.env.FABRIC_ADAPTER_CONTRACT_SCHEMAS;
  // An explicit directory is authoritative: no silent fallback to another copy.
  if (fromEnv) return [path.resolve(fromEnv)];
  const candidates: string[] = [];
  // __dirname is dist/adapter in the built package.
  candidates.push(BUNDLED_SCHEMAS);
  candidates.push(path.resolve(__dirname, "..", "..", "..", "..", "schemas", "adapter-contract"));
  return candidates;
}

function findSchemaDirectory(): string {
  for (const directory of schemaDirectories()) {
    if (fs.existsSync(path.join(directory, CONTRACT_SHAPES.agentRunResult.file))) return directory;
  }
  throw new SchemaUnavailableError(
    `adapter-contract JSON Schemas not found (looked in: ${schemaDirectories().join(", ")})`,
  );
}

/** ajv settings shared with the build-time precompilation (scripts/compile-validators.js). */
export const ajvOptions = { strict: false, allErrors: false, validateFormats: false } as const;

const BUNDLED_SCHEMAS = path.resolve(__dirname, "..", "schemas", "adapter-contract");
const PRECOMPILED = path.join(__dirname, "contract-validators.js");

/** Compiled validators for the adapter-contract shapes. */
export class ContractValidator {
  readonly directory: string;
  /** Whether the build-time precompiled validators are in use. */
  readonly precompiled: boolean;
  private readonly validators = new Map<ContractShape, ValidateFunction>();

  /**
   * Validators for the schemas in `directory` (default: the lookup order above). The
   * bundled schemas use the validators precompiled at build time.
   */
  constructor(directory?: string) {
    this.directory = directory ?? findSchemaDirectory();
    this.precompiled = this.directory === BUNDLED_SCHEMAS && fs.existsSync(PRECOMPILED);
    if (this.precompiled) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const compiled = require(PRECOMPILED) as Record<string, ValidateFunction>;
      for (const name of Object.keys(CONTRACT_SHAPES) as ContractShape[]) {
        const validate = compiled[name];
        if (typeof validate !== "function") throw new SchemaUnavailableError(`precompiled validator ${name} missing`);
        this.validators.set(name, validate);
      }
      return;
    }
    // Loaded only when compiling at run time: importing ajv costs tens of milliseconds.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Ajv2020 = (require("ajv/dist/2020") as { default: typeof Ajv2020Type }).default;
    const ajv = new Ajv2020(ajvOptions);
    const files = new Set<string>(Object.values(CONTRACT_SHAPES).map((shape) => shape.file));
    for (const file of files) {
      const full = path.join(this.directory, file);
      let schema: unknown;
      try {
        schema = JSON.parse(fs.readFileSync(full, "utf8"));
      } catch (error) {
        throw new SchemaUnavailableError(`cannot read schema ${full}: ${(error as Error).message}`);
      }
      if (typeof schema !== "object" || schema === null) {
        throw new SchemaUnavailableError(`schema ${full} is not an object`);
      }
      // Key each document by file name; local `$ref`s resolve inside it.
      const { $id: _ignored, ...body } = schema as Record<string, unknown>;
      ajv.addSchema(body, file);
    }
    for (const [name, shape] of Object.entries(CONTRACT_SHAPES) as [ContractShape, { file: string; pointer: string }][]) {
      const ref = shape.pointer ? `${shape.file}#${shape.pointer}` : shape.file;
      const validate = ajv.getSchema(ref);
      if (!validate) throw new SchemaUnavailableError(`schema ${ref} does not define ${name}`);
      this.validators.set(name, validate);
    }
  }

  /** The first problem found in `value`, or `null` when it matches `shape`. */
  check(shape: ContractShape, value: unknown): ValidationIssue | null {
    const validate = this.validators.get(shape) as ValidateFunction;
    if (validate(value)) return null;
    const error = (validate.errors ?? [])[0];
    return error ? describe(error) : { path: "/", rule: "invalid" };
  }
}

function describe(error: ErrorObject): ValidationIssue {
  let where = error.instancePath || "/";
  let rule = error.message ?? error.keyword;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    where = `${error.instancePath}/${params.additionalProperty}`;
    rule = "unexpected field";
  }
  return { path: where, rule };
}

let shared: ContractValidator | undefined;

/** The process-wide validator, loaded on first use. */
export function contractValidator(): ContractValidator {
  shared ??= new ContractValidator();
  return shared;
}
