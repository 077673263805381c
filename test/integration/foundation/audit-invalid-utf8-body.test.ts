// A JSON body whose bytes are not UTF-8 (a lone 0xFF, a cut-off sequence, a surrogate encoded as
// UTF-8, an overlong form) was decoded by node with each bad sequence turned into U+FFFD: a
// credential's description, a pool's name, a start's payload, a signal's payload or a webhook's
// body were stored as something the client never sent, with a 2xx. Each is now 400 bad_request
// naming the byte, and nothing is stored. A body that holds U+FFFD itself is still taken as is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
let executionId: number;
let catalogId: number;
const HOOK_SECRET = 'hook-secret-0123456789';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: utf, path: utf/one }
triggers:
  - { name: hook, kind: webhook, auth: hook_auth, signature: bearer, payload: { got: "{{ request.body }}" } }
workflow:
  - step: start
    wait: { signal: go, timeout: 24h }
`;

/** The JSON text of `value` with the string "@@" in it replaced by `bad` bytes. */
function withBytes(value: unknown, bad: number[]): Buffer {
  const [head, tail] = JSON.stringify(value).split('@@');
  return Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]);
}

async function post(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: { detail?: unknown } }> {
  const res = await fetch(t.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...asWorker, ...headers }, body });
  return { status: res.status, body: (await res.json()) as { detail?: unknown } };
}

const count = async (sql: string, params: unknown[] = []): Promise<number> => (await t.deps.db.query<{ n: number }>(sql, params)).rows[0].n;

/** What each case may have stored: the same before and after a refused request. */
async function stored(): Promise<number[]> {
  return [
    await count('SELECT count(*)::int AS n FROM core.credential'),
    await count('SELECT count(*)::int AS n FROM core.runtime'),
    await count('SELECT count(*)::int AS n FROM core.execution'),
    await count('SELECT count(*)::int AS n FROM core.event'),
    await count('SELECT count(*)::int AS n FROM core.keychain'),
  ];
}

beforeAll(async () => {
  t = await startTestApp();
  const cred = await fetch(`${t.url}/api/credentials`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'hook_auth', type: 'custom', data: { secret: HOOK_SECRET } }) });
  expect(cred.status).toBe(201);
  const reg = await post('/api/catalog/playbook', Buffer.from(JSON.stringify({ content: PLAYBOOK })));
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  catalogId = (reg.body as { catalog_id: number }).catalog_id;
  const run = await post('/api/run/playbook', Buffer.from(JSON.stringify({ path: 'utf/one' })));
  expect(run.status).toBe(200);
  executionId = (run.body as { execution_id: number }).execution_id;
});
afterAll(async () => t?.close());

describe('a JSON body that is not UTF-8', () => {
  // `value`'s "@@" is sent as the `bad` bytes, which start at byte `at` of the body.
  const cases: { name: string; path: () => string; value: unknown; bad: number[]; at: number; headers?: Record<string, string> }[] = [
    { name: 'a credential description with 0xFF', path: () => '/api/credentials', value: { name: 'c1', type: 'custom', data: {}, description: 'a@@' }, bad: [0xff], at: 55 },
    { name: 'a pool name cut mid-sequence (0xC3)', path: () => '/api/worker/pool/register', value: { name: 'p@@' }, bad: [0xc3], at: 10 },
    { name: 'a start payload with a surrogate encoded as UTF-8 (ED A0 80)', path: () => '/api/run/playbook', value: { path: 'utf/one', payload: { who: '@@' } }, bad: [0xed, 0xa0, 0x80], at: 36 },
    { name: 'a signal payload with an overlong "/" (C0 AF)', path: () => `/api/executions/${executionId}/signals/go`, value: { payload: { x: '@@' } }, bad: [0xc0, 0xaf], at: 17 },
    { name: 'a keychain token with 0xFE', path: () => `/api/keychain/${catalogId}/k1`, value: { token_data: { a: '@@' }, credential_type: 'bearer', cache_type: 'secret', scope_type: 'global' }, bad: [0xfe], at: 20 },
    { name: 'a webhook delivery\'s JSON body with 0xFF', path: () => '/api/hooks/utf/one/hook', value: { x: '@@' }, bad: [0xff], at: 6, headers: { authorization: `Bearer ${HOOK_SECRET}` } },
  ];

  it.each(cases)('$name: 400 bad_request naming the byte, nothing stored', async (c) => {
    const before = await stored();
    const a = await post(c.path(), withBytes(c.value, c.bad), c.headers);
    expect(a.status, JSON.stringify(a.body)).toBe(400);
    expect(a.body.detail).toEqual({ code: 'bad_request', message: `the body is not valid UTF-8 (at byte ${c.at}): send JSON as UTF-8 text` });
    expect(await stored()).toEqual(before);
  });

  it('takes a body that holds U+FFFD itself, as sent', async () => {
    const made = await post('/api/credentials', Buffer.from(JSON.stringify({ name: 'c2', type: 'custom', data: {}, description: 'a\ufffdb' })));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((made.body as { description: string }).description).toBe('a\ufffdb');
  });
});
