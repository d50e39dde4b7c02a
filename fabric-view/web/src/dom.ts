// DOM helpers. Every piece of data reaches the page as a text node (textContent); nothing here
// parses markup, and the server's Content-Security-Policy forbids inline script anyway.

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** Makes an element: `attrs` keys starting with `on` are listeners, others attributes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      el.className = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** A `<section>` with a heading. */
export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children);
}

/** A definition list of label/value pairs; empty values are left out. */
export function facts(pairs: [string, Child][]): HTMLElement {
  const dl = h('dl', { class: 'facts' });
  for (const [label, value] of pairs) {
    if (value === null || value === undefined || value === '') continue;
    append(dl, h('dt', {}, label), h('dd', {}, value));
  }
  return dl;
}

/** A `<pre>` holding text (JSON values are pretty printed). */
export function pre(value: unknown, cls = ''): HTMLElement {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return h('pre', { class: `block ${cls}`.trim() }, text ?? '');
}

export function badge(status: string | null | undefined): HTMLElement {
  const s = status ?? 'unknown';
  return h('span', { class: `badge status-${s.replace(/[^a-z_]/g, '')}` }, s);
}

export function link(href: string, text: Child, attrs: Attrs = {}): HTMLAnchorElement {
  return h('a', { href, ...attrs }, text);
}

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '' : Math.round(n).toLocaleString('en-US');
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Flattens an object's scalar members into dotted paths (for summaries). */
export function flatten(value: unknown, prefix = '', out: [string, string][] = [], limit = 80): [string, string][] {
  if (out.length >= limit) return out;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      flatten(v, prefix ? `${prefix}.${k}` : k, out, limit);
    }
  } else if (Array.isArray(value)) {
    out.push([prefix, `[${value.length} items]`]);
  } else if (value !== null && value !== undefined) {
    out.push([prefix, typeof value === 'number' ? (Number.isInteger(value) ? fmtInt(value) : value.toFixed(3)) : String(value)]);
  }
  return out;
}

/** A facts list of an object's flattened scalars, or nothing for null. */
export function summaryFacts(value: unknown): HTMLElement | null {
  if (value === null || value === undefined) return null;
  return facts(flatten(value));
}
