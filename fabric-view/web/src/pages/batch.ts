// Batch: status counts, throughput, latency percentiles and histogram, usage totals, error
// codes, and the virtualized item table with filter, search and sort.
import { api, type BatchStats, type Index } from '../api';
import { badge, clear, facts, fmtInt, fmtMs, h, section, summaryFacts } from '../dom';
import { histogram } from './charts';
import { itemsTable } from './items-table';
import type { Page } from '../main';

function select(name: string, options: string[], onChange: (v: string) => void): HTMLSelectElement {
  const el = h('select', { 'data-testid': `filter-${name}`, 'aria-label': name }, h('option', { value: '' }, `any ${name}`));
  for (const o of options) el.append(h('option', { value: o }, o));
  el.addEventListener('change', () => onChange(el.value));
  return el;
}

export function renderBatch(root: HTMLElement, id: string, first: Index): Page {
  const entry = () => first.batches.find((b) => b.id === id);
  const title = h('h1', {}, entry()?.label ?? id);
  const overview = h('div', { class: 'overview', 'data-testid': 'batch-stats' }, h('p', { class: 'muted' }, 'Loading the statistics…'));
  const table = itemsTable(id);
  const statusFilter = select('status', [], (v) => table.set({ status: v }));
  const codeFilter = select('error code', [], (v) => table.set({ error_code: v }));
  let timer = 0;
  const search = h('input', { type: 'search', placeholder: 'search ids, errors…', 'data-testid': 'filter-search' });
  search.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => table.set({ q: search.value.trim() }), 250);
  });

  const fillOptions = (el: HTMLSelectElement, values: string[]): void => {
    const have = new Set([...el.options].map((o) => o.value));
    for (const v of values) if (!have.has(v)) el.append(h('option', { value: v }, v));
  };

  const drawStats = (stats: BatchStats): void => {
    clear(overview);
    const lat = stats.latency_ms;
    overview.append(
      h(
        'div',
        { class: 'counts' },
        ...Object.entries(stats.counts).map(([s, n]) => h('span', { class: 'count', 'data-count': s }, badge(s), ` ${fmtInt(n)}`)),
      ),
      h(
        'div',
        { class: 'side-by-side' },
        h(
          'div',
          {},
          facts([
            ['items/s', stats.items_per_second?.toFixed(2) ?? ''],
            ['wall time', stats.wall_seconds === null ? '' : fmtMs(stats.wall_seconds * 1000)],
            ['latency p50', fmtMs(lat?.p50)],
            ['latency p90', fmtMs(lat?.p90)],
            ['latency p99', fmtMs(lat?.p99)],
          ]),
          h('h3', {}, 'Usage'),
          summaryFacts(stats.usage) ?? h('p', { class: 'muted' }, 'no usage reported'),
          h('h3', {}, 'Error codes'),
          Object.keys(stats.error_codes).length === 0
            ? h('p', { class: 'muted' }, 'none')
            : h(
                'ul',
                { class: 'codes', 'data-testid': 'error-codes' },
                ...Object.entries(stats.error_codes).map(([code, n]) => {
                  const a = h('a', { href: '#', 'data-code': code }, code);
                  a.addEventListener('click', (ev) => {
                    ev.preventDefault();
                    codeFilter.value = code;
                    table.set({ error_code: code });
                  });
                  return h('li', {}, a, ` ${fmtInt(n)}`);
                }),
              ),
        ),
        histogram(stats.latency_histogram),
      ),
    );
    fillOptions(statusFilter, Object.keys(stats.counts));
    fillOptions(codeFilter, Object.keys(stats.error_codes));
  };

  const loadStats = (): void => {
    api
      .stats(id)
      .then(drawStats)
      .catch((err: unknown) => {
        clear(overview);
        overview.append(h('p', { class: 'error' }, `statistics unavailable: ${String(err)}`));
      });
  };

  const running = h('span');
  const drawRunning = (): void => {
    clear(running);
    if (entry()?.running) running.append(badge('running'));
  };

  root.append(
    h('div', { class: 'title' }, title, running),
    h('p', { class: 'muted' }, entry()?.path ?? ''),
    section('Overview', overview),
    section('Items', h('div', { class: 'toolbar filters' }, statusFilter, codeFilter, search), table.el),
  );
  drawRunning();
  loadStats();

  return {
    refresh(index: Index) {
      first = index;
      drawRunning();
      loadStats();
      table.reload();
    },
    dispose() {
      window.clearTimeout(timer);
    },
  };
}
