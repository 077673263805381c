// Auto-resume against a claim that lands between its read and its cancel (the restart audit: the
// reaper republished a stranded command, a live worker took it, and auto-resume, acting on what
// it had read before, cancelled the execution and started it again: the step ran twice). The
// claim is made deterministically right after auto-resume's read returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { AppDeps } from '../../../src/app-deps.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;
const PATH = 'resume/race';
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: race, path: ${PATH} }\nworkflow:\n  - step: only\n    tool: { name: n, kind: noop }\n`,
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const register = (name: string) => http(t.url, 'POST', '/api/worker/pool/register', { name, capacity: 4 }, asWorker);
const beat = (name: string) => http(t.url, 'POST', '/api/worker/pool/heartbeat', { name }, asWorker);
const claimNext = async (workerId: string): Promise<Json[]> => {
  const r = await http(t.url, 'POST', '/api/worker/claim', { worker_id: workerId, max: 1, wait_ms: 0 }, asWorker);
  expect(r.status).toBe(200);
  return r.body.commands;
};
const commandsOf = async (executionId: number) =>
  (await db.query(`SELECT status, attempt, worker_id FROM core.command WHERE execution_id = $1 ORDER BY command_id`, [executionId])).rows;
const successorsOf = async (executionId: number) =>
  (await db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND event_type = 'execution.started' AND context->>'resumed_from' = $1`, [String(executionId)])).rows;

/**
 * An execution interrupted by a stop: its command claimed by a pool that died (silent for an
 * hour), marked stranded by the reaper's sweep; a live pool has just beaten.
 */
async function interrupted(dead: string, start: Record<string, unknown> = {}): Promise<number> {
  const id = (await http(t.url, 'POST', '/api/run/playbook', { path: PATH, ...start })).body.execution_id as number;
  expect((await register(dead)).status).toBe(200);
  expect(await claimNext(dead)).toHaveLength(1);
  await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE kind = 'worker_pool' AND name = $1`, [dead]);
  await db.query(`UPDATE core.command SET heartbeat_at = now() - interval '1 hour', claimed_at = now() - interval '1 hour' WHERE execution_id = $1`, [id]);
  expect((await http(t.url, 'POST', '/api/admin/command_reaper/sweep')).body).toMatchObject({ republished: 1, by_reason: { worker_stale: 1 } });
  return id;
}

/** The app's deps as auto-resume at a restart uses them (restart mode, short waits); `afterRead` runs once its read of interrupted roots has returned. */
function resumeDeps(afterRead: () => Promise<void>): AppDeps {
  let fired = false;
  const inner = t.deps.db;
  const query = (async (...args: Parameters<Queryable['query']>) => {
    const res = await (inner.query as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (!fired && text?.includes('trees AS')) {
      fired = true;
      await afterRead();
    }
    return res;
  }) as typeof inner.query;
  // The Db keeps private fields: its other methods run on it, bound.
  const watched = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'query') return query;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const config = { ...t.deps.config, SVC_AUTO_RESUME_MODE: 'restart' as const, SVC_AUTO_RESUME_MIN_STALE_SECONDS: 0, SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: 1 };
  return { ...t.deps, db: watched, config };
}

describe('auto-resume and a claim between its read and its cancel', () => {
  it('leaves alone an execution whose stranded command a live worker claims after the read: not cancelled, not started again, the step held once', async () => {
    const id = await interrupted('dead-1');
    expect((await register('live-1')).status).toBe(200);
    expect((await beat('live-1')).status).toBe(200);
    let taken: Json[] = [];
    const out = await autoResume(
      resumeDeps(async () => {
        taken = await claimNext('live-1');
      }),
    );
    // The live worker did take it, between the read and the cancel.
    expect(taken).toHaveLength(1);
    expect(out).toEqual([{ execution_id: id, action: 'skipped', error: expect.stringContaining('claimed') }]);
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    expect((await http(t.url, 'GET', `/api/events/${id}`)).body.events.map((e: Json) => e.event_type)).not.toContain('execution.cancelled');
    expect(await commandsOf(id)).toEqual([{ status: 'CLAIMED', attempt: 2, worker_id: 'live-1' }]);
    expect(await successorsOf(id)).toEqual([]);
    // Leave nothing running for the next test.
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
  });

  it('without a claim in between, cancels it and starts it again (resumed_from)', async () => {
    const id = await interrupted('dead-2');
    expect((await register('live-2')).status).toBe(200);
    expect((await beat('live-2')).status).toBe(200);
    const out = await autoResume(resumeDeps(async () => {}));
    expect(out).toEqual([{ execution_id: id, action: 'restarted', resumed_as: expect.any(Number) }]);
    const cancel = (await http(t.url, 'GET', `/api/events/${id}`)).body.events.find((e: Json) => e.event_type === 'execution.cancelled');
    expect(cancel.context).toMatchObject({ reason: 'auto_resume' });
    expect(await commandsOf(id)).toEqual([{ status: 'CANCELLED', attempt: 1, worker_id: 'dead-2' }]);
    expect(await successorsOf(id)).toEqual([{ execution_id: out[0].resumed_as }]);
  });

  it('starts the successor as the start asked: the same payload, labels and priority', async () => {
    const id = await interrupted('dead-3', { payload: { n: 7 }, labels: { team: 'blue' }, priority: 8 });
    expect((await register('live-3')).status).toBe(200);
    expect((await beat('live-3')).status).toBe(200);
    // The earlier test's successor may be taken again too (nothing runs it): only this one is looked at.
    const out = await autoResume(resumeDeps(async () => {}));
    const resumed = out.find((r) => r.execution_id === id);
    expect(resumed).toMatchObject({ execution_id: id, action: 'restarted' });
    if (!resumed?.resumed_as) throw new Error('no successor');
    const successor = (await http(t.url, 'GET', `/api/executions/${resumed.resumed_as}`)).body;
    expect(successor.labels).toEqual({ team: 'blue' });
    const started = (await http(t.url, 'GET', `/api/events/${resumed.resumed_as}`)).body.events[0];
    expect(started.context).toMatchObject({ resumed_from: id, labels: { team: 'blue' }, input: { args: { n: 7 }, priority: 8 } });
    expect((await db.query(`SELECT DISTINCT priority FROM core.command WHERE execution_id = $1`, [resumed.resumed_as])).rows).toEqual([{ priority: 8 }]);
    for (const r of out) if (r.resumed_as) expect((await http(t.url, 'POST', `/api/executions/${r.resumed_as}/cancel`, {})).status).toBe(200);
  });
});
