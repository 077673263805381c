// A workload's access_token is sealed on every path that starts an execution, not only on the two
// start routes (start-routes.test.ts): a trigger fired by hand, a schedule's fire and backfill, a
// webhook delivery, an MCP lifecycle action and a `playbook` task's child. No row of the database
// holds the token (but the catalog and trigger rows of a playbook that has it written in), the
// workload holds a handle, and the worker of its `mcp` task exchanges the handle for the token.
// A handle already is passed on, not sealed again, only where it is the execution tree's own (a
// parent's passed to its child; a retry's or a resume's); from a client it is text, sealed again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutions } from '../../../actors/start-execution.ts';
import { CLAIM_HEADERS } from '../../../src/protocol.ts';
import { secretHandleId } from '../../../src/secret-handle.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;

const HOOK_SECRET = 'seal-hook-secret-5f1c2e9a7b3d4068';
// One per path, so that a leak names its path.
const TOKEN = {
  fire: 'FIRE_TOKEN_SECRET_1e7a',
  schedule: 'SCHEDULE_TOKEN_SECRET_9b2c',
  webhook: 'WEBHOOK_TOKEN_SECRET_4d8f',
  lifecycle: 'LIFECYCLE_TOKEN_SECRET_7c3e',
  parent: 'PARENT_TOKEN_SECRET_2a6b',
  child: 'CHILD_LITERAL_TOKEN_SECRET_8e5d',
};

// The one step of each: an `mcp` task (whose command carries the workload, handle included).
const MCP_STEP = `workflow:
  - step: start
    tool: { name: call, kind: mcp, endpoint: "http://127.0.0.1:9/mcp", method: tools/list }
`;
const TRIGGERED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: triggered, path: seal/triggered }
triggers:
  - { name: by_hand, kind: schedule, cron: "0 2 * * *" }
  - { name: hourly, kind: schedule, cron: "@hourly", payload: { access_token: ${TOKEN.schedule} } }
  - { name: hook, kind: webhook, auth: seal_hook, signature: bearer, payload: { access_token: "{{ request.body.access_token }}" } }
${MCP_STEP}`;
const LIFECYCLE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: deploy, path: seal/deploy }
${MCP_STEP}`;
const SERVER = `apiVersion: svc/v1
kind: Mcp
metadata: { name: sealed-srv, path: mcp/sealed-srv }
endpoint: http://127.0.0.1:9/mcp
lifecycle: { deploy: seal/deploy }
`;
const CHILD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: seal/child }
${MCP_STEP}`;
// A step's tasks run one after another: each way of passing a token has its own parent.
const parent = (path: string, args: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: ${path} }
workflow:
  - step: start
    tool: { name: child, kind: playbook, path: seal/child, args: ${args} }
`;
const PASSES_HANDLE = parent('seal/passes-handle', '{ access_token: "{{ workload.access_token }}" }');
// Handle text that came with data (another execution's, read from its events): not this tree's own.
const PASSES_OTHER = parent('seal/passes-other', '{ access_token: "{{ workload.other }}" }');
const OWN_FIELD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: own-field, path: seal/own-field }
workflow:
  - step: start
    tool: { name: call, kind: mcp, endpoint: "http://127.0.0.1:9/mcp", method: tools/call, tool: echo, arguments: { text: "{{ workload.other }}" } }
`;
const LITERAL = parent('seal/literal', `{ access_token: ${TOKEN.child} }`);

beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'seal_hook', type: 'custom', data: { secret: HOOK_SECRET } })).status).toBe(201);
  for (const content of [TRIGGERED, LIFECYCLE, CHILD, PASSES_HANDLE, LITERAL, PASSES_OTHER, OWN_FIELD]) {
    const r = await http(t.url, 'POST', '/api/catalog/register', { content, resource_type: 'playbook' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const srv = await http(t.url, 'POST', '/api/catalog/register', { content: SERVER, resource_type: 'mcp' });
  expect(srv.status, JSON.stringify(srv.body)).toBe(201);
});
afterAll(async () => t?.close());

/** The tables (partitions counted with their table) that hold `text` in any row. */
async function tablesHolding(text: string): Promise<string[]> {
  const { rows: tables } = await t.deps.db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'core' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  const holding: string[] = [];
  for (const { name } of tables) {
    const { rows } = await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${name} x WHERE x::text LIKE $1`, [`%${text}%`]);
    if (rows[0].n > 0) holding.push(name);
  }
  return holding;
}

/** The access_token of an execution's workload as `execution.started` recorded it. */
async function startedToken(executionId: number): Promise<unknown> {
  const { rows } = await t.deps.db.query<{ token: unknown }>(
    `SELECT context->'input'->'workload'->'access_token' AS token FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`,
    [executionId],
  );
  return rows[0]?.token;
}

