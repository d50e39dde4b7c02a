// Compare: two runs or two batches side by side, item by item (joined by id); rows whose
// status differs, or whose tokens or duration differ by more than 20 %, are highlighted.
import { api, type Compare, type CompareSide } from '../api';
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
    h('td', { class: side.status !== other?.status ? 'diff-cell' : '' }, badge(side.status)),
    h('td', { class: differs(side.total_tokens, other?.total_tokens) ? 'diff-cell num' : 'num' }, fmtInt(side.total_tokens)),
    h('td', { class: differs(side.duration_ms, other?.duration_ms) ? 'diff-cell num' : 'num' }, fmtMs(side.duration_ms)),
  ];
}

function draw(root: HTMLElement, c: Compare): void {
  const target = (side: { id: string }) => (c.kind === 'batch' ? href.batch(side.id) : href.run(side.id));
  const changed = c.rows.filter((r) => r.a?.status !== r.b?.status).length;
  root.append(
    h('h1', {}, 'Compare'),
    h('p', {}, 'A: ', link(target(c.a), c.a.label ?? c.a.id), ' · B: ', link(target(c.b), c.b.label ?? c.b.id)),
    h('p', { class: 'muted', 'data-testid': 'compare-summary' }, `${fmtInt(c.rows.length)} items, ${fmtInt(changed)} with a different status`),
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
        ...c.rows.map((r) =>
          h('tr', { class: r.a?.status !== r.b?.status ? 'changed' : '', 'data-item-id': r.id }, h('td', {}, r.id), ...cells(r.a, r.b), ...cells(r.b, r.a)),
        ),
      ),
    ),
  );
}

export function renderCompare(root: HTMLElement, a: string, b: string): Page {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  root.append(body);
  let live = true;
  api
    .compare(a, b)
    .then((c) => {
      if (!live) return;
      clear(body);
      draw(body, c);
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
