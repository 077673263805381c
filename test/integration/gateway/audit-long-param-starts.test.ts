// A caller held to playbook path patterns (SVC_OIDC_PATHS_CLAIM) cannot reach the retry or the
// MCP lifecycle route past the gateway's check with a path parameter longer than its router's:
// the server takes parameters up to MAX_PARAM_CHARS once decoded, an execution id with leading
// zeros or an MCP server's name of up to 200 characters; the gateway's router must route them
// to the same checked routes, not to its unchecked /api/* catch-all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const playbook = (path: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${path.replaceAll('/', '-')}, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n`;

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  gw = await startTestGateway({ ...gatewayEnv(stack, idp, TEST_GATEWAY_SECRET), SVC_OIDC_PATHS_CLAIM: 'svc_paths' });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

const as = async (client: string) => bearer(await idp.programToken(client));

describe('gateway: path patterns and long path parameters', () => {
  it('refuses a retry of an execution outside the patterns whose id is written with 120 leading zeros', async () => {
    const admin = await as('program-admin');
    const scoped = await as('program-reports'); // reports/*, shared/**
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: playbook('gw/hello') }, admin)).status).toBe(201);
    const run = await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/hello' }, admin);
    expect(run.status).toBe(200);
    const id = run.body.execution_id as number;
    await until('the run ends', async () => (await http(gw.url, 'GET', `/api/executions/${id}`, undefined, admin)).body.status === 'completed');
    // The server reads the id as the same execution.
    const padded = `${'0'.repeat(120)}${id}`;
    expect((await http(gw.url, 'GET', `/api/executions/${padded}`, undefined, admin)).body.path).toBe('gw/hello');

    const retried = await http(gw.url, 'POST', `/api/executions/${padded}/retry`, { from_step: 'start' }, scoped);
    expect(retried.status).toBe(403);
    expect(Object.keys(retried.body)).toEqual(['detail']);
    expect(retried.body.detail).toContain('gw/hello');
    const started = await http(gw.url, 'GET', '/api/executions?path=gw/hello', undefined, admin);
    expect(started.body.executions.map((e: { execution_id: number }) => e.execution_id)).toEqual([id]);
  });

  it('refuses a lifecycle action of an MCP server outside the patterns whose name is 150 characters long', async () => {
    const admin = await as('program-admin');
    const scoped = await as('program-reports');
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: playbook('gw/mcp-up') }, admin)).status).toBe(201);
    const name = `m${'x'.repeat(149)}`;
    const doc = `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: ${name}, path: gw/long-mcp }\nendpoint: http://127.0.0.1:1/mcp\nlifecycle: { deploy: gw/mcp-up }\n`;
    expect((await http(gw.url, 'POST', '/api/catalog/register', { content: doc, resource_type: 'mcp' }, admin)).status).toBe(201);

    const acted = await http(gw.url, 'POST', `/api/mcp/mcp/${name}/lifecycle/deploy`, {}, scoped);
    expect(acted.status).toBe(403);
    expect(acted.body.detail).toContain('gw/long-mcp');
    const started = await http(gw.url, 'GET', '/api/executions?path=gw/mcp-up', undefined, admin);
    expect(started.body.executions).toEqual([]);
  });
});