/** What the worker of the execution's command gets: it claims the command and exchanges the workload's handle, as for an `mcp` task. */
async function workerToken(executionId: number): Promise<string> {
  const { rows } = await t.deps.db.query<{ command_id: number }>('SELECT command_id FROM core.command WHERE execution_id = $1 ORDER BY seq LIMIT 1', [executionId]);
  expect(rows, `a command of execution ${executionId}`).toHaveLength(1);
  const workerId = `w-${executionId}`;
  const claimed = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: workerId }, asWorker);
  expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
  const handle = secretHandleId(claimed.body.context.workload.access_token);
  expect(handle, JSON.stringify(claimed.body.context.workload)).toBeDefined();
  const claim = { [CLAIM_HEADERS.command]: String(claimed.body.command_id), [CLAIM_HEADERS.attempt]: String(claimed.body.attempt), [CLAIM_HEADERS.worker]: workerId };
  const secret = await http(t.url, 'GET', `/api/secrets/${handle}`, undefined, { ...asWorker, ...claim });
  expect(secret.status, JSON.stringify(secret.body)).toBe(200);
  return secret.body.value as string;
}

/** The execution a trigger's fire started. */
async function firedExecution(name: string, fireKey: string): Promise<number> {
  const { rows } = await t.deps.db.query<{ execution_id: number }>(`SELECT execution_id::int FROM core.trigger_fire WHERE path = 'seal/triggered' AND name = $1 AND fire_key = $2`, [name, fireKey]);
  expect(rows[0]?.execution_id, `fire ${name} ${fireKey}`).toBeTypeOf('number');
  return rows[0].execution_id;
}

