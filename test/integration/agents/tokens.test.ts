// The bearer token of an mcp task, in the spec's order: workload.access_token, the task's `auth`
// credential, the worker's GOOGLE_OAUTH_ACCESS_TOKEN, then the metadata service (a local one
// stands in, at SVC_MCP_METADATA_URL). Each source is tried present and absent through real
// `svc worker` processes against a real MCP server, and every token is then looked for in the
// server's log, the workers' output, every event, every execution answer and every error body.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startWorkerProcess, startWorkerStack, type WorkerProcess, type WorkerStack } from '../../helpers/worker-process.ts';

const tok = (source: string) => `${source}-${randomBytes(12).toString('hex')}`;
const TOKENS = { workload: tok('wl'), credential: tok('cred'), env: tok('env'), metadata: tok('meta') };

let stack: WorkerStack;
let mcp: TestMcpServer;
let metadata: Server;
let metadataUrl: string;
let metadataCalls = 0;
const extraWorkers: WorkerProcess[] = [];
const executions: number[] = [];
const answers: unknown[] = [];

const AGENT = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: token-agent, path: agents/token, agent: true }
workload: { auth: null, tool: echo, arguments: { text: hi } }
workflow:
  - step: start
    tool:
      - name: call
        kind: mcp
        endpoint: "{{ workload.endpoint }}"
        auth: "{{ workload.auth }}"
        method: tools/call
        tool: "{{ workload.tool }}"
        arguments: "{{ workload.arguments }}"
`;

/** Runs the agent and returns the Authorization headers the MCP server saw during it. */
async function authorizationsOf(workload: Record<string, unknown>, expectStatus = 'completed'): Promise<(string | undefined)[]> {
  const before = mcp.authorizations.length;
  const r = await http(stack.url, 'POST', '/api/execute', { path: 'agents/token', resource_kind: 'agent', workload: { endpoint: mcp.url, ...workload } });
  answers.push(r.body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  executions.push(r.body.execution_id);
  const done = await stack.wait(r.body.execution_id, 30_000);
  answers.push(done);
  expect(done.status, JSON.stringify(done.error)).toBe(expectStatus);
  return [...new Set(mcp.authorizations.slice(before))];
}

beforeAll(async () => {
  metadata = createServer((req, res) => {
    metadataCalls++;
    if (req.headers['metadata-flavor'] !== 'Google') return void res.writeHead(403).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: TOKENS.metadata, expires_in: 3599, token_type: 'Bearer' }));
  });
  metadata.listen(0, '127.0.0.1');
  await once(metadata, 'listening');
  const address = metadata.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  metadataUrl = `http://127.0.0.1:${address.port}/computeMetadata/v1/instance/service-accounts/default/token`;
  [stack, mcp] = await Promise.all([
    startWorkerStack({ workerEnv: { GOOGLE_OAUTH_ACCESS_TOKEN: TOKENS.env, SVC_MCP_METADATA_URL: metadataUrl, SVC_MCP_TOKEN_HOSTS: '127.0.0.1', SVC_LOG_LEVEL: 'debug' } }),
    startMcpServer(),
  ]);
  const agent = await http(stack.url, 'POST', '/api/catalog/register', { content: AGENT, resource_type: 'agent' });
  expect(agent.status).toBe(201);
  const cred = await http(stack.url, 'POST', '/api/credentials', { name: 'mcp_auth', type: 'bearer', data: { token: TOKENS.credential } });
  expect(cred.status).toBeLessThan(300);
}, 60_000);

afterAll(async () => {
  for (const w of extraWorkers) await w.stop().catch(() => {});
  await stack?.close();
  await mcp?.close();
  metadata?.closeAllConnections();
  await new Promise((resolve) => metadata?.close(resolve));
});

describe('mcp token resolution order', () => {
  it('1. workload.access_token wins over the credential, the environment and the metadata service', async () => {
    expect(await authorizationsOf({ access_token: TOKENS.workload, auth: 'mcp_auth' })).toEqual([`Bearer ${TOKENS.workload}`]);
  });

  it('2. without it, the task credential wins over the environment', async () => {
    expect(await authorizationsOf({ auth: 'mcp_auth' })).toEqual([`Bearer ${TOKENS.credential}`]);
  });

  it('3. without both, the worker environment GOOGLE_OAUTH_ACCESS_TOKEN; the metadata service is not asked', async () => {
    const calls = metadataCalls;
    expect(await authorizationsOf({})).toEqual([`Bearer ${TOKENS.env}`]);
    expect(metadataCalls).toBe(calls);
  });

  it('4. without all three, the metadata service; 5. without it too, no Authorization', async () => {
    for (const w of stack.workers) expect(await w.stop()).toBe(0);
    const metaOnly = await startWorkerProcess(stack.url, { env: { SVC_WORKER_TOKEN: stack.workerToken, SVC_MCP_METADATA_URL: metadataUrl, SVC_MCP_TOKEN_HOSTS: '127.0.0.1', SVC_LOG_LEVEL: 'debug' } });
    extraWorkers.push(metaOnly);
    const calls = metadataCalls;
    expect(await authorizationsOf({})).toEqual([`Bearer ${TOKENS.metadata}`]);
    expect(metadataCalls).toBeGreaterThan(calls);
    expect(await metaOnly.stop()).toBe(0);

    const bare = await startWorkerProcess(stack.url, { env: { SVC_WORKER_TOKEN: stack.workerToken, SVC_LOG_LEVEL: 'debug' } });
    extraWorkers.push(bare);
    expect(await authorizationsOf({})).toEqual([undefined]);
  }, 60_000);

  it('a failing call with a token keeps the token out of the error', async () => {
    await authorizationsOf({ access_token: TOKENS.workload, tool: 'fail', arguments: { text: 'failing on purpose' } }, 'failed');
  });

  it('no token appears in logs, events, execution answers or error bodies', async () => {
    const haystacks: [string, string][] = [
      ['server log', stack.logs.join('\n')],
      ...stack.workers.map((w): [string, string] => [`worker ${w.name} output`, w.output()]),
      ...extraWorkers.map((w): [string, string] => [`worker ${w.name} output`, w.output()]),
      ['answers', JSON.stringify(answers)],
    ];
    for (const id of executions) {
      haystacks.push([`events of ${id}`, JSON.stringify(await stack.events(id))]);
      haystacks.push([`status of ${id}`, JSON.stringify((await http(stack.url, 'GET', `/api/executions/${id}`)).body)]);
    }
    // The stores too: the event log, commands and snapshots are where a workload would land.
    const { rows } = await stack.deps.db.query<{ text: string }>(
      `SELECT concat_ws(' ', (SELECT string_agg(e::text, ' ') FROM core.event e), (SELECT string_agg(c::text, ' ') FROM core.command c), (SELECT string_agg(x.snapshot::text, ' ') FROM core.execution x)) AS text`,
    );
    haystacks.push(['database rows', rows[0].text]);
    // The workload kept a handle where the token was.
    expect(rows[0].text).toMatch(/svc-secret:[0-9a-f-]{36}/);
    for (const token of Object.values(TOKENS)) {
      for (const [where, text] of haystacks) expect(text.includes(token), `${token.slice(0, 4)}… in ${where}`).toBe(false);
    }
  });
});
