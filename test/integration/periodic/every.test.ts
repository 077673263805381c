// The one runner of periodic work: no overlap, stop waits, a failure is counted and the next run
// still comes, and a lease (the real core.runtime row) lets one of two servers run per interval.
import { setTimeout as delay } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics, type Metrics } from '../../../src/metrics.ts';
import { every, once, type PeriodicDeps } from '../../../src/periodic/every.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { until } from '../../helpers/until.ts';

let t: TestDatabase & { db: Db };
let second: Db;
beforeAll(async () => {
  t = await createMigratedDatabase();
  second = new Db(t.url, 2);
});
afterAll(async () => {
  await second?.close();
  await t?.drop();
});

/** A server's deps on `db`: its own metrics and a log whose lines are kept. */
function server(db: Db): PeriodicDeps & { lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { db, log: createLogger('info', sink), metrics: createMetrics(), lines };
}

async function runs(metrics: Metrics, name: string, outcome: string): Promise<number> {
  return (await metrics.periodicRuns.get()).values.find((v) => v.labels.name === name && v.labels.outcome === outcome)?.value ?? 0;
}

describe('every', () => {
  it('never runs twice at once: the next run starts an interval after the previous ended', async () => {
    const deps = server(t.db);
    const spans: { start: number; end: number }[] = [];
    let inFlight = 0;
    let most = 0;
    const job = every(deps, { name: 'slow', intervalMs: 20, firstDelayMs: 0 }, async () => {
      const start = performance.now();
      most = Math.max(most, ++inFlight);
      await delay(100); // five intervals long
      inFlight--;
      spans.push({ start, end: performance.now() });
    });
    await until('four runs', () => spans.length >= 4, 10_000);
    await job.stop();
    expect(most).toBe(1);
    for (let i = 1; i < spans.length; i++) expect(spans[i].start - spans[i - 1].end).toBeGreaterThanOrEqual(19); // timers may fire a hair early
    expect(await runs(deps.metrics, 'slow', 'ok')).toBe(spans.length);
    expect((await deps.metrics.periodicRunSeconds.get()).values.find((v) => v.metricName === 'svc_periodic_run_seconds_count' && v.labels.name === 'slow')?.value).toBe(spans.length);
  });

  it('stop() waits for the run in flight and no run starts after it', async () => {
    const deps = server(t.db);
    let started = 0;
    let release!: () => void;
    const job = every(deps, { name: 'held', intervalMs: 10, firstDelayMs: 0 }, async () => {
      started++;
      await new Promise<void>((r) => (release = r));
    });
    await until('the first run', () => started === 1);
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await delay(50);
    expect(stopped).toBe(false);
    release();
    await stopping;
    await delay(50);
    expect(started).toBe(1);
    expect(await runs(deps.metrics, 'held', 'ok')).toBe(1);
  });

  it('stop() aborts a run that heeds its signal, which then counts as neither ok nor failed', async () => {
    const deps = server(t.db);
    let started = false;
    const job = once(deps, { name: 'waiting' }, async (signal) => {
      started = true;
      await delay(60_000, undefined, { signal });
    });
    await until('the run', () => started);
    const t0 = performance.now();
    await job.stop();
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect((await deps.metrics.periodicRuns.get()).values.filter((v) => v.labels.name === 'waiting')).toEqual([]);
    expect(deps.lines.join('')).not.toContain('periodic waiting failed');
  });

  it('logs and counts a failing run, and the next run still comes', async () => {
    const deps = server(t.db);
    let n = 0;
    const job = every(deps, { name: 'flaky', intervalMs: 10, firstDelayMs: 0 }, async () => {
      if (++n === 1) throw new Error('the first run fails');
    });
    await until('a run after the failure', () => n >= 3);
    await job.stop();
    expect(await runs(deps.metrics, 'flaky', 'failed')).toBe(1);
    expect(await runs(deps.metrics, 'flaky', 'ok')).toBe(n - 1);
    const failed = deps.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'periodic flaky failed');
    expect(failed).toMatchObject({ level: 40, periodic: 'flaky', err: 'the first run fails' });
  });

  it('with a lease, one of two servers runs per interval, never both at once', async () => {
    const intervalMs = 500;
    const a = server(t.db);
    const b = server(second);
    const starts: { at: number; by: string }[] = [];
    let inFlight = 0;
    let most = 0;
    const work = (by: string) => async () => {
      starts.push({ at: performance.now(), by });
      most = Math.max(most, ++inFlight);
      await delay(50);
      inFlight--;
    };
    const spec = { name: 'leased', intervalMs, firstDelayMs: 0, lease: { ttlSeconds: 30 } };
    const jobs = [every(a, spec, work('a')), every(b, spec, work('b'))];
    await delay(intervalMs * 4.5);
    await Promise.all(jobs.map((j) => j.stop()));
    expect(most).toBe(1);
    // Both tried at each tick; the lease let through about one run per interval, 10 % early at most.
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(starts.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < starts.length; i++) expect(starts[i].at - starts[i - 1].at).toBeGreaterThanOrEqual(intervalMs * 0.9 - 50);
    const skipped = (await runs(a.metrics, 'leased', 'skipped')) + (await runs(b.metrics, 'leased', 'skipped'));
    const ran = (await runs(a.metrics, 'leased', 'ok')) + (await runs(b.metrics, 'leased', 'ok'));
    expect(ran).toBe(starts.length);
    expect(skipped).toBeGreaterThanOrEqual(1);
    // The lease is given back after each run.
    const { rows } = await t.db.query<{ status: string }>(`SELECT status FROM core.runtime WHERE kind = 'lease' AND name = 'leased'`);
    expect(rows).toEqual([{ status: 'ready' }]);
  });
});
