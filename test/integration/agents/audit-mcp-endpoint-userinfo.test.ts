// An MCP endpoint with a user name and password (http://user:pass@host/mcp) was registered (an Mcp
// document, and an agent's literal endpoint) though no call can use it: fetch refuses a URL with
// credentials, and its error quoted the URL, so every run failed with the password in the step's
// error, and GET /api/mcp/servers showed it to viewers. Registration now refuses it naming the
// field, and the worker refuses a rendered one as invalid_task without the value, sending nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import { http } from '../../helpers/http.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';

let app: TestApp;
let server: TestMcpServer;
beforeAll(async () => {
  [app, server] = await Promise.all([startTestApp(), startMcpServer()]);
}, 60_000);
afterAll(async () => Promise.all([app?.close(), server?.close()]));

const withPassword = () => server.url.replace('http://', 'http://robot:s3cret-pw@');

describe('an MCP endpoint holding a user name and password', () => {
  it('an Mcp document with one is refused, naming endpoint; nothing is registered', async () => {
    const content = `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: pw }\nendpoint: ${withPassword()}\n`;
    const r = await http(app.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content });
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual(['endpoint: must not hold a user name or password: name a credential in auth']);
    expect(r.body.detail.problems).toEqual([expect.objectContaining({ path: 'endpoint', line: 4 })]);
    expect((await http(app.url, 'GET', '/api/mcp/servers/pw')).status).toBe(404);
  });

  it("an agent's literal endpoint with one is refused at registration", async () => {
    const content = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: pw, path: agents/pw, agent: true }\nworkflow:\n  - step: start\n    tool:\n      - { name: call, kind: mcp, endpoint: "${withPassword()}", method: tools/list }\n`;
    const r = await http(app.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content });
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual([expect.stringMatching(/^workflow\[0\]\.tool\[0\]\.endpoint: must not hold a user name or password/)]);
  });

  it('a rendered one fails the task as invalid_task, without the password, nothing sent', async () => {
    const before = server.authorizations.length;
    const outcome = await mcp({ name: 't', kind: 'mcp', endpoint: withPassword(), method: 'tools/list' }, { signal: new AbortController().signal, env: {} });
    expect(outcome).toEqual({ status: 'error', data: null, error: { code: 'invalid_task', message: 'invalid mcp task: endpoint: expected a URL without a user name or password (name a credential in auth)' } });
    expect(server.authorizations.length).toBe(before);
  });

  it('the same endpoint without them still registers and answers', async () => {
    const content = `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: plain }\nendpoint: ${server.url}\n`;
    expect((await http(app.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content })).status).toBe(201);
    expect(await mcp({ name: 't', kind: 'mcp', endpoint: server.url, method: 'tools/list' }, { signal: new AbortController().signal, env: {} })).toMatchObject({ status: 'ok' });
  });
});
