// A start's payload, a signal's and a playbook's workload keep every key: valibot's record drops
// prototype and constructor (src/own-keys-record.ts), and a payload {"prototype": "v2"} lost it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1, concurrency: 2 });
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('keys named prototype and constructor', () => {
  // (Templates do not read them: `workload.prototype` is refused there, docs/playbook-dsl.md.)
  it("reach the run: a start's payload and the workload it merges into", async () => {
    const reg = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: own_keys, path: engine/own_keys }
workload: { constructor: from_playbook }
workflow:
  - step: start
    tool: { name: echo, kind: noop }
    next: done
  - step: done
`);
    const r = await http(s.url, 'POST', '/api/run/playbook', { path: reg.path, payload: { prototype: 'v2', n: 1 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.execution_id as number;
    const final = await until(`execution ${id} finished`, async () => {
      const body = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 20_000);
    expect(final.status, JSON.stringify(final)).toBe('completed');
    const events = (await http(s.url, 'GET', `/api/events/${id}?limit=5`)).body.events as Json[];
    const started = events.find((e) => e.event_type === 'execution.started');
    expect(started?.context.input.args).toEqual({ prototype: 'v2', n: 1 });
    expect(started?.context.input.workload).toMatchObject({ prototype: 'v2', constructor: 'from_playbook' });
  });
});
