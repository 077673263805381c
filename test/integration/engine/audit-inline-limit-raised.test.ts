// A playbook's inline limit (`concurrency: {limit: N}`, kept as `@<path>` and shared by every
// version of the playbook) is changed by registering the playbook with another N
// (docs/flow-control.md, "Caveats": PUT does not change it; "change the playbook instead"). The
// change applies at once, as a PUT of a named limit does: executions queued on its keys are
// admitted up to the new N, without waiting for another start. Real server and database, no worker.
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
const version = (n: number) => `apiVersion: svc/v1
metadata: { name: inline, path: flow/inline-raised }
concurrency: { limit: ${n}, key: acme }
workflow:
  - step: start
    wait: { for: 1h }
`;

describe('an inline limit raised by a new version of its playbook', () => {
  it('admits what is queued on its keys up to the new N', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: version(1) })).status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/inline-raised' })).body.execution_id);
    expect(await Promise.all(ids.map(statusOf))).toEqual(['running', 'queued', 'queued']);

    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: version(3) })).status).toBe(201);
    await expect.poll(async () => (await Promise.all(ids.map(statusOf))).filter((s) => s === 'running').length, { timeout: 5_000 }).toBe(3);
    expect((await http(t.url, 'GET', '/api/limits/@flow%2Finline-raised')).body).toMatchObject({ concurrency: 3, running: 3, queued: 0 });
    for (const id of ids) await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' });
  });
});
