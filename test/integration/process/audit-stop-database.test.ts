// Load on two `svc server`s and two `svc worker`s while their PostgreSQL is SIGSTOPped for 20 s,
// twice the servers' answer bound (DB_ANSWER_TIMEOUT_MS), then SIGCONTed: clients get 503 with
// Retry-After within the bound, never a hang; every execution accepted finishes; nothing is
// done twice and no event log has a gap; the servers log no stack trace and no 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HANG_MS, StopBed } from './audit-stop-bed.ts';

const bed = new StopBed();
beforeAll(() => bed.open(), 90_000);
afterAll(() => bed.close());

it('loses nothing and does nothing twice when PostgreSQL is stopped for 20 s under load', async () => {
  await bed.register('stop/database');
  const loading = bed.load('stop/database', 50, 200, [0, 1]);
  await new Promise((r) => setTimeout(r, 3_000));
  const pids = await bed.postgresPids();
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    await new Promise((r) => setTimeout(r, 20_000));
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
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
