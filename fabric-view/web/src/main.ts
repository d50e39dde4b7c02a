// `fabric view`'s page: routes on the location hash, polls the index every 2 s so new files
// and a running batch's progress show without a reload.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api, ApiError, type Index } from './api';
import { clear, h } from './dom';
import { parse, href } from './router';
import { renderHome } from './pages/home';
import { renderBatch } from './pages/batch';
import { renderRun } from './pages/run';
import { renderCompare } from './pages/compare';

/** What a page gives back: called when the index changes, and when the page is left. */
export interface Page {
  refresh?(index: Index): void;
  dispose?(): void;
}

const POLL_MS = 2000;
let index: Index | null = null;
let current: Page = {};
const main = h('main', { id: 'page' });
const status = h('span', { class: 'poll', 'data-testid': 'poll-status' });

function show(): void {
  current.dispose?.();
  current = {};
  clear(main);
  if (!index) {
    main.append(h('p', { class: 'muted' }, 'Loading the index…'));
    return;
  }
  const route = parse(location.hash);
  switch (route.page) {
    case 'home':
      current = renderHome(main, index);
      break;
    case 'batch':
      current = renderBatch(main, route.id, index);
      break;
    case 'run':
      current = renderRun(main, route.id);
      break;
    case 'compare':
      current = renderCompare(main, route.a, route.b, index);
      break;
    default:
      main.append(h('p', { class: 'error' }, `No page at ${route.hash}`));
  }
  window.scrollTo(0, 0);
}

async function poll(): Promise<void> {
  try {
    const next = await api.index();
    status.textContent = `index generation ${next.generation}`;
    status.classList.remove('error');
    const first = index === null;
    const changed = !first && next.generation !== index?.generation;
    index = next;
    if (first) show();
    else if (changed) current.refresh?.(next);
  } catch (err) {
    status.textContent = err instanceof ApiError && err.status === 401 ? 'token refused (401)' : `index unavailable: ${String(err)}`;
    status.classList.add('error');
  } finally {
    window.setTimeout(() => void poll(), POLL_MS);
  }
}

document.body.append(
  h('header', { class: 'top' }, h('a', { href: href.home(), class: 'brand' }, 'fabric view'), status),
  main,
);
window.addEventListener('hashchange', show);
show();
void poll();
