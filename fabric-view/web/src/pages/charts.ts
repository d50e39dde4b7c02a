// uPlot charts: the batch's latency histogram (bars) and a run's sampled CPU and memory.
// Each chart's container carries `data-points` (the number of plotted points), which the
// browser tests read.
import uPlot from 'uplot';
import type { Bucket } from '../api';
import { fmtBytes, h } from '../dom';

const WIDTH = 560;
const HEIGHT = 220;

function mount(title: string, points: number, build: (el: HTMLElement) => uPlot): HTMLElement {
  const el = h('div', { class: 'chart', 'data-chart': title, 'data-points': points });
  if (points === 0) {
    el.append(h('p', { class: 'muted' }, `${title}: no samples`));
    return el;
  }
  // uPlot measures fonts and sizes once attached; build after the element is in the page.
  requestAnimationFrame(() => {
    if (el.isConnected) build(el);
  });
  return el;
}

/** Bars of item counts per latency bucket (`le_ms` is the bucket's upper bound; null: above the last). */
export function histogram(all: Bucket[]): HTMLElement {
  // Empty buckets at either end say nothing: keep the span that has items.
  const first = all.findIndex((b) => b.count > 0);
  const last = all.length - 1 - [...all].reverse().findIndex((b) => b.count > 0);
  const buckets = first < 0 ? [] : all.slice(first, last + 1);
  const xs = buckets.map((_, i) => i);
  const bound = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${ms}ms`);
  const labels = buckets.map((b, i) => {
    const before = all[first + i - 1]?.le_ms;
    return b.le_ms !== null ? `≤${bound(b.le_ms)}` : `>${bound(before ?? 0)}`;
  });
  return mount('latency histogram', buckets.length, (el) => {
    const opts: uPlot.Options = {
      title: 'Latency (items per bucket)',
      width: WIDTH,
      height: HEIGHT,
      legend: { show: false },
      scales: { x: { time: false, range: [-0.5, Math.max(buckets.length - 0.5, 0.5)] } },
      axes: [
        { splits: () => xs, values: (_u, splits) => splits.map((s) => labels[s] ?? ''), space: 20, rotate: buckets.length > 8 ? -45 : 0, size: buckets.length > 8 ? 60 : 40 },
        { size: 60 },
      ],
      series: [{}, { label: 'items', fill: 'rgba(52, 120, 198, 0.6)', stroke: '#3478c6', paths: uPlot.paths.bars?.({ size: [0.8, 64] }), points: { show: false } }],
    };
    return new uPlot(opts, [xs, buckets.map((b) => b.count)], el);
  });
}

/** One line over the samples' time axis (seconds since the first sample). */
export function series(title: string, unit: 'percent' | 'bytes', ts: number[], values: (number | null)[]): HTMLElement {
  return mount(title, values.filter((v) => v !== null).length, (el) => {
    const opts: uPlot.Options = {
      title,
      width: WIDTH,
      height: HEIGHT,
      scales: { x: { time: false } },
      axes: [
        { label: 's' },
        { values: (_u, splits) => splits.map((v) => (unit === 'bytes' ? fmtBytes(v) : `${v}%`)), size: 70 },
      ],
      series: [{ label: 't' }, { label: title, stroke: unit === 'bytes' ? '#9b4dca' : '#d9822b', width: 2, spanGaps: true }],
    };
    return new uPlot(opts, [ts, values], el);
  });
}
