// A query parameter sent twice arrives as a list, and the answer blamed the values:
// `?status=running&status=paused` was told `status: must be one of queued, running, paused, …`
// (both values are), `?kind=schedule&kind=nats` `Invalid type: Expected ("schedule" | "webhook" |
// "nats") but received Array`, `?q=a&q=b` `Expected string but received Array` (valibot's words;
// the client sent no array). A parameter that takes one value, sent more than once, is now
// refused saying so; `label`, which takes several, still does. Found by the OpenAPI-driven
// bad-input fuzzer (helper).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('a query parameter sent more than once', () => {
  it('is refused naming it and how often it came, where the route takes one value', async () => {
    const cases: [string, string][] = [
      ['/api/executions?status=running&status=paused', 'status: sent 2 times: send one value'],
      ['/api/executions?q=a&q=b&q=c', 'q: sent 3 times: send one value'],
      ['/api/executions?limit=1&limit=2', 'limit: sent 2 times: send one value'],
      ['/api/triggers?kind=schedule&kind=nats', 'kind: sent 2 times: send one value'],
      ['/api/catalog/playbooks?kind=agent&kind=mcp', 'kind: sent 2 times: send one value'],
      ['/api/credentials?type=bearer&type=basic', 'type: sent 2 times: send one value'],
      ['/api/events/1?since_event_id=0&since_event_id=5', 'since_event_id: sent 2 times: send one value'],
    ];
    for (const [path, error] of cases) {
      const res = await http(t.url, 'GET', path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail.errors).toEqual([error]);
    }
  });

  it('is taken where the route takes several (label), and one sent empty beside a value is as before', async () => {
    expect((await http(t.url, 'GET', '/api/executions?label=a:b&label=c:d')).status).toBe(200);
    expect((await http(t.url, 'GET', '/api/executions?limit=1&limit=')).status).toBe(200);
  });
});
