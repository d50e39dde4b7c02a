// `fabric view` in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against the server started on fixture run directories (test/support.mjs). Screenshots of each
// page go to target/view-screenshots/ (FABRIC_VIEW_SCREENSHOTS overrides; with
// FABRIC_VIEW_DOCS_IMAGES=1 also to docs/images/, the pictures of docs/view.md).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { appendLine, CHROMIUM, FABRIC, makeFixtures, repo, requireTool, startView } from './support.mjs';

const SHOTS = process.env.FABRIC_VIEW_SCREENSHOTS ?? path.join(repo, 'target', 'view-screenshots');
const DOCS = process.env.FABRIC_VIEW_DOCS_IMAGES === '1' ? path.join(repo, 'docs', 'images') : null;

const skip =
  requireTool(FABRIC, 'the fabric CLI', 'cargo build --workspace') ||
  requireTool(CHROMIUM, 'Chromium', 'apt-get install chromium (scripts/setup.sh)');

describe('fabric view in Chromium', { skip }, () => {
  let fixtures;
  let view;
  let browser;
  let page;
  const measured = {};
  const pageErrors = [];

  before(async () => {
    fixtures = makeFixtures();
    view = await startView(['run', 'run-b', 'batch', 'batch-b', 'large'].map((d) => path.join(fixtures, d)));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(err.message));
    fs.mkdirSync(SHOTS, { recursive: true });
    if (DOCS) fs.mkdirSync(DOCS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await view?.stop();
    if (fixtures) fs.rmSync(fixtures, { recursive: true, force: true });
    if (Object.keys(measured).length > 0) console.log(`measured: ${JSON.stringify(measured)}`);
  });

  /** The whole page into SHOTS; the viewport (scrolled to `at`, when given) into DOCS. */
  async function shoot(name, at) {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: name !== 'batch-large' });
    if (!DOCS) return;
    if (at) await at.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    else await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(DOCS, `view-${name}.png`) });
  }

  /** `/api/index` as the page fetches it (with the page's token). */
  function apiIndex() {
    return page.evaluate(async () => {
      const token = document.querySelector('meta[name="fabric-token"]').getAttribute('content');
      return (await fetch('/api/index', { headers: { Authorization: `Bearer ${token}` } })).json();
    });
  }

  /** The index entry of the batch whose results file is under `dir`. */
  async function batchId(dir) {
    const index = await apiIndex();
    const batch = index.batches.find((b) => b.path.includes(`${path.sep}${dir}${path.sep}`));
    assert.ok(batch, `no batch under ${dir} in ${JSON.stringify(index.batches.map((b) => b.path))}`);
    return batch.id;
  }

  test('the home page lists the batches and the run', async () => {
    await page.goto(view.url);
    await page.locator('[data-testid="batches"] tbody tr').first().waitFor();
    assert.equal(await page.locator('[data-testid="batches"] tbody tr').count(), 3);
    assert.ok((await page.locator('[data-testid="runs"] tbody tr').count()) >= 1);
    await shoot('home');
  });

  test('the batch page lists the items, and a status filter keeps only failed ones', async () => {
    await page.goto(`${view.url}#/batch/${encodeURIComponent(await batchId('batch'))}`);
    const rows = page.locator('[data-testid="items-viewport"] .row[data-item-id]');
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="item-20"]').waitFor();
    assert.equal(await rows.count(), 20);
    await page.locator('.chart[data-chart="latency histogram"] canvas').waitFor();
    assert.ok(Number(await page.locator('.chart[data-chart="latency histogram"]').getAttribute('data-points')) > 0);
    await shoot('batch');

    await page.locator('[data-testid="filter-status"]').selectOption('failed');
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('[data-testid="items-viewport"] .row[data-item-id]')];
      return rows.length === 3 && rows.every((r) => r.getAttribute('data-status') === 'failed');
    });
    assert.match(await page.locator('[data-testid="items-total"]').textContent(), /^3 items match/);
    await page.locator('[data-testid="filter-status"]').selectOption('');
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="item-20"]').waitFor();
  });

  test('the search and a column sort run over the whole batch', async () => {
    const rows = '[data-testid="items-viewport"] .row[data-item-id]';
    await page.locator('[data-testid="filter-search"]').fill('item-1');
    await page.waitForFunction((sel) => document.querySelectorAll(sel).length === 10, rows);
    const ids = await page.locator(rows).evaluateAll((els) => els.map((e) => e.getAttribute('data-item-id')));
    assert.deepEqual(ids.sort(), ['item-10', 'item-11', 'item-12', 'item-13', 'item-14', 'item-15', 'item-16', 'item-17', 'item-18', 'item-19']);
    await page.locator('[data-testid="filter-search"]').fill('');
    await page.waitForFunction((sel) => document.querySelectorAll(sel).length === 20, rows);

    // Twice on "duration": descending. Each row's duration cell, in ms, must not increase.
    await page.locator('button[data-sort="duration_ms"]').click();
    await page.locator('button[data-sort="duration_ms"]').click();
    await page.waitForFunction(() => document.querySelector('button[data-sort="duration_ms"]').textContent.endsWith('▼'));
    await page.waitForFunction(
      (sel) => {
        const ms = [...document.querySelectorAll(sel)].map((r) => Number.parseFloat(r.children[4].textContent));
        return ms.length === 20 && ms.every((v, i) => i === 0 || v <= ms[i - 1]);
      },
      rows,
    );
    await page.locator('button[data-sort="row"]').click();
  });

  test('clicking an item opens its conversation with the tool call shown', async () => {
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="item-01"]').click();
    await page.waitForURL(/#\/run\//);
    await page.locator('[data-testid="conversation"]').waitFor();
    const call = page.locator('[data-testid="conversation"] [data-testid="tool-call"]');
    assert.equal(await call.count(), 1);
    assert.equal(await call.getAttribute('data-tool'), 'list_files');
    assert.ok(await call.isVisible());
    assert.match(await page.locator('[data-testid="run"] h1').textContent(), /item-01/);
    await shoot('batch-item');
  });

  test('the run page shows the tool call, the sampled stats, the diff, the artifacts and the health report', async () => {
    await page.goto(view.url);
    await page.locator('[data-testid="runs"] a', { hasText: /view-fixture|invocation|result/ }).first().waitFor();
    const runs = await page.locator('[data-testid="runs"] tbody a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    // The fixture run is the one whose conversation has the tool call.
    let found = false;
    for (const href of runs) {
      await page.goto(`${view.url}${href}`);
      await page.locator('[data-testid="run"] h1').waitFor();
      if ((await page.locator('[data-testid="tool-call"]').count()) > 0) {
        found = true;
        break;
      }
    }
    assert.ok(found, `no run among ${runs.length} shows a tool call`);
    const call = page.locator('[data-testid="tool-call"]').first();
    assert.equal(await call.getAttribute('data-tool'), 'list_files');
    assert.match(await call.textContent(), /"path": "\."/);
    assert.match(await page.locator('[data-testid="conversation"]').textContent(), /README\.md\nnotes\.txt|README\.mdnotes\.txt|README\.md/);
    // The model call behind each assistant turn (model, latency from the step timestamps,
    // tokens from the step metrics), and the subagent the tool ran nested under its result.
    const calls = await page.locator('[data-testid="conversation"] > .message > .message-head > [data-testid="model-call"]').allTextContents();
    assert.deepEqual(calls, ['stub/model · 1.20 s · 200 in · 12 out', 'stub/model · 800 ms · 212 in · 25 out']);
    const subagent = page.locator('[data-testid="conversation"] [data-testid="subagent"]');
    assert.equal(await subagent.count(), 1);
    assert.match(await subagent.locator('summary').textContent(), /subagent lister \(2 messages\)/);
    assert.equal(await subagent.locator('[data-testid="model-call"]').textContent(), 'stub/small · 40 in · 6 out');
    assert.ok(await subagent.locator('[data-testid="model-call"]').isVisible());

    const cpu = page.locator('.chart[data-chart="CPU %"]');
    await cpu.locator('canvas').waitFor();
    assert.ok(Number(await cpu.getAttribute('data-points')) > 0, 'the CPU chart has points');
    assert.ok(Number(await page.locator('.chart[data-chart="RSS"]').getAttribute('data-points')) > 0, 'the RSS chart has points');

    await page.locator('[data-testid="diff"] .line.add').first().waitFor();
    const added = await page.locator('[data-testid="diff"] .line.add').allTextContents();
    assert.ok(added.includes('+Edited by the agent.'), `added lines: ${JSON.stringify(added)}`);
    assert.ok((await page.locator('[data-testid="diff"] .line.file').count()) > 0);

    const artifact = page.locator('[data-artifact="report.txt"]');
    await artifact.locator('button').click();
    await artifact.locator('pre').waitFor();
    assert.equal(await artifact.locator('pre').textContent(), 'Files: README.md, notes.txt\n');
    // The health-check report saved in the run's invocation directory.
    const health = page.locator('section.panel', { has: page.locator('h2', { hasText: /^Health \(1\)$/ }) });
    assert.match(await health.locator('pre').textContent(), /"outcome": "passed"/);
    await shoot('run');
    if (DOCS) await shoot('run-stats', page.locator('[data-testid="system-stats"]'));
    if (DOCS) await shoot('run-diff', page.locator('[data-testid="diff"]'));
  });

  test("an artifact's download link serves its bytes with the token, and nothing without it", async () => {
    // Still on the run page of the previous test.
    const link = page.locator('[data-artifact="report.txt"] a[download]');
    assert.equal(await link.getAttribute('download'), 'report.txt');
    const href = await link.getAttribute('href');
    assert.match(href, /^\/api\/files\/[^/]+\?download=1&token=/);
    const got = await page.evaluate(async (href) => {
      const answer = await fetch(href);
      const bare = new URL(href, location.href);
      bare.searchParams.delete('token');
      return {
        status: answer.status,
        type: answer.headers.get('content-type'),
        disposition: answer.headers.get('content-disposition'),
        bytes: [...new Uint8Array(await answer.arrayBuffer())],
        withoutToken: (await fetch(bare.pathname + bare.search)).status,
      };
    }, href);
    assert.equal(got.status, 200);
    assert.equal(got.type, 'application/octet-stream');
    assert.match(got.disposition, /^attachment; filename="report\.txt"/);
    assert.deepEqual(got.bytes, [...Buffer.from('Files: README.md, notes.txt\n')]);
    assert.equal(got.withoutToken, 401);
  });

  test('two runs compare side by side, each side linking to its run', async () => {
    await page.goto(view.url);
    await page.locator('[data-testid="runs"] tbody tr').first().waitFor();
    const index = await apiIndex();
    const run = index.runs.find((r) => r.kind === 'run_result' && r.path.endsWith(`${path.sep}run${path.sep}result.json`));
    const other = index.runs.find((r) => r.path.endsWith(`${path.sep}run-b${path.sep}result.json`));
    assert.ok(run && other, `two runs in ${JSON.stringify(index.runs.map((r) => [r.kind, r.path, r.status]))}`);
    for (const r of [run, other]) await page.locator(`[data-select="${r.id}"]`).check();
    await page.locator('[data-testid="compare-button"]:not(.disabled)').click();
    await page.locator('[data-testid="compare"] tbody tr').first().waitFor();
    await page.locator('h1', { hasText: 'Compare runs' }).waitFor();
    const rows = page.locator('[data-testid="compare"] tbody tr');
    assert.equal(await rows.count(), 1);
    const statuses = await rows.first().locator('td a').allTextContents();
    assert.deepEqual(statuses, ['succeeded', 'failed']);
    assert.equal(await rows.first().getAttribute('class'), 'changed');
    await shoot('compare-runs');
    await rows.first().locator('td a').nth(1).click();
    await page.waitForURL((url) => url.hash === `#/run/${encodeURIComponent(other.id)}`);
    await page.locator('[data-testid="run"] h1').waitFor();
    // Unselect, so the batches' compare below starts from nothing selected.
    await page.goto(view.url);
    await page.locator('[data-testid="runs"] tbody tr').first().waitFor();
    for (const r of [run, other]) await page.locator(`[data-select="${r.id}"]`).uncheck();
  });

  test('two batches compare side by side with the differences marked', async () => {
    await page.goto(view.url);
    await page.locator('[data-testid="batches"] tbody tr').first().waitFor();
    for (const dir of ['batch', 'batch-b']) await page.locator(`[data-select="${await batchId(dir)}"]`).check();
    await page.locator('[data-testid="compare-button"]:not(.disabled)').click();
    await page.locator('[data-testid="compare"] tbody tr').first().waitFor();
    assert.equal(await page.locator('[data-testid="compare"] tbody tr').count(), 20);
    const changed = await page.locator('[data-testid="compare"] tbody tr.changed').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-item-id')));
    assert.deepEqual(changed.sort(), ['item-02', 'item-07']);
    await shoot('compare');
  });

  test('lines appended to a batch show without a reload', async () => {
    await page.goto(`${view.url}#/batch/${encodeURIComponent(await batchId('batch-b'))}`);
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="item-20"]').waitFor();
    assert.match(await page.locator('[data-testid="items-total"]').textContent(), /^20 items/);
    appendLine(path.join(fixtures, 'batch-b', 'results.jsonl'), 'item-21');
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="item-21"]').waitFor({ timeout: 15000 });
    assert.match(await page.locator('[data-testid="items-total"]').textContent(), /^21 items/);
    assert.equal(await page.locator('[data-count="succeeded"]').textContent(), 'succeeded 18');
  });

  test('a 100,000-item batch opens, and scrolling fetches the rows in view', async () => {
    const id = await batchId('large');
    const started = Date.now();
    await page.goto(`${view.url}#/batch/${encodeURIComponent(id)}`);
    await page.locator('[data-testid="items-viewport"] .row[data-item-id="large-000000"]').waitFor();
    measured.large_batch_first_rows_ms = Date.now() - started;
    assert.match(await page.locator('[data-testid="items-total"]').textContent(), /^100,000 items/);
    // The table holds only the rows near the viewport.
    assert.ok((await page.locator('[data-testid="items-viewport"] .row').count()) < 200);

    const scrolled = Date.now();
    await page.locator('[data-testid="items-viewport"]').evaluate((el) => {
      el.scrollTop = el.scrollHeight / 2;
    });
    await page.locator('[data-testid="items-viewport"] .row[data-item-id^="large-05"]').first().waitFor();
    measured.large_batch_scroll_to_middle_ms = Date.now() - scrolled;

    // Smoothness: wheel through 60 screens while a requestAnimationFrame loop records the gaps
    // between frames; the DOM keeps only the rows near the viewport throughout.
    await page.locator('[data-testid="items-viewport"]').hover();
    await page.evaluate(() => {
      window.__frames = [];
      let last = performance.now();
      const tick = (now) => {
        window.__frames.push(now - last);
        last = now;
        if (window.__frames.length < 100000) window.__raf = requestAnimationFrame(tick);
      };
      window.__raf = requestAnimationFrame(tick);
    });
    for (let i = 0; i < 60; i++) await page.mouse.wheel(0, 600);
    const frames = await page.evaluate(() => {
      cancelAnimationFrame(window.__raf);
      return window.__frames.slice(1).sort((a, b) => a - b);
    });
    measured.large_batch_wheel_frames = frames.length;
    measured.large_batch_wheel_frame_p50_ms = Math.round(frames[Math.floor(frames.length / 2)]);
    measured.large_batch_wheel_frame_max_ms = Math.round(frames[frames.length - 1]);
    assert.ok((await page.locator('[data-testid="items-viewport"] .row').count()) < 200);
    await shoot('batch-large');
    assert.ok(measured.large_batch_first_rows_ms < 10000, `first rows after ${measured.large_batch_first_rows_ms} ms`);
  });

  test('the API refuses a request without the token, and a path with ..', async () => {
    const statuses = await page.evaluate(async () => {
      const token = document.querySelector('meta[name="fabric-token"]').getAttribute('content');
      const auth = { headers: { Authorization: `Bearer ${token}` } };
      return {
        noToken: (await fetch('/api/index')).status,
        wrongToken: (await fetch('/api/index', { headers: { Authorization: 'Bearer 00' } })).status,
        dotdot: (await fetch('/api/files/..%2f..%2f..%2fetc%2fpasswd', auth)).status,
        withToken: (await fetch('/api/index', auth)).status,
      };
    });
    assert.deepEqual(statuses, { noToken: 401, wrongToken: 401, dotdot: 404, withToken: 200 });
  });

  test('the page raised no error on any of these pages', () => {
    assert.deepEqual(pageErrors, []);
  });
});
