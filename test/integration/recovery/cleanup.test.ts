// POST /api/executions/cleanup and `svc cleanup`: stuck executions cancelled through their machine
// (commands, children, keychain entries), a dry run that changes nothing and lists the same ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runSvc, spawnSvc, withTimeout } from '../../helpers/process.ts';

let t: TestApp;
let db: pg.Client;
let parent: number;
let child: number;
let claimed: number;
let young: number;
let finished: number;

const one = (name: string, tool: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: cleanup/${name} }\nworkflow:\n  - step: start\n    tool: ${tool}\n`;

beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const api = executionApi(t.url);
  await api.register(one('child', '{ name: n, kind: noop }'));
  await api.register(one('parent', '{ name: c, kind: playbook, path: cleanup/child }'));
  await api.register(one('single', '{ name: n, kind: noop }'));
  // No worker runs here: commands stay PENDING unless a test claims them.
  parent = await api.run('cleanup/parent');
  child = (await db.query(`SELECT execution_id FROM core.execution WHERE parent_execution_id = $1`, [parent])).rows[0].execution_id;
  claimed = await api.run('cleanup/single');
  await http(t.url, 'POST', '/api/worker/pool/register', { name: 'w', capacity: 1 }, asWorker);
  const got = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w', max: 10, wait_ms: 0 }, asWorker);
  expect(got.body.commands.map((c: Json) => c.execution_id).sort()).toEqual([child, claimed].sort());
  // Claim the child's command back to PENDING so one is pending and one claimed.
  await db.query(`UPDATE core.command SET status = 'PENDING', worker_id = NULL WHERE execution_id = $1`, [child]);
  finished = await api.run('cleanup/single');
  await db.query(`UPDATE core.command SET status = 'COMPLETED' WHERE execution_id = $1`, [finished]);
  await db.query(`UPDATE core.execution SET status = 'completed' WHERE execution_id = $1`, [finished]);
  await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = ANY($1)`, [[parent, child, claimed, finished]]);
  young = await api.run('cleanup/single');
  const catalogId = (await db.query(`SELECT catalog_id FROM core.execution WHERE execution_id = $1`, [parent])).rows[0].catalog_id;
  for (const [name, scope] of [['loc', 'local'], ['sha', 'shared'], ['glob', 'global']]) {
    await db.query(
      `INSERT INTO core.keychain (cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, execution_id, data_encrypted, expires_at)
       VALUES ($1, $2, $3, 'bearer', 'token', $4, $5, 'sealed', now() + interval '1 hour')`,
      [`${name}:${catalogId}:${parent}`, name, catalogId, scope, scope === 'global' ? null : parent],
    );
  }
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const cleanup = (body?: unknown) => http(t.url, 'POST', '/api/executions/cleanup', body);
const state = async () => ({
  executions: (await db.query(`SELECT execution_id, status, last_event_id FROM core.execution ORDER BY execution_id`)).rows,
  commands: (await db.query(`SELECT command_id, status, attempt, worker_id FROM core.command ORDER BY command_id`)).rows,
  keychain: (await db.query(`SELECT cache_key FROM core.keychain ORDER BY cache_key`)).rows.map((r) => r.cache_key),
});

async function svcCleanup(args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawnSvc(['cleanup', '--server', t.url, ...args], {});
  const code = await withTimeout(p.exited, 30_000, 'svc cleanup');
  return { code, out: p.output() };
}

