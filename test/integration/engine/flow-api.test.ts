// Flow control's API on a real server and database, no worker (commands stay where the claim
// leaves them): limits' PUT/GET/DELETE with their refusals, starts' priority and key errors, a
// claim by id of a limited command, a queued execution's view and its cancel.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { admitQueued, nextAdmitterLook } from '../../../src/db/flow.repo.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { startExecutions, type Started } from '../../../actors/start-execution.ts';
import { ServiceError } from '../../../src/errors.ts';
import { claimNextCommands } from '../../../src/db/command.repo.ts';
import type { Queryable } from '../../../src/db/queryable.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const register = async (yaml: string) => expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);

describe('limits', () => {
  it('the admitter\'s look takes milliseconds on every PostgreSQL: the service\'s sessions never JIT-compile', async () => {
    // Before PostgreSQL 18 a seq scan that enable_seqscan=off cannot avoid costs 1e10, past every
    // jit_*_above_cost: this look (it scans flow_limit and admission) compiled for ~0.7 s at each
    // run on PostgreSQL 15. The CI's second suite runs this on PostgreSQL 15.
    expect((await t.deps.db.query<{ jit: string }>('SHOW jit')).rows[0].jit).toBe('off');
    const ms: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await nextAdmitterLook(t.deps.db, 5_000);
      ms.push(performance.now() - t0);
    }
    expect(Math.max(...ms), `looks (ms): ${ms.map(Math.round).join(' ')}`).toBeLessThan(150);
  });

  it('with nothing queued the admitter has nothing to look at soon (it sleeps its second, never spins)', async () => {
    expect(await nextAdmitterLook(t.deps.db, 5_000)).toEqual({ room: null, roomKeys: [], admit: null, debounce: null, queued: false, rates: [], limits: [], queuedLimits: [] });
  });

  it('PUT creates and replaces; GET lists and shows; bad bodies are 422 naming the field and change nothing', async () => {
    const put = await http(t.url, 'PUT', '/api/limits/api.partner', { rate: { limit: 10, period_seconds: 1 } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'api.partner', defined: true, concurrency: null, rate: { limit: 10, period_seconds: 1, burst: 10 }, created: true, keys: 0 });
    const again = await http(t.url, 'PUT', '/api/limits/api.partner', { concurrency: 2, rate: { limit: 5, period_seconds: 60, burst: 1 } });
    expect(again.body).toMatchObject({ concurrency: 2, rate: { limit: 5, period_seconds: 60, burst: 1 }, created: false });
    for (const [body, field] of [
      [{}, 'concurrency'],
      [{ concurrency: 0 }, 'concurrency'],
      [{ rate: { limit: 10 } }, 'rate.period_seconds'],
      [{ rate: { limit: 10, period_seconds: -1 } }, 'rate.period_seconds'],
      [{ concurrency: 'two' }, 'concurrency'],
    ] as const) {
      const r = await http(t.url, 'PUT', '/api/limits/api.partner', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(r.body.detail), JSON.stringify(body)).toContain(field);
    }
    expect((await http(t.url, 'PUT', '/api/limits/bad name', { concurrency: 1 })).status).toBe(422);
    // A PUT replaces the whole limit: a field it does not know is refused, naming it, not dropped
    // (`rates` would have removed the rate, `brust` the burst).
    for (const [body, error] of [
      [{ concurency: 2 }, "concurency: unknown field (did you mean 'concurrency'?)"],
      [{ concurrency: 3, rates: { limit: 5, period_seconds: 60, burst: 1 } }, "rates: unknown field (did you mean 'rate'?)"],
      [{ rate: { limit: 5, period_seconds: 60, brust: 50 } }, "rate.brust: unknown field (did you mean 'burst'?)"],
      [{ concurrency: 2, colour: 'red' }, 'colour: unknown field (known: concurrency, rate)'],
    ] as const) {
      const r = await http(t.url, 'PUT', '/api/limits/api.partner', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.detail.errors, JSON.stringify(body)).toEqual([error]);
    }
    // The OpenAPI document says so.
    const spec = (await http(t.url, 'GET', '/docs/json')).body;
    const putSchema = spec.paths['/api/limits/{name}'].put.requestBody.content['application/json'].schema;
    expect(putSchema).toMatchObject({ additionalProperties: false, properties: { rate: { additionalProperties: false } } });
    expect((await http(t.url, 'GET', '/api/limits/api.partner')).body).toMatchObject({ concurrency: 2, rate: { limit: 5, period_seconds: 60, burst: 1 }, key_list: [] });
    expect((await http(t.url, 'GET', '/api/limits')).body.limits.map((l: { name: string }) => l.name)).toContain('api.partner');
    expect((await http(t.url, 'GET', '/api/limits/none')).status).toBe(404);
    expect((await http(t.url, 'DELETE', '/api/limits/none')).status).toBe(404);
    expect((await http(t.url, 'DELETE', '/api/limits/api.partner')).body).toEqual({ status: 'deleted', name: 'api.partner' });
  });

  it('a limited command waits for a claim pick; a claim by id is 409 limit_wait; a limit in use cannot be deleted', async () => {
    expect((await http(t.url, 'PUT', '/api/limits/one-at-a-time', { concurrency: 1 })).status).toBe(200);
    await register(`apiVersion: svc/v1
metadata: { name: lim, path: flow/lim }
workload: { k: a }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: one-at-a-time, key: "{{ workload.k }}" } }
`);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/lim', payload: { k: 'a' } })).body.execution_id);
    const { rows } = await db.query<{ command_id: string }>(`SELECT command_id FROM core.command WHERE execution_id = ANY($1::bigint[]) ORDER BY command_id`, [ids]);
    const byId = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: 'w1' }, asWorker);
    expect(byId.status).toBe(409);
    expect(byId.body.detail).toMatchObject({ code: 'limit_wait', limit: 'one-at-a-time', key: 'a' });
    // The pick takes one (the key's room), whatever it is asked for.
    const claimed = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w1', max: 3, wait_ms: 0 }, asWorker);
    expect(claimed.body.commands).toHaveLength(1);
    expect(claimed.body.commands[0].command_id).toBe(Number(rows[0].command_id));
    expect((await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w2', max: 3, wait_ms: 0 }, asWorker)).body.commands).toHaveLength(0);
    // The executions whose commands wait say so.
    expect((await http(t.url, 'GET', `/api/executions/${ids[1]}`)).body.limit_waits).toEqual([{ step: 'start', seq: 1, limit: 'one-at-a-time', key: 'a', defined: true, since: expect.any(String) }]);
    expect((await http(t.url, 'GET', `/api/executions/${ids[0]}`)).body.limit_waits).toEqual([]);
    const shown = await http(t.url, 'GET', '/api/limits/one-at-a-time');
    expect(shown.body).toMatchObject({ running: 1, waiting: 2, key_list: [{ key: 'a', running: 1, waiting: 2, queued: 0, tokens: null }] });
    const del = await http(t.url, 'DELETE', '/api/limits/one-at-a-time');
    expect(del.status).toBe(409);
    expect(del.body.detail.code).toBe('limit_in_use');
    // Its execution cancelled, the held command keeps its slot while w1 may still run it
    // (migrations/0054); w1's report of its end gives it back and the next one is taken.
    expect((await http(t.url, 'POST', `/api/executions/${ids[0]}/cancel`, { reason: 'test' })).status).toBe(200);
    expect((await http(t.url, 'GET', '/api/limits/one-at-a-time')).body).toMatchObject({ running: 1, waiting: 2 });
    expect((await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w2', max: 3, wait_ms: 0 }, asWorker)).body.commands).toHaveLength(0);
    const held = claimed.body.commands[0];
    const ended = { execution_id: ids[0], command_id: held.command_id, attempt: held.attempt, worker_id: 'w1', step: 'start', event_type: 'command.failed', error: { message: 'task stopped: its command was cancelled', code: 'cancelled' } };
    expect((await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w1', report_id: randomUUID(), events: [ended] }, asWorker)).status).toBe(200);
    expect((await http(t.url, 'GET', '/api/limits/one-at-a-time')).body).toMatchObject({ running: 0, waiting: 2 });
    const next = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w2', max: 3, wait_ms: 0 }, asWorker);
    expect(next.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual([Number(rows[1].command_id)]);
  });

  it('an execution that ends in its own start gives its slot back: the next start on the key runs, none is left queued', async () => {
    // Its admission was inserted by the start's write beside the delete of the same row (the end),
    // which that one statement's snapshot cannot see: the slot stayed taken for ever.
    await register(`apiVersion: svc/v1
metadata: { name: instant, path: flow/instant }
concurrency: { limit: 1, key: "{{ args.k }}" }
workflow:
  - step: start
`);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/instant', payload: { k: 'a' } })).body.execution_id);
    ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/instant', payload: { k: 'b' } })).body.execution_id);
    for (const id of ids) {
      let status = '';
      for (let i = 0; i < 50 && status !== 'completed'; i++) {
        status = (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
        if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status, `execution ${id}`).toBe('completed');
    }
    expect((await db.query('SELECT execution_id FROM core.admission WHERE execution_id = ANY($1::bigint[])', [ids])).rows).toEqual([]);
    const shown = (await http(t.url, 'GET', '/api/limits/@flow%2Finstant')).body;
    expect(shown).toMatchObject({ running: 0, queued: 0 });
    // A database written before the fix holds such rows: migration 0038 deletes them, slots given back.
    await db.query(`INSERT INTO core.admission (execution_id, limit_name, limit_key, capacity, admitted_at) VALUES ($1, '@flow/instant', 'leaked', 1, now())`, [ids[0]]);
    const leaked = async () => (await db.query<{ running: number }>(`SELECT running FROM core.flow_key WHERE name = '@flow/instant' AND key = 'leaked'`)).rows[0].running;
    expect(await leaked()).toBe(1);
    await db.query(readFileSync(new URL('../../../migrations/0038_ended_admissions.sql', import.meta.url), 'utf8'));
    expect(await leaked()).toBe(0);
    expect((await db.query('SELECT 1 FROM core.admission WHERE execution_id = $1', [ids[0]])).rows).toEqual([]);
  });

  it('a period under a millisecond is 422 and changes nothing: 1e-306 s made every claim, the admitter and the limit\'s GET fail with a float overflow', async () => {
    // The refill is elapsed * limit / period_seconds in the claim statement, which hands out every
    // command: a tiny period overflowed float8 there and no worker could claim anything.
    expect((await http(t.url, 'PUT', '/api/limits/fast-partner', { rate: { limit: 100, period_seconds: 0.001 } })).status).toBe(200);
    for (const period_seconds of [1e-306, 5e-324, 0.0009]) {
      const r = await http(t.url, 'PUT', '/api/limits/fast-partner', { rate: { limit: 100_000, period_seconds, burst: 1 } });
      expect(r.status, String(period_seconds)).toBe(422);
      expect(r.body.detail.errors, String(period_seconds)).toEqual(['rate.period_seconds: must be at least 0.001 (a millisecond)']);
    }
    await register(`apiVersion: svc/v1
metadata: { name: fast, path: flow/fast }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: fast-partner } }
`);
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/fast' })).body.execution_id;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const claimed = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-fast', max: 5, wait_ms: 0 }, asWorker);
    expect(claimed.status).toBe(200);
    expect(claimed.body.commands.map((c: { execution_id: number }) => c.execution_id)).toContain(id);
    expect((await http(t.url, 'GET', '/api/limits/fast-partner')).body).toMatchObject({ rate: { limit: 100, period_seconds: 0.001, burst: 100 } });
    // Nor can the table hold one (migration 0039, which also raised any stored before to 0.001 s).
    await expect(db.query(`UPDATE core.flow_limit SET period_seconds = 1e-306 WHERE name = 'fast-partner'`)).rejects.toThrow(/flow_limit_period_floor/);
  });
});

describe('names playbooks use', () => {
  it('are listed and shown before any work waits on them: undefined names as not defined, inline limits with their N; the newest version counts', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: uses, path: flow/uses }
concurrency: { limit: used-not-defined, key: "{{ workload.k | default('') }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: task-not-defined } }
`);
    await register(`apiVersion: svc/v1
metadata: { name: inline, path: flow/inline-3 }
concurrency: { limit: 3 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const idle = { defined: false, rate: null, created_at: null, updated_at: null, keys: 0, running: 0, queued: 0, waiting: 0 };
    const listed = (await http(t.url, 'GET', '/api/limits')).body;
    expect(listed.limits).toContainEqual({ name: 'used-not-defined', concurrency: null, ...idle });
    expect(listed.limits).toContainEqual({ name: 'task-not-defined', concurrency: null, ...idle });
    expect(listed.limits).toContainEqual({ name: '@flow/inline-3', concurrency: 3, ...idle });
    expect(listed.count).toBe(listed.limits.length);
    // A name a playbook uses is not unknown: shown, with no keys yet; a name nobody uses is 404.
    expect((await http(t.url, 'GET', '/api/limits/used-not-defined')).body).toEqual({ name: 'used-not-defined', concurrency: null, ...idle, key_list: [] });
    expect((await http(t.url, 'GET', '/api/limits/@flow%2Finline-3')).body).toEqual({ name: '@flow/inline-3', concurrency: 3, ...idle, key_list: [] });
    expect((await http(t.url, 'GET', '/api/limits/used-by-nobody')).status).toBe(404);
    expect((await http(t.url, 'GET', '/api/limits/@flow%2Fno-such-playbook')).status).toBe(404);
    // Defined, it is listed once, as defined.
    expect((await http(t.url, 'PUT', '/api/limits/task-not-defined', { concurrency: 4 })).status).toBe(200);
    const names = (await http(t.url, 'GET', '/api/limits')).body.limits.map((l: { name: string }) => l.name);
    expect(names.filter((n: string) => n === 'task-not-defined')).toHaveLength(1);
    expect((await http(t.url, 'GET', '/api/limits/task-not-defined')).body).toMatchObject({ defined: true, concurrency: 4 });
    expect((await http(t.url, 'DELETE', '/api/limits/task-not-defined')).status).toBe(200);
    // The newest version of a playbook is what it uses: an older version's names go.
    await register(`apiVersion: svc/v1
metadata: { name: uses, path: flow/uses }
concurrency: { limit: 2 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const after = (await http(t.url, 'GET', '/api/limits')).body.limits;
    expect(after.map((l: { name: string }) => l.name)).not.toContain('used-not-defined');
    expect(after.map((l: { name: string }) => l.name)).not.toContain('task-not-defined');
    expect(after).toContainEqual({ name: '@flow/uses', concurrency: 2, ...idle });
    expect((await http(t.url, 'GET', '/api/limits/used-not-defined')).status).toBe(404);
  });
});

describe('the claim across keys', () => {
  it('takes the key whose waiting command has the highest priority first, then turns between keys', async () => {
    expect((await http(t.url, 'PUT', '/api/limits/pk', { concurrency: 5 })).status).toBe(200);
    await register(`apiVersion: svc/v1
metadata: { name: pk, path: flow/pk }
workload: { k: a }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: pk, key: "{{ workload.k }}" } }
`);
    const start = async (k: string, priority: number) => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/pk', payload: { k }, priority })).body.execution_id as number;
    const a = [await start('a', 0), await start('a', 0), await start('a', 0)];
    const b = await start('b', 9);
    const c = await start('c', 0);
    const claimOne = async () => (await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-pk', max: 1, wait_ms: 0 }, asWorker)).body.commands[0].execution_id as number;
    expect(await claimOne()).toBe(b);
    // Then the keys in turn (a and c had never been served), not all of a's before c's.
    const next = [await claimOne(), await claimOne()];
    expect(next.sort()).toEqual([a[0], c].sort());
  });
});

describe('starts', () => {
  it('priority outside 0..9 and a key that cannot render are 422 naming the field; nothing starts', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: q, path: flow/q }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const before = (await db.query(`SELECT count(*)::int AS n FROM core.execution`)).rows[0].n;
    const p = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/q', payload: { tenant: 'x' }, priority: 10 });
    expect(p.status).toBe(422);
    expect(JSON.stringify(p.body.detail)).toContain('priority');
    const k = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/q', payload: {} });
    expect(k.status).toBe(422);
    expect(JSON.stringify(k.body.detail)).toContain('concurrency.key');
    expect((await db.query(`SELECT count(*)::int AS n FROM core.execution`)).rows[0].n).toBe(before);
  });

  it('a concurrency or debounce key over 500 characters is 422 with code limit_key naming the field; nothing starts', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: long, path: flow/long-key }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
debounce: { key: "{{ workload.customer }}", seconds: 1 }
workload: { tenant: t, customer: c }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const before = (await db.query(`SELECT count(*)::int AS n FROM core.execution`)).rows[0].n;
    for (const [payload, field] of [
      [{ tenant: 'x'.repeat(501) }, 'concurrency.key'],
      [{ customer: 'y'.repeat(501) }, 'debounce.key'],
    ] as const) {
      const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/long-key', payload });
      expect(r.status, field).toBe(422);
      expect(r.body.detail, field).toEqual({
        code: 'limit_key',
        message: `flow/long-key: ${field} rendered to a key over 500 characters`,
        errors: [`${field}: ${field} rendered to a key over 500 characters`],
      });
    }
    // 500 characters is a key.
    const ok = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/long-key', payload: { tenant: 'x'.repeat(500), customer: 'k500' } });
    expect(ok.status).toBe(200);
    expect((await db.query(`SELECT count(*)::int AS n FROM core.execution`)).rows[0].n).toBe(before + 1);
    expect((await http(t.url, 'POST', `/api/executions/${ok.body.execution_id}/cancel`, { reason: 'test' })).status).toBe(200);
  });

  it('beyond an inline limit an execution is queued, says on what, and a cancel ends it and its admission', async () => {
    const first = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/q', payload: { tenant: 'acme' } })).body.execution_id;
    const second = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/q', payload: { tenant: 'acme' }, priority: 8 })).body.execution_id;
    // The admitter admits the first (no worker runs it: it stays running and holds the slot).
    await expect.poll(async () => (await http(t.url, 'GET', `/api/executions/${first}`)).body.status, { timeout: 15_000 }).toBe('running');
    const view = (await http(t.url, 'GET', `/api/executions/${second}`)).body;
    // Not debounced: no window's close (once its queued_at).
    expect(view).toMatchObject({ status: 'queued', flow: { limit: '@flow/q', key: 'acme', priority: 8, not_before: null, queued_at: expect.any(String), admitted_at: null } });
    expect((await http(t.url, 'GET', '/api/executions?status=queued')).body.executions.map((e: { execution_id: number }) => e.execution_id)).toContain(second);
    const events = (await http(t.url, 'GET', `/api/events/${second}`)).body.events.map((e: { event_type: string }) => e.event_type);
    expect(events).toEqual(['execution.started', 'execution.queued']);
    expect((await http(t.url, 'POST', `/api/executions/${second}/cancel`, { reason: 'not needed' })).status).toBe(200);
    expect((await http(t.url, 'GET', `/api/executions/${second}`)).body).toMatchObject({ status: 'cancelled', flow: null });
    // The first still holds its slot; cancelled, it gives it back.
    expect((await http(t.url, 'GET', '/api/limits/@flow%2Fq')).body).toMatchObject({ name: '@flow/q', defined: false, concurrency: 1, running: 1, key_list: [{ key: 'acme', running: 1, queued: 0 }] });
    // A key never served yet (its limit undefined: its work waits) shows, served_at null.
    await register(`apiVersion: svc/v1
metadata: { name: u, path: flow/undefined }
concurrency: { limit: not-defined-yet }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const waiting = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/undefined' })).body.execution_id;
    expect((await http(t.url, 'GET', '/api/limits/not-defined-yet')).body).toMatchObject({ defined: false, queued: 1, key_list: [{ key: '', running: 0, queued: 1, served_at: null }] });
    expect((await http(t.url, 'GET', `/api/executions/${waiting}`)).body.status).toBe('queued');
    expect((await http(t.url, 'PUT', '/api/limits/@flow%2Fq', { concurrency: 5 })).status).toBe(409);
    expect((await http(t.url, 'POST', `/api/executions/${first}/cancel`, { reason: 'done' })).status).toBe(200);
    expect((await db.query(`SELECT running FROM core.flow_key WHERE name = '@flow/q' AND key = 'acme'`)).rows[0].running).toBe(0);
  });
});

describe('a debounced start', () => {
  it("shows its window's close as flow.not_before; an execution queued without one shows null", async () => {
    await register(`apiVersion: svc/v1
metadata: { name: d, path: flow/debounced }
debounce: { key: "{{ workload.c | default('') }}", seconds: 60 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/debounced', payload: { c: 'x' } })).body.execution_id;
    const { flow } = (await http(t.url, 'GET', `/api/executions/${id}`)).body;
    expect(flow).toMatchObject({ limit: null, key: null, admitted_at: null });
    const window = Date.parse(flow.not_before) - Date.parse(flow.queued_at);
    expect(window).toBeGreaterThan(59_000);
    expect(window).toBeLessThan(61_000);
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test' })).status).toBe(200);
  });
});

describe('an admission never routed (its server stopped after admitting)', () => {
  it('is routed again by an idle admitter, whose one look a second sees it', async () => {
    // Its own database: no other execution waits to be admitted, so the admitter is idle (the look alone).
    const own = await startTestApp();
    try {
      const ownDb = new pg.Client({ connectionString: own.databaseUrl });
      await ownDb.connect();
      try {
        expect((await http(own.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: s, path: flow/stray }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
workload: { tenant: t0 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
        const run = async () => (await http(own.url, 'POST', '/api/run/playbook', { path: 'flow/stray', payload: { tenant: 'acme' } })).body.execution_id as number;
        const first = await run();
        const second = await run();
        expect((await http(own.url, 'GET', `/api/executions/${second}`)).body.status).toBe('queued');
        // Another server's admitter took the slot for the second just now, then stopped before
        // routing it: this admitter's looks find nothing to admit (it goes idle) until the
        // admission is a stray (5 s), which its look alone must see.
        await ownDb.query(`UPDATE core.admission SET admitted_at = now() WHERE execution_id = $1`, [second]);
        await ownDb.query(`UPDATE core.flow_key SET running = running + 1 WHERE name = '@flow/stray' AND key = 'acme'`);
        expect((await ownDb.query('SELECT count(*)::int AS n FROM core.admission WHERE admitted_at IS NULL')).rows[0].n).toBe(0);
        await expect.poll(async () => (await http(own.url, 'GET', `/api/executions/${second}`)).body.status, { timeout: 15_000 }).toBe('running');
        const admitted = (await http(own.url, 'GET', `/api/events/${second}`)).body.events.filter((e: { event_type: string }) => e.event_type === 'execution.admitted');
        expect(admitted.map((e: { context: { again?: boolean } }) => e.context.again)).toEqual([true]);
        for (const id of [first, second]) await http(own.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' });
      } finally {
        await ownDb.end();
      }
    } finally {
      await own.close();
    }
  });
});

describe('admission at the start', () => {
  const eventTypes = async (id: number) => (await http(t.url, 'GET', `/api/events/${id}`)).body.events.map((e: { event_type: string }) => e.event_type);
  const started = (r: Started | ServiceError): number => {
    if (r instanceof ServiceError) throw r;
    return r.executionId;
  };

  it('a start whose key has room runs at once (no queue, no admitter); a burst beyond the room queues the rest, in order', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: two, path: flow/two }
workload: { tenant: t0 }
concurrency: { limit: 2, key: "{{ workload.tenant }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    // Five starts of one key in one unit: the room read before the fold (2) admits the first two.
    const ids = (await startExecutions(t.deps, Array.from({ length: 5 }, () => ({ path: 'flow/two', payload: { tenant: 'burst' } })))).map(started);
    const statuses = await Promise.all(ids.map(async (id) => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status));
    expect(statuses).toEqual(['running', 'running', 'queued', 'queued', 'queued']);
    expect(await eventTypes(ids[0])).toEqual(['execution.started', 'step.enter', 'command.issued']);
    expect(await eventTypes(ids[2])).toEqual(['execution.started', 'execution.queued']);
    const first = (await http(t.url, 'GET', `/api/events/${ids[0]}`)).body.events[0];
    expect(first.context.input.admission).toEqual({ limit: '@flow/two', key: 'burst', capacity: 2, debounce: null, admitted: true });
    expect((await db.query(`SELECT running FROM core.flow_key WHERE name = '@flow/two' AND key = 'burst'`)).rows[0].running).toBe(2);
    // A later start of the key queues behind them, though the first ends: the queue goes first.
    expect((await http(t.url, 'POST', `/api/executions/${ids[0]}/cancel`, { reason: 'done' })).status).toBe(200);
    await expect.poll(async () => (await http(t.url, 'GET', `/api/executions/${ids[2]}`)).body.status, { timeout: 15_000 }).toBe('running');
    const later = started((await startExecutions(t.deps, [{ path: 'flow/two', payload: { tenant: 'burst' } }]))[0]);
    expect((await http(t.url, 'GET', `/api/executions/${later}`)).body.status).toBe('queued');
    for (const id of [...ids, later]) await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' });
    await expect.poll(async () => (await db.query(`SELECT running FROM core.flow_key WHERE name = '@flow/two' AND key = 'burst'`)).rows[0].running, { timeout: 15_000 }).toBe(0);
  });

  it("another server's stale memory of a key's room fails its write's guard: read again, its start queues and the limit holds", async () => {
    expect((await http(t.url, 'PUT', '/api/limits/solo', { concurrency: 1 })).status).toBe(200);
    await register(`apiVersion: svc/v1
metadata: { name: solo, path: flow/solo }
concurrency: { limit: solo, key: k }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    // Server B reads the key's room (1) while it is free; then this server takes the slot.
    const b = { ...t.deps, snapshots: new HotSnapshots(), rooms: new KeyRooms(t.deps.db) };
    expect(await b.rooms.take(t.deps.db, [{ limit: 'solo', key: 'k', capacity: null }])).toEqual(new Map([['solo\u0000k', 1]]));
    const a1 = started((await startExecutions(t.deps, [{ path: 'flow/solo', payload: {} }]))[0]);
    expect((await http(t.url, 'GET', `/api/executions/${a1}`)).body.status).toBe('running');
    const retries = async () => (await b.metrics.registry.getSingleMetric('svc_route_retries_total')?.get())?.values.find((v) => v.labels.reason === 'moved')?.value ?? 0;
    const before = await retries();
    const b1 = started((await startExecutions(b, [{ path: 'flow/solo', payload: {} }]))[0]);
    expect(await retries()).toBe(before + 1);
    expect((await http(t.url, 'GET', `/api/executions/${b1}`)).body.status).toBe('queued');
    expect(await eventTypes(b1)).toEqual(['execution.started', 'execution.queued']);
    expect((await db.query(`SELECT running FROM core.flow_key WHERE name = 'solo' AND key = 'k'`)).rows[0].running).toBe(1);
    // Written admitted beyond the room by hand, the admission is refused by the trigger, not counted.
    const refused = await db.query(`INSERT INTO core.admission (execution_id, limit_name, limit_key, admitted_at) VALUES ($1, 'solo', 'k', now())`, [b1]).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'SVC01' });
    for (const id of [a1, b1]) await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' });
  });
});

/** The one statement `run` sends, with its values (a recording Queryable: nothing reaches the database). */
async function statementOf(run: (q: Queryable) => Promise<unknown>): Promise<{ text: string; values: unknown[] }> {
  const sent: { text: string; values: unknown[] }[] = [];
  const query = async (config: string | pg.QueryConfig, values?: unknown[]) => {
    sent.push(typeof config === 'string' ? { text: config, values: values ?? [] } : { text: config.text, values: config.values ?? [] });
    return { rows: [], rowCount: 0 };
  };
  await run({ query } as unknown as Queryable);
  return sent[0];
}

/** Rows the statement read from core.flow_key, run for real under EXPLAIN ANALYZE and rolled back. */
async function flowKeyRowsRead(s: { text: string; values: unknown[] }): Promise<number> {
  await db.query('BEGIN');
  try {
    // As the service's sessions plan (src/db/db.ts).
    await db.query('SET LOCAL enable_seqscan = off');
    const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, s.values);
    let n = 0;
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'flow_key' && node['Node Type'] !== 'ModifyTable') n += Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    return n;
  } finally {
    await db.query('ROLLBACK');
  }
}

