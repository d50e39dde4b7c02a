// The client of `fabric view`'s JSON API (docs/view.md, "API"). The token comes from the
// page's `<meta name="fabric-token">` and goes with every request as a bearer token.
// The response types list only the members the page reads; the server may send more.

export interface Counts {
  [status: string]: number;
}

export interface BatchEntry {
  id: string;
  path: string;
  label: string;
  items: number;
  counts: Counts;
  summary: Record<string, unknown> | null;
  running: boolean;
}

export interface RunEntry {
  id: string;
  kind: 'run_result' | 'invocation' | 'batch_item' | string;
  label: string;
  status: string | null;
  runtime_id: string | null;
  invocation_id: string | null;
  /** Milliseconds since the Unix epoch. */
  started_at: number | null;
  duration_ms: number | null;
  path: string;
}

export interface TrajectoryEntry {
  id: string;
  kind: 'atof' | 'atif' | string;
  label: string;
  path: string;
  file_id: string;
  run_id: string | null;
}

export interface GymExportEntry {
  id: string;
  label: string;
  path: string;
  file_id: string;
  records: number | null;
}

export interface Problem {
  path: string;
  message: string;
}

export interface Index {
  generation: number;
  roots: string[];
  batches: BatchEntry[];
  runs: RunEntry[];
  trajectories: TrajectoryEntry[];
  gym_exports: GymExportEntry[];
  problems: Problem[];
  /** The full length of each list: a list holds at most its first 5,000 (by path). */
  totals?: Record<'batches' | 'runs' | 'trajectories' | 'gym_exports' | 'problems', number>;
}

export interface ItemRow {
  row: number;
  id: string;
  status: string;
  attempts: number;
  duration_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  error_code: string | null;
  run_id: string | null;
}

export interface ItemsPage {
  total: number;
  offset: number;
  items: ItemRow[];
}

export interface Bucket {
  le_ms: number | null;
  count: number;
}

export interface BatchStats {
  counts: Counts;
  items_per_second: number | null;
  wall_seconds: number | null;
  latency_ms: { p50: number | null; p90: number | null; p99: number | null } | null;
  /** The last bucket's `le_ms` is null: everything above the one before. */
  latency_histogram: Bucket[];
  usage: Record<string, unknown> | null;
  error_codes: Record<string, number>;
  summary: Record<string, unknown> | null;
}

export interface ErrorInfo {
  code: string;
  stage: string;
  message: string;
  hint?: string | null;
  retryable?: boolean;
  metadata?: Record<string, unknown>;
}

export interface ToolCall {
  id: string | null;
  name: string;
  arguments: unknown;
}

export interface Message {
  role: string;
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string | null;
  model_call?: { latency_ms: number | null; input_tokens: number | null; output_tokens: number | null; model: string | null } | null;
  subagent?: string | null;
  children?: Message[];
}

export interface FileRef {
  file_id: string;
  size: number;
}

export interface Artifact {
  name: string;
  kind: string | null;
  size: number | null;
  /** Null when the file is not there. */
  file_id: string | null;
  text: boolean;
}

export interface Sample {
  t_ms: number;
  cpu_percent: number | null;
  rss_bytes: number | null;
}

export interface RunEvent {
  event_id?: string;
  timestamp_millis?: number;
  kind?: string;
  message?: string;
  metadata?: Record<string, unknown>;
}

export interface RunDetail {
  id: string;
  kind: string;
  label: string;
  status: string | null;
  input: unknown;
  output: unknown;
  error: ErrorInfo | null;
  events: RunEvent[];
  usage: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  invocation: Record<string, unknown> | null;
  conversation: Message[];
  /** Where the conversation came from: `atif`, `model_calls`, `output`. */
  conversation_source: string | null;
  system_stats: { samples: Sample[]; summary: Record<string, unknown> | null };
  artifacts: Artifact[];
  patch: FileRef | null;
  stdout: FileRef | null;
  model_calls: { count: number; file_id: string | null } | null;
  health: unknown[];
  problems: Problem[];
}

export interface CompareSide {
  status: string;
  total_tokens: number | null;
  duration_ms: number | null;
  run_id: string;
}

export interface CompareRow {
  id: string;
  a: CompareSide | null;
  b: CompareSide | null;
}

export interface Compare {
  /** `batches` or `runs`. */
  kind: string;
  a: string;
  b: string;
  rows: CompareRow[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly path: string,
  ) {
    super(`${path}: HTTP ${status}`);
  }
}

export function token(): string {
  const meta = document.querySelector('meta[name="fabric-token"]');
  return meta?.getAttribute('content') ?? '';
}

async function request(path: string): Promise<Response> {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${token()}` } });
  if (!response.ok) throw new ApiError(response.status, path);
  return response;
}

export async function getJSON<T>(path: string): Promise<T> {
  return (await request(path)).json() as Promise<T>;
}

/** A file's first `maxBytes` as text, and whether the server cut it. */
export async function getText(fileId: string, maxBytes = 65536): Promise<{ text: string; truncated: boolean }> {
  const response = await request(`/api/files/${encodeURIComponent(fileId)}?max_bytes=${maxBytes}`);
  return { text: await response.text(), truncated: response.headers.get('X-Fabric-Truncated') === 'true' };
}

/** A download link: a plain navigation cannot send a header, so the token rides in the query. */
export function downloadHref(fileId: string): string {
  return `/api/files/${encodeURIComponent(fileId)}?download=1&token=${encodeURIComponent(token())}`;
}

export function query(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  index: () => getJSON<Index>('/api/index'),
  items: (batch: string, params: Record<string, string | number | null | undefined>) =>
    getJSON<ItemsPage>(`/api/batches/${encodeURIComponent(batch)}/items${query(params)}`),
  stats: (batch: string) => getJSON<BatchStats>(`/api/batches/${encodeURIComponent(batch)}/stats`),
  run: (id: string) => getJSON<RunDetail>(`/api/runs/${encodeURIComponent(id)}`),
  compare: (a: string, b: string) => getJSON<Compare>(`/api/compare${query({ a, b })}`),
};
