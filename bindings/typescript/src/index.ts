/**
 * fabric-core: Node bindings for the Fabric core, and a host library for TypeScript adapters.
 */
export * as adapter from "./adapter";
