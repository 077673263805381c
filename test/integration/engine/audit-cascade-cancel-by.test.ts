// A cancel's cascade did not say who cancelled: the children (and theirs) a cancelled parent took
// along got `execution.cancelled` with only `reason: parent execution N ended`, no requested_by,
// so a child's log could not tell an operator's cancel from a parent that failed. Each cascaded
// cancel now carries the requested_by of the cancel that began it; a parent that failed adds none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let alice: Record<string, string>;
beforeAll(async () => {
  s = await startTestApp({ SVC_AUTH: 'token' });
  alice = bearer(await createApiToken(s.deps.db, 'alice', 'operator'));
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body, alice);
const get = (path: string) => http(s.url, 'GET', path, undefined, alice);
const childOf = (id: number) => until(`a child of ${id}`, async () => {
  const kids = (await get(`/api/executions?parent=${id}`)).body.executions as Json[];
  return kids.length === 1 && Number(kids[0].execution_id);
}, 10_000);
const cancelled = async (id: number): Promise<Json> => {
  await until(`${id} cancelled`, async () => (await get(`/api/executions/${id}`)).body.status === 'cancelled', 10_000);
  return ((await get(`/api/events/${id}`)).body.events as Json[]).find((e) => e.event_type === 'execution.cancelled')!.context as Json;
};

describe('a cancel that cascades', () => {
  it('says who cancelled in every execution it took along', async () => {
    for (const [name, body] of [
      ['leaf', '  - step: gate\n    wait: { signal: go }\n'],
      ['middle', '  - step: run\n    tool: { name: kid, kind: playbook, path: cascadeby/leaf }\n'],
      ['top', '  - step: run\n    tool: { name: kid, kind: playbook, path: cascadeby/middle }\n'],
    ]) {
      const r = await post('/api/catalog/playbook', { content: `apiVersion: svc/v1\nmetadata: { name: ${name}, path: cascadeby/${name} }\nworkflow:\n${body}` });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const top = Number((await post('/api/run/playbook', { path: 'cascadeby/top' })).body.execution_id);
    const middle = await childOf(top);
    const leaf = await childOf(middle);
    await until('the leaf waits', async () => ((await get(`/api/executions/${leaf}`)).body.waits as Json[] | undefined)?.length, 10_000);
    expect((await post(`/api/executions/${top}/cancel`, { reason: 'wrong version' })).body).toMatchObject({ status: 'cancelled' });
    const who = { sub: 'alice', via: 'token', role: 'operator' };
    expect(await cancelled(top)).toMatchObject({ reason: 'wrong version', requested_by: who });
    expect(await cancelled(middle)).toMatchObject({ reason: `parent execution ${top} ended`, requested_by: who });
    expect(await cancelled(leaf)).toMatchObject({ reason: `parent execution ${middle} ended`, requested_by: who });
  });

  it('adds no requester when the parent ended by failing', async () => {
    const r = await post('/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: failing, path: cascadeby/failing }
workload: { when: "no time" }
workflow:
  - step: both
    next: { mode: inclusive, arcs: [ { step: kid }, { step: boom } ] }
  - step: kid
    tool: { name: kid, kind: playbook, path: cascadeby/leaf }
  - step: boom
    wait: { until: "{{ workload.when }}" }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const parent = Number((await post('/api/run/playbook', { path: 'cascadeby/failing' })).body.execution_id);
    const kid = await childOf(parent);
    const ctx = await cancelled(kid);
    expect(ctx.reason).toBe(`parent execution ${parent} ended`);
    expect(ctx).not.toHaveProperty('requested_by');
  });
});
