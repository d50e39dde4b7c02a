/**
 * fabric-core: Node bindings for the Fabric core (C ABI through koffi), and a host
 * library for TypeScript adapters (`fabric-core/adapter`).
 */
export { Environment, Fabric, Runtime } from "./fabric";
export { Service } from "./service";
export { Prewarm } from "./prewarm";
export { Batch, type BatchOptions, type BatchItem } from "./batch";
export { InvokeStream, OpenAIInvokeStream, type AtofRecord } from "./stream";
export { modelCallRecords } from "./modelCalls";
export type { CallOptions, CheckOptions, ExecOptions, FileOptions, InvokeOptions, RunOptions, RuntimeState } from "./fabric";
export * from "./errors";
export type * from "./models";
export { libraryPath, EXPECTED_ABI_VERSION } from "./native";
export * as adapter from "./adapter";
