// Typed inputs (`inputs:`): a start whose merged workload fails them is refused with 422 naming each
// field and starts nothing; registration refuses a malformed block; a child playbook whose args
// fail its inputs is a task error of the parent, not a crash. No workers: these finish on the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

const TYPED = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: inputs/typed }
workload: { limit: 10 }
inputs:
  limit: { type: integer, description: "how many" }
  mode: { type: string, enum: [fast, slow], default: fast }
  target: { type: string, required: true }
  verbose: { type: boolean }
workflow:
  - step: start
`;

const PARENT = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: inputs/parent }
workflow:
  - step: start
    tool: { name: child, kind: playbook, path: inputs/typed, args: { target: 7 } }
`;

let t: TestApp;
const executionRows = async () => Number((await t.deps.db.query<{ n: string }>(`SELECT count(*) AS n FROM core.execution`)).rows[0].n);

beforeAll(async () => {
  t = await startTestApp();
  const api = executionApi(t.url);
  await api.register(TYPED);
  await api.register(PARENT);
});
afterAll(async () => t?.close());

describe('typed inputs', () => {
  it('refuses a start whose merged workload fails the inputs with 422 naming each field, and starts nothing', async () => {
    const before = await executionRows();
    const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'inputs/typed', payload: { limit: 'ten', mode: 'medium', verbose: 'yes' } });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.detail.code).toBe('invalid_inputs');
    // In no set order: the catalog stores the playbook as jsonb, whose keys are not in the YAML's order.
    expect(r.body.detail.problems).toHaveLength(4);
    expect(r.body.detail.problems).toEqual(
      expect.arrayContaining([
        { path: 'workload.limit', message: 'must be integer, got string' },
        { path: 'workload.mode', message: 'must be one of "fast", "slow", got "medium"' },
        { path: 'workload.target', message: 'is required' },
        { path: 'workload.verbose', message: 'must be boolean, got string' },
      ]),
    );
    for (const field of ['workload.limit', 'workload.mode', 'workload.target', 'workload.verbose']) expect(r.body.detail.message).toContain(field);

    // A given version is checked the same way, and so is POST /api/execute.
    const versioned = await http(t.url, 'POST', '/api/run/playbook', { path: 'inputs/typed', version: 1, payload: { target: 'x', limit: 1.5 } });
    expect(versioned.status).toBe(422);
    expect(versioned.body.detail.problems).toEqual([{ path: 'workload.limit', message: 'must be integer, got number' }]);
    const executed = await http(t.url, 'POST', '/api/execute', { path: 'inputs/typed', workload: { target: ['x'] } });
    expect(executed.status).toBe(422);
    expect(executed.body.detail.problems).toEqual([{ path: 'workload.target', message: 'must be string, got array' }]);
    expect(await executionRows()).toBe(before);
  });

  it('starts a workload that passes, with the input defaults under the payload', async () => {
    const api = executionApi(t.url);
    const id = await api.run('inputs/typed', { target: 'db', verbose: true });
    const started = (await api.events(id)).find((e) => e.event_type === 'execution.started');
    expect(started?.context?.input?.workload).toMatchObject({ limit: 10, mode: 'fast', target: 'db', verbose: true });
    expect((await api.wait(id)).status).toBe('completed');
  });

  it('fails a parent task whose child args fail the child inputs, naming the field', async () => {
    const api = executionApi(t.url);
    const before = await executionRows();
    const id = await api.run('inputs/parent');
    const done = await api.wait(id);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.error)).toContain('workload.target: must be string, got integer');
    expect(await executionRows()).toBe(before + 1);
  });

  it('refuses registering a malformed inputs block with 400 naming inputs.<name>.<field>', async () => {
    const bad = TYPED.replace('inputs/typed', 'inputs/bad').replace('{ type: integer, description: "how many" }', '{ type: int, default: "x" }').replace('enum: [fast, slow]', 'enum: [fast, 2]');
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: bad });
    expect(r.status).toBe(400);
    const paths = JSON.stringify(r.body);
    expect(paths).toContain('inputs.limit.type');
    expect(paths).toContain('inputs.mode.enum[1]');
  });
});
