import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../../actors/engine-deps.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { routeEvents } from '../../../actors/route-events.ts';
import { startExecutions } from '../../../actors/start-execution.ts';
import { loadConfig } from '../../../src/config.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import { claimNextCommands, claimPolicyOf } from '../../../src/db/command.repo.ts';
import { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

// The engine's one write statement (and its read) keeps one generic plan per connection, made at
// its first uses: on a fresh install, while the tables are small. That plan must still reach rows
// by key when the tables have grown, not scan them whole on every step.

let t: TestDatabase;
let db: Db;
let deps: EngineDeps;
const YAML = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: p, path: plans/one }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n';
// Two steps: the report of the first moves the execution on to the second (the step write).
const TWO = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: p2, path: plans/two }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n    next: s2\n  - step: s2\n    tool: { name: t, kind: noop }\n';

beforeAll(async () => {
  t = await createTestDatabase();
  db = new Db(t.url, 1); // one connection: the plans it caches are the ones inspected
  await migrate(db);
  const config = loadConfig({ SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const log = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));
  deps = { db, cache: new PlaybookCache(), snapshots: new HotSnapshots(), rooms: new KeyRooms(db), parked: new ParkedClaims(), metrics: createMetrics(), log, config };
  const parsed = parsePlaybook(YAML);
  if (!parsed.ok) throw new Error('playbook does not parse');
  await insertCatalogVersion(db, { path: 'plans/one', kind: 'playbook', content: YAML, payload: parsed.playbook });
  const two = parsePlaybook(TWO);
  if (!two.ok) throw new Error('playbook does not parse');
  await insertCatalogVersion(db, { path: 'plans/two', kind: 'playbook', content: TWO, payload: two.playbook });
});
afterAll(async () => {
  await db?.close();
  await t?.drop();
});

