// A `playbook` task's own timer says what it is for in its core.wait row (`purpose`: for, task,
// attempt), written with the row, so GET /api/executions/{id} shows it without reading the
// execution's log back to the timer's timer.set, however many events came after it; and a
// database whose timer rows were written before the column has them filled by its migration.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { getExecutionWithRetryLinks } from '../../../src/db/execution-view.repo.ts';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

/** How many loop items the sibling branch runs after the timer was set: each appends a few events. */
const BUSY_ITEMS = 150;

describe('a task timer\'s wait row', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ concurrency: 16 });
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: sleeper, path: purpose/sleeper }
workflow:
  - step: start
    wait: { for: 1h }
`);
    // One branch runs a child under a day's timeout; the other appends many events to the same log after it.
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: guarded, path: purpose/guarded }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: guarded }, { step: busy } ] }
  - step: guarded
    tool: { name: kid, kind: playbook, path: purpose/sleeper, timeout_seconds: 86400 }
  - step: busy
    loop: { in: "{{ workload.items }}", iterator: item, mode: parallel, max_in_flight: 16 }
    tool: { name: n, kind: noop }
`);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('carries its purpose, and the view shows it after many events followed its timer.set', async () => {
    const id = await s.run('purpose/guarded', { items: Array.from({ length: BUSY_ITEMS }, (_, i) => i) });
    const events = await until('the busy branch ends', async () => {
      const ev = (await s.events(id)) as Json[];
      return ev.some((e) => e.event_type === 'loop.done') ? ev : undefined;
    }, 30_000);
    const set = events.find((e) => e.event_type === 'timer.set');
    expect(set?.context).toMatchObject({ for: 'timeout', task: 'kid', attempt: 1 });
    expect(events.filter((e) => e.event_id > set!.event_id).length).toBeGreaterThan(BUSY_ITEMS * 2);

    const rows = (await s.deps.db.query(`SELECT seq, kind, purpose FROM core.wait WHERE execution_id = $1`, [id])).rows;
    expect(rows).toEqual([{ seq: set!.context.seq, kind: 'timer', purpose: { for: 'timeout', task: 'kid', attempt: 1 } }]);
    const view = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
    expect(view.waits).toEqual([
      { step: 'guarded', seq: set!.context.seq, kind: 'timer', signal: null, wake_at: set!.context.wake_at, approval_roles: null, since: expect.any(String), for: 'timeout', task: 'kid', attempt: 1 },
    ]);

    // The child's own timer is a step's wait: no purpose in its row, none in its view.
    const child = events.find((e) => e.event_type === 'child.started')!.context.child_execution_id as number;
    const childRows = await until('the child waits', async () => {
      const r = (await s.deps.db.query(`SELECT kind, purpose FROM core.wait WHERE execution_id = $1`, [child])).rows;
      return r.length ? r : undefined;
    });
    expect(childRows).toEqual([{ kind: 'timer', purpose: null }]);
    expect((await http(s.url, 'GET', `/api/executions/${child}`)).body.waits[0]).not.toHaveProperty('for');
    await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done looking' });
  });
});

describe('the migration that adds the purpose', () => {
  let database: TestDatabase;
  let older: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    older = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
  });
  afterAll(async () => {
    await database?.drop();
    await rm(older, { recursive: true, force: true });
  });

  it('fills it for the timer rows written before it from their timer.set; a step\'s timer and a signal wait get none', async () => {
    const files = await readdir(MIGRATIONS_DIR);
    const adding = files.find((f) => /^\d{4}_wait_purpose\.sql$/.test(f));
    expect(adding, 'the migration adding core.wait.purpose').toBeDefined();
    for (const f of files) if (/^\d{4}_.+\.sql$/.test(f) && f < adding!) await copyFile(join(MIGRATIONS_DIR, f), join(older, f));
    const db = new Db(database.url, 2);
    try {
      await migrate(db, older);
      // An execution as the code before the column wrote it: a task timer (its seq's timer.set set
      // it again for a later attempt: the newest counts), a step's timer, a signal wait, and many
      // events after them.
      const catalog = (await db.query<{ catalog_id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('purpose/old', 1, '', '{}') RETURNING catalog_id`)).rows[0].catalog_id;
      const id = 7001;
      const log: [string, object][] = [
        ['execution.started', {}],
        ['timer.set', { seq: 1, wake_at: '2030-01-01T00:00:00.000Z', task: 'kid', for: 'retry', attempt: 2 }],
        ['timer.set', { seq: 1, wake_at: '2030-01-02T00:00:00.000Z', task: 'kid', for: 'timeout', attempt: 3 }],
        ['timer.set', { seq: 2, wake_at: '2030-01-01T00:00:00.000Z' }],
        ['signal.awaited', { seq: 3, signal: 'go', timeout_at: null, approval_roles: null }],
        ...Array.from({ length: 200 }, (_, i): [string, object] => ['command.issued', { seq: 100 + i }]),
      ];
      await db.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, last_event_id, applied_event_id) VALUES ($1, $2, 'purpose/old', $1, $3, $3)`, [id, catalog, log.length]);
      await db.query(
        `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context)
         SELECT $1, n, $2, x->>0, 'running', x->1 FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(x, n)`,
        [id, catalog, JSON.stringify(log)],
      );
      await db.query(
        `INSERT INTO core.wait (execution_id, seq, step, kind, signal, wake_at) VALUES
           ($1, 1, 'guarded', 'timer', NULL, '2030-01-02T00:00:00Z'), ($1, 2, 'pause', 'timer', NULL, '2030-01-01T00:00:00Z'), ($1, 3, 'approve', 'signal', 'go', NULL)`,
        [id],
      );

      expect((await migrate(db)).applied).toContain(adding);
      expect((await db.query(`SELECT seq, purpose FROM core.wait WHERE execution_id = $1 ORDER BY seq`, [id])).rows).toEqual([
        { seq: 1, purpose: { for: 'timeout', task: 'kid', attempt: 3 } },
        { seq: 2, purpose: null },
        { seq: 3, purpose: null },
      ]);
      const view = await getExecutionWithRetryLinks(db, id);
      expect(view?.waits).toEqual([
        { step: 'guarded', seq: 1, kind: 'timer', signal: null, wake_at: '2030-01-02T00:00:00.000Z', approval_roles: null, since: expect.any(String), for: 'timeout', task: 'kid', attempt: 3 },
        { step: 'pause', seq: 2, kind: 'timer', signal: null, wake_at: '2030-01-01T00:00:00.000Z', approval_roles: null, since: expect.any(String) },
        { step: 'approve', seq: 3, kind: 'signal', signal: 'go', wake_at: null, approval_roles: null, since: expect.any(String) },
      ]);
    } finally {
      await db.close();
    }
  });
});
