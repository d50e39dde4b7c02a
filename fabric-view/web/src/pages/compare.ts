// Compare: two runs or two batches side by side, item by item (joined by id); rows whose
// status differs, or whose tokens or duration differ by more than 20 %, are highlighted.
import { api, type Compare, type CompareSide, type Index } from '../api';
import { badge, clear, fmtInt, fmtMs, h, link } from '../dom';
import { href } from '../router';
import type { Page } from '../main';

function differs(a: number | null | undefined, b: number | null | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return a !== b;
  const hi = Math.max(Math.abs(a), Math.abs(b));
  return hi > 0 && Math.abs(a - b) / hi > 0.2;
}

function cells(side: CompareSide | null, other: CompareSide | null): HTMLElement[] {
  if (!side) return [h('td', { class: 'missing', colspan: 3 }, 'absent')];
  return [
    h('td', { class: side.status !== other?.status ? 'diff-cell' : '' }, link(href.run(side.run_id), badge(side.status), { title: 'open the run' })),
    h('td', { class: differs(side.total_tokens, other?.total_tokens) ? 'diff-cell num' : 'num' }, fmtInt(side.total_tokens)),
    h('td', { class: differs(side.duration_ms, other?.duration_ms) ? 'diff-cell num' : 'num' }, fmtMs(side.duration_ms)),
  ];
}

/** Rows drawn at most: the changed ones first, then the others in the server's order. */
const MAX_ROWS = 2000;

function draw(root: HTMLElement, c: Compare, labels: Map<string, string>): void {
  const target = (id: string) => (c.kind === 'batches' ? href.batch(id) : href.run(id));
  const changed = c.rows.filter((r) => r.a?.status !== r.b?.status);
  const rows = [...changed, ...c.rows.filter((r) => r.a?.status === r.b?.status)].slice(0, MAX_ROWS);
  root.append(
    h('h1', {}, `Compare ${c.kind}`),
    h('p', {}, 'A: ', link(target(c.a), labels.get(c.a) ?? c.a), ' · B: ', link(target(c.b), labels.get(c.b) ?? c.b)),
    h(
      'p',
      { class: 'muted', 'data-testid': 'compare-summary' },
      `${fmtInt(c.rows.length)} items, ${fmtInt(changed.length)} with a different status` +
        (rows.length < c.rows.length ? ` (the first ${fmtInt(rows.length)} shown, differences first)` : ''),
    ),
    h(
      'table',
      { class: 'grid compare', 'data-testid': 'compare' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', { rowspan: 2 }, 'item'), h('th', { colspan: 3 }, 'A'), h('th', { colspan: 3 }, 'B')),
        h('tr', {}, ...['status', 'tokens', 'duration', 'status', 'tokens', 'duration'].map((t) => h('th', {}, t))),
      ),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h('tr', { class: r.a?.status !== r.b?.status ? 'changed' : '', 'data-item-id': r.id }, h('td', {}, r.id), ...cells(r.a, r.b), ...cells(r.b, r.a)),
        ),
      ),
    ),
  );
}

export function renderCompare(root: HTMLElement, a: string, b: string, index: Index): Page {
  const labels = new Map<string, string>();
  for (const e of [...index.batches, ...index.runs]) labels.set(e.id, e.label || e.path);
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  root.append(body);
  let live = true;
  api
    .compare(a, b)
    .then((c) => {
      if (!live) return;
      clear(body);
      draw(body, c, labels);
    })
    .catch((err: unknown) => {
      if (!live) return;
      clear(body);
      body.append(h('p', { class: 'error' }, `compare unavailable: ${String(err)}`));
    });
  return {
    dispose() {
      live = false;
    },
  };
}
