import { http } from './http.ts';

/** One sample of a Prometheus text exposition: its name, labels and value. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comment lines left out). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function metricSum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
}

/** GET /metrics of the server at `url` (with `headers`), parsed; throws unless it answers 200. */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const r = await http(url, 'GET', '/metrics', undefined, headers);
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status} ${JSON.stringify(r.body)}`);
  return parseMetrics(String(r.body));
}
