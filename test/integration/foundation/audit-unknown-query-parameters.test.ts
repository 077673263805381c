// A query parameter or registration field a route does not know is refused, naming it: dropped,
// a misspelling silently answered something else (`?versoin=1` the newest version, `?since=5` the
// log from its start, `?includedata=true` no data, `?kinds=agent` every entry) or registered
// elsewhere (`pth` put the document at its metadata.path).
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

const PLAYBOOK = (name: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: t/${name} }\nworkflow:\n  - step: start\n`;

const refused = (res: { status: number; body: { detail?: { errors?: string[] } } }, error: string | RegExp) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail?.errors).toEqual([typeof error === 'string' ? error : expect.stringMatching(error)]);
};

describe('unknown query parameters', () => {
  it('are refused on the catalog, events, credentials, agents, limits and triggers reads', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK('q') })).status).toBe(201);
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `${PLAYBOOK('q')}    tool: { name: n, kind: noop }\n` })).body.version).toBe(2);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 't/q' });
    expect((await http(t.url, 'POST', '/api/credentials', { name: 'q_auth', type: 'bearer', data: { token: 'x' } })).status).toBe(201);

    refused(await http(t.url, 'GET', '/api/catalog/playbook/t/q?versoin=1'), "versoin: unknown field (did you mean 'version'?)");
    refused(await http(t.url, 'GET', '/api/catalog/playbooks?kinds=agent'), "kinds: unknown field (did you mean 'kind'?)");
    refused(await http(t.url, 'GET', `/api/events/${run.body.execution_id}?since=5`), /^since: unknown field \(known: since_event_id, limit\)$/);
    refused(await http(t.url, 'GET', '/api/credentials/q_auth?includedata=true'), "includedata: unknown field (did you mean 'include_data'?)");
    refused(await http(t.url, 'GET', '/api/credentials?typ=bearer'), "typ: unknown field (did you mean 'type'?)");
    refused(await http(t.url, 'GET', '/api/agents?workspaces=demo'), "workspaces: unknown field (did you mean 'workspace'?)");
    refused(await http(t.url, 'GET', '/api/triggers?knd=schedule'), "knd: unknown field (did you mean 'kind'?)");
    refused(await http(t.url, 'GET', '/api/limits/nolimit?key=1'), "key: unknown field (did you mean 'keys'?)");

    // The names each read are still taken, and one sent empty is taken as not sent.
    expect((await http(t.url, 'GET', '/api/catalog/playbook/t/q?version=1')).body.version).toBe(1);
    expect((await http(t.url, 'GET', '/api/catalog/playbooks?kind=playbook&x=')).body.count).toBe(1);
    expect((await http(t.url, 'GET', `/api/events/${run.body.execution_id}?since_event_id=1&limit=1`)).body.events).toHaveLength(1);
    expect((await http(t.url, 'GET', '/api/credentials/q_auth?include_data=true')).body.data).toEqual({ token: 'x' });
  });

  it("a catalog path's version parameters apply to the answer that reads them", async () => {
    const diff = await http(t.url, 'GET', '/api/catalog/playbook/t/q?from=1&to=2');
    expect(diff.status).toBe(422);
    expect(diff.body.detail.errors).toEqual(['from: applies only to t/q/versions', 'to: applies only to t/q/versions']);
    refused(await http(t.url, 'GET', '/api/catalog/playbook/t/q/versions?version=1'), /^version: applies to t\/q and its statechart, not its versions$/);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/t/q/versions?from=1&to=2')).body.diff).toMatchObject({ from: 1, to: 2 });
    expect((await http(t.url, 'GET', '/api/catalog/playbook/t/q/statechart?version=1')).status).toBe(200);
  });
});

describe('a query parameter sent to a route that reads none', () => {
  it('is refused naming it, and nothing is done; a webhook delivery keeps its query', async () => {
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 't/q' });
    refused(await http(t.url, 'GET', `/api/executions/${run.body.execution_id}?include=state`), 'include: this route takes no query parameters');
    refused(await http(t.url, 'GET', `/api/execution/${run.body.execution_id}?x=1`), 'x: this route takes no query parameters');
    refused(await http(t.url, 'POST', '/api/run/playbook?dry_run=true', { path: 't/q' }), 'dry_run: this route takes no query parameters');
    refused(await http(t.url, 'DELETE', '/api/credentials/q_auth?force=true'), 'force: this route takes no query parameters');
    expect((await http(t.url, 'GET', '/api/credentials/q_auth')).status).toBe(200);
    expect((await http(t.url, 'GET', '/api/executions?path=t/q')).body.executions).toHaveLength(2);
    // Not refused as a query: no trigger is there (404), whatever the sender's query.
    expect((await http(t.url, 'POST', '/api/hooks/t/q/none?source=github', {})).status).toBe(404);
  });
});

describe('unknown registration fields', () => {
  it('are refused naming them, and nothing is registered', async () => {
    refused(await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK('r'), pth: 'other/r' }), "pth: unknown field (did you mean 'path'?)");
    refused(await http(t.url, 'POST', '/api/catalog/register', { content: PLAYBOOK('r'), path: 'other/r', resource_type: 'agent' }), /^path: unknown field \(known: content, resource_type\)$/);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/t/r')).status).toBe(404);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/other/r')).status).toBe(404);
  });
});
