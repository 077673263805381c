import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchWake } from '../../../actors/batch-wake.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import type { Json } from '../../helpers/http.ts';

// An accept sends no NOTIFY (PostgreSQL serialises the commits of notifying transactions, so one
// in every accept made each wait for the others' WAL flushes): the accepting server wakes its own
// processors, and processors of other servers find the batch at their next poll.

/** An app whose idle processors look for batches every `pollMs`, with a running execution whose command w1 holds. */
async function appWithClaim(pollMs: number): Promise<{ t: TestApp; id: number; cmd: Json }> {
  const t = await startTestApp({}, { batchPollIntervalMs: pollMs });
  const ex = executionApi(t.url);
  await ex.register(noopPlaybook('wake/one', 1));
  const id = await ex.run('wake/one');
  const pending = await t.deps.db.query<{ command_id: string }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  return { t, id, cmd: await batchApi(t.url).claim(Number(pending.rows[0].command_id), 'w1') };
}

describe('waking batch processors', () => {
  const POLL_MS = 120_000;
  let a: Awaited<ReturnType<typeof appWithClaim>>;
  beforeAll(async () => {
    a = await appWithClaim(POLL_MS);
  });
  afterAll(async () => {
    await a?.t.close();
  });

  it('an idle processor takes a batch its server accepted at once, not at its next poll', async () => {
    const b = batchApi(a.t.url);
    // Its looks at start found nothing: it now sleeps for POLL_MS unless woken.
    await new Promise((ok) => setTimeout(ok, 500));
    const r = await b.post({ execution_id: a.id, worker_id: 'w1', events: commandReport(a.cmd) });
    expect(r.status).toBe(202);
    expect(await b.settled(r.body.request_id, 15_000)).toMatchObject({ state: 'completed' });
  });
});

describe('a batch accepted by another server', () => {
  let a: Awaited<ReturnType<typeof appWithClaim>>;
  beforeAll(async () => {
    a = await appWithClaim(300);
  });
  afterAll(async () => {
    await a?.t.close();
  });

  it('is found by the processors of this one at their poll', async () => {
    const other = await startSecondServer(a.t);
    try {
      const r = await batchApi(other.url).post({ execution_id: a.id, worker_id: 'w1', events: commandReport(a.cmd) });
      expect(r.status).toBe(202);
      expect(await batchApi(a.t.url).settled(r.body.request_id, 15_000)).toMatchObject({ state: 'completed' });
    } finally {
      await other.close();
    }
  });
});

describe('BatchWake', () => {
  it('ends a wait at a wake-up, at its time limit, or at an abort; never sleeps through a wake-up that came before it', async () => {
    const w = new BatchWake();
    const never = new AbortController().signal;
    const seen = w.generation;
    const woken = w.wait(seen, 60_000, never);
    w.wake();
    await woken;
    // A wake-up between reading the generation and waiting: no sleep.
    const t0 = performance.now();
    await w.wait(seen, 60_000, never);
    expect(performance.now() - t0).toBeLessThan(50);
    await w.wait(w.generation, 20, never);
    const abort = new AbortController();
    const aborted = w.wait(w.generation, 60_000, abort.signal);
    abort.abort();
    await aborted;
  });
});
