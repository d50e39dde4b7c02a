// What the browser tests stand on: the fixture run directories (made with the `fabric` CLI and
// its scripted adapter by fabric-view/tests/make-fixtures.sh, plus batches synthesized here),
// `fabric view` started on them (stopped by pid), and headless Chromium.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FABRIC = process.env.FABRIC_BIN ?? path.join(repo, 'target', 'debug', 'fabric');
export const CHROMIUM = process.env.FABRIC_CHROMIUM ?? '/usr/bin/chromium';

/**
 * The repository's rule for a missing dependency (tests/dependency.rs): fail naming what to
 * install, or, under FABRIC_ALLOW_SKIPS=1, a skip reason for node:test.
 */
export function requireTool(file, what, install) {
  if (fs.existsSync(file)) return false;
  const reason = `${what} (${file}) is missing; install it: ${install}`;
  if ((process.env.FABRIC_ALLOW_SKIPS ?? '').trim() === '1') return `${reason} (FABRIC_ALLOW_SKIPS=1)`;
  throw new Error(`${reason} (or set FABRIC_ALLOW_SKIPS=1 for a partial run that skips these tests)`);
}

/** One batch line in the format `fabric batch` writes (schemas/sdk/batch-line.schema.json). */
function line(id, i, status, tokens, durationMs) {
  const result = {
    agent_name: 'synthetic',
    harness: 'fabric.scripted',
    adapter_kind: 'process',
    runtime_id: `runtime-${i}`,
    invocation_id: `invocation-${i}`,
    request_id: `request-${i}`,
    status,
    output: status === 'succeeded' ? { response: `done ${id}` } : null,
    usage: { input_tokens: tokens - 10, output_tokens: 10, total_tokens: tokens },
  };
  if (status !== 'succeeded') result.error = { stage: 'invoke', code: 'fixture_failure', message: `${id} fails on purpose`, retryable: false, metadata: {} };
  return JSON.stringify({ id, attempts: 1, result, attempt_log: [], duration_ms: durationMs });
}

/** Appends one succeeded item to a batch results file, as a running batch would. */
export function appendLine(file, id) {
  fs.appendFileSync(file, line(id, 0, 'succeeded', 120, 80) + '\n');
}

/** A batch results file of `count` items, every tenth one failed (written in chunks). */
export function writeBatch(file, count, prefix) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    for (let start = 0; start < count; start += 10000) {
      const chunk = [];
      for (let i = start; i < Math.min(count, start + 10000); i++) {
        chunk.push(line(`${prefix}-${String(i).padStart(6, '0')}`, i, i % 10 === 3 ? 'failed' : 'succeeded', 100 + (i % 97), 20 + ((i * 37) % 1500)));
      }
      fs.writeSync(fd, chunk.join('\n') + '\n');
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The fixture tree: OUT/run and OUT/batch from make-fixtures.sh; OUT/batch-b, the same batch
 * with two items' outcomes flipped (to compare); OUT/run-b, the run failed instead (to compare);
 * OUT/large, a 100,000-item batch.
 */
export function makeFixtures() {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fabric-view-e2e-'));
  execFileSync('bash', [path.join(repo, 'fabric-view', 'tests', 'make-fixtures.sh'), FABRIC, out], { stdio: 'inherit' });
  const lines = fs.readFileSync(path.join(out, 'batch', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  for (const l of lines) {
    if (l.id === 'item-02' || l.id === 'item-07') {
      const failed = l.result.status !== 'succeeded';
      l.result.status = failed ? 'succeeded' : 'failed';
      l.result.error = failed ? undefined : { stage: 'invoke', code: 'fixture_flipped', message: 'flipped for the compare page', retryable: false, metadata: {} };
      l.result.output = failed ? { response: 'flipped' } : null;
    }
  }
  fs.mkdirSync(path.join(out, 'batch-b'));
  fs.writeFileSync(path.join(out, 'batch-b', 'results.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  // OUT/run-b: the run's RunResult failed instead (the compare page's second run).
  const run = JSON.parse(fs.readFileSync(path.join(out, 'run', 'result.json'), 'utf8'));
  run.status = 'failed';
  run.output = null;
  run.error = { stage: 'invoke', code: 'fixture_flipped', message: 'flipped for the compare page', retryable: false, metadata: {} };
  fs.mkdirSync(path.join(out, 'run-b'));
  fs.writeFileSync(path.join(out, 'run-b', 'result.json'), JSON.stringify(run));
  writeBatch(path.join(out, 'large', 'results.jsonl'), 100000, 'large');
  return out;
}

/** Starts `fabric view` on `paths`; resolves with its URL (token included) and a stop function. */
export function startView(paths) {
  const child = spawn(FABRIC, ['view', ...paths, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGTERM');
    const timer = setTimeout(() => process.kill(child.pid, 'SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`fabric view printed no URL within 30 s; stdout: ${stdout}; stderr: ${stderr}`));
    }, 30000);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[0], pid: child.pid, stop, stderr: () => stderr });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`fabric view exited (${code ?? signal}) before printing its URL: ${stderr}`));
    });
  });
}
