import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endBatches, type BatchEnd } from '../../../src/db/batch.repo.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import { Db } from '../../../src/db/db.ts';
import { MIGRATIONS_DIR, migrate } from '../../../src/db/migrate.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { createMigratedDatabase, createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

// Reserved batch ids at the database: the end of a batch while another transaction holds its
// execution (the statement waits, then rechecks the row), and migration 0027 on a database whose
// batches still wait with ids of the sequence (from 0026, or from 0030 taken back by 0026).

const YAML = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ids, path: ids/db }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n`;

/** A catalog entry and `n` running executions whose logs hold `events` events each. */
async function executions(db: Db, n: number, events: number): Promise<{ catalogId: number; ids: number[] }> {
  const parsed = parsePlaybook(YAML);
  if (!parsed.ok) throw new Error('playbook does not parse');
  const catalog = await insertCatalogVersion(db, { path: 'ids/db', kind: 'playbook', content: YAML, payload: parsed.playbook });
  const { rows } = await db.query<{ execution_id: string }>(
    `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, applied_event_id, last_event_id)
     SELECT i, $1, 'ids/db', i, 'running', $3, $3 FROM (SELECT nextval('core.execution_id_seq') AS i FROM generate_series(1, $2::int)) n
     RETURNING execution_id`,
    [catalog.catalog_id, n, events],
  );
  const ids = rows.map((r) => Number(r.execution_id));
  await db.query(
    `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status)
     SELECT x, i, $2, 'execution.started', 'running' FROM unnest($1::bigint[]) x, generate_series(1, $3::int) i`,
    [ids, catalog.catalog_id, events],
  );
  return { catalogId: catalog.catalog_id, ids };
}

const end = (batch_id: number, execution_id: number): BatchEnd => ({
  batch_id, execution_id, worker_id: 'w', state: 'completed', event_type: 'batch.completed', context: {}, result: { context: {} }, error: null, commands_generated: 0, message: 'completed',
});

describe('the end of a batch', () => {
  let t: TestDatabase & { db: Db };
  beforeAll(async () => {
    t = await createMigratedDatabase();
  }, 60_000);
  afterAll(async () => {
    await t?.drop();
  });

  // The end locks its executions (FOR UPDATE): a lock that waited for another transaction's update
  // rechecks the row (EvalPlanQual), which in PostgreSQL 18.4 broke a scan of the log in the same
  // statement (a backend killed by signal 11). The end asks the log through a function instead.
  it('waits for a transaction holding its execution, then completes the routed batch', async () => {
    const { ids: [id] } = await executions(t.db, 1, 3);
    // Event 3 stands for the batch's routed item: the batch is in the log.
    const { rows } = await t.db.query<{ batch_id: string }>(
      `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, events, event_ids, queue_depth, state)
       VALUES (gen_random_uuid(), $1, 'scope', 'k-held', 'h', '[{}]', ARRAY[3]::bigint[], 1, 'processing') RETURNING batch_id`,
      [id],
    );
    const batchId = Number(rows[0].batch_id);
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('UPDATE core.execution SET updated_at = now() WHERE execution_id = $1', [id]);
      const ending = endBatches(t.db, 'complete', [end(batchId, id)]);
      // The end waits on the row lock, and goes on once the holder commits.
      let waited = false;
      for (let i = 0; i < 250 && !waited; i++) {
        const waiting = await t.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%core.batch_request%'`);
        waited = !!waiting.rowCount;
        if (!waited) await new Promise((r) => setTimeout(r, 20));
      }
      expect(waited).toBe(true);
      await other.query('COMMIT');
      expect(await ending).toEqual([{ execution_id: id, from_event_id: 3, to_event_id: 4, applied: true }]);
    } finally {
      await other.end();
    }
    const batch = await t.db.query(`SELECT state, routed_at IS NOT NULL AS routed FROM core.batch_request WHERE batch_id = $1`, [batchId]);
    expect(batch.rows[0]).toEqual({ state: 'completed', routed: true });
    const record = await t.db.query(`SELECT event_type FROM core.event WHERE execution_id = $1 AND event_id = 4`, [id]);
    expect(record.rows[0].event_type).toBe('batch.completed');
  });
});

