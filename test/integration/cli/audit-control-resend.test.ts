// `svc signal` and `svc retry` sent their request once, with no Idempotency-Key unless given one:
// a signal whose answer was lost (a proxy dropped it, or the server died after its commit) and
// then sent again by hand was kept twice for a step that buffers it, and a 503 while the database
// was away ended the command (exit 1) where `svc run` sends again. Now, as `svc run` does, each
// sends a key of its own (or --idempotency-key's) and sends the same request again when no answer
// came or the server answered 502-504: one signal kept, one retry started, the command succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startLossyProxy, type LossyProxy, type ProxyAct } from '../../helpers/lossy-proxy.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let app: TestApp;
let proxy: LossyProxy;
/** What the proxy does to the next control request: drop its answer, or answer 503 itself. */
let next: ProxyAct = null;
/** The Idempotency-Key of each control request that reached the proxy, in order. */
const keys: (string | undefined)[] = [];

beforeAll(async () => {
  app = await startTestApp();
  proxy = await startLossyProxy(app.url, (req) => {
    if (!(req.method === 'POST' && /\/(signals\/[^/]+|retry)$/.test(req.url ?? ''))) return null;
    keys.push(typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined);
    const act = next;
    next = null;
    return act;
  });
  for (const content of [
    'apiVersion: svc/v1\nmetadata: { name: gate, path: resend/gate }\nworkflow:\n  - step: start\n    wait: { signal: open }\n    next: take\n  - step: take\n    wait: { signal: go, buffer: true }\n',
    // Fails with no worker: its until renders to no time.
    'apiVersion: svc/v1\nmetadata: { name: fails, path: resend/fails }\nworkload: { when: soon }\nworkflow:\n  - step: start\n    wait: { until: \"{{ workload.when }}\" }\n',
  ]) {
    const reg = await http(app.url, 'POST', '/api/catalog/playbook', { content });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  }
});
afterAll(async () => {
  await proxy?.close();
  await app?.close();
});

const svc = (args: string[]) => runSvc(args, { SVC_SERVER_URL: proxy.url });
const start = async (path: string) => (await http(app.url, 'POST', '/api/run/playbook', { path })).body.execution_id as number;
const kept = async (id: number) => ((await http(app.url, 'GET', `/api/executions/${id}/state`)).body.kept_signals as Json[]).length;

describe('svc signal and svc retry sent again', () => {
  it('a signal whose answer was lost is sent again with the same key: kept once, and svc signal says so', async () => {
    const id = await start('resend/gate');
    await until(`execution ${id} waits`, async () => ((await http(app.url, 'GET', `/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
    keys.length = 0;
    next = 'lose';
    const r = await svc(['signal', String(id), 'go', '--data', '{"n": 1}']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/signal go buffered to step take of execution \d+/);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await kept(id)).toBe(1);
  });

  it('a signal answered 503 is sent again with the same key; a key given is the one sent', async () => {
    const id = await start('resend/gate');
    await until(`execution ${id} waits`, async () => ((await http(app.url, 'GET', `/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
    keys.length = 0;
    next = 'refuse';
    const r = await svc(['signal', String(id), 'go', '--idempotency-key', 'approve-42']);
    expect(r.code, r.stderr).toBe(0);
    expect(keys).toEqual(['approve-42', 'approve-42']);
    expect(await kept(id)).toBe(1);
  });

  it('a retry whose answer was lost starts one execution, and svc retry names it', async () => {
    const failed = await start('resend/fails');
    await until(`execution ${failed} failed`, async () => (await http(app.url, 'GET', `/api/executions/${failed}`)).body.status === 'failed', 20_000);
    keys.length = 0;
    next = 'lose';
    const r = await svc(['retry', String(failed)]);
    expect(r.code, r.stderr).toBe(0);
    expect(new Set(keys).size).toBe(1);
    const { rows } = await app.deps.db.query<{ execution_id: number }>(
      `SELECT execution_id FROM core.event WHERE event_type = 'execution.started' AND (context->>'retry_of')::bigint = $1`,
      [failed],
    );
    expect(rows).toHaveLength(1);
    expect(r.stdout).toContain(`execution ${rows[0].execution_id} started: a retry of ${failed}`);
  });
});
