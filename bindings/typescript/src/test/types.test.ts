/**
 * Drift test between the hand-written contract interfaces (src/adapter/types.ts) and the
 * generated JSON Schemas: each key table below must name exactly the interface's fields
 * (the compiler checks `Record<keyof T, true>`), and the test checks it names exactly the
 * schema's properties.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as T from "../adapter/types";
import { ContractValidator } from "../adapter/validate";

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
