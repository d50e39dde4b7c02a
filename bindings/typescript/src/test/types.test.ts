/**
 * Drift tests for the hand-written interfaces (the result documents are generated from the
 * Rust types into src/generated.ts and need none):
 *
 * - the SDK request models (src/models.ts: FabricConfig, ModelConfig, RunRequest,
 *   CheckRequest) against `schemas/sdk/`: each table names every declared field as
 *   required or optional (the compiler checks the table against the interface) and whether
 *   the interface takes undeclared keys; the test checks the same against the schema;
 * - the adapter-contract interfaces (src/adapter/types.ts) against
 *   `schemas/adapter-contract/`.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as T from "../adapter/types";
import { ajvOptions, ContractValidator } from "../adapter/validate";
import type * as M from "../models";

const SDK_SCHEMAS = path.resolve(__dirname, "..", "..", "..", "..", "schemas", "sdk");

// ---- SDK request models vs schemas/sdk ------------------------------------------------

/** The declared (non-index-signature) fields of V, each `required` or `optional`. */
type Fields<V> = {
  [K in keyof V as string extends K ? never : number extends K ? never : K]-?: {} extends Pick<V, K> ? "optional" : "required";
};
/** Whether V takes undeclared keys (has a string index signature). */
type Open<V> = string extends keyof V ? true : false;
interface Shape<V> {
  fields: Fields<V>;
  open: Open<V>;
}

type Harness = NonNullable<M.FabricConfig["harness"]>;
type Metadata = M.FabricConfig["metadata"];
type Discovery = NonNullable<M.FabricConfig["discovery"]>;
type Runtime = NonNullable<M.FabricConfig["runtime"]>;

const fabricConfig: Shape<M.FabricConfig> = {
  fields: {
    schema_version: "optional",
    metadata: "required",
    harness: "optional",
    workflow: "optional",
    discovery: "optional",
    runtime: "optional",
    environment: "optional",
    models: "optional",
    instructions: "optional",
    mcp: "optional",
    skills: "optional",
    telemetry: "optional",
    relay: "optional",
    tools: "optional",
    system_stats: "optional",
    provenance: "optional",
  },
  open: false,
};
const metadata: Shape<Metadata> = { fields: { name: "required", description: "optional" }, open: true };
const harnessConfig: Shape<Harness> = {
  fields: { adapter_id: "required", resolution: "optional", settings: "optional" },
  open: true,
};
const discovery: Shape<Discovery> = { fields: { local_paths: "optional" }, open: true };
const runtimeConfig: Shape<Runtime> = {
  fields: {
    timeout_seconds: "optional",
    max_turns: "optional",
    artifacts: "optional",
    input_schema: "optional",
    output_schema: "optional",
  },
  open: true,
};
const modelConfig: Shape<M.ModelConfig> = {
  fields: {
    provider: "required",
    model: "required",
    api_key_env: "optional",
    base_url: "optional",
    temperature: "optional",
    top_p: "optional",
    max_tokens: "optional",
    settings: "optional",
  },
  open: true,
};
const runRequest: Shape<M.RunRequest> = {
  fields: { input: "optional", request_id: "optional", context: "optional", relay_session_root: "optional", overrides: "optional" },
  open: true,
};
const checkRequest: Shape<M.CheckRequest> = {
  fields: { scope: "required", runtime_id: "optional", service_id: "optional", level: "optional", timeout_seconds: "optional" },
  open: false,
};

const SDK_TABLES: [string, string | null, { fields: Record<string, "required" | "optional">; open: boolean }][] = [
  ["agent.schema.json", null, fabricConfig],
  ["agent.schema.json", "MetadataConfig", metadata],
  ["agent.schema.json", "HarnessConfig", harnessConfig],
  ["agent.schema.json", "DiscoveryConfig", discovery],
  ["agent.schema.json", "RuntimeConfig", runtimeConfig],
  ["agent.schema.json", "ModelConfig", modelConfig],
  ["run-request.schema.json", null, runRequest],
  ["check-request.schema.json", null, checkRequest],
];

