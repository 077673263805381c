import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// A pool whose commands are quick also holds claimed commands waiting for a slot (prefetch); it
// never runs more than its concurrency at once, and does not hold on to slow commands.

const CONCURRENCY = 2;
const SLOW_MS = 400;

let s: TestStack;
let target: HttpTarget;
let db: pg.Client;
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    if (!req.url?.startsWith('/slow')) return;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, SLOW_MS));
    inFlight--;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  s = await startTestStack({ workers: 1, concurrency: CONCURRENCY });
  db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
  await s.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: quick, path: pf/quick }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n');
  await s.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: slow, path: pf/slow }\nworkflow:\n  - step: s\n    tool: { name: t, kind: http, method: GET, url: "${target.url}/slow" }\n`);
});
afterAll(async () => {
  await db?.end();
  await s?.close();
  await target?.close();
});

describe('worker prefetch', () => {
  it('runs quick commands to the end, then slow ones never more than its concurrency at once and without hoarding them', async () => {
    const quick = await Promise.all(Array.from({ length: 12 }, () => s.run('pf/quick')));
    for (const id of quick) expect((await s.wait(id)).status).toBe('completed');
    const slow = await Promise.all(Array.from({ length: 8 }, () => s.run('pf/slow')));
    // Once two slow commands have finished, the pool's running average says "slow": from then on
    // it holds only what it runs (claimed or running), never commands waiting behind slow ones.
    const held: number[] = [];
    let finished = 0;
    while (finished < slow.length) {
      const { rows } = await db.query(
        `SELECT count(*) FILTER (WHERE status IN ('CLAIMED', 'RUNNING'))::int AS held, count(*) FILTER (WHERE status = 'COMPLETED')::int AS done
           FROM core.command WHERE execution_id = ANY($1::bigint[])`,
        [slow],
      );
      finished = rows[0].done;
      if (finished >= 3) held.push(rows[0].held);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const id of slow) expect((await s.wait(id)).status).toBe('completed');
    expect(maxInFlight).toBe(CONCURRENCY);
    expect(held.length).toBeGreaterThan(0);
    expect(Math.max(...held)).toBeLessThanOrEqual(CONCURRENCY);
  });
});
