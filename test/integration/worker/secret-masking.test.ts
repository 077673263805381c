// Secrets reflected by an upstream are not stored (issue 10, fault 6): a real `svc worker` runs a
// playbook whose http tasks carry a bearer, a basic and two api_key credentials and a keychain
// token in headers, query and body, against a target that echoes its whole request back (as JSON,
// and as raw text with the query still URL-encoded and the body as sent), and a shell task prints
// the token and its base64. Neither the event log (API and table) nor the execution holds any of
// the values or their encodings; the mask does appear, and the target did get the real values.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_MASK } from '../../../src/credential/redact-secrets.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

// Characters that URL, form and JSON encodings change, so each encoding is a different text.
const BEARER = 'bearer-S3cret/+=&"tok';
const BASIC_USER = 'svc-user';
const BASIC_PASSWORD = 'basic-P@ss word/"x"';
const QUERY_KEY = 'query-Key+/=&?value';
const HEADER_KEY = 'header-Key-5f1e9a77';
const KEYCHAIN_TOKEN = 'keychain-T0ken/+="&z';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const encodingsOf = (secret: string): string[] => [
  secret,
  base64(secret),
  base64(secret).replace(/=+$/, ''),
  encodeURIComponent(secret),
  new URLSearchParams({ s: secret }).toString().slice(2),
  JSON.stringify(secret).slice(1, -1),
];
const FORBIDDEN = [
  ...[BEARER, BASIC_PASSWORD, QUERY_KEY, HEADER_KEY, KEYCHAIN_TOKEN].flatMap(encodingsOf),
  base64(`${BASIC_USER}:${BASIC_PASSWORD}`),
];

let s: WorkerStack;
let target: HttpTarget;
let db: pg.Client;

beforeAll(async () => {
  target = await startHttpTarget((req, res, recorded) => {
    if (!recorded.path.startsWith('/raw')) return;
    // The request as it came over the wire: query still URL-encoded, JSON body as sent.
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${recorded.body}`);
  });
  s = await startWorkerStack({ workers: 1 });
  db = new pg.Client({ connectionString: s.databaseUrl });
  await db.connect();
  const credentials = [
    { name: 'echo_bearer_auth', type: 'bearer', data: { token: BEARER } },
    { name: 'echo_basic_auth', type: 'basic', data: { username: BASIC_USER, password: BASIC_PASSWORD } },
    { name: 'echo_query_key_auth', type: 'api_key', data: { key: QUERY_KEY, in: 'query', param: 'api_key' } },
    { name: 'echo_header_key_auth', type: 'api_key', data: { key: HEADER_KEY, header: 'X-Api-Key' } },
  ];
  for (const c of credentials) expect((await http(s.url, 'POST', '/api/credentials', c)).status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await db?.end();
  await s?.close();
  await target?.close();
});

const playbook = (url: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: reflect, path: masking/reflect }
workload: { base: "${url}" }
workflow:
  - step: start
    tool:
      - { name: bearer_json, kind: http, method: POST, url: "{{ workload.base }}/echo", auth: echo_bearer_auth, body: { note: plain } }
      - { name: bearer_raw, kind: http, method: POST, url: "{{ workload.base }}/raw", auth: echo_bearer_auth, body: { note: plain } }
      - { name: basic_json, kind: http, method: GET, url: "{{ workload.base }}/echo", auth: echo_basic_auth }
      - { name: query_key_raw, kind: http, method: GET, url: "{{ workload.base }}/raw", auth: echo_query_key_auth }
      - { name: query_key_json, kind: http, method: GET, url: "{{ workload.base }}/echo", auth: echo_query_key_auth }
      - { name: header_key_json, kind: http, method: GET, url: "{{ workload.base }}/echo", auth: echo_header_key_auth }
      - name: token_in_shell
        kind: shell
        command: 'printf "%s\\n" "$TOK"; printf "%s" "$TOK" | base64; printf "%s" "$TOK" >&2'
        env: { TOK: "{{ keychain.tok.access_token }}" }
    next: [ { step: keychain_everywhere } ]
  - step: keychain_everywhere
    tool:
      - name: raw
        kind: http
        method: POST
        url: "{{ workload.base }}/raw"
        headers: { X-Token: "{{ keychain.tok.access_token }}" }
        params: { t: "{{ keychain.tok.access_token }}" }
        body: { token: "{{ keychain.tok.access_token }}", nested: { list: ["{{ keychain.tok.access_token }}"] } }
      - name: echoed
        kind: http
        method: POST
        url: "{{ workload.base }}/echo"
        headers: { Authorization: "Bearer {{ keychain.tok.access_token }}" }
        params: { t: "{{ keychain.tok.access_token }}" }
        body: { token: "{{ keychain.tok.access_token }}" }
`;

describe('secrets reflected by an upstream', () => {
  it('are masked in the event log, the stored events and the execution result', async () => {
    const registered = await s.register(playbook(target.url));
    const stored = await http(s.url, 'POST', `/api/keychain/${registered.catalog_id}/tok`, {
      token_data: { access_token: KEYCHAIN_TOKEN, token_type: 'Bearer' },
      credential_type: 'bearer',
      cache_type: 'token',
      scope_type: 'global',
      ttl_seconds: 3600,
    });
    expect(stored.status).toBeLessThan(300);
    const id = await s.run('masking/reflect');
    const execution = await s.wait(id, 30_000);
    expect(execution.status).toBe('completed');

    // The target got the real values: the masking is the worker's, not a request that never carried them.
    const sent = target.requests.flatMap((r) => [...Object.values(r.headers), ...Object.values(r.query), r.body].flat()).join('\n');
    for (const secret of [BEARER, QUERY_KEY, HEADER_KEY, KEYCHAIN_TOKEN, base64(`${BASIC_USER}:${BASIC_PASSWORD}`)]) expect(sent).toContain(secret);

    const events = await s.events(id);
    const rows = (await db.query('SELECT event_type, context, result, error FROM core.event WHERE execution_id = $1', [id])).rows;
    const texts = { events: JSON.stringify(events), table: JSON.stringify(rows), execution: JSON.stringify(execution) };
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of FORBIDDEN) expect(text.includes(secret), `${where} holds ${JSON.stringify(secret)}`).toBe(false);
    }
    expect(texts.events).toContain(SECRET_MASK);
    expect(texts.execution).toContain(SECRET_MASK);

    // What was masked is what the target echoed; the rest of the echo is kept.
    const completed = events.filter((e: { event_type: string }) => e.event_type === 'command.completed');
    const tasks = { ...completed[0].result.tasks, ...completed[1].result.tasks };
    expect(tasks.bearer_json.data.body.headers.authorization).toBe(`Bearer ${SECRET_MASK}`);
    expect(tasks.basic_json.data.body.headers.authorization).toBe(`Basic ${SECRET_MASK}`);
    expect(tasks.query_key_json.data.body.query.api_key).toBe(SECRET_MASK);
    expect(tasks.header_key_json.data.body.headers['x-api-key']).toBe(SECRET_MASK);
    expect(tasks.token_in_shell.data).toMatchObject({ stdout: `${SECRET_MASK}\n${SECRET_MASK}\n`, stderr: SECRET_MASK });
    expect(tasks.echoed.data.body).toMatchObject({ query: { t: SECRET_MASK }, body: { token: SECRET_MASK }, headers: { authorization: `Bearer ${SECRET_MASK}` } });
    expect(execution.result.body.body).toEqual({ token: SECRET_MASK });
    expect(tasks.bearer_json.data.body.body).toEqual({ note: 'plain' });
  });
});
