import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { notifyChannelSql } from 'pg-boss/dist/plans.js';
import { BATCH_QUEUE, ensureBatchQueue, wakeBatchProcessors } from '../../../actors/batch-queue.ts';
import { loadConfig } from '../../../src/config.ts';
import { BOSS_SCHEMA, jobInsertCte, startBoss, stopBoss, type PgBoss } from '../../../src/jobs/boss.ts';
import { createLogger } from '../../../src/log.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { until } from '../../helpers/until.ts';

// An accept sends no NOTIFY (PostgreSQL serialises the commits of notifying transactions, so
// one in every accept made each wait for the others' WAL flushes); the accepting server wakes its
// own processors instead.

/** A LISTEN on pg-boss's channel: the payloads heard (queue names). */
async function listenToBoss(url: string): Promise<{ heard: string[]; end(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const heard: string[] = [];
  c.on('notification', (n) => heard.push(n.payload ?? ''));
  const channel = (await c.query<{ c: string }>(`SELECT ${notifyChannelSql(BOSS_SCHEMA)} AS c`)).rows[0].c;
  await c.query(`LISTEN "${channel}"`);
  return { heard, end: () => c.end() };
}

describe('waking batch processors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '10' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an accepted batch is processed though its accept sent no NOTIFY', async () => {
    const ex = executionApi(t.url);
    const b = batchApi(t.url);
    await ex.register(noopPlaybook('wake/one', 1));
    const id = await ex.run('wake/one');
    const pending = await t.deps.db.query<{ command_id: string }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
    const cmd = await b.claim(Number(pending.rows[0].command_id), 'w1');
    const listener = await listenToBoss(t.databaseUrl);
    try {
      const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      expect(r.status).toBe(202);
      expect(await b.settled(r.body.request_id)).toMatchObject({ state: 'completed' });
      expect(listener.heard.filter((q) => q === BATCH_QUEUE)).toEqual([]);
    } finally {
      await listener.end();
    }
  });
});

describe('wakeBatchProcessors', () => {
  let d: TestDatabase;
  let boss: PgBoss;
  beforeAll(async () => {
    d = await createTestDatabase();
    boss = await startBoss(d.url, createLogger('silent'));
    await ensureBatchQueue(boss, loadConfig({}));
  });
  afterAll(async () => {
    if (boss) await stopBoss(boss);
    await d?.drop();
  });

  it('makes an idle processor fetch a job sent without a NOTIFY at once, not at its next poll', async () => {
    const POLL_SECONDS = 120;
    const handled: unknown[] = [];
    let fetched = 0;
    await boss.work(BATCH_QUEUE, { pollingIntervalSeconds: POLL_SECONDS, notifyPollingIntervalSeconds: POLL_SECONDS }, async ([job]) => {
      handled.push(job.data);
    });
    // Its first fetch (at start) found nothing: it now sleeps for POLL_SECONDS.
    await until('the first fetch', async () => (fetched = boss.getWipData().filter((w) => w.name === BATCH_QUEUE && w.lastFetchedOn).length) > 0, 10_000);
    expect(fetched).toBe(1);
    const listener = await listenToBoss(d.url);
    const db = new pg.Client({ connectionString: d.url });
    await db.connect();
    try {
      // The accept statement's own job insert.
      const cte = await jobInsertCte(boss, BATCH_QUEUE, `'[{"data": {"execution_id": 7}, "singletonKey": "7"}]'::json`);
      await db.query(`WITH ${cte} SELECT 1`);
      await new Promise((ok) => setTimeout(ok, 300));
      expect(handled).toEqual([]);
      wakeBatchProcessors(boss);
      await until('the job handled', () => handled.length > 0, 10_000);
      expect(handled).toEqual([{ execution_id: 7 }]);
      expect(listener.heard).toEqual([]);
    } finally {
      await db.end();
      await listener.end();
    }
  });
});