describe('write statement plans', () => {
  it('made while the tables are small, still reach rows by key once they are large', async () => {
    for (let i = 0; i < 24; i++) {
      await startExecutions(deps, [{ path: 'plans/one', payload: {} }]);
      const [cmd] = await claimNextCommands(db, 'w', 1, null);
      deps.snapshots.commands.set(cmd);
      // Half of them also claim ahead, the other half with stranded commands announced too (its own statement).
      const claims = i % 2 ? { claims: [{ workerId: 'w', max: 1, token: null }], claimPolicy: i % 4 === 1 ? claimPolicyOf(deps.config) : null } : {};
      await routeEvents(deps, [
        { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: 'w', event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data: null } } } },
      ], claims);
    }
    expect((await deps.metrics.routedFromMemory.get()).values[0]?.value).toBe(24);
    // One text per kind, each prepared once however its parts' arrays are filled: the start write,
    // and the unit write with claim-ahead's pick (routings that end an execution while claiming
    // ahead) and without (routings alone).
    const unitTexts = await db.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'svc_write_unit%' OR name = 'svc_write_start' ORDER BY name`);
    expect(unitTexts.rows.map((r) => r.name)).toEqual(['svc_write_start', 'svc_write_unit', 'svc_write_unit_no_pick']);
    // Reports that move an execution on to its next step (and nothing else) send the step write.
    // Sixteen: eight of each step text, so both have run past the five custom plans PostgreSQL tries first.
    for (let i = 0; i < 16; i++) {
      const [started] = await startExecutions(deps, [{ path: 'plans/two', payload: {} }]);
      if (started instanceof Error) throw started;
      const [cmd] = await claimNextCommands(db, 'w', 1, null);
      expect(cmd.execution_id).toBe(started.executionId);
      deps.snapshots.commands.set(cmd);
      await routeEvents(deps, [
        { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: 'w', event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data: null } } } },
        // Two: the next step's command comes with the unit, and claim-ahead's pick looks for one more.
      ], i % 2 ? { claims: [{ workerId: 'w', max: 2, token: null }] } : {});
      if (!(i % 2)) await claimNextCommands(db, 'w', 1, null); // the second step's command, out of the next start's way
    }
    // Those whose worker wants no older command send it without claim-ahead's pick.
    expect((await db.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'svc_write_step'`)).rows[0].n).toBe(1);
    expect((await db.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'svc_write_step_no_pick'`)).rows[0].n).toBe(1);
    await db.query(
      `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status)
       SELECT g, 1, 'plans/other', g, 'completed' FROM generate_series(1000000, 1030000) g`,
    );
    await db.query(
      `INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input)
       SELECT g, 1, 1, 's', 'COMPLETED', '{}' FROM generate_series(1000000, 1030000) g`,
    );
    const { rows } = await db.query<{ name: string; types: string[]; generic_plans: number }>(
      `SELECT name, parameter_types::text[] AS types, generic_plans FROM pg_prepared_statements WHERE name IN ('svc_write_start', 'svc_write_unit', 'svc_write_unit_no_pick', 'svc_write_step', 'svc_write_step_no_pick', 'svc_read_unit')`,
    );
    const routing = rows.filter((r) => r.generic_plans > 0);
    expect(routing.map((r) => r.name)).toContain('svc_write_start');
    expect(routing.map((r) => r.name)).toContain('svc_write_step');
    expect(routing.map((r) => r.name)).toContain('svc_write_step_no_pick');
    const arg = (type: string) => (type === 'jsonb' ? `'[]'::jsonb` : type.endsWith('[]') ? `'{}'::${type}` : `NULL::${type}`);
    for (const r of routing) {
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${r.name}(${r.types.map(arg).join(', ')})`)).rows.map((x) => x['QUERY PLAN']).join('\n');
      expect(plan, `${r.name}\n${plan}`).not.toMatch(/Seq Scan on (execution|command|event)\b/);
    }
  });

  // The enumerations of the tables every step writes are domains (migrations/0033): PostgreSQL
  // reads and plans a table CHECK again in every statement that writes its table, a domain's once
  // per connection. The same values are refused, whichever statement writes them.
  it('refuses a status or progress outside its enumeration, with no table CHECK left to plan per statement', async () => {
    const [started] = await startExecutions(deps, [{ path: 'plans/one', payload: {} }]);
    if (started instanceof Error) throw started;
    const id = started.executionId;
    const refused = (sql: string, values: unknown[]) =>
      db.query(sql, values).then(
        () => null,
        (e: unknown) => (e instanceof pg.DatabaseError ? { code: e.code, constraint: e.constraint } : e),
      );
    expect(await refused(`UPDATE core.execution SET status = $2 WHERE execution_id = $1`, [id, 'done'])).toEqual({ code: '23514', constraint: 'execution_status_check' });
    expect(await refused(`UPDATE core.execution SET progress = $2 WHERE execution_id = $1`, [id, 100.5])).toEqual({ code: '23514', constraint: 'execution_progress_check' });
    expect(await refused(`UPDATE core.command SET status = $2 WHERE execution_id = $1`, [id, 'DONE'])).toEqual({ code: '23514', constraint: 'command_status_check' });
    expect(
      await refused(`INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status) SELECT $1, last_event_id + 1, catalog_id, 'x.y', $2 FROM core.execution WHERE execution_id = $1`, [id, 'bogus']),
    ).toEqual({ code: '23514', constraint: 'execution_status_check' });
    // Through the write statement's own casts too (jsonb_to_recordset's text into the column).
    expect(
      await refused(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input) SELECT x.execution_id, 1, 99, 's', x.status, '{}' FROM jsonb_to_recordset($1::jsonb) AS x(execution_id bigint, status text)`, [
        JSON.stringify([{ execution_id: id, status: 'pending' }]),
      ]),
    ).toEqual({ code: '23514', constraint: 'command_status_check' });
    // What every value of the enumerations passes: each status the machines use is stored.
    for (const status of ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled']) await db.query(`UPDATE core.execution SET status = $2 WHERE execution_id = $1`, [id, status]);
    for (const status of ['PENDING', 'CLAIMED', 'RUNNING', 'WAITING', 'COMPLETED', 'FAILED', 'CANCELLED']) await db.query(`UPDATE core.command SET status = $2 WHERE execution_id = $1`, [id, status]);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'c' AND conrelid IN ('core.execution'::regclass, 'core.event'::regclass, 'core.command'::regclass)`,
    );
    expect(rows[0].n).toBe(0);
  });

  // The triggers that give a limited command's slot back test only limit_name in their WHEN, which
  // PostgreSQL reads back in every statement moving a command (migrations/0034); their function
  // gives the slot back once, when the command stops being held, by update or delete.
  it("gives a limited command's slot back once it stops being held, whichever statement moves or deletes it", async () => {
    const [started] = await startExecutions(deps, [{ path: 'plans/one', payload: {} }]);
    if (started instanceof Error) throw started;
    const id = started.executionId;
    const running = async () => (await db.query<{ running: number }>(`SELECT running FROM core.flow_key WHERE name = 'slots' AND key = 'k'`)).rows[0].running;
    const insert = async (seq: number, status: string) =>
      (
        await db.query<{ command_id: number }>(
          `INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input, limit_name, limit_key) SELECT $1, catalog_id, $2, 's', $3, '{}', 'slots', 'k' FROM core.execution WHERE execution_id = $1 RETURNING command_id`,
          [id, seq, status],
        )
      ).rows[0].command_id;
    const move = (commandId: number, status: string) => db.query(`UPDATE core.command SET status = $2 WHERE command_id = $1`, [commandId, status]);
    const a = await insert(101, 'PENDING');
    const b = await insert(102, 'PENDING');
    const c = await insert(103, 'PENDING');
    await db.query(`UPDATE core.flow_key SET running = 2 WHERE name = 'slots' AND key = 'k'`); // a and b claimed
    await move(a, 'CLAIMED');
    await move(b, 'CLAIMED');
    await move(a, 'RUNNING'); // still held
    expect(await running()).toBe(2);
    await move(a, 'COMPLETED');
    expect(await running()).toBe(1);
    await move(a, 'CANCELLED'); // not held before: nothing more
    expect(await running()).toBe(1);
    await db.query(`DELETE FROM core.command WHERE command_id = $1`, [c]); // never held
    expect(await running()).toBe(1);
    await db.query(`DELETE FROM core.command WHERE command_id = $1`, [b]); // held, gone
    expect(await running()).toBe(0);
    // What every step's statement reads back of them: no status list.
    const { rows } = await db.query<{ def: string }>(`SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = 'core.command'::regclass AND NOT tgisinternal`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => /WHEN \(.*status/.test(r.def)).map((r) => r.def)).toEqual([]);
  });
});
