// Home: the batches, runs, trajectories and problems the server indexed; pick two batches or
// two runs to compare them.
import type { Index } from '../api';
import { append, badge, clear, fmtInt, fmtMs, h, link, section, type Child } from '../dom';
import { href } from '../router';
import { download } from './files';
import type { Page } from '../main';

const selected = new Set<string>();

function table(headers: string[], rows: Child[][], testid: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted', 'data-testid': testid }, 'None found.');
  return h(
    'table',
    { class: 'grid', 'data-testid': testid },
    h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', {}, t)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((c) => h('td', {}, c))))),
  );
}

function counts(c: Record<string, number>): string {
  return Object.entries(c)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${fmtInt(n)}`)
    .join(' · ');
}

/** "Runs (12)", or "Runs (5,000 of 12,345)" when the server listed only the first ones. */
function heading(title: string, index: Index, kind: keyof NonNullable<Index['totals']>): string {
  const shown = index[kind].length;
  const total = index.totals?.[kind] ?? shown;
  return total > shown ? `${title} (${fmtInt(shown)} of ${fmtInt(total)})` : `${title} (${fmtInt(shown)})`;
}

export function renderHome(root: HTMLElement, first: Index): Page {
  const body = h('div');
  root.append(body);

  const draw = (index: Index): void => {
    clear(body);
    const kinds = new Map<string, string>();
    index.batches.forEach((b) => kinds.set(b.id, 'batch'));
    index.runs.forEach((r) => kinds.set(r.id, 'run'));
    for (const id of [...selected]) if (!kinds.has(id)) selected.delete(id);

    const compare = h('a', { class: 'button', 'data-testid': 'compare-button' }, 'Compare the two selected');
    const note = h('span', { class: 'muted' });
    const update = (): void => {
      const ids = [...selected];
      const ok = ids.length === 2 && kinds.get(ids[0]) === kinds.get(ids[1]);
      compare.classList.toggle('disabled', !ok);
      if (ok) compare.setAttribute('href', href.compare(ids[0], ids[1]));
      else compare.removeAttribute('href');
      note.textContent = ok ? '' : 'select two batches or two runs';
    };
    const pick = (id: string): HTMLInputElement => {
      const box = h('input', { type: 'checkbox', 'data-select': id, 'aria-label': `select ${id}` });
      box.checked = selected.has(id);
      box.addEventListener('change', () => {
        if (box.checked) selected.add(id);
        else selected.delete(id);
        update();
      });
      return box;
    };
    update();

    append(
      body,
      h('div', { class: 'toolbar' }, compare, note),
      section(
        heading('Batches', index, 'batches'),
        table(
          ['', 'batch', 'items', 'status counts', ''],
          index.batches.map((b) => [
            pick(b.id),
            link(href.batch(b.id), b.label || b.path, { title: b.path }),
            fmtInt(b.items),
            counts(b.counts),
            b.running ? badge('running') : '',
          ]),
          'batches',
        ),
      ),
      section(
        heading('Runs', index, 'runs'),
        table(
          ['', 'run', 'kind', 'status', 'started', 'duration'],
          index.runs.map((r) => [
            pick(r.id),
            link(href.run(r.id), r.label || r.path, { title: r.path }),
            r.kind,
            badge(r.status),
            r.started_at === null ? '' : new Date(r.started_at).toISOString().replace('T', ' ').slice(0, 19),
            fmtMs(r.duration_ms),
          ]),
          'runs',
        ),
      ),
      section(
        heading('Trajectories', index, 'trajectories'),
        table(
          ['trajectory', 'kind', 'run', ''],
          index.trajectories.map((t) => [
            h('span', { title: t.path }, t.label),
            t.kind,
            t.run_id ? link(href.run(t.run_id), t.run_id) : '',
            download({ file_id: t.file_id, size: 0 }, t.label),
          ]),
          'trajectories',
        ),
      ),
      index.gym_exports.length > 0
        ? section(
            heading('Gym exports', index, 'gym_exports'),
            table(
              ['export', 'records', ''],
              index.gym_exports.map((g) => [h('span', { title: g.path }, g.label), fmtInt(g.records), download({ file_id: g.file_id, size: 0 }, g.label)]),
              'gym-exports',
            ),
          )
        : null,
      section(
        heading('Problems', index, 'problems'),
        table(['path', 'message'], index.problems.map((p) => [p.path, p.message]), 'problems'),
      ),
      h('p', { class: 'muted' }, `Roots: ${index.roots.join(', ')}`),
    );
  };

  draw(first);
  return { refresh: draw };
}