function sdkSchema(file: string): { properties: Record<string, unknown>; $defs?: Record<string, unknown> } {
  return JSON.parse(fs.readFileSync(path.join(SDK_SCHEMAS, file), "utf8"));
}

test("request models name exactly the schemas/sdk properties, required and open alike", () => {
  for (const [file, definition, table] of SDK_TABLES) {
    const schema = sdkSchema(file);
    const node = (definition === null ? schema : schema.$defs?.[definition]) as
      | { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown }
      | undefined;
    const where = `${file} ${definition ?? "(root)"}`;
    assert.ok(node?.properties, `${where} has properties`);
    assert.deepEqual(Object.keys(table.fields).sort(), Object.keys(node.properties).sort(), `${where}: fields`);
    const required = Object.entries(table.fields)
      .filter(([, presence]) => presence === "required")
      .map(([name]) => name)
      .sort();
    assert.deepEqual(required, [...(node.required ?? [])].sort(), `${where}: required fields`);
    assert.equal(table.open, node.additionalProperties !== false, `${where}: undeclared keys allowed`);
  }
});

test("request models built with every field (and every nullable one null) satisfy schemas/sdk", () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Ajv2020 = (require("ajv/dist/2020") as { default: typeof import("ajv/dist/2020").default }).default;
  const ajv = new Ajv2020(ajvOptions);
  const check = (file: string, value: unknown) => {
    const validate = ajv.compile(sdkSchema(file));
    assert.ok(validate(value), `${file}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(value)}`);
  };
  const model: M.ModelConfig = {
    provider: "openai",
    model: "m",
    api_key_env: "OPENAI_API_KEY",
    base_url: "http://localhost:1",
    temperature: 0.5,
    top_p: 1,
    max_tokens: 10,
    settings: { a: 1 },
    vendor_extension: true,
  };
  const full: M.FabricConfig = {
    schema_version: "fabric.agent/v1alpha1",
    metadata: { name: "full", description: "d", owner: "me" },
    harness: { adapter_id: "fabric.scripted", resolution: "preinstalled", settings: { replies: ["x"] }, extra: 1 },
    workflow: { target_id: "t", settings: {} },
    discovery: { local_paths: ["a.json"] },
    runtime: { timeout_seconds: 1.5, max_turns: 3, artifacts: "out", input_schema: "i", output_schema: "o", extra: 1 },
    environment: { provider: "local", env_names: ["HOME"] },
    models: { default: model },
    instructions: { system: { content: "be brief", mode: "append" } },
    mcp: { servers: { s: { transport: "stdio", url: "server" } } },
    skills: { paths: ["skills"] },
    telemetry: { providers: { native: {} } },
    relay: {},
    tools: { enabled: ["t"], blocked: [] },
    system_stats: { collect: ["process"], sampling: { interval_ms: 10, max_samples: 100 } },
    provenance: { enabled: true },
  };
  check("agent.schema.json", full);
  const nulls: M.FabricConfig = {
    metadata: { name: "nulls", description: null },
    harness: { adapter_id: "a", resolution: null },
    runtime: { timeout_seconds: null, max_turns: null, artifacts: null, input_schema: null, output_schema: null },
    models: {
      default: { provider: "p", model: "m", api_key_env: null, base_url: null, temperature: null, top_p: null, max_tokens: null },
    },
    workflow: null,
    discovery: null,
    environment: null,
    instructions: null,
    mcp: null,
    skills: null,
    telemetry: null,
    relay: null,
    tools: null,
    system_stats: null,
    provenance: null,
  };
  check("agent.schema.json", nulls);
  check("agent.schema.json", { ...nulls, harness: null } satisfies M.FabricConfig);
  const request: M.RunRequest = { input: { any: ["json"] }, request_id: "r", context: { c: 1 }, relay_session_root: "u", overrides: {}, priority: 1 };
  check("run-request.schema.json", request);
  check("run-request.schema.json", { request_id: null, relay_session_root: null, overrides: null } satisfies M.RunRequest);
  for (const scope of ["runtime", "service", "server"] as const) {
    check("check-request.schema.json", { scope, runtime_id: "r", service_id: null, level: "ready", timeout_seconds: 0.5 } satisfies M.CheckRequest);
  }
  check("check-request.schema.json", { scope: "server", runtime_id: null, timeout_seconds: null } satisfies M.CheckRequest);
});

