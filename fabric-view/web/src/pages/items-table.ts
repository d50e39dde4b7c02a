// The batch's item table, virtualized: only the rows in (and near) the viewport exist in the
// DOM, and pages of 200 rows are fetched from `/api/batches/{id}/items` as the viewport
// reaches them. Filtering, search and sort happen on the server; a query change starts a new
// epoch so late answers of the old one are dropped.
import { api, type ItemRow } from '../api';
import { badge, clear, fmtInt, fmtMs, h } from '../dom';
import { href } from '../router';

export interface ItemsQuery {
  status: string;
  error_code: string;
  q: string;
  sort: string;
  order: 'asc' | 'desc';
}

const ROW_PX = 28;
const PAGE = 200;
const OVERSCAN = 10;

const COLUMNS: { key: string; title: string; cell: (r: ItemRow) => Node | string }[] = [
  { key: 'row', title: '#', cell: (r) => String(r.row) },
  { key: 'id', title: 'id', cell: (r) => r.id },
  { key: 'status', title: 'status', cell: (r) => badge(r.status) },
  { key: 'attempts', title: 'attempts', cell: (r) => String(r.attempts) },
  { key: 'duration_ms', title: 'duration', cell: (r) => fmtMs(r.duration_ms) },
  { key: 'total_tokens', title: 'tokens', cell: (r) => fmtInt(r.total_tokens) },
  { key: 'error_code', title: 'error code', cell: (r) => r.error_code ?? '' },
];

export interface ItemsTable {
  el: HTMLElement;
  set(query: Partial<ItemsQuery>): void;
  /** Re-fetches the visible pages (the batch grew), keeping the rows shown until they arrive. */
  reload(): void;
}

export function itemsTable(batchId: string): ItemsTable {
  const query: ItemsQuery = { status: '', error_code: '', q: '', sort: 'row', order: 'asc' };
  let epoch = 0;
  let total: number | null = null;
  let pages = new Map<number, ItemRow[]>();
  let stale = new Map<number, ItemRow[]>();
  const loading = new Set<string>();
  let frame = 0;

  const count = h('span', { class: 'muted', 'data-testid': 'items-total' }, 'loading…');
  const head = h('div', { class: 'row head', role: 'row' });
  const spacer = h('div', { class: 'spacer' });
  const layer = h('div', { class: 'rows', role: 'rowgroup' });
  const viewport = h('div', { class: 'viewport', 'data-testid': 'items-viewport' }, spacer, layer);
  const el = h('div', { class: 'items', role: 'table', 'data-testid': 'items-table' }, h('div', { class: 'toolbar' }, count), head, viewport);

  const drawHead = (): void => {
    clear(head);
    for (const col of COLUMNS) {
      const arrow = query.sort === col.key ? (query.order === 'asc' ? ' ▲' : ' ▼') : '';
      const button = h('button', { class: 'sort', 'data-sort': col.key, role: 'columnheader' }, col.title + arrow);
      button.addEventListener('click', () => {
        const order = query.sort === col.key && query.order === 'asc' ? 'desc' : 'asc';
        set({ sort: col.key, order });
      });
      head.append(button);
    }
  };

  const fetchPage = (page: number): void => {
    const key = `${epoch}:${page}`;
    if (loading.has(key)) return;
    loading.add(key);
    const mine = epoch;
    api
      .items(batchId, {
        offset: page * PAGE,
        limit: PAGE,
        status: query.status,
        error_code: query.error_code,
        q: query.q,
        sort: query.sort,
        order: query.order,
      })
      .then((answer) => {
        if (mine !== epoch) return;
        total = answer.total;
        pages.set(page, answer.items);
        schedule();
      })
      .catch((err: unknown) => {
        if (mine === epoch) count.textContent = `items unavailable: ${String(err)}`;
      })
      .finally(() => loading.delete(key));
  };

  const rowFor = (i: number): ItemRow | undefined => {
    const page = Math.floor(i / PAGE);
    return (pages.get(page) ?? stale.get(page))?.[i % PAGE];
  };

  const draw = (): void => {
    frame = 0;
    if (total === null) {
      fetchPage(0);
      return;
    }
    count.textContent = `${fmtInt(total)} items${query.status || query.error_code || query.q ? ' match' : ''}`;
    spacer.style.height = `${total * ROW_PX}px`;
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_PX) - OVERSCAN);
    const last = Math.min(total, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW_PX) + OVERSCAN);
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last - 1) / PAGE); p++) {
      if (!pages.has(p) && p * PAGE < total) fetchPage(p);
    }
    layer.style.transform = `translateY(${first * ROW_PX}px)`;
    clear(layer);
    for (let i = first; i < last; i++) {
      const item = rowFor(i);
      if (!item) {
        layer.append(h('div', { class: 'row placeholder', role: 'row' }, h('span', {}, '…')));
        continue;
      }
      const row = h('div', {
        class: `row${item.run_id ? ' link' : ''}`,
        role: 'row',
        'data-item-id': item.id,
        'data-status': item.status,
        title: item.run_id ? 'open the run' : 'no run recorded for this item',
      });
      for (const col of COLUMNS) row.append(h('span', { role: 'cell' }, col.cell(item)));
      if (item.run_id) {
        const runId = item.run_id;
        row.addEventListener('click', () => {
          location.hash = href.run(runId);
        });
      }
      layer.append(row);
    }
  };

  const schedule = (): void => {
    if (frame === 0) frame = requestAnimationFrame(draw);
  };

  const restart = (keepRows: boolean): void => {
    epoch += 1;
    stale = keepRows ? pages : new Map();
    pages = new Map();
    if (!keepRows) {
      total = null;
      viewport.scrollTop = 0;
      count.textContent = 'loading…';
    }
    fetchPage(0);
    schedule();
  };

  const set = (change: Partial<ItemsQuery>): void => {
    Object.assign(query, change);
    drawHead();
    restart(false);
  };

  viewport.addEventListener('scroll', schedule, { passive: true });
  drawHead();
  fetchPage(0);
  return { el, set, reload: () => restart(true) };
}
