// Files the server indexed, by id: a text preview of the first 64 KiB, a download link, and the
// workspace patch rendered as a diff.
import { downloadHref, getText, type Artifact, type FileRef } from '../api';
import { clear, fmtBytes, h } from '../dom';

const PREVIEW_BYTES = 65536;

/** Loads the file's first 64 KiB into `target` (as text). */
async function preview(file: FileRef, target: HTMLElement, render: (text: string) => HTMLElement): Promise<void> {
  clear(target);
  target.append(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const { text, truncated } = await getText(file.file_id, PREVIEW_BYTES);
    clear(target);
    target.append(render(text));
    if (truncated) {
      target.append(h('p', { class: 'muted', 'data-testid': 'truncated' }, `Showing the first ${fmtBytes(PREVIEW_BYTES)} of ${fmtBytes(file.size)}; download for the rest.`));
    }
  } catch (err) {
    clear(target);
    target.append(h('p', { class: 'error' }, `preview unavailable: ${String(err)}`));
  }
}

export function download(file: FileRef, name: string): HTMLAnchorElement {
  return h('a', { href: downloadHref(file.file_id), download: name, class: 'button small' }, 'download');
}

/** A text file shown at once (stdout). */
export function textFile(file: FileRef, name: string): HTMLElement {
  const body = h('div', { 'data-testid': `file-${name}` });
  void preview(file, body, (text) => h('pre', { class: 'block' }, text));
  return h('div', {}, h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, fmtBytes(file.size)), download(file, name)), body);
}

export function artifactList(artifacts: Artifact[]): HTMLElement {
  if (artifacts.length === 0) return h('p', { class: 'muted' }, 'No artifacts.');
  return h(
    'ul',
    { class: 'artifacts', 'data-testid': 'artifacts' },
    ...artifacts.map((a) => {
      const head = h('div', { class: 'toolbar' }, h('code', {}, a.name), a.kind ? h('span', { class: 'tag' }, a.kind) : null, h('span', { class: 'muted' }, fmtBytes(a.size)));
      const body = h('div', { class: 'preview' });
      if (a.file_id === null) {
        head.append(h('span', { class: 'muted' }, 'file missing'));
      } else {
        const file = { file_id: a.file_id, size: a.size ?? 0 };
        const show = h('button', { class: 'button small', disabled: !a.text }, a.text ? 'preview' : 'binary');
        show.addEventListener('click', () => void preview(file, body, (text) => h('pre', { class: 'block' }, text)));
        head.append(show, download(file, a.name));
      }
      return h('li', { 'data-artifact': a.name }, head, body);
    }),
  );
}

/** A unified diff: file headers, hunk headers, added and removed lines each styled. */
export function renderDiff(text: string): HTMLElement {
  const out = h('div', { class: 'diff', 'data-testid': 'diff' });
  for (const line of text.split('\n')) {
    let cls = 'ctx';
    if (line.startsWith('diff ') || line.startsWith('+++ ') || line.startsWith('--- ') || line.startsWith('index ') || line.startsWith('new file') || line.startsWith('deleted file')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    out.append(h('div', { class: `line ${cls}` }, line === '' ? ' ' : line));
  }
  return out;
}

export function patch(file: FileRef): HTMLElement {
  const body = h('div');
  void preview(file, body, renderDiff);
  return h('div', {}, h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, fmtBytes(file.size)), download(file, 'workspace.patch')), body);
}
