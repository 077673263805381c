import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../../actors/engine-deps.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { routeEvents } from '../../../actors/route-events.ts';
import { startExecutions } from '../../../actors/start-execution.ts';
import { EVENT } from '../../../machines/event-types.ts';
import { loadConfig } from '../../../src/config.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import { claimNextCommands } from '../../../src/db/command.repo.ts';
import type { Db } from '../../../src/db/db.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { cancelExecution } from '../../../src/engine/cancel-execution.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

// A cancel checks that its execution is live, then routes `execution.cancelled`. When the
// execution ends in between (its last step's report commits first), the end stands: the cancel is
// not stored after `playbook.completed` as a second terminal event, and the caller hears the
// status the execution ended with.

let t: TestDatabase & { db: Db };
let base: EngineDeps;
const PATH = 'cancel-race/one';
const YAML = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: ${PATH} }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n`;
const WORKER = 'w1';

beforeAll(async () => {
  t = await createMigratedDatabase();
  const config = loadConfig({ SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const log = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));
  base = { db: t.db, cache: new PlaybookCache(), rooms: new KeyRooms(t.db), parked: new ParkedClaims(), metrics: createMetrics(), log, config, snapshots: new HotSnapshots() };
  const parsed = parsePlaybook(YAML);
  if (!parsed.ok) throw new Error('playbook does not parse');
  await insertCatalogVersion(t.db, { path: PATH, kind: 'playbook', content: YAML, payload: parsed.playbook });
});
afterAll(async () => {
  await t?.drop();
});

/** A running execution whose one command WORKER holds. */
async function runningWithClaim(): Promise<{ executionId: number; commandId: number }> {
  const [started] = await startExecutions(base, [{ path: PATH, payload: {} }]);
  if (!started || !('executionId' in started)) throw new Error('start failed');
  const [cmd] = await claimNextCommands(t.db, WORKER, 1, null, 'tok');
  expect(cmd.execution_id).toBe(started.executionId);
  return { executionId: started.executionId, commandId: cmd.command_id };
}

async function complete(executionId: number, commandId: number): Promise<void> {
  const routed = await routeEvents(base, [
    { execution_id: executionId, command_id: commandId, event_type: EVENT.commandCompleted, worker_id: WORKER, attempt: 1, result: { tasks: { t: { status: 'ok', data: null } } } },
  ]);
  expect(routed.results[0].event_id).not.toBeNull();
}

/** `db` that runs `between` once, right after the first read of one execution's row returns. */
function afterStatusRead(db: Db, between: () => Promise<void>): Db {
  let armed = true;
  return new Proxy(db, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop !== 'query' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (text: unknown, params?: unknown[]) => {
        const result: unknown = await value.call(target, text, params);
        if (armed && typeof text === 'string' && text.includes('FROM core.execution WHERE execution_id = $1')) {
          armed = false;
          await between();
        }
        return result;
      };
    },
  });
}

async function log(executionId: number): Promise<{ event_id: number; event_type: string }[]> {
  const { rows } = await t.db.query<{ event_id: number; event_type: string }>(
    'SELECT event_id, event_type FROM core.event WHERE execution_id = $1 ORDER BY event_id',
    [executionId],
  );
  return rows.map((r) => ({ event_id: Number(r.event_id), event_type: r.event_type }));
}

describe('a cancel that loses the race with the execution end', () => {
  it('is not stored after playbook.completed, and answers the status the execution ended with', async () => {
    const { executionId, commandId } = await runningWithClaim();
    // The cancel reads the execution running; its last step's report commits before the cancel routes.
    const racing: EngineDeps = { ...base, snapshots: new HotSnapshots(), db: afterStatusRead(t.db, () => complete(executionId, commandId)) };
    const answer = await cancelExecution(racing, executionId, { reason: 'operator' });
    expect(answer).toEqual({ cancelled: false, status: 'completed' });
    const events = await log(executionId);
    expect(events.at(-1)?.event_type).toBe(EVENT.playbookCompleted);
    expect(events.filter((e) => e.event_type === EVENT.executionCancelled)).toEqual([]);
    // No gap: the ids run 1..n.
    expect(events.map((e) => e.event_id)).toEqual(events.map((_e, i) => i + 1));
    const { rows } = await t.db.query<{ status: string; last_event_id: number }>('SELECT status, last_event_id FROM core.execution WHERE execution_id = $1', [executionId]);
    expect(rows[0]).toMatchObject({ status: 'completed' });
    expect(Number(rows[0].last_event_id)).toBe(events.length);
  });

  it('a cancel that comes first still cancels (the race is the only change)', async () => {
    const { executionId, commandId } = await runningWithClaim();
    expect(await cancelExecution(base, executionId, { reason: 'operator' })).toEqual({ cancelled: true });
    // The late report of the cancelled command is kept as late, folded into nothing.
    await routeEvents(base, [{ execution_id: executionId, command_id: commandId, event_type: EVENT.commandCompleted, worker_id: WORKER, attempt: 1, result: { tasks: {} } }]);
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM core.execution WHERE execution_id = $1', [executionId]);
    expect(rows[0].status).toBe('cancelled');
    expect((await log(executionId)).filter((e) => e.event_type === EVENT.playbookCompleted)).toEqual([]);
  });
});
