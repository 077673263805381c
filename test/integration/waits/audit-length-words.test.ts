// A control request's text of the wrong length was told in the validation library's words: a
// cancel's or a pause's reason of 1001 characters `reason: Invalid length: Expected <=1000 but
// received 1001`, a retry's empty step `from_step: Invalid length: Expected >=1 but received 0`
// (as `svc cancel --reason` printed it). They are now told as a value of the wrong type is
// (foundation/audit-wrong-type-words): what the field must be, and what came; nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let waiting: number;
let failed: number;
beforeAll(async () => {
  t = await startTestApp();
  const api = executionApi(t.url);
  await api.register(`apiVersion: svc/v1
metadata: { name: hold, path: audit/length_words }
workflow:
  - step: hold
    wait: { signal: go }
    next: [{ step: check }]
  - step: check
    wait: { until: "{{ workload.at }}" }
`);
  waiting = await api.run('audit/length_words', { at: 'never' });
  failed = await api.run('audit/length_words', { at: 'never' });
  await until('both wait', async () => {
    const bodies = await Promise.all([waiting, failed].map(async (id) => (await http(t.url, 'GET', `/api/executions/${id}`)).body));
    return bodies.every((b) => Array.isArray(b.waits) && b.waits.length > 0);
  }, 10_000);
  expect((await http(t.url, 'POST', `/api/executions/${failed}/signals/go`, {})).status).toBe(202);
  expect(await api.wait(failed, 10_000)).toMatchObject({ status: 'failed' });
});
afterAll(async () => t?.close());

const long = 'x'.repeat(1001);

describe('a control request whose text is too long or empty', () => {
  it.each([
    ['cancel', () => `/api/executions/${waiting}/cancel`, { reason: long }, 'reason: must be at most 1000 characters, got 1001'],
    ['pause', () => `/api/executions/${waiting}/pause`, { reason: long }, 'reason: must be at most 1000 characters, got 1001'],
    ['retry', () => `/api/executions/${failed}/retry`, { from_step: '' }, 'from_step: must not be empty'],
    ['retry', () => `/api/executions/${failed}/retry`, { from_step: 's'.repeat(257) }, 'from_step: must be at most 256 characters, got 257'],
  ])('%s is 422 naming the field in plain words, and changes nothing', async (_name, path, body, error) => {
    const res = await http(t.url, 'POST', path(), body);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail.errors).toEqual([error]);
    expect(JSON.stringify(res.body)).not.toContain('Invalid length');
    expect((await http(t.url, 'GET', `/api/executions/${waiting}`)).body.status).toBe('running');
    expect((await http(t.url, 'GET', `/api/executions/${failed}`)).body.retried_as).toEqual([]);
  });
});
