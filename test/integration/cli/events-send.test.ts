import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freePort } from '../../helpers/ports.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import type { Json } from '../../helpers/http.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

// The real `svc events send` against a real server.

let t: TestApp;
let dir: string;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.05' });
  await executionApi(t.url).register(noopPlaybook('cli/two', 2));
  dir = await mkdtemp(join(tmpdir(), 'svc-events-cli-'));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const svcEvents = (args: string[], env: Record<string, string> = {}) => runSvc(['events', ...args], { SVC_SERVER_URL: t.url, ...env });

/** A batch file completing the first command of a new execution. */
async function batchFile(name: string): Promise<{ file: string; id: number }> {
  const id = await executionApi(t.url).run('cli/two');
  const row = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  const cmd: Json = await batchApi(t.url).claim(Number(row.rows[0].command_id), 'w1');
  const file = join(dir, name);
  await writeFile(file, JSON.stringify({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }));
  return { file, id };
}

describe('svc events send', () => {
  it('--follow sends the batch and follows its stream to completion', async () => {
    const { file } = await batchFile('follow.json');
    const r = await svcEvents(['send', file, '--follow']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^batch [0-9a-f-]{36} accepted: 3 events \(ids \d+-\d+\), queue depth \d+$/);
    expect(lines.at(-1)).toMatch(/^batch [0-9a-f-]{36} completed after \d+\.\ds: 3 events routed; 1 commands issued$/);
    // One line per state seen on the stream, ending with the terminal one.
    expect(lines.slice(1, -1).at(-1)).toMatch(/^\[\d+\.\ds\] completed: /);
  });

  it('--idempotency-key: sent twice, the second answer is the first one, marked duplicate (--json)', async () => {
    const { file } = await batchFile('key.json');
    const first = await svcEvents(['send', file, '--idempotency-key', 'cli-key-1', '--json']);
    const second = await svcEvents(['send', file, '--idempotency-key', 'cli-key-1', '--json']);
    expect([first.code, second.code]).toEqual([0, 0]);
    const a = JSON.parse(first.stdout);
    const b = JSON.parse(second.stdout);
    expect(a).toMatchObject({ status: 'accepted', duplicate: false, idempotency_key: 'cli-key-1' });
    expect(b).toEqual({ ...a, duplicate: true });
    const final = await svcEvents(['send', file, '--idempotency-key', 'cli-key-1', '--follow', '--json']);
    expect(final.code).toBe(0);
    expect(JSON.parse(final.stdout)).toMatchObject({ request_id: a.request_id, state: 'completed', commands_generated: 1 });
  });

  it('exits 1 with the server problems when the batch is refused, 2 on a usage error, 3 when no server answers', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ execution_id: 1, events: [{ event_type: 'playbook.completed' }] }));
    const refused = await svcEvents(['send', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('HTTP 422');
    expect(refused.stderr).toContain('events[0].event_type');

    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{nope');
    // Every exit 2 says what was wrong and how to call it, as the other commands' usage errors do.
    for (const args of [['send', notJson], ['send', join(dir, 'missing.json')], ['send']]) {
      const usage = await svcEvents(args);
      expect(usage.code, args.join(' ')).toBe(2);
      expect(usage.stderr, args.join(' ')).toContain('usage: svc events send <FILE.json>');
    }
    expect((await svcEvents(['push', bad])).code).toBe(2);

    const port = await freePort();
    const gone = await svcEvents(['send', bad, '--server', `http://127.0.0.1:${port}`]);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toContain('cannot reach the server');
  });
});

describe('svc events send against SVC_AUTH=token', () => {
  let a: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ SVC_AUTH: 'token', SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.05' });
  });
  afterAll(async () => a?.close());

  it('sends SVC_API_TOKEN with the batch and with its stream; without it the server refuses', async () => {
    const token = await createApiToken(a.deps.db, 'ops', 'operator');
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: noopPlaybook('cli/one', 1) }, bearer(token))).status).toBe(201);
    const id = (await http(a.url, 'POST', '/api/run/playbook', { path: 'cli/one' }, bearer(token))).body.execution_id;
    const row = await a.deps.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
    const cmd: Json = await batchApi(a.url).claim(Number(row.rows[0].command_id), 'w1');
    const file = join(dir, 'token.json');
    await writeFile(file, JSON.stringify({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }));
    const refused = await svcEvents(['send', file], { SVC_SERVER_URL: a.url });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('HTTP 401');
    const sent = await svcEvents(['send', file, '--follow', '--json'], { SVC_SERVER_URL: a.url, SVC_API_TOKEN: token });
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ state: 'completed', execution_id: id });
  });
});
