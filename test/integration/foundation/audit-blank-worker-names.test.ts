// A worker pool's `name` and a report's or batch's `worker_id` could be blank (`"   "`) or hold
// control characters (`"a\nb"`): a pool of no visible name was registered and listed, a batch
// was accepted from a worker no one could tell apart, and a newline in a name split the lines
// that show it. They are now refused, 422 naming the field (`worker_id: must not be blank`), as
// a trigger's blank `fire_key` is; nothing registered or accepted. Found by the bad-input audit (helper).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const BLANK = 'must not be blank';
const CONTROL = 'must not hold control characters';
const refused = (res: { status: number; body: Json }, errors: string[]) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail?.errors).toEqual(errors);
};
const worker = (path: string, body: unknown) => http(t.url, 'POST', path, body, asWorker);

describe('worker names', () => {
  it('a blank or control-character pool name is refused on every pool route, and no pool is registered', async () => {
    refused(await worker('/api/worker/pool/register', { name: '   ' }), [`name: ${BLANK}`]);
    refused(await worker('/api/worker/pool/register', { name: '' }), [`name: ${BLANK}`]);
    refused(await worker('/api/worker/pool/register', { name: 'pool\nforged line' }), [`name: ${CONTROL}`]);
    refused(await worker('/api/worker/pool/register', { name: '\t' }), [`name: ${BLANK}`, `name: ${CONTROL}`]);
    refused(await worker('/api/worker/pool/heartbeat', { name: '  ' }), [`name: ${BLANK}`]);
    refused(await worker('/api/worker/pool/deregister', { name: 'a\u001b[2Jb' }), [`name: ${CONTROL}`]);
    const pools = (await http(t.url, 'GET', '/api/worker/pools')).body.pools as Json[];
    expect(pools.filter((p) => String(p.name).trim() === '' || /\p{Cc}/u.test(String(p.name)))).toEqual([]);
    // A name with inner spaces is still a name.
    expect((await worker('/api/worker/pool/register', { name: 'pool a' })).status).toBe(200);
  });

  it('a blank worker_id is refused on claims and reports', async () => {
    refused(await worker('/api/worker/claim', { worker_id: ' ' }), [`worker_id: ${BLANK}`]);
    refused(await worker('/api/commands/1/claim', { worker_id: '  ' }), [`worker_id: ${BLANK}`]);
    refused(await worker('/api/worker/report', { worker_id: 'w\r', events: [] }), [`worker_id: ${CONTROL}`]);
  });

  it('a batch from a blank or control-character worker_id is refused and nothing is accepted', async () => {
    const api = executionApi(t.url);
    await api.register(noopPlaybook('audit/blank-worker', 1));
    const id = await api.run('audit/blank-worker');
    const batches = batchApi(t.url);
    const events = [{ event_type: 'command.started', step: 's1' }];
    refused(await batches.post({ execution_id: id, worker_id: '   ', events }), [`worker_id: ${BLANK}`]);
    refused(await batches.post({ execution_id: id, worker_id: 'w\u0007', events }), [`worker_id: ${CONTROL}`]);
    const rows = await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.batch_request WHERE execution_id = $1`, [id]);
    expect(rows.rows[0].n).toBe(0);
  });
});
