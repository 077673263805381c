// Load on two `svc server`s and two `svc worker`s while their PostgreSQL is SIGSTOPped for 20 s,
// twice the servers' answer bound (DB_ANSWER_TIMEOUT_MS), then SIGCONTed: clients get 503 with
// Retry-After within the bound, never a hang; every execution accepted finishes; nothing is
// done twice and no event log has a gap; the servers log no stack trace and no 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { HANG_MS, StopBed } from './audit-stop-bed.ts';

const bed = new StopBed();
/** Longest a scrape may take while the database is stopped (the read it skips is bounded at 1 s), in ms. */
const METRICS_SCRAPE_MAX_MS = 3_000;
beforeAll(() => bed.open(), 90_000);
afterAll(() => bed.close());

it('loses nothing and does nothing twice when PostgreSQL is stopped for 20 s under load', async () => {
  await bed.register('stop/database');
  const loading = bed.load('stop/database', 50, 200, [0, 1]);
  await new Promise((r) => setTimeout(r, 3_000));
  const pids = await bed.freezePostgres();
  // What the health route says meanwhile: the bus rides on the database, and its LISTEN connection
  // fails its check within LISTEN_CHECK_INTERVAL_MS + LISTEN_CHECK_TIMEOUT_MS (15 s).
  // And a Prometheus scrape: answered at once from what the server knows (a scrape that waits for
  // the database fails Prometheus's 10 s timeout, and the outage is then what goes unseen).
  const health: { status: number; bus?: string }[] = [];
  const scrapes: { status: number; ms: number }[] = [];
  try {
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      const r = await http(bed.servers[0].base, 'GET', '/api/health').catch(() => undefined);
      if (r) health.push({ status: r.status, bus: r.body?.bus });
      const t0 = Date.now();
      const m = await fetch(`${bed.servers[1].base}/metrics`).catch(() => undefined);
      scrapes.push({ status: m?.status ?? 0, ms: Date.now() - t0 });
      await m?.text();
      await new Promise((ok) => setTimeout(ok, 500));
    }
  } finally {
    bed.thawPostgres(pids);
  }
  expect(health.every((h) => h.status === 503), JSON.stringify(health)).toBe(true);
  expect(health.at(-1)?.bus, JSON.stringify(health)).toBe('disconnected');
  expect(scrapes.every((m) => m.status === 200 && m.ms < METRICS_SCRAPE_MAX_MS), JSON.stringify(scrapes)).toBe(true);
  const { ids, answers } = await loading;
  expect(ids.length).toBe(50);
  const refused = answers.filter((a) => a.status !== 200);
  expect(refused.length, 'some starts met the stopped database').toBeGreaterThan(0);
  for (const a of refused) {
    expect(a.status, JSON.stringify(a)).toBe(503);
    expect(a.retryAfter).toMatch(/^\d+$/);
    expect(a.ms).toBeLessThan(HANG_MS);
  }
  const { executions, doubleHits } = await bed.settled('stop/database', ids);
  console.log(`database stop: ${executions} executions, ${refused.length} answers 503 (longest ${Math.max(...refused.map((a) => a.ms))} ms), ${doubleHits} double hits`);
  bed.serverLogsClean();
}, 180_000);
