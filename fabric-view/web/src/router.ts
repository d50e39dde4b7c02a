// Client-side routes: `#/`, `#/batch/ID`, `#/run/ID`, `#/compare/A/B`.

export type Route =
  | { page: 'home' }
  | { page: 'batch'; id: string }
  | { page: 'run'; id: string }
  | { page: 'compare'; a: string; b: string }
  | { page: 'missing'; hash: string };

export function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length === 0) return { page: 'home' };
  if (parts[0] === 'batch' && parts.length === 2) return { page: 'batch', id: parts[1] };
  if (parts[0] === 'run' && parts.length === 2) return { page: 'run', id: parts[1] };
  if (parts[0] === 'compare' && parts.length === 3) return { page: 'compare', a: parts[1], b: parts[2] };
  return { page: 'missing', hash };
}

export const href = {
  home: () => '#/',
  batch: (id: string) => `#/batch/${encodeURIComponent(id)}`,
  run: (id: string) => `#/run/${encodeURIComponent(id)}`,
  compare: (a: string, b: string) => `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`,
};
