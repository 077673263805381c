// Load on two `svc server`s and two `svc worker`s (one on each) while one server is SIGSTOPped for
// 40 s, longer than its worker's answer timeout (WORKER_ANSWER_TIMEOUT_MS) beyond its claim wait,
// then SIGCONTed: every execution accepted by the other finishes; a command the stopped server's
// worker held is taken over and done once; no event log has a gap; no stack trace, no 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StopBed } from './audit-stop-bed.ts';

const bed = new StopBed();
beforeAll(() => bed.open(), 90_000);
afterAll(() => bed.close());

it('loses nothing and does nothing twice when a server is stopped for 40 s under load', async () => {
  await bed.register('stop/server');
  const loading = bed.load('stop/server', 50, 300, [0]);
  await new Promise((r) => setTimeout(r, 3_000));
  bed.servers[1].proc.kill('SIGSTOP');
  try {
    await new Promise((r) => setTimeout(r, 40_000));
  } finally {
    bed.servers[1].proc.kill('SIGCONT');
  }
  const { ids, answers } = await loading;
  expect(ids.length).toBe(50);
  expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  const { executions, doubleHits } = await bed.settled('stop/server', ids);
  console.log(`server stop: ${executions} executions, ${doubleHits} double hits`);
  bed.serverLogsClean();
}, 180_000);
