// Precompiles the adapter-contract validators with ajv's standalone code generation into
// dist/adapter/contract-validators.js, so an adapter host does not spend ~100-200 ms
// compiling JSON Schemas at every start. Runs after tsc and copy-schemas.js.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const Ajv2020 = require("ajv/dist/2020").default;
const standaloneCode = require("ajv/dist/standalone").default;
const { CONTRACT_SHAPES, ajvOptions } = require("../dist/adapter/validate.js");

const schemas = path.resolve(__dirname, "..", "dist", "schemas", "adapter-contract");
const target = path.resolve(__dirname, "..", "dist", "adapter", "contract-validators.js");
fs.rmSync(target, { force: true });
if (!fs.existsSync(schemas)) {
  console.error("compile-validators: no schemas in dist; skipping");
  process.exit(0);
}
const ajv = new Ajv2020({ ...ajvOptions, code: { source: true } });
const files = new Set(Object.values(CONTRACT_SHAPES).map((shape) => shape.file));
for (const file of files) {
  const { $id: _ignored, ...body } = JSON.parse(fs.readFileSync(path.join(schemas, file), "utf8"));
  ajv.addSchema(body, file);
}
const refs = {};
for (const [name, shape] of Object.entries(CONTRACT_SHAPES)) {
  refs[name] = shape.pointer ? `${shape.file}#${shape.pointer}` : shape.file;
}
fs.writeFileSync(target, standaloneCode(ajv, refs));
console.error(`compile-validators: wrote ${Object.keys(refs).length} validators`);
