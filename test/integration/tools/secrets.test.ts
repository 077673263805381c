// A credential's password or token never appears in an error outcome's message, even when the
// failing target quotes it back.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardTool } from '../../../src/worker/tools/guard-tool.ts';
import { SECRET_MASK } from '../../../src/credential/redact-secrets.ts';
import { tools } from '../../../src/worker/tools/index.ts';
import type { ResolvedCredential } from '../../../src/protocol.ts';
import type { TaskOutcome, ToolContext } from '../../../src/worker/tools/types.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';

const SECRET = 'Sup3r-Secret-Value-4242';

let target: HttpTarget;
let mcpServer: TestMcpServer;
let database: TestDatabase;
let refusedUrl: string;
beforeAll(async () => {
  [target, mcpServer, database] = await Promise.all([startHttpTarget(), startMcpServer(), createTestDatabase()]);
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  await new Promise((resolve) => probe.close(resolve));
  refusedUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => Promise.all([target?.close(), mcpServer?.close(), database?.drop()]));

const ctx = (credential?: ResolvedCredential, extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, credential, ...extra });

function expectErrorWithout(outcome: TaskOutcome, ...secrets: string[]): void {
  expect(outcome.status).toBe('error');
  for (const secret of secrets) expect(JSON.stringify(outcome.error)).not.toContain(secret);
}

describe('secrets in error outcomes', () => {
  it('http: no token, key or client secret in connection, status or token errors', async () => {
    const bearer = { name: 'b_auth', type: 'bearer', data: { token: SECRET } };
    expectErrorWithout(await tools.http({ name: 't', kind: 'http', url: `${refusedUrl}/x` }, ctx(bearer)), SECRET);
    expectErrorWithout(await tools.http({ name: 't', kind: 'http', url: `${target.url}/status/403` }, ctx(bearer)), SECRET);

    const inQuery = { name: 'k_auth', type: 'api_key', data: { key: SECRET, in: 'query', param: 'key' } };
    expectErrorWithout(await tools.http({ name: 't', kind: 'http', url: `${refusedUrl}/x` }, ctx(inQuery)), SECRET);

    const oauth = { name: 'o_auth', type: 'oauth2', data: { token_url: `${target.url}/token`, client_id: 'test-client', client_secret: SECRET } };
    expectErrorWithout(await tools.http({ name: 't', kind: 'http', url: `${target.url}/protected` }, ctx(oauth)), SECRET);
    const unreachableToken = { ...oauth, name: 'o2_auth', data: { ...oauth.data, token_url: `${refusedUrl}/token` } };
    expectErrorWithout(await tools.http({ name: 't', kind: 'http', url: `${target.url}/protected` }, ctx(unreachableToken)), SECRET);
  });

  it('postgres: the password and connection string stay out of SQL and connection errors', async () => {
    const url = new URL(database.url);
    const password = decodeURIComponent(url.password);
    const viaUrl = { name: 'pg_auth', type: 'postgres', data: { connection_string: database.url } };
    // The database quotes the identifier back: the message must carry the mask instead.
    const quoted = await tools.postgres({ name: 't', kind: 'postgres', command: `SELECT "${password || 'nopassword'}"` }, ctx(viaUrl));
    expectErrorWithout(quoted, ...(password ? [password, database.url] : [database.url]));
    if (password) expect(quoted.error?.message).toContain(SECRET_MASK);

    const quotedSecret = await tools.postgres(
      { name: 't', kind: 'postgres', command: `SELECT "${SECRET}"` },
      ctx({ name: 'pg2_auth', type: 'postgres', data: { db_host: url.hostname, db_port: url.port, db_user: decodeURIComponent(url.username), db_password: password, db_name: url.pathname.slice(1), extra_token: SECRET } }),
    );
    expectErrorWithout(quotedSecret, SECRET);

    const wrongPassword = { name: 'pg3_auth', type: 'postgres', data: { host: url.hostname, port: Number(url.port), user: 'nobody_here', password: SECRET, database: 'none' } };
    expectErrorWithout(await tools.postgres({ name: 't', kind: 'postgres', command: 'SELECT 1' }, ctx(wrongPassword)), SECRET);

    const refusedDsn = `postgres://u:${SECRET}@127.0.0.1:9/db`;
    expectErrorWithout(await tools.postgres({ name: 't', kind: 'postgres', command: 'SELECT 1' }, ctx(undefined, { serviceDatabaseUrl: refusedDsn })), SECRET, refusedDsn);
  });

  it('mcp: no bearer token in tool errors that quote it, nor in connection errors', async () => {
    const fromTask = await tools.mcp({ name: 't', kind: 'mcp', endpoint: mcpServer.url, method: 'tools/call', tool: 'fail', arguments: { text: `bad token ${SECRET}` }, access_token: SECRET }, ctx());
    expectErrorWithout(fromTask, SECRET);
    expect(fromTask.error?.message).toContain(SECRET_MASK);

    const bearer = { name: 'm_auth', type: 'bearer', data: { token: SECRET } };
    expectErrorWithout(await tools.mcp({ name: 't', kind: 'mcp', endpoint: mcpServer.url, method: 'tools/call', tool: 'fail', arguments: { text: SECRET } }, ctx(bearer)), SECRET);
    expectErrorWithout(await tools.mcp({ name: 't', kind: 'mcp', endpoint: `${refusedUrl}/mcp`, method: 'tools/list' }, ctx(bearer)), SECRET);
  });

  it('guard: a tool that throws with a secret in its message is redacted', async () => {
    const leaky = guardTool(async () => {
      throw new Error(`failed while using ${SECRET}`);
    });
    const outcome = await leaky({ name: 't', kind: 'custom' }, ctx({ name: 'x_auth', type: 'custom', data: { nested: { api_key: SECRET } } }));
    expect(outcome).toEqual({ status: 'error', data: null, error: { code: 'internal', message: `custom tool failed unexpectedly: failed while using ${SECRET_MASK}` } });
  });
});
