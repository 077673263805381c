import pg from 'pg';
import { median, quantile, round } from './stats.ts';

const BASELINE_TABLE = 'bench_commit_baseline';

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

async function prepareTable(url: string): Promise<void> {
  const c = await connect(url);
  try {
    await c.query(`CREATE TABLE IF NOT EXISTS public.${BASELINE_TABLE} (id bigserial PRIMARY KEY, worker int NOT NULL, n int NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
    await c.query(`TRUNCATE public.${BASELINE_TABLE}`);
  } finally {
    await c.end();
  }
}

export type CommitLatency = { commits: number; msPerCommit: number; p50Ms: number; p90Ms: number; totalMs: number };

/**
 * pgbench-like: `commits` single-row INSERTs in autocommit on one connection, one after another.
 * Each costs one round trip and one WAL flush: the floor of anything that commits once per step.
 */
export async function commitLatency(url: string, commits: number): Promise<CommitLatency> {
  await prepareTable(url);
  const c = await connect(url);
  try {
    const insert = { name: 'bench_insert', text: `INSERT INTO public.${BASELINE_TABLE} (worker, n) VALUES ($1, $2)` };
    for (let i = 0; i < 50; i++) await c.query({ ...insert, values: [0, -i] }); // warm-up
    const each: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < commits; i++) {
      const s = performance.now();
      await c.query({ ...insert, values: [0, i] });
      each.push(performance.now() - s);
    }
    const totalMs = performance.now() - t0;
    return { commits, msPerCommit: round(totalMs / commits, 4), p50Ms: round(median(each), 4), p90Ms: round(quantile(each, 0.9), 4), totalMs: round(totalMs, 1) };
  } finally {
    await c.end();
  }
}

export type CommitThroughput = { connections: number; seconds: number; commits: number; commitsPerSecond: number };

/** Single-row INSERT commits per second with `connections` connections inserting in parallel for `durationMs`. */
export async function commitThroughput(url: string, connections: number, durationMs: number): Promise<CommitThroughput> {
  await prepareTable(url);
  const clients = await Promise.all(Array.from({ length: connections }, () => connect(url)));
  try {
    const insert = { name: 'bench_insert', text: `INSERT INTO public.${BASELINE_TABLE} (worker, n) VALUES ($1, $2)` };
    await Promise.all(clients.map(async (c, w) => {
      for (let i = 0; i < 20; i++) await c.query({ ...insert, values: [w, -i] });
    }));
    const t0 = performance.now();
    const until = t0 + durationMs;
    const counts = await Promise.all(
      clients.map(async (c, w) => {
        let n = 0;
        while (performance.now() < until) await c.query({ ...insert, values: [w, n++] });
        return n;
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const commits = counts.reduce((a, b) => a + b, 0);
    return { connections, seconds: round(seconds, 2), commits, commitsPerSecond: round(commits / seconds, 0) };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}
