// Copies the generated adapter-contract JSON Schemas into dist/ so the package is
// self-contained. Missing schemas are not an error here: validation then reports
// `schemas_unavailable` at run time (see src/adapter/validate.ts).
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const source = path.resolve(__dirname, "..", "..", "..", "schemas", "adapter-contract");
const target = path.resolve(__dirname, "..", "dist", "schemas", "adapter-contract");
fs.rmSync(target, { recursive: true, force: true });
if (!fs.existsSync(source)) {
  console.error(`copy-schemas: ${source} does not exist; skipping`);
  process.exit(0);
}
fs.mkdirSync(target, { recursive: true });
let copied = 0;
for (const name of fs.readdirSync(source)) {
  if (name.endsWith(".schema.json")) {
    fs.copyFileSync(path.join(source, name), path.join(target, name));
    copied += 1;
  }
}
console.error(`copy-schemas: copied ${copied} schema(s)`);
