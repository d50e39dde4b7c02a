import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { platformKey, resolveLibrary } from "../native";

function packageWithPrebuild(key: string, name: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-core-pkg-"));
  fs.mkdirSync(path.join(root, "prebuilds", key), { recursive: true });
  fs.writeFileSync(path.join(root, "prebuilds", key, name), "");
  return root;
}

test("a packed package loads its prebuild for the platform first", () => {
  const root = packageWithPrebuild("linux-x64", "libfabric_ffi.so");
  const found = resolveLibrary({ override: undefined, platform: "linux", arch: "x64", packageRoot: root });
  assert.deepEqual(found, { path: path.join(root, "prebuilds", "linux-x64", "libfabric_ffi.so") });
  const mac = packageWithPrebuild("darwin-arm64", "libfabric_ffi.dylib");
  assert.equal(
    resolveLibrary({ override: undefined, platform: "darwin", arch: "arm64", packageRoot: mac }).path,
    path.join(mac, "prebuilds", "darwin-arm64", "libfabric_ffi.dylib"),
  );
});

test("FABRIC_CORE_LIB overrides the prebuild, and a missing override says so", () => {
  const root = packageWithPrebuild("linux-x64", "libfabric_ffi.so");
  const other = path.join(root, "elsewhere.so");
  fs.writeFileSync(other, "");
  assert.deepEqual(resolveLibrary({ override: other, platform: "linux", arch: "x64", packageRoot: root }), { path: other });
  const missing = resolveLibrary({ override: path.join(root, "nope.so"), platform: "linux", arch: "x64", packageRoot: root });
  assert.match(missing.problem ?? "", /not found at .*nope\.so \(FABRIC_CORE_LIB\)/);
});

test("no prebuild for the platform is an error naming the platform and what the package has", () => {
  const root = packageWithPrebuild("linux-x64", "libfabric_ffi.so");
  const found = resolveLibrary({ override: undefined, platform: "darwin", arch: "arm64", packageRoot: root });
  assert.equal(found.path, path.join(root, "prebuilds", "darwin-arm64", "libfabric_ffi.dylib"));
  assert.match(found.problem ?? "", /no native library for darwin-arm64 \(it has prebuilds for linux-x64 only/);
  assert.match(found.problem ?? "", /FABRIC_CORE_LIB/);
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), "fabric-core-pkg-"));
  const none = resolveLibrary({ override: undefined, platform: "linux", arch: "arm64", packageRoot: bare });
  assert.match(none.problem ?? "", /no native library for linux-arm64 \(it has no prebuilds/);
});

test("in the checkout the debug build is the fallback", () => {
  const packageRoot = path.resolve(__dirname, "..", "..");
  const found = resolveLibrary({ override: undefined, platform: "linux", arch: "x64", packageRoot });
  assert.equal(found.path, path.resolve(packageRoot, "..", "..", "target", "debug", "libfabric_ffi.so"));
  assert.equal(platformKey("linux", "x64"), "linux-x64");
});
