// Load on two `svc server`s and two `svc worker`s while one worker is SIGSTOPped for 30 s, past
// the reaper's stale threshold, then SIGCONTed: its claims are taken over by the other worker; its
// late reports are refused, never a second completion; every execution finishes; the http target
// is hit at most once per attempt of its command; no gap; no stack trace, no 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StopBed } from './audit-stop-bed.ts';

const bed = new StopBed();
beforeAll(() => bed.open(), 90_000);
afterAll(() => bed.close());

it('loses nothing and does nothing twice when a worker is stopped for 30 s under load', async () => {
  await bed.register('stop/worker');
  const loading = bed.load('stop/worker', 50, 200, [0, 1]);
  await new Promise((r) => setTimeout(r, 3_000));
  process.kill(bed.workers[0].pid, 'SIGSTOP');
  try {
    await new Promise((r) => setTimeout(r, 30_000));
  } finally {
    process.kill(bed.workers[0].pid, 'SIGCONT');
  }
  const { ids, answers } = await loading;
  expect(ids.length).toBe(50);
  expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  const { executions, doubleHits } = await bed.settled('stop/worker', ids);
  const { rows } = await bed.db.query(`SELECT count(*)::int AS n FROM core.event WHERE event_type = 'command.refused'`);
  const { rows: taken } = await bed.db.query(`SELECT count(*)::int AS n FROM core.command WHERE attempt > 1`);
  console.log(`worker stop: ${executions} executions, ${taken[0].n} commands taken over, ${rows[0].n} reports refused, ${doubleHits} double hits`);
  bed.serverLogsClean();
  // Its late reports were refused and it lives on.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(bed.workers[0].output()).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}, 180_000);