// ---- adapter-contract interfaces vs schemas/adapter-contract --------------------------

type Keys<V> = Record<keyof V, true>;

const agentConfig: Keys<T.AgentConfig> = { extensions: true, harness: true, instructions: true, mcp: true, models: true, runtime: true, skills: true, tools: true, workflow: true };
const harness: Keys<T.AgentHarnessConfig> = { extensions: true, settings: true };
const instruction: Keys<T.AgentInstructionConfig> = { content: true, extensions: true, mode: true };
const instructions: Keys<T.AgentInstructionsConfig> = { extensions: true, system: true };
const mcp: Keys<T.AgentMcpConfig> = { extensions: true, servers: true };
const mcpServer: Keys<T.AgentMcpServerConfig> = { allowed_tools: true, args: true, authentication: true, blocked_tools: true, custom_headers: true, env: true, extensions: true, transport: true, url: true };
const model: Keys<T.AgentModelConfig> = { api_key_env: true, base_url: true, extensions: true, max_tokens: true, model: true, provider: true, settings: true, temperature: true, top_p: true };
const runtime: Keys<T.AgentRuntimeConfig> = { extensions: true, max_turns: true };
const skills: Keys<T.AgentSkillConfig> = { extensions: true, paths: true };
const toolDefinition: Keys<T.AgentToolDefinition> = { extensions: true, kind: true, ref: true, settings: true };
const tools: Keys<T.AgentToolsConfig> = { blocked: true, definitions: true, enabled: true, extensions: true };
const workflow: Keys<T.AgentWorkflowConfig> = { entrypoint: true, extensions: true, settings: true };
const entrypoint: Keys<T.AgentWorkflowEntrypointConfig> = { extensions: true, kind: true, ref: true };
const context: Keys<T.RuntimeContext> = { artifacts: true, deadline_millis: true, environment: true, invocation_id: true, request_id: true, runtime_id: true, telemetry: true };
const manifest: Keys<T.ArtifactManifest> = { artifacts: true, root: true };
const artifactRef: Keys<T.ArtifactRef> = { kind: true, media_type: true, metadata: true, name: true, path: true };
const environment: Keys<T.EnvironmentHandle> = { artifacts: true, connection: true, control_location: true, env: true, environment_id: true, metadata: true, ownership: true, provider: true, workspace: true };
const telemetry: Keys<T.RuntimeTelemetryContext> = { config_path: true, env: true, metadata: true, relay_enabled: true };
const result: Keys<T.AgentRunResult> = { artifacts: true, error: true, extensions: true, output: true, status: true, usage: true };
const artifact: Keys<T.AgentArtifact> = { extensions: true, kind: true, media_type: true, name: true, path: true };
const runError: Keys<T.AgentRunError> = { code: true, extensions: true, message: true, retryable: true };
const usage: Keys<T.AgentUsage> = { cached_input_tokens: true, cost_usd: true, extensions: true, input_tokens: true, input_tokens_include_cache: true, output_tokens: true, total_tokens: true };
const request: Keys<T.AgentRunRequest> = { context: true, extensions: true, input: true, relay_session_root: true };

