// No secret leaves the worker's hands: a playbook that uses a credential (`auth:` bearer on an http
// task), an oauth2 keychain token (created, renewed, failing to renew against an endpoint that
// echoes what it was sent) and a secret_manager value runs to the end; then every log line, every
// event (API and raw table), every row of every table, the execution status and /metrics are scanned.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const BEARER_SECRET = 'LEAKCHECK-bearer-5f1e9a';
const CLIENT_ID = 'leak-client';
const CLIENT_SECRET = 'LEAKCHECK-client-secret-77c2d0';
const PROVIDER_TOKEN = 'LEAKCHECK-provider-token-a41b';
const SECRET_VALUE = 'LEAKCHECK-secret-value-3e8f';

let s: TestStack;
let target: HttpTarget;
let tokenMode: 'ok' | 'fail' = 'ok';

beforeAll(async () => {
  target = await startHttpTarget(async (req, res, recorded) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    switch (url.pathname) {
      case '/token2': {
        // A token endpoint that, when failing, quotes back everything it was sent (secrets included).
        if (tokenMode === 'fail' || url.searchParams.get('fail')) {
          return answer(500, { error: 'server_error', you_sent: recorded.body, headers: recorded.headers });
        }
        const form = new URLSearchParams(recorded.body);
        if (form.get('client_id') !== CLIENT_ID || form.get('client_secret') !== CLIENT_SECRET) return answer(401, { error: 'invalid_client', you_sent: recorded.body });
        const token = `LEAKCHECK-issued-${target.issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
        target.issuedTokens.push(token);
        return answer(200, { access_token: token, token_type: 'Bearer', expires_in: Number(url.searchParams.get('expires_in') ?? 3600) });
      }
      case '/bearer-check':
        return req.headers.authorization === `Bearer ${BEARER_SECRET}` ? answer(200, { ok: true }) : answer(401, { error: 'unauthorized' });
      case '/secret-check':
        return req.headers['x-secret'] === SECRET_VALUE ? answer(200, { ok: true }) : answer(403, { error: 'forbidden' });
    }
    const gcp = /^\/v1\/(.+):access$/.exec(url.pathname);
    if (gcp) {
      if (req.headers.authorization !== `Bearer ${PROVIDER_TOKEN}`) return answer(401, { error: 'unauthenticated' });
      return answer(200, { name: gcp[1], payload: { data: Buffer.from(SECRET_VALUE).toString('base64') } });
    }
  });
  s = await startTestStack({ workers: 1, concurrency: 4 });
  const credentials = [
    { name: 'target_bearer_auth', type: 'bearer', data: { token: BEARER_SECRET } },
    { name: 'leak_client_auth', type: 'oauth2', data: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, token_url: `${target.url}/token2` } },
    { name: 'leak_provider_auth', type: 'bearer', data: { token: PROVIDER_TOKEN } },
  ];
  for (const c of credentials) expect((await http(s.url, 'POST', '/api/credentials', c)).status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function playbook(path: string, tokenEndpointQuery: string): string {
  return `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}" }
keychain:
  - { name: api, kind: oauth2, scope: global, auth: leak_client_auth, auto_renew: true, endpoint: "{{ workload.base }}/token2${tokenEndpointQuery}" }
  - { name: vault, kind: secret_manager, provider: gcp, scope: local, auth: leak_provider_auth, endpoint: "{{ workload.base }}",
      map: { value: projects/p/secrets/s } }
workflow:
  - step: start
    tool:
      - name: with_token
        kind: http
        method: GET
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
      - name: with_credential
        kind: http
        method: GET
        auth: target_bearer_auth
        url: "{{ workload.base }}/bearer-check"
      - name: with_secret
        kind: http
        method: GET
        url: "{{ workload.base }}/secret-check"
        headers: { X-Secret: "{{ keychain.vault.value }}" }
`;
}

async function everyRowText(databaseUrl: string): Promise<{ events: string; commands: string; all: string }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const events = (await client.query('SELECT * FROM core.event')).rows;
    const commands = (await client.query('SELECT command_id, input FROM core.command')).rows;
    const tables = await client.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const t of tables.rows) {
      const ident = `"${t.schema.replace(/"/g, '""')}"."${t.name.replace(/"/g, '""')}"`;
      const { rows } = await client.query<{ text: string | null }>(`SELECT string_agg(to_jsonb(t)::text, E'\\n') AS text FROM ${ident} t`);
      parts.push(`${ident}\n${rows[0]?.text ?? ''}`);
    }
    return { events: JSON.stringify(events), commands: JSON.stringify(commands), all: parts.join('\n') };
  } finally {
    await client.end();
  }
}

describe('keychain and credential secrets never leak', () => {
  it('appear in no log line, event, command input, table row, status or metric', async () => {
    const ids: number[] = [];
    const run = async (path: string): Promise<Json> => {
      const id = await s.run(path);
      ids.push(id);
      return s.wait(id);
    };

    const main = await s.register(playbook('leak/main', '?expires_in=1'));
    expect((await run(main.path)).status).toBe('completed'); // token created, credential used, secret read
    await sleep(1_300);
    expect((await run(main.path)).status).toBe('completed'); // token renewed
    expect((await run(main.path)).status).toBe('completed'); // live token read back from the keychain
    await sleep(1_300);
    tokenMode = 'fail';
    expect((await run(main.path)).status).toBe('failed'); // renewal answered 500 quoting the client secret
    const failingCreate = await s.register(playbook('leak/create-fails', '?fail=1'));
    expect((await run(failingCreate.path)).status).toBe('failed'); // creation answered 500 quoting the client secret

    // The secrets were really in play (otherwise the scan below proves nothing).
    expect(target.issuedTokens.length).toBe(2);
    expect(target.requests.filter((r) => r.path === '/protected' && r.headers.authorization?.toString().startsWith('Bearer LEAKCHECK-issued-'))).toHaveLength(3);
    expect(target.requests.filter((r) => r.path === '/bearer-check')).toHaveLength(3);
    expect(target.requests.filter((r) => r.path === '/secret-check')).toHaveLength(3);
    expect(target.requests.filter((r) => r.path === '/token2' && r.body.includes(CLIENT_SECRET)).length).toBe(4);
    const logs = s.logs.join('\n');
    expect(logs).toContain(`KEYCHAIN: Failed to renew 'api'`);
    expect(logs).toContain(`KEYCHAIN: Failed to create 'api'`);

    const apiEvents: string[] = [];
    const statuses: string[] = [];
    for (const id of ids) {
      apiEvents.push(JSON.stringify((await http(s.url, 'GET', `/api/events/${id}`)).body));
      statuses.push(JSON.stringify((await http(s.url, 'GET', `/api/executions/${id}`)).body));
    }
    const keychainList = JSON.stringify((await http(s.url, 'GET', `/api/keychain/catalog/${main.catalog_id}`)).body);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('svc_');
    const rows = await everyRowText(s.databaseUrl);
    expect(rows.events).toContain('call.done');
    expect(rows.commands).toContain('keychain.api.access_token'); // the inputs hold templates, not values

    const places: Record<string, string> = {
      logs,
      'GET /api/events': apiEvents.join('\n'),
      'GET /api/executions': statuses.join('\n'),
      'GET /api/keychain/catalog': keychainList,
      'core.event': rows.events,
      'core.command input': rows.commands,
      'every table': rows.all,
      '/metrics': metrics,
    };
    const secrets = [BEARER_SECRET, CLIENT_SECRET, PROVIDER_TOKEN, SECRET_VALUE, ...target.issuedTokens];
    for (const [place, text] of Object.entries(places)) {
      for (const secret of secrets) expect(text.includes(secret), `${place} holds ${secret.slice(0, 24)}…`).toBe(false);
      expect(text, place).not.toContain('LEAKCHECK');
    }
  });
});
