// Builds the page into ../assets/ (checked in, embedded by the fabric-view crate):
// app.js and app.css bundled and minified by esbuild from src/, and index.html.
// `node build.mjs --check` builds into a temporary directory and fails when a checked-in file
// differs (scripts/test.sh runs it: the bundle must be what this source builds, byte for byte).
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, readdirSync, rmSync, copyFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const assets = join(here, '..', 'assets');
const BUILT = ['app.js', 'app.css', 'index.html'];

async function bundle(out) {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { app: join(here, 'src', 'main.ts') },
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2022'],
    outdir: out,
    legalComments: 'eof',
    charset: 'utf8',
    logLevel: 'warning',
    absWorkingDir: here,
  });
  copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
}

if (process.argv.includes('--check')) {
  const out = mkdtempSync(join(tmpdir(), 'fabric-view-web-'));
  try {
    await bundle(out);
    const stale = BUILT.filter((name) => {
      try {
        return !readFileSync(join(out, name)).equals(readFileSync(join(assets, name)));
      } catch {
        return true;
      }
    });
    if (stale.length > 0) {
      console.error(
        `error: fabric-view/assets/ is not what fabric-view/web builds (${stale.join(', ')} differ); ` +
          'run `npm run build` in fabric-view/web and commit fabric-view/assets/',
      );
      process.exit(1);
    }
    console.log(`fabric-view/assets/ is current (${BUILT.join(', ')})`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
} else {
  await bundle(assets);
  for (const name of readdirSync(assets).filter((n) => BUILT.includes(n)).sort()) {
    console.log(`${name} ${readFileSync(join(assets, name)).length} bytes`);
  }
}