const TABLES: [string, string | null, Record<string, true>][] = [
  ["agent-config.schema.json", null, agentConfig],
  ["agent-config.schema.json", "AgentHarnessConfig", harness],
  ["agent-config.schema.json", "AgentInstructionConfig", instruction],
  ["agent-config.schema.json", "AgentInstructionsConfig", instructions],
  ["agent-config.schema.json", "AgentMcpConfig", mcp],
  ["agent-config.schema.json", "AgentMcpServerConfig", mcpServer],
  ["agent-config.schema.json", "AgentModelConfig", model],
  ["agent-config.schema.json", "AgentRuntimeConfig", runtime],
  ["agent-config.schema.json", "AgentSkillConfig", skills],
  ["agent-config.schema.json", "AgentToolDefinition", toolDefinition],
  ["agent-config.schema.json", "AgentToolsConfig", tools],
  ["agent-config.schema.json", "AgentWorkflowConfig", workflow],
  ["agent-config.schema.json", "AgentWorkflowEntrypointConfig", entrypoint],
  ["runtime-context.schema.json", null, context],
  ["runtime-context.schema.json", "ArtifactManifest", manifest],
  ["runtime-context.schema.json", "ArtifactRef", artifactRef],
  ["runtime-context.schema.json", "EnvironmentHandle", environment],
  ["runtime-context.schema.json", "RuntimeTelemetryContext", telemetry],
  ["agent-run-result.schema.json", null, result],
  ["agent-run-result.schema.json", "AgentArtifact", artifact],
  ["agent-run-result.schema.json", "AgentRunError", runError],
  ["agent-run-result.schema.json", "AgentUsage", usage],
  ["agent-run-request.schema.json", null, request],
];

test("contract interfaces name exactly the schema properties", () => {
  const directory = new ContractValidator().directory;
  for (const [file, definition, table] of TABLES) {
    const schema = JSON.parse(fs.readFileSync(path.join(directory, file), "utf8"));
    const node = definition === null ? schema : schema.$defs?.[definition];
    assert.ok(node?.properties, `${file} ${definition ?? ""} has properties`);
    assert.deepEqual(Object.keys(table).sort(), Object.keys(node.properties).sort(), `${file} ${definition ?? "(root)"}`);
  }
});

test("precompiled validators agree with validators compiled at run time", () => {
  const bundled = new ContractValidator();
  assert.equal(bundled.precompiled, true, "npm run build precompiles the validators");
  const compiled = new ContractValidator(path.resolve(__dirname, "..", "..", "..", "..", "schemas", "adapter-contract"));
  assert.equal(compiled.precompiled, false);
  const environment = { environment_id: "e", provider: "local", control_location: "external_control", ownership: "fabric_owned" };
  const cases: [Parameters<ContractValidator["check"]>[0], unknown][] = [
    ["agentConfig", {}],
    ["agentConfig", { models: { default: { provider: "openai", model: "m", top_p: 2 } } }],
    ["agentConfig", { instructions: { system: { content: "be brief", mode: "append" } } }],
    ["agentConfig", { surprise: 1 }],
    ["agentRunRequest", { input: null }],
    ["agentRunRequest", {}],
    ["runtimeContext", { runtime_id: "r", invocation_id: "i", request_id: "q", environment, artifacts: {}, deadline_millis: 5 }],
    ["runtimeContext", { runtime_id: "r", invocation_id: "i", request_id: "q", environment: { ...environment, ownership: "x" }, artifacts: {} }],
    ["agentRunResult", { status: "succeeded", output: 1 }],
    ["agentRunResult", { status: "failed", output: null, error: { code: " ", message: "m" } }],
    ["agentRunResult", { status: "succeeded", output: 1, artifacts: [{ name: "a", kind: "file", path: "../escape" }] }],
    ["agentRunResult", { status: "succeeded", output: 1, usage: { input_tokens: -1 } }],
  ];
  for (const [shape, value] of cases) {
    assert.deepEqual(bundled.check(shape, value), compiled.check(shape, value), `${shape} ${JSON.stringify(value)}`);
  }
  assert.equal(bundled.check("agentConfig", {}), null);
  assert.notEqual(bundled.check("agentRunResult", { status: "succeeded", output: 1, usage: { input_tokens: -1 } }), null);
});