describe('an access_token in the workload of an execution started', () => {
  it('by a trigger fired by hand: sealed, and its worker gets the token', async () => {
    const fired = await http(t.url, 'POST', '/api/triggers/seal/triggered/by_hand/fire', { fire_key: 'k1', payload: { access_token: TOKEN.fire } });
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    expect(await startedToken(fired.body.execution_id)).toMatch(/^svc-secret:/);
    expect(await tablesHolding(TOKEN.fire)).toEqual([]);
    expect(await workerToken(fired.body.execution_id)).toBe(TOKEN.fire);
  });

  it('by a schedule\'s fire and its backfill (the token written in the trigger\'s payload): sealed in the execution\'s rows', async () => {
    await t.deps.db.query(`UPDATE core.trigger SET next_fire_at = '2030-01-01T00:00:00Z' WHERE path = 'seal/triggered' AND name = 'hourly'`);
    await runScheduleTick(t.deps, () => new Date('2030-01-01T00:00:00.010Z'));
    const ticked = await firedExecution('hourly', '2030-01-01T00:00:00.000Z');
    const backfill = await http(t.url, 'POST', '/api/triggers/seal/triggered/hourly/backfill', { from: '2020-01-01T00:00:00Z', to: '2020-01-01T01:30:00Z' });
    expect(backfill.status, JSON.stringify(backfill.body)).toBe(200);
    const backfilled = await firedExecution('hourly', '2020-01-01T01:00:00.000Z');
    for (const id of [ticked, backfilled]) expect(await startedToken(id)).toMatch(/^svc-secret:/);
    // Where the playbook has it written: its catalog version and its trigger's spec, nowhere else.
    expect(await tablesHolding(TOKEN.schedule)).toEqual(['catalog', 'trigger']);
    expect(await workerToken(backfilled)).toBe(TOKEN.schedule);
  });

  it('by a webhook delivery whose body carries it: sealed, and its worker gets the token', async () => {
    const res = await fetch(`${t.url}/api/hooks/seal/triggered/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${HOOK_SECRET}` },
      body: JSON.stringify({ access_token: TOKEN.webhook }),
    });
    const body: Json = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(202);
    const id: number = body.execution_id;
    expect(await startedToken(id)).toMatch(/^svc-secret:/);
    expect(await tablesHolding(TOKEN.webhook)).toEqual([]);
    expect(await workerToken(id)).toBe(TOKEN.webhook);
  });

  it('by an MCP lifecycle action whose payload carries it: sealed, and its worker gets the token', async () => {
    const r = await http(t.url, 'POST', '/api/mcp/mcp/sealed-srv/lifecycle/deploy', { payload: { access_token: TOKEN.lifecycle } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(await startedToken(r.body.execution_id)).toMatch(/^svc-secret:/);
    expect(await tablesHolding(TOKEN.lifecycle)).toEqual([]);
    expect(await workerToken(r.body.execution_id)).toBe(TOKEN.lifecycle);
  });

  it('as a playbook task\'s child: the parent\'s handle is passed on as it is, a token in its args is sealed', async () => {
    const childOf = async (path: string, payload: Record<string, unknown>): Promise<{ parent: number; child: number }> => {
      const run = await http(t.url, 'POST', '/api/run/playbook', { path, payload });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      const { rows } = await t.deps.db.query<{ child: number }>(
        `SELECT (context->>'child_execution_id')::int AS child FROM core.event WHERE execution_id = $1 AND event_type = 'child.started'`,
        [run.body.execution_id],
      );
      expect(rows, `the child of ${path}`).toHaveLength(1);
      return { parent: run.body.execution_id, child: rows[0].child };
    };
    const passes = await childOf('seal/passes-handle', { access_token: TOKEN.parent });
    const parentHandle = await startedToken(passes.parent);
    expect(parentHandle).toMatch(/^svc-secret:/);
    expect(await startedToken(passes.child)).toBe(parentHandle);
    const literal = await childOf('seal/literal', {});
    expect(await startedToken(literal.child)).toMatch(/^svc-secret:/);
    expect(await tablesHolding(TOKEN.parent)).toEqual([]);
    // Where the playbook has it written: its catalog version, nowhere else.
    expect(await tablesHolding(TOKEN.child)).toEqual(['catalog']);
    expect(await workerToken(passes.child)).toBe(TOKEN.parent);
    expect(await workerToken(literal.child)).toBe(TOKEN.child);
  });

  it('by a client naming another execution\'s handle: sealed again as text, so its worker gets that text, not the other\'s token', async () => {
    const fired = await http(t.url, 'POST', '/api/triggers/seal/triggered/by_hand/fire', { fire_key: 'victim', payload: { access_token: TOKEN.fire } });
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    const foreign = await startedToken(fired.body.execution_id);
    expect(foreign).toMatch(/^svc-secret:/);
    // A viewer sees the handle in the victim's events; an operator starts an execution with it.
    const started = await http(t.url, 'POST', '/api/run/playbook', { path: 'seal/deploy', payload: { access_token: foreign } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const own = await startedToken(started.body.execution_id);
    expect(own).toMatch(/^svc-secret:/);
    expect(own).not.toBe(foreign);
    expect(await workerToken(started.body.execution_id)).toBe(foreign);
  });

  it('handle text that came with data grants nothing: a child is given it as text, and a command carrying it elsewhere than its workload\'s access_token is refused it', async () => {
    const fired = await http(t.url, 'POST', '/api/triggers/seal/triggered/by_hand/fire', { fire_key: 'victim-2', payload: { access_token: TOKEN.fire } });
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    const foreign = await startedToken(fired.body.execution_id);
    expect(foreign).toMatch(/^svc-secret:/);
    // Passed to a child through a field of the workload other than access_token: the child's is a handle of its own.
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'seal/passes-other', payload: { other: foreign } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const { rows } = await t.deps.db.query<{ child: number }>(
      `SELECT (context->>'child_execution_id')::int AS child FROM core.event WHERE execution_id = $1 AND event_type = 'child.started'`,
      [run.body.execution_id],
    );
    expect(rows).toHaveLength(1);
    const childHandle = await startedToken(rows[0].child);
    expect(childHandle).toMatch(/^svc-secret:/);
    expect(childHandle).not.toBe(foreign);
    expect(await workerToken(rows[0].child)).toBe(foreign);
    // A command carrying it in a task's arguments: a worker holding that command is refused the secret.
    const own = await http(t.url, 'POST', '/api/run/playbook', { path: 'seal/own-field', payload: { other: foreign } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const { rows: cmd } = await t.deps.db.query<{ command_id: number }>('SELECT command_id FROM core.command WHERE execution_id = $1', [own.body.execution_id]);
    const claimed = await http(t.url, 'POST', `/api/commands/${cmd[0].command_id}/claim`, { worker_id: 'w-own' }, asWorker);
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(JSON.stringify(claimed.body)).toContain(String(foreign));
    const claim = { [CLAIM_HEADERS.command]: String(claimed.body.command_id), [CLAIM_HEADERS.attempt]: String(claimed.body.attempt), [CLAIM_HEADERS.worker]: 'w-own' };
    const secret = await http(t.url, 'GET', `/api/secrets/${secretHandleId(foreign)}`, undefined, { ...asWorker, ...claim });
    expect(secret.status, JSON.stringify(secret.body)).toBe(403);
    expect(JSON.stringify(secret.body)).not.toContain(TOKEN.fire);
  });

  it('by the engine with an earlier execution\'s own workload (a retry, a resume): the handle is passed on, nothing sealed again', async () => {
    const { rows: before } = await t.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM core.execution_secret');
    const { rows: [one] } = await t.deps.db.query<{ handle: string }>('SELECT handle::text FROM core.execution_secret LIMIT 1');
    const handle = `svc-secret:${one.handle}`;
    const [started] = await startExecutions(t.deps, [{ path: 'seal/deploy', payload: { access_token: handle }, ownHandles: true }]);
    if (!('executionId' in started)) throw started;
    expect(await startedToken(started.executionId)).toBe(handle);
    const { rows: after } = await t.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM core.execution_secret');
    expect(after[0].n).toBe(before[0].n);
  });
});