describe('migration 0027 on batches waiting with ids of the sequence', () => {
  /** A directory of the migrations `keep` selects, plus `extra` files (name: text). */
  async function migrationsDir(keep: (f: string) => boolean, extra: Record<string, string> = {}): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
    for (const f of (await readdir(MIGRATIONS_DIR)).filter(keep)) await copyFile(join(MIGRATIONS_DIR, f), join(dir, f));
    for (const [f, text] of Object.entries(extra)) await writeFile(join(dir, f), text);
    return dir;
  }

  // The first landing's migration (8a7ba01), as databases ran it before it was taken back.
  const FIRST_0030 = [
    `DROP SEQUENCE IF EXISTS core.batch_event_id_seq;`,
    `DROP FUNCTION IF EXISTS core.svc_batch_moved(text);`,
    `COMMENT ON COLUMN core.batch_request.event_ids IS 'ids reserved for the items in the execution''s log (core.event.event_id), the 202''s event_ids';`,
    `COMMENT ON COLUMN core.batch_request.routed_at IS 'when the batch was completed with its items in the log (a routing of the execution wrote them at their ids)';`,
  ].join('\n');

  it.each([
    ['0026 alone', [(f: string) => f < '0027']],
    ['0030, then 0026', [(f: string) => f < '0026', (f: string) => f < '0027']],
  ] as const)('after %s: reserves ids at the end of the log for unrouted ones, completes routed ones, drops the sequence', async (_, steps) => {
    const t = await createTestDatabase();
    const db = new Db(t.url, 2);
    const dirs: string[] = [];
    try {
      for (const [i, keep] of steps.entries()) {
        const dir = await migrationsDir(keep, i === 0 && steps.length > 1 ? { '0030_batch_reserved_ids.sql': FIRST_0030 } : {});
        dirs.push(dir);
        await migrate(db, dir);
      }
      expect((await db.query(`SELECT to_regclass('core.batch_event_id_seq') IS NOT NULL AS seq`)).rows[0].seq).toBe(true);
      const { ids: [a, b] } = await executions(db, 2, 5);
      const batch = (execution: number, key: string, items: number, routed: boolean) =>
        db.query<{ batch_id: string }>(
          `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, events, event_ids, queue_depth, state, routed_at)
           VALUES (gen_random_uuid(), $1, 'scope', $2, 'h', (SELECT jsonb_agg('{}'::jsonb) FROM generate_series(1, $3::int)),
                   ARRAY(SELECT nextval('core.batch_event_id_seq') FROM generate_series(1, $3::int)), 1, 'accepted', CASE WHEN $4 THEN now() END)
           RETURNING batch_id`,
          [execution, key, items, routed],
        ).then((r) => Number(r.rows[0].batch_id));
      const a1 = await batch(a, 'a1', 2, false);
      const a2 = await batch(a, 'a2', 3, false);
      const b1 = await batch(b, 'b1', 2, true);
      const b2 = await batch(b, 'b2', 1, false);

      expect((await migrate(db)).applied[0]).toBe('0027_batch_reserved_ids.sql');

      const rows = await db.query<{ batch_id: string; state: string; event_ids: string[] }>(`SELECT batch_id, state, event_ids FROM core.batch_request ORDER BY batch_id`);
      expect(rows.rows.map((r) => [Number(r.batch_id), r.state, r.state === 'completed' ? null : r.event_ids.map(Number)])).toEqual([
        [a1, 'accepted', [6, 7]],
        [a2, 'accepted', [8, 9, 10]],
        [b1, 'completed', null],
        [b2, 'accepted', [6]],
      ]);
      const logs = await db.query<{ execution_id: string; last_event_id: string; applied_event_id: string }>(
        `SELECT execution_id, last_event_id, applied_event_id FROM core.execution ORDER BY execution_id`,
      );
      expect(logs.rows.map((r) => [Number(r.execution_id), Number(r.applied_event_id), Number(r.last_event_id)])).toEqual([
        [a, 5, 10],
        [b, 5, 6],
      ]);
      const gone = await db.query(`SELECT to_regclass('core.batch_event_id_seq') AS seq, to_regprocedure('core.svc_batch_moved(text)') AS moved`);
      expect(gone.rows[0]).toEqual({ seq: null, moved: null });
      const written = await db.query(`SELECT core.svc_event_written($1, 5) AS five, core.svc_event_written($1, 6) AS six`, [a]);
      expect(written.rows[0]).toEqual({ five: true, six: false });
    } finally {
      await db.close();
      await t.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  });
});
