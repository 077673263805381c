// A later start of a debounce burst joins the window the first opened: its payload is the one that
// runs, so its concurrency key and priority are the ones the execution queues, is admitted and
// runs with (real server and database, no worker: commands stay PENDING where their priority shows).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

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

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
const running = async (key: string): Promise<number | undefined> =>
  (await db.query(`SELECT running FROM core.flow_key WHERE name = '@flow/join' AND key = $1`, [key])).rows[0]?.running;

describe('a start that joins an open debounce window', () => {
  it("carries its own concurrency key and priority: the execution waits on the later start's key, is admitted there and its command has its priority", async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: join, path: flow/join }
workload: { tenant: t0, d: x }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
debounce: { key: "{{ workload.d }}", seconds: 1 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    const start = async (payload: Record<string, unknown>, priority: number) => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/join', payload, priority })).body;
    // Tenant globex's one slot is held (no worker: the execution stays running).
    const holder = (await start({ d: 'hold', tenant: 'globex' }, 5)).execution_id;
    await expect.poll(() => statusOf(holder), { timeout: 15_000 }).toBe('running');
    expect(await running('globex')).toBe(1);

    // A burst: acme first, then globex; one execution, with globex's payload.
    const first = await start({ d: 'burst', tenant: 'acme' }, 2);
    const later = await start({ d: 'burst', tenant: 'globex' }, 8);
    expect(later).toMatchObject({ execution_id: first.execution_id, debounced: true });
    const id: number = first.execution_id;
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.flow).toMatchObject({ limit: '@flow/join', key: 'globex', priority: 8, admitted_at: null });

    // Its window closes (1 s): globex has no room, so it stays queued; acme's free slot is not its.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await statusOf(id)).toBe('queued');
    expect(await running('acme')).toBe(0);

    // Globex's slot is given back: admitted there, with the later start's payload and priority.
    expect((await http(t.url, 'POST', `/api/executions/${holder}/cancel`, { reason: 'done' })).status).toBe(200);
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('running');
    const events = (await http(t.url, 'GET', `/api/events/${id}`)).body.events;
    const admitted = events.find((e: { event_type: string }) => e.event_type === 'execution.admitted');
    expect(admitted).toMatchObject({ context: { limit: '@flow/join', key: 'globex', priority: 8 }, result: { d: 'burst', tenant: 'globex' } });
    const commands = (await db.query(`SELECT priority FROM core.command WHERE execution_id = $1`, [id])).rows;
    expect(commands).toEqual([{ priority: 8 }]);
    expect([await running('globex'), await running('acme')]).toEqual([1, 0]);

    // Its end gives back globex's slot, the one it holds.
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' })).status).toBe(200);
    await expect.poll(() => running('globex'), { timeout: 15_000 }).toBe(0);
  });

  it('is admitted on a key nothing used before (its row is made when the admission moves to it)', async () => {
    const start = async (payload: Record<string, unknown>) => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/join', payload })).body.execution_id as number;
    const id = await start({ d: 'fresh', tenant: 'acme' });
    expect(await start({ d: 'fresh', tenant: 'initech' })).toBe(id);
    await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('running');
    expect([await running('initech'), await running('acme')]).toEqual([1, 0]);
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' })).status).toBe(200);
  });

  it('answers the catalog id of the version its execution runs, though a newer one was registered since the window opened', async () => {
    const opened = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/join', payload: { d: 'versions', tenant: 'acme' } })).body;
    const newer = await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: join, path: flow/join, description: a newer version }
workload: { tenant: t0, d: x }
concurrency: { limit: 1, key: "{{ workload.tenant }}" }
debounce: { key: "{{ workload.d }}", seconds: 1 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` });
    expect(newer.body.catalog_id).not.toBe(opened.catalog_id);
    const joined = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/join', payload: { d: 'versions', tenant: 'acme' } })).body;
    expect(joined).toMatchObject({ execution_id: opened.execution_id, debounced: true, catalog_id: opened.catalog_id });
    expect((await http(t.url, 'GET', `/api/executions/${opened.execution_id}`)).body.catalog_id).toBe(opened.catalog_id);
    expect((await http(t.url, 'POST', `/api/executions/${opened.execution_id}/cancel`, { reason: 'done' })).status).toBe(200);
  });
});
