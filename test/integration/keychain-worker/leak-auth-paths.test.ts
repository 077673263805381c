// The paths leak.test.ts does not take, one playbook each so that a leak names its path: an http
// task's basic, api_key (header and query), custom and oauth2 credentials against a target that
// echoes everything it was sent (answering 200, then 500), a postgres task's password (logging in
// and refused), an MCP task's bearer credential (a real server, then one answering 401 with the
// header quoted back) and a secret_manager keychain entry whose provider quotes its token in a 500.
// Then every log line, event, table row, execution status and /metrics are scanned.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const S = {
  basic: 'LEAKPATH-basic-pw-1c9e',
  apiKeyHeader: 'LEAKPATH-apikey-header-8b21',
  apiKeyQuery: 'LEAKPATH-apikey-query-4f70',
  customHeader: 'LEAKPATH-custom-header-d35a',
  clientSecret: 'LEAKPATH-client-secret-0e6b',
  pgWrong: 'LEAKPATH-pg-wrong-7a13',
  mcpToken: 'LEAKPATH-mcp-token-2d88',
  providerToken: 'LEAKPATH-provider-token-95c4',
};

let s: TestStack;
let target: HttpTarget;
let mcpServer: TestMcpServer;
let db: TestDatabase;

beforeAll(async () => {
  target = await startHttpTarget(async (req, res, recorded) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const echo = { url: req.url, headers: recorded.headers, body: recorded.body };
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/token') {
      const token = `LEAKPATH-issued-${target.issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
      target.issuedTokens.push(token);
      return answer(200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (url.pathname.startsWith('/ok')) return answer(200, echo);
    return answer(url.pathname.startsWith('/mcp') ? 401 : 500, { error: 'quoting what you sent', ...echo });
  });
  mcpServer = await startMcpServer();
  db = await createTestDatabase();
  s = await startTestStack({ workers: 1, concurrency: 4 });
  const pgUrl = new URL(db.url);
  const pgData = { host: pgUrl.hostname, port: Number(pgUrl.port), user: decodeURIComponent(pgUrl.username), database: pgUrl.pathname.slice(1) };
  const credentials = [
    { name: 'p_basic_auth', type: 'basic', data: { username: 'leak-user', password: S.basic } },
    { name: 'p_header_key_auth', type: 'api_key', data: { key: S.apiKeyHeader } },
    { name: 'p_query_key_auth', type: 'api_key', data: { key: S.apiKeyQuery, in: 'query' } },
    { name: 'p_custom_auth', type: 'custom', data: { headers: { 'X-Custom': S.customHeader } } },
    { name: 'p_oauth_auth', type: 'oauth2', data: { client_id: 'leak-client', client_secret: S.clientSecret, token_url: `${target.url}/token` } },
    { name: 'p_pg_auth', type: 'postgres', data: { ...pgData, password: decodeURIComponent(pgUrl.password) } },
    { name: 'p_pg_wrong_auth', type: 'postgres', data: { ...pgData, password: S.pgWrong } },
    { name: 'p_mcp_auth', type: 'bearer', data: { token: S.mcpToken } },
    { name: 'p_provider_auth', type: 'bearer', data: { token: S.providerToken } },
  ];
  for (const c of credentials) expect((await http(s.url, 'POST', '/api/credentials', c)).status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
  await mcpServer?.close();
  await db?.drop();
});

function playbook(path: string, task: string, keychain = ''): string {
  return `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
${keychain}workflow:
  - step: start
    tool:
      - ${task}
`;
}

async function everyRowText(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ ident: string }>(
      `SELECT format('%I.%I', table_schema, table_name) AS ident FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const t of tables.rows) {
      const { rows } = await client.query<{ text: string | null }>(`SELECT string_agg(to_jsonb(t)::text, E'\\n') AS text FROM ${t.ident} t`);
      parts.push(`${t.ident}\n${rows[0]?.text ?? ''}`);
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

describe('secrets on every auth path never leak', () => {
  it('appear in no log line, event, table row, status or metric', async () => {
    const http_ = (auth: string, path: string) => `{ name: call, kind: http, method: GET, auth: ${auth}, url: "${target.url}${path}" }`;
    const cases: [string, string, string, string?][] = [
      ['paths/basic-ok', 'completed', http_('p_basic_auth', '/ok')],
      ['paths/basic-fail', 'failed', http_('p_basic_auth', '/fail')],
      ['paths/header-key-ok', 'completed', http_('p_header_key_auth', '/ok')],
      ['paths/header-key-fail', 'failed', http_('p_header_key_auth', '/fail')],
      ['paths/query-key-ok', 'completed', http_('p_query_key_auth', '/ok')],
      ['paths/query-key-fail', 'failed', http_('p_query_key_auth', '/fail')],
      ['paths/custom-ok', 'completed', http_('p_custom_auth', '/ok')],
      ['paths/custom-fail', 'failed', http_('p_custom_auth', '/fail')],
      ['paths/oauth-ok', 'completed', http_('p_oauth_auth', '/ok')],
      ['paths/oauth-fail', 'failed', http_('p_oauth_auth', '/fail')],
      ['paths/pg-ok', 'completed', `{ name: call, kind: postgres, auth: p_pg_auth, command: "SELECT 1 AS one" }`],
      ['paths/pg-wrong', 'failed', `{ name: call, kind: postgres, auth: p_pg_wrong_auth, command: "SELECT 1 AS one" }`],
      ['paths/mcp-ok', 'completed', `{ name: call, kind: mcp, endpoint: "${mcpServer.url}", method: tools/list, auth: p_mcp_auth }`],
      ['paths/mcp-fail', 'failed', `{ name: call, kind: mcp, endpoint: "${target.url}/mcp", method: tools/list, auth: p_mcp_auth }`],
      [
        'paths/provider-fail',
        'failed',
        `{ name: call, kind: http, method: GET, url: "${target.url}/ok", headers: { X-Secret: "{{ keychain.vault.value }}" } }`,
        `keychain:\n  - { name: vault, kind: secret_manager, provider: gcp, scope: local, auth: p_provider_auth, endpoint: "${target.url}", map: { value: projects/p/secrets/s } }\n`,
      ],
    ];
    const ids: number[] = [];
    for (const [path, status, task, keychain] of cases) {
      await s.register(playbook(path, task, keychain));
      const id = await s.run(path);
      ids.push(id);
      expect((await s.wait(id)).status, path).toBe(status);
    }

    // The secrets were really sent (otherwise the scan below proves nothing).
    const sent = JSON.stringify(target.requests);
    for (const secret of [S.apiKeyHeader, S.apiKeyQuery, S.customHeader, S.clientSecret, S.mcpToken, S.providerToken]) expect(sent).toContain(secret);
    expect(sent).toContain(Buffer.from(`leak-user:${S.basic}`).toString('base64'));
    expect(mcpServer.authorizations).toContain(`Bearer ${S.mcpToken}`);
    expect(target.issuedTokens.length).toBeGreaterThan(0);

    const places: Record<string, string> = { logs: s.logs.join('\n'), 'every table': await everyRowText(s.databaseUrl), '/metrics': await (await fetch(`${s.url}/metrics`)).text() };
    for (const id of ids) {
      places[`GET /api/events/${id}`] = JSON.stringify((await http(s.url, 'GET', `/api/events/${id}`)).body);
      places[`GET /api/executions/${id}`] = JSON.stringify((await http(s.url, 'GET', `/api/executions/${id}`)).body);
    }
    expect(places['every table']).toContain('quoting what you sent'); // the echoes were stored, masked
    const secrets = [...Object.values(S), Buffer.from(`leak-user:${S.basic}`).toString('base64'), ...target.issuedTokens];
    for (const [place, text] of Object.entries(places)) {
      for (const secret of secrets) expect(text.includes(secret), `${place} holds ${secret.slice(0, 30)}`).toBe(false);
      expect(text, place).not.toContain('LEAKPATH');
    }
  });
});
