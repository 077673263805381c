// A playbook's inline limit (`concurrency: {limit: N}`, kept as `@<path>`) is shared by every
// version of the playbook, and its N is the newest version's: registering another N "applies at
// once" (docs/flow-control.md, "Caveats"). An execution of an older version started again (a
// retry runs the version it retries; a start may name `version`) carried its own version's N, and
// its admission set the key's N to it: the newest N of 1 let a retry of a version with N 3 run
// beside the one running, and a retry of a version with N 1 after a raise to 3 held the key at 1.
// Real server and database, no worker: the steps wait an hour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
const playbook = (path: string, n: number) => `apiVersion: svc/v1
metadata: { name: inline, path: ${path} }
concurrency: { limit: ${n}, key: acme }
workflow:
  - step: start
    wait: { for: 1h }
`;

async function register(path: string, n: number): Promise<void> {
  const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook(path, n) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function start(path: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id;
}

async function cancel(id: number): Promise<void> {
  expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test' })).status).toBe(200);
}

/** A cancelled execution of the playbook's version 1 (N `n`), to retry once a newer version is registered. */
async function cancelledOfVersion1(path: string, n: number): Promise<number> {
  await register(path, n);
  const id = await start(path);
  await cancel(id);
  return id;
}

async function retry(id: number): Promise<number> {
  const r = await http(t.url, 'POST', `/api/executions/${id}/retry`, {});
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.execution_id;
}

describe("an older version of a playbook started again under its inline limit", () => {
  it('waits for room under the newest N, lowered since: a retry and a start naming the version are queued', async () => {
    const path = 'flow/inline-lowered-old';
    const old = await cancelledOfVersion1(path, 3);
    await register(path, 1);
    const running = await start(path);
    expect(await statusOf(running)).toBe('running');
    const retried = await retry(old);
    const named = await start(path, { version: 1 });
    expect([await statusOf(retried), await statusOf(named)]).toEqual(['queued', 'queued']);
    expect((await http(t.url, 'GET', `/api/limits/@${encodeURIComponent(path)}`)).body).toMatchObject({ concurrency: 1, running: 1, queued: 2 });
    // The one running ends: the next in line (the retry) takes the slot, and only it.
    await cancel(running);
    await expect.poll(() => statusOf(retried), { timeout: 5_000 }).toBe('running');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await statusOf(named)).toBe('queued');
    for (const id of [retried, named]) await cancel(id);
  });

  it('does not hold the key to its own N, raised since: what is queued is admitted up to the newest N', async () => {
    const path = 'flow/inline-raised-old';
    const old = await cancelledOfVersion1(path, 1);
    await register(path, 3);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await start(path));
    expect(await Promise.all(ids.map(statusOf))).toEqual(['running', 'running', 'running', 'queued', 'queued', 'queued']);
    const retried = await retry(old);
    expect(await statusOf(retried)).toBe('queued');
    expect((await http(t.url, 'GET', `/api/limits/@${encodeURIComponent(path)}`)).body).toMatchObject({ concurrency: 3, running: 3, queued: 4 });
    // The three running end: the three queued next are admitted, not one.
    for (const id of ids.slice(0, 3)) await cancel(id);
    await expect.poll(async () => (await Promise.all(ids.slice(3).map(statusOf))).filter((s) => s === 'running').length, { timeout: 5_000 }).toBe(3);
    expect((await http(t.url, 'GET', `/api/limits/@${encodeURIComponent(path)}`)).body).toMatchObject({ concurrency: 3, running: 3, queued: 1 });
    for (const id of [...ids.slice(3), retried]) await cancel(id);
  });
});
