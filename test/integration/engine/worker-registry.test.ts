// The worker registry (rows of core.runtime): register, heartbeat, deregister, GET /api/worker/pools,
// and what a heartbeat answers about the pool's running commands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function pools(): Promise<Json[]> {
  const r = await http(t.url, 'GET', '/api/worker/pools');
  expect(r.status).toBe(200);
  expect(r.body.count).toBe(r.body.pools.length);
  return r.body.pools;
}

async function pool(name: string): Promise<Json> {
  const found = (await pools()).find((p: Json) => p.name === name);
  expect(found, name).toBeDefined();
  return found;
}

const post = (path: string, body: unknown) => http(t.url, 'POST', `/api/worker/pool/${path}`, body, asWorker);

describe('worker registry', () => {
  it('registers, beats, drains, deregisters; a beat after deregister does not revive the pool', async () => {
    const reg = await post('register', { name: 'pool-a', capacity: 3, labels: { host: 'h1', zone: 'z' } });
    expect(reg.status).toBe(200);
    expect(reg.body).toMatchObject({ status: 'registered', name: 'pool-a', runtime_id: expect.any(Number) });
    const registered = await pool('pool-a');
    expect(registered).toMatchObject({ name: 'pool-a', status: 'ready', capacity: 3, labels: { host: 'h1', zone: 'z' } });

    const beat = await post('heartbeat', { name: 'pool-a' });
    expect(beat).toMatchObject({ status: 200, body: { status: 'ok', name: 'pool-a', cancelled: [] } });
    const beaten = await pool('pool-a');
    expect(Date.parse(beaten.heartbeat_at)).toBeGreaterThan(Date.parse(registered.heartbeat_at));
    expect(beaten.created_at).toBe(registered.created_at);

    expect((await post('heartbeat', { name: 'pool-a', status: 'draining' })).status).toBe(200);
    expect((await pool('pool-a')).status).toBe('draining');

    expect(await post('deregister', { name: 'pool-a' })).toMatchObject({ status: 200, body: { status: 'deregistered', name: 'pool-a' } });
    const stopped = await pool('pool-a');
    expect(stopped.status).toBe('stopped');

    // A beat that was in flight when the pool deregistered: refused, and the row is left as it was.
    const late = await post('heartbeat', { name: 'pool-a' });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatchObject({ code: 'pool_stopped', message: expect.stringContaining('pool-a') });
    expect(await pool('pool-a')).toEqual(stopped);

    // Registering again is what brings it back, with the same row.
    const again = await post('register', { name: 'pool-a', capacity: 5 });
    expect(again.body.runtime_id).toBe(reg.body.runtime_id);
    expect(await pool('pool-a')).toMatchObject({ status: 'ready', capacity: 5, labels: {} });
    expect((await post('heartbeat', { name: 'pool-a' })).status).toBe(200);
    expect((await pool('pool-a')).status).toBe('ready');
  });

  it('lists every pool by name', async () => {
    for (const name of ['pool-z', 'pool-m']) expect((await post('register', { name })).status).toBe(200);
    const names = (await pools()).map((p: Json) => p.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['pool-m', 'pool-z']));
    // capacity defaults to 1 and labels to {}.
    expect(await pool('pool-m')).toMatchObject({ capacity: 1, labels: {}, status: 'ready' });
  });

  it('answers 404 for a pool never registered', async () => {
    expect((await post('heartbeat', { name: 'nobody' })).status).toBe(404);
    expect((await post('deregister', { name: 'nobody' })).status).toBe(404);
    expect((await pools()).some((p: Json) => p.name === 'nobody')).toBe(false);
  });

  it('rejects malformed bodies with 422', async () => {
    const bad: [string, unknown][] = [
      ['register', { name: '' }],
      ['register', { name: 'p', capacity: -1 }],
      ['register', { name: 'p', capacity: 1.5 }],
      ['register', { name: 'p', labels: ['a', 'b'] }],
      ['heartbeat', { name: 'pool-a', status: 'stopped' }],
      ['heartbeat', { name: 'pool-a', running: ['x'] }],
      ['deregister', {}],
    ];
    for (const [path, body] of bad) expect((await post(path, body)).status, `${path} ${JSON.stringify(body)}`).toBe(422);
    const labels = await post('register', { name: 'p', labels: ['a', 'b'] });
    expect(labels.body.detail.errors).toContain('labels: must be a JSON object, not an array');
    expect((await pools()).some((p: Json) => p.name === 'p')).toBe(false);
  });

  it('names, among the running commands a beat lists, those whose execution was cancelled', async () => {
    const yaml = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: r, path: registry/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    expect((await post('register', { name: 'pool-c', capacity: 2 })).status).toBe(200);
    const a = (await http(t.url, 'POST', '/api/run/playbook', { path: 'registry/one' })).body.execution_id;
    const b = (await http(t.url, 'POST', '/api/run/playbook', { path: 'registry/one' })).body.execution_id;
    const claimed = (await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'pool-c', max: 2 }, asWorker)).body.commands;
    expect(claimed.map((c: Json) => c.execution_id).sort()).toEqual([a, b].sort());
    const commandOf = (id: number) => claimed.find((c: Json) => c.execution_id === id).command_id;
    expect((await post('heartbeat', { name: 'pool-c', running: [commandOf(a), commandOf(b)] })).body.cancelled).toEqual([]);
    expect((await http(t.url, 'POST', `/api/executions/${a}/cancel`, {})).body.status).toBe('cancelled');
    const beat = await post('heartbeat', { name: 'pool-c', running: [commandOf(a), commandOf(b)] });
    expect(beat.body.cancelled).toEqual([commandOf(a)]);
  });
});
