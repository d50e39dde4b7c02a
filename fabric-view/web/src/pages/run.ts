// Run / invocation: input and output, status and error, usage, the event timeline, the
// conversation, sampled system stats, artifacts, the workspace patch, stdout and health.
import { api, type RunDetail, type RunEvent } from '../api';
import { append, badge, clear, facts, flatten, fmtInt, h, pre, section, summaryFacts } from '../dom';
import { series } from './charts';
import { conversation } from './conversation';
import { artifactList, patch, textFile } from './files';
import type { Page } from '../main';

const SOURCES: Record<string, string> = { atif: 'the Relay ATIF trajectory', model_calls: 'the captured model calls', output: 'the output' };

function timeline(events: RunEvent[]): HTMLElement {
  if (events.length === 0) return h('p', { class: 'muted' }, 'No events.');
  const t0 = events[0].timestamp_millis ?? 0;
  return h(
    'table',
    { class: 'grid', 'data-testid': 'events' },
    h('thead', {}, h('tr', {}, h('th', {}, '+ms'), h('th', {}, 'kind'), h('th', {}, 'message'))),
    h(
      'tbody',
      {},
      ...events.map((e) =>
        h('tr', {}, h('td', { class: 'num' }, e.timestamp_millis === undefined ? '' : String(e.timestamp_millis - t0)), h('td', {}, e.kind ?? ''), h('td', {}, e.message ?? '')),
      ),
    ),
  );
}

/**
 * The summary's measured numbers, with short names: what was observed (`.status`, `.reason`),
 * ids and timestamps are left to the whole summary below.
 */
function statsFacts(summary: Record<string, unknown>): [string, string][] {
  const skip = /(^|\.)(status|reason|source|path|observed_at|started_at|[a-z_]*_id)$/;
  return flatten(summary, '', [], 400)
    .filter(([key]) => !skip.test(key))
    .map(([key, value]): [string, string] => [key.replace(/(^|\.)(system_stats|snapshot|value)(?=\.|$)/g, '').replace(/^\./, ''), value])
    .slice(0, 24);
}

function stats(run: RunDetail): HTMLElement {
  const samples = run.system_stats.samples;
  const t0 = samples[0]?.t_ms ?? 0;
  const ts = samples.map((s) => (s.t_ms - t0) / 1000);
  return h(
    'div',
    { class: 'side-by-side', 'data-testid': 'system-stats' },
    h(
      'div',
      { class: 'charts' },
      series('CPU %', 'percent', ts, samples.map((s) => s.cpu_percent)),
      series('RSS', 'bytes', ts, samples.map((s) => s.rss_bytes)),
    ),
    h(
      'div',
      { class: 'stats-summary' },
      h('h3', {}, 'Summary'),
      ...(run.system_stats.summary
        ? [facts(statsFacts(run.system_stats.summary)), h('details', {}, h('summary', {}, 'the whole summary'), pre(run.system_stats.summary))]
        : [h('p', { class: 'muted' }, 'no summary')]),
    ),
  );
}

function draw(root: HTMLElement, run: RunDetail): void {
  const err = run.error;
  append(
    root,
    h('div', { class: 'title' }, h('h1', {}, run.label || run.id), badge(run.status), h('span', { class: 'tag' }, run.kind)),
    run.problems.length > 0
      ? section(
          'Problems',
          h('ul', { 'data-testid': 'run-problems' }, ...run.problems.map((p) => h('li', { class: 'error' }, `${p.path}: ${p.message}`))),
        )
      : null,
    err
      ? section(
          'Error',
          h(
            'div',
            { class: 'error-box', 'data-testid': 'run-error' },
            facts([
              ['code', h('code', {}, err.code)],
              ['stage', err.stage],
              ['message', err.message],
              ['hint', err.hint ?? (typeof err.metadata?.hint === 'string' ? err.metadata.hint : '')],
              ['retryable', err.retryable ? 'yes' : ''],
            ]),
          ),
        )
      : null,
    h('div', { class: 'side-by-side' }, section('Input', pre(run.input ?? null)), section('Output', pre(run.output ?? null))),
    section('Usage', summaryFacts(run.usage) ?? h('p', { class: 'muted' }, 'no usage reported')),
    section(
      `Conversation (${fmtInt(run.conversation.length)} messages${run.conversation_source ? `, from ${SOURCES[run.conversation_source] ?? run.conversation_source}` : ''})`,
      conversation(run.conversation),
    ),
    section(`Events (${run.events.length})`, timeline(run.events)),
    run.system_stats.samples.length > 0 || run.system_stats.summary ? section('System stats', stats(run)) : null,
    section(`Artifacts (${run.artifacts.length})`, artifactList(run.artifacts)),
    run.patch ? section('Workspace patch', patch(run.patch)) : null,
    run.stdout ? section('stdout', textFile(run.stdout, 'stdout.txt')) : null,
    run.model_calls ? section('Model calls', facts([['records', fmtInt(run.model_calls.count)]])) : null,
    run.health.length > 0 ? section(`Health (${run.health.length})`, ...run.health.map((r) => pre(r))) : null,
    run.invocation ? section('Invocation', h('details', {}, h('summary', {}, 'adapter-invocation.json'), pre(run.invocation))) : null,
    run.result ? section('RunResult', h('details', {}, h('summary', {}, 'the whole RunResult'), pre(run.result))) : null,
  );
}

export function renderRun(root: HTMLElement, id: string): Page {
  const body = h('div', { 'data-testid': 'run' }, h('p', { class: 'muted' }, 'Loading the run…'));
  root.append(body);
  let live = true;
  api
    .run(id)
    .then((run) => {
      if (!live) return;
      clear(body);
      draw(body, run);
    })
    .catch((err: unknown) => {
      if (!live) return;
      clear(body);
      body.append(h('p', { class: 'error' }, `run ${id} unavailable: ${String(err)}`));
    });
  return {
    dispose() {
      live = false;
    },
  };
}