describe('keys at scale', () => {
  it('the claim and the admitter read the keys with work waiting, not every key ever made (10,000 idle tenants)', async () => {
    expect((await http(t.url, 'PUT', '/api/limits/tenants', { concurrency: 1 })).status).toBe(200);
    await db.query(`INSERT INTO core.flow_key (name, key) SELECT 'tenants', 't' || i FROM generate_series(1, 10000) i`);
    try {
      await register(`apiVersion: svc/v1
metadata: { name: many, path: flow/many }
workflow:
  - step: start
    tool: { kind: noop, name: n, limit: { name: tenants, key: busy } }
`);
      const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/many' });
      expect(run.status).toBe(200);
      // A few keys have work waiting (this one, and earlier tests'): the picks read those keys'
      // rows (twice at most: the pick and its count), not the 10,000 idle ones.
      const waiting = async (sql: string) => Number((await db.query(sql)).rows[0].n);
      const commandKeys = await waiting(`SELECT count(DISTINCT (limit_name, limit_key)) AS n FROM core.command WHERE status = 'PENDING' AND limit_name IS NOT NULL`);
      const admissionKeys = await waiting(`SELECT count(DISTINCT (limit_name, limit_key)) AS n FROM core.admission WHERE admitted_at IS NULL AND limit_name IS NOT NULL`);
      expect(commandKeys).toBeGreaterThanOrEqual(1);
      expect(commandKeys + admissionKeys).toBeLessThan(20);
      const claim = await statementOf((q) => claimNextCommands(q, 'w-scale', 1, null));
      expect(await flowKeyRowsRead(claim)).toBeLessThanOrEqual(2 * commandKeys);
      const admit = await statementOf((q) => admitQueued(q, 10, 5_000));
      expect(await flowKeyRowsRead(admit)).toBeLessThanOrEqual(2 * admissionKeys);
      // And the pick still takes it.
      const got = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-scale', max: 1 }, asWorker);
      expect(got.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([run.body.execution_id]);
    } finally {
      await db.query(`DELETE FROM core.flow_key WHERE name = 'tenants' AND key LIKE 't%'`);
    }
  });
});

describe('a rate limit defined just now', () => {
  // The admitter learns which limits have a rate at its looks (at most a second apart when idle);
  // commands of a limit it has not seen make it look at once. Without that, a long-polling claimer
  // of a limit defined since the last look waited up to a second past the next token: three such
  // limits all within the bound by chance is under 10 %. On a server of its own: commands other
  // tests leave waiting would be claimed instead, and a key with room that nobody claims keeps the
  // admitter from telling claimers of another key's token. The bound leaves room for a loaded
  // machine: 200-210 ms alone, 501 ms once in a CI run on a slow 2-core machine, against waits of
  // up to 1,200 ms (660-955 measured) without the look.
  const WITHIN_MS = 600;
  it('its next token reaches a waiting claimer on time (200 ms at 5/s), not at the admitter\'s next look', async () => {
    const own = await startTestApp();
    try {
      for (let n = 0; n < 3; n++) {
        const name = `fresh-${n}`;
        expect((await http(own.url, 'PUT', `/api/limits/${name}`, { rate: { limit: 5, period_seconds: 1, burst: 1 } })).status).toBe(200);
        const yaml = `apiVersion: svc/v1
metadata: { name: fresh, path: flow/fresh-${n} }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: ${name}, key: k } }
`;
        expect((await http(own.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
        const started: number[] = [];
        for (let i = 0; i < 2; i++) {
          const run = await http(own.url, 'POST', '/api/run/playbook', { path: `flow/fresh-${n}` });
          expect(run.status).toBeLessThan(300);
          started.push(run.body.execution_id);
        }
        // The burst: one at once.
        const first = await http(own.url, 'POST', '/api/worker/claim', { worker_id: 'w-fresh', max: 1, wait_ms: 0 }, asWorker);
        expect(first.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([started[0]]);
        const t0 = performance.now();
        const next = await http(own.url, 'POST', '/api/worker/claim', { worker_id: 'w-fresh', max: 1, wait_ms: 3_000 }, asWorker);
        const waited = performance.now() - t0;
        expect(next.body.commands.map((c: { execution_id: number }) => c.execution_id), `limit ${name}`).toEqual([started[1]]);
        expect(waited, `limit ${name}: the second claim waited`).toBeLessThan(WITHIN_MS);
        for (const id of started) expect((await http(own.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' })).status).toBe(200);
      }
    } finally {
      await own.close();
    }
  });
});

describe("the admitter's look, per key", () => {
  it('tells of each rate key that gets a token, and times the next refill, whatever room another key keeps', async () => {
    // Key `wide` keeps tokens after a claim; key `narrow` has none left. The look once answered
    // only the soonest room of all keys: 0 while `wide` kept its tokens, so it slept past
    // `narrow`'s refill and never told claimers of it. Now `wide` is listed as having room and
    // `room` is `narrow`'s refill (2 s at 1 per 2 s: a loaded machine took more than the 200 ms
    // of 5/s between the claim and the look).
    const own = await startTestApp();
    try {
      const rates = { wide: { limit: 5, period_seconds: 1, burst: 5 }, narrow: { limit: 1, period_seconds: 2, burst: 1 } };
      for (const [name, rate] of Object.entries(rates)) {
        expect((await http(own.url, 'PUT', `/api/limits/${name}`, { rate })).status).toBe(200);
        expect((await http(own.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: ${name}, path: flow/per-key-${name} }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: ${name}, key: k } }
` })).status).toBe(201);
        for (let i = 0; i < 3; i++) expect((await http(own.url, 'POST', '/api/run/playbook', { path: `flow/per-key-${name}` })).status).toBeLessThan(300);
      }
      // One of each key (the claim turns between keys).
      const claimed = await http(own.url, 'POST', '/api/worker/claim', { worker_id: 'w-per-key', max: 2, wait_ms: 0 }, asWorker);
      expect(claimed.body.commands).toHaveLength(2);
      const look = await nextAdmitterLook(own.deps.db, 5_000);
      expect(look.roomKeys).toEqual(['wide\nk']);
      expect(look.room).toBeGreaterThan(0);
      expect(look.room).toBeLessThanOrEqual(2_000);
      await new Promise((ok) => setTimeout(ok, 2_050));
      expect((await nextAdmitterLook(own.deps.db, 5_000)).roomKeys).toEqual(['narrow\nk', 'wide\nk']);
    } finally {
      await own.close();
    }
  });
});
