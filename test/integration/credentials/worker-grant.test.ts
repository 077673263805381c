// The worker token reads a credential, a keychain entry or a secret handle only for a command the
// calling worker holds (the claim headers) whose tasks name it; anything else is 403
// secret_not_granted, counted in svc_worker_secret_denied_total{kind}. Admins are not asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_HEADERS } from '../../../src/protocol.ts';
import { secretHandleId } from '../../../src/secret-handle.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

const PLAYBOOK = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: grant, path: grant/one }
keychain:
  - { name: tok, kind: oauth2, scope: local, auth: kc_auth, endpoint: "http://127.0.0.1:9/token" }
  - { name: unread, kind: oauth2, auth: unread_kc_auth, endpoint: "http://127.0.0.1:9/token" }
workflow:
  - step: start
    tool:
      - { name: direct, kind: noop, auth: direct_auth }
      - { name: templated, kind: noop, auth: "{{ workload.cred }}" }
      - { name: via_server, kind: mcp, server: grant-srv, method: tools/list }
      - { name: reads_keychain, kind: shell, command: "true", env: { T: "{{ keychain.tok.access_token }}" } }
`;
const MCP_SERVER = `
apiVersion: svc/v1
kind: Mcp
metadata: { name: grant-srv }
endpoint: http://127.0.0.1:9/mcp
auth: srv_auth
`;
const CREDENTIALS = ['direct_auth', 'templated_auth', 'kc_auth', 'unread_kc_auth', 'srv_auth', 'other_auth'];

type Claim = { commandId: number; attempt: number; workerId: string; executionId: number; catalogId: number; handle: string };

let t: TestApp;
let held: Claim;
let other: Claim;

const headersOf = (c: Pick<Claim, 'commandId' | 'attempt' | 'workerId'>): Record<string, string> => ({
  ...asWorker,
  [CLAIM_HEADERS.command]: String(c.commandId),
  [CLAIM_HEADERS.attempt]: String(c.attempt),
  [CLAIM_HEADERS.worker]: c.workerId,
});
const credential = (name: string, headers: Record<string, string>) => http(t.url, 'GET', `/api/credentials/${name}?include_data=true`, undefined, headers);
const denied = async (kind: string): Promise<number> => (await t.deps.metrics.workerSecretDenied.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0;

/** Starts grant/one with `workload` and claims its command as `workerId`. */
async function startAndClaim(workload: Record<string, unknown>, workerId: string): Promise<Claim> {
  const started = await http(t.url, 'POST', '/api/execute', { path: 'grant/one', workload });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const { rows } = await t.deps.db.query<{ command_id: number }>('SELECT command_id FROM core.command WHERE execution_id = $1', [started.body.execution_id]);
  const claimed = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: workerId }, asWorker);
  expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
  const workloadSeen: Json = claimed.body.context.workload;
  return {
    commandId: claimed.body.command_id,
    attempt: claimed.body.attempt,
    workerId,
    executionId: started.body.execution_id,
    catalogId: claimed.body.catalog_id,
    handle: secretHandleId(workloadSeen.access_token) ?? '',
  };
}

beforeAll(async () => {
  t = await startTestApp();
  for (const name of CREDENTIALS) expect((await http(t.url, 'POST', '/api/credentials', { name, type: 'bearer', data: { token: `${name}-secret` } })).status).toBe(201);
  expect((await http(t.url, 'POST', '/api/catalog/register', { content: MCP_SERVER, resource_type: 'mcp' })).status).toBe(201);
  expect((await http(t.url, 'POST', '/api/catalog/register', { content: PLAYBOOK, resource_type: 'playbook' })).status).toBe(201);
  held = await startAndClaim({ cred: 'templated_auth', access_token: 'workload-token-one' }, 'w1');
  other = await startAndClaim({ cred: 'other_auth', access_token: 'workload-token-two' }, 'w2');
  expect(held.handle).not.toBe('');
});
afterAll(async () => t?.close());

describe('credential data and the worker token', () => {
  it('without a claim: 403 secret_not_granted naming the missing headers, counted, and no data', async () => {
    const before = await denied('credential');
    const res = await credential('direct_auth', asWorker);
    expect(res.status).toBe(403);
    expect(res.body.detail.code).toBe('secret_not_granted');
    expect(res.body.detail.message).toContain(CLAIM_HEADERS.command);
    expect(JSON.stringify(res.body)).not.toContain('direct_auth-secret');
    expect(await denied('credential')).toBe(before + 1);
  });

  it('with a claim it holds: every credential its tasks name (auth, templated auth, an mcp server, a keychain entry read)', async () => {
    for (const name of ['direct_auth', 'templated_auth', 'srv_auth', 'kc_auth']) {
      const res = await credential(name, headersOf(held));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data).toEqual({ token: `${name}-secret` });
    }
  });

  it('with a claim it holds: 403 for a credential no task names (another execution\'s, an unread keychain entry\'s)', async () => {
    const before = await denied('credential');
    for (const name of ['other_auth', 'unread_kc_auth']) {
      const res = await credential(name, headersOf(held));
      expect(res.status, name).toBe(403);
      expect(res.body.detail.message).toContain('no task of command');
    }
    expect(await denied('credential')).toBe(before + 2);
    // The other command names other_auth through its workload.
    expect((await credential('other_auth', headersOf(other))).status).toBe(200);
  });

  it('403 for a command another worker claimed, an older attempt, or no command', async () => {
    expect((await credential('direct_auth', headersOf({ ...held, workerId: 'w2' }))).status).toBe(403);
    expect((await credential('direct_auth', headersOf({ ...held, attempt: held.attempt + 1 }))).status).toBe(403);
    expect((await credential('direct_auth', headersOf({ ...held, commandId: 987654 }))).status).toBe(403);
    const malformed = await credential('direct_auth', { ...headersOf(held), [CLAIM_HEADERS.command]: 'x' });
    expect(malformed.status).toBe(403);
  });

  it('admins keep their access: no claim asked', async () => {
    const res = await credential('other_auth', {});
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ token: 'other_auth-secret' });
  });
});

describe('keychain entries and the worker token', () => {
  const entry = (c: Pick<Claim, 'catalogId'>, query: string) => `/api/keychain/${c.catalogId}/tok${query}`;

  it("reads and stores entries of its command's catalog entry and execution only", async () => {
    const query = `?scope_type=local&execution_id=${held.executionId}`;
    expect((await http(t.url, 'GET', entry(held, query), undefined, headersOf(held))).status).toBe(200);
    const stored = await http(t.url, 'POST', entry(held, ''), { token_data: { access_token: 'kc' }, credential_type: 'oauth2', scope_type: 'local', execution_id: held.executionId }, headersOf(held));
    expect(stored.status).toBe(201);
    const before = await denied('keychain');
    expect((await http(t.url, 'GET', entry(held, query), undefined, asWorker)).status).toBe(403);
    expect((await http(t.url, 'GET', entry(held, `?scope_type=local&execution_id=${other.executionId}`), undefined, headersOf(held))).status).toBe(403);
    expect((await http(t.url, 'GET', entry({ catalogId: held.catalogId + 1000 }, query), undefined, headersOf(held))).status).toBe(403);
    const foreign = await http(t.url, 'POST', entry(held, ''), { token_data: { access_token: 'x' }, credential_type: 'oauth2', scope_type: 'local', execution_id: other.executionId }, headersOf(held));
    expect(foreign.status).toBe(403);
    expect(await denied('keychain')).toBe(before + 4);
    // Admins: unchanged.
    expect((await http(t.url, 'GET', entry(held, `?scope_type=local&execution_id=${other.executionId}`))).status).toBe(200);
  });

  it('reads, stores and renews only the entries its tasks read: 403 for another entry of the playbook', async () => {
    const unread = (query = '') => `/api/keychain/${held.catalogId}/unread${query}`;
    // An admin stores the playbook's other (global) entry, which no task of the held command reads.
    expect((await http(t.url, 'POST', unread(), { token_data: { access_token: 'unread-token' }, credential_type: 'oauth2' })).status).toBe(201);
    const before = await denied('keychain');
    const read = await http(t.url, 'GET', unread(), undefined, headersOf(held));
    expect(read.status).toBe(403);
    expect(read.body.detail.code).toBe('secret_not_granted');
    expect(JSON.stringify(read.body)).not.toContain('unread-token');
    const stored = await http(t.url, 'POST', unread(), { token_data: { access_token: 'forged' }, credential_type: 'oauth2' }, headersOf(held));
    expect(stored.status).toBe(403);
    expect((await http(t.url, 'POST', unread('/renewal'), undefined, headersOf(held))).status).toBe(403);
    expect(await denied('keychain')).toBe(before + 3);
    // The entry is as the admin stored it; the entry its tasks read is still answered.
    expect((await http(t.url, 'GET', unread())).body.token_data).toEqual({ access_token: 'unread-token' });
    expect((await http(t.url, 'GET', entry(held, `?scope_type=local&execution_id=${held.executionId}`), undefined, headersOf(held))).status).toBe(200);
  });
});

describe('execution secrets and the worker token', () => {
  it('exchanges a handle only for a command that was given it', async () => {
    const path = `/api/secrets/${held.handle}`;
    const ok = await http(t.url, 'GET', path, undefined, headersOf(held));
    expect(ok.status).toBe(200);
    expect(ok.body.value).toBe('workload-token-one');
    const before = await denied('secret');
    expect((await http(t.url, 'GET', path, undefined, asWorker)).status).toBe(403);
    const foreign = await http(t.url, 'GET', path, undefined, headersOf(other));
    expect(foreign.status).toBe(403);
    expect(JSON.stringify(foreign.body)).not.toContain('workload-token-one');
    expect(await denied('secret')).toBe(before + 2);
  });
});

describe('a finished command', () => {
  it('gives nothing once its worker reported it completed', async () => {
    const report = await http(
      t.url,
      'POST',
      '/api/events',
      { execution_id: held.executionId, command_id: held.commandId, attempt: held.attempt, worker_id: held.workerId, event_type: 'command.completed', result: { tasks: {} } },
      asWorker,
    );
    expect(report.status, JSON.stringify(report.body)).toBeLessThan(300);
    const { rows } = await t.deps.db.query<{ status: string }>('SELECT status FROM core.command WHERE command_id = $1', [held.commandId]);
    expect(rows[0].status).toBe('COMPLETED');
    const res = await credential('direct_auth', headersOf(held));
    expect(res.status).toBe(403);
    expect(res.body.detail.message).toContain('is not held');
    expect((await http(t.url, 'GET', `/api/secrets/${held.handle}`, undefined, headersOf(held))).status).toBe(403);
  });
});