describe('cleanup of stuck executions', () => {
  it('refuses bad input with 422 naming the field, and changes nothing', async () => {
    const before = await state();
    for (const body of [{ older_than_minutes: 0 }, { older_than_minutes: 1.5 }, { older_than_minutes: '5' }, { dry_run: 'yes' }]) {
      const r = await cleanup(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(r.body.detail.errors)).toMatch(Object.keys(body)[0]);
      if ('older_than_minutes' in body) expect(r.body.detail.errors).toEqual(['older_than_minutes: must be an integer from 1 to 10000000']);
    }
    expect(await state()).toEqual(before);
  });

  it('a dry run lists the stuck executions (API and `svc cleanup --json`) and changes nothing', async () => {
    const before = await state();
    const r = await cleanup({ older_than_minutes: 5, dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ cancelled_count: 3, execution_ids: [parent, child, claimed], message: expect.stringMatching(/^dry run: 3 executions .*would be cancelled; nothing was changed/) });
    // older_than_minutes defaults to 5.
    expect((await cleanup({ dry_run: true })).body.execution_ids).toEqual([parent, child, claimed]);
    expect((await cleanup({ older_than_minutes: 60, dry_run: true })).body).toMatchObject({ cancelled_count: 0, execution_ids: [] });

    const cli = await svcCleanup(['--older-than-minutes', '5', '--dry-run', '--json']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.out)).toEqual(r.body);
    const table = await svcCleanup(['--dry-run']);
    expect(table.code).toBe(0);
    const lines = table.out.trim().split('\n');
    expect(lines[0]).toBe(r.body.message);
    expect(lines[1]).toMatch(/^EXECUTION\s+PATH\s+STARTED\s+PARENT$/);
    expect(lines.slice(2).map((l) => l.trim().split(/\s+/).slice(0, 2))).toEqual([
      [String(parent), 'cleanup/parent'],
      [String(child), 'cleanup/child'],
      [String(claimed), 'cleanup/single'],
    ]);
    expect(await state()).toEqual(before);
  });

  it('cancels each one through its machine: execution.cancelled, commands cancelled, children cancelled, local and shared keychain entries removed', async () => {
    const cli = await svcCleanup(['--older-than-minutes', '5']);
    expect(cli.code).toBe(0);
    expect(cli.out).toMatch(/^cancelled 3 executions with no terminal event started over 5 minutes ago\n/);
    for (const id of [parent, child, claimed]) {
      expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status, `execution ${id}`).toBe('cancelled');
      const events: Json[] = (await http(t.url, 'GET', `/api/events/${id}`)).body.events;
      const cancels = events.filter((e) => e.event_type === 'execution.cancelled');
      expect(cancels).toHaveLength(1);
      expect(cancels[0]).toMatchObject({ status: 'cancelled', context: { reason: id === child ? expect.stringContaining(`parent execution ${parent}`) : 'cleanup', cancelled_at: expect.any(String) } });
    }
    const commands = (await db.query(`SELECT execution_id, status FROM core.command WHERE execution_id = ANY($1)`, [[parent, child, claimed]])).rows;
    expect(commands.map((c) => c.status)).toEqual(commands.map(() => 'CANCELLED'));
    expect(commands.map((c) => c.execution_id).sort()).toEqual([child, claimed].sort());
    // The worker holding the claimed one hears of it at its next beat, and stops it.
    const beat = await http(t.url, 'POST', '/api/worker/pool/heartbeat', { name: 'w', running: (await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [claimed])).rows.map((r) => r.command_id) }, asWorker);
    expect(beat.body.cancelled).toHaveLength(1);
    const keys = (await state()).keychain;
    expect(keys.some((k) => k.startsWith('loc:') || k.startsWith('sha:'))).toBe(false);
    expect(keys.some((k) => k.startsWith('glob:'))).toBe(true);
    // Left alone: the young one and the finished one.
    expect((await http(t.url, 'GET', `/api/executions/${young}`)).body.status).toBe('running');
    expect((await http(t.url, 'GET', `/api/executions/${finished}`)).body.status).toBe('completed');
    // Without a body: 5 minutes, for real.
    expect((await cleanup()).body).toMatchObject({ cancelled_count: 0, execution_ids: [], message: expect.stringMatching(/^cancelled 0 executions/) });
  });

  it('`svc cleanup` refuses bad options with exit code 2, an unreachable server with 3', async () => {
    const bad = await svcCleanup(['--older-than-minutes', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/--older-than-minutes expects an integer >= 1/);
    // A value the server refuses: its detail, field and all, reaches stderr.
    const refused = await svcCleanup(['--older-than-minutes', '10000001', '--dry-run']);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/HTTP 422 invalid body\n  - older_than_minutes: /);
    // With --json a program reads the refusal on stdout too (as svc run --json gives it); the text stays on stderr.
    const refusedJson = await runSvc(['cleanup', '--server', t.url, '--older-than-minutes', '10000001', '--json'], {});
    expect(refusedJson.code).toBe(1);
    expect(JSON.parse(refusedJson.stdout)).toEqual({ error: "POST /api/executions/cleanup: HTTP 422 invalid body", status: 422, detail: { code: 'unprocessable', message: 'invalid body', errors: [expect.stringMatching(/^older_than_minutes: /)] } });
    expect(refusedJson.stderr).toMatch(/older_than_minutes: /);
    const p = spawnSvc(['cleanup', '--server', 'http://127.0.0.1:9', '--dry-run'], {});
    expect(await withTimeout(p.exited, 30_000, 'svc cleanup')).toBe(3);
    expect(p.output()).toMatch(/unreachable/);
  });
  it('cancels running executions only: a paused one (an operator paused it) and a queued one (a limit holds it) wait on purpose', async () => {
    const api = executionApi(t.url);
    await api.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: gated, path: cleanup/gated }\nconcurrency: { limit: 1 }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`);
    const paused = await api.run('cleanup/single');
    expect((await http(t.url, 'POST', `/api/executions/${paused}/pause`, {})).status).toBe(200);
    const holder = await api.run('cleanup/gated');
    const queued = await api.run('cleanup/gated');
    const statusOf = async (id: number) => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
    expect([await statusOf(paused), await statusOf(holder), await statusOf(queued)]).toEqual(['paused', 'running', 'queued']);
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = ANY($1)`, [[paused, holder, queued]]);

    const dry = await cleanup({ dry_run: true });
    expect(dry.body).toMatchObject({ cancelled_count: 1, execution_ids: [holder] });
    const done = await cleanup({});
    expect(done.body).toMatchObject({ cancelled_count: 1, execution_ids: [holder] });
    // The queued one is admitted once the running one is cancelled; the paused one stays paused.
    expect(await statusOf(holder)).toBe('cancelled');
    expect(await statusOf(paused)).toBe('paused');
    expect(await statusOf(queued)).not.toBe('cancelled');
  });

  it("reads an execution's age from its execution.started event as well (the log is the truth; the projection is derived from it)", async () => {
    const api = executionApi(t.url);
    const aged = await api.run('cleanup/single');
    const fresh = await api.run('cleanup/single');
    // Only the log says it is old: a client that knows the spec's core.event, not the projection.
    await db.query(`UPDATE core.event SET created_at = created_at - interval '10 minutes' WHERE execution_id = $1`, [aged]);
    const dry = await cleanup({ dry_run: true });
    expect(dry.body.execution_ids).toContain(aged);
    expect(dry.body.execution_ids).not.toContain(fresh);
    expect((await cleanup({})).body.execution_ids).toContain(aged);
    expect((await http(t.url, 'GET', `/api/executions/${aged}`)).body.status).toBe('cancelled');
    expect((await http(t.url, 'GET', `/api/executions/${fresh}`)).body.status).toBe('running');
  });
});
