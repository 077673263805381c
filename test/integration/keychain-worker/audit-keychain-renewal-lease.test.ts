// Many tasks needing one keychain entry at once ask its token endpoint once, whichever worker pool
// runs them. A worker's concurrent commands always shared one request, but two pools each made
// (or renewed) the entry: a 20-item parallel loop on two pools sent two token requests, and the
// two tokens overwrote each other in the store, the last one winning. The first pool to find the
// entry missing or expired now takes its renewal lease; the others wait for the entry it stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
/** Tokens the slow endpoint issued, per `key` query value, in order. */
const issued = new Map<string, string[]>();

beforeAll(async () => {
  // A token endpoint slow enough that every pool finds the entry missing before the first answer.
  target = await startHttpTarget(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    if (url.pathname !== '/slow-token') return;
    const key = url.searchParams.get('key') ?? '';
    const tokens = issued.get(key) ?? [];
    const token = `lease-${key}-${tokens.length + 1}`;
    tokens.push(token);
    issued.set(key, tokens);
    await new Promise((r) => setTimeout(r, 500));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
  });
  s = await startTestStack({ workers: 2, concurrency: 10 });
  const cred = await http(s.url, 'POST', '/api/credentials', {
    name: 'lease_client',
    type: 'oauth2',
    data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${target.url}/token` },
  });
  expect(cred.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const items = Array.from({ length: 20 }, (_, i) => i);

const playbook = (path: string, keychain: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}", items: [${items.join(', ')}] }
${keychain}
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: 20 }
    tool:
      - { name: call, kind: http, url: "{{ workload.base }}/echo?n={{ n }}", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`;

/** The Authorization header of each call to /echo of the items of this run (`n` ≥ since). */
const echoedAuth = (since: number) =>
  target.requests
    .slice(since)
    .filter((r) => r.path === '/echo')
    .map((r) => r.headers.authorization);

/** How many worker pools claimed commands of execution `id`. */
async function poolsUsed(id: number): Promise<number> {
  const events = await s.events(id);
  return new Set(events.filter((e: Json) => e.event_type === 'command.claimed').map((e: Json) => e.context.worker_id)).size;
}

describe('a keychain entry many tasks on several worker pools need at once', () => {
  it('is made by one token request, and every task uses that token', async () => {
    const reg = await s.register(playbook('kc/lease-create', 'keychain:\n  - { name: api, kind: oauth2, scope: shared, auth: lease_client, endpoint: "{{ workload.base }}/slow-token?key=create" }'));
    const since = target.requests.length;
    const id = await s.run(reg.path);
    expect((await s.wait(id)).status).toBe('completed');
    expect(await poolsUsed(id)).toBe(2);
    expect(issued.get('create')).toEqual(['lease-create-1']);
    const auths = echoedAuth(since);
    expect(auths).toHaveLength(items.length);
    expect(new Set(auths)).toEqual(new Set(['Bearer lease-create-1']));
  });

  it('is renewed by one token request when it expired, and every task uses the renewed token', async () => {
    const reg = await s.register(playbook('kc/lease-renew', ''));
    const stored = await http(s.url, 'POST', `/api/keychain/${reg.catalog_id}/api`, {
      token_data: { access_token: 'expired-token' },
      credential_type: 'oauth2',
      expires_at: '2000-01-01T00:00:00Z',
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/slow-token?key=renew` },
    });
    expect(stored.status).toBe(201);
    const since = target.requests.length;
    const id = await s.run(reg.path);
    expect((await s.wait(id)).status).toBe('completed');
    expect(await poolsUsed(id)).toBe(2);
    expect(issued.get('renew')).toEqual(['lease-renew-1']);
    expect(new Set(echoedAuth(since))).toEqual(new Set(['Bearer lease-renew-1']));
    const read = await http(s.url, 'GET', `/api/keychain/${reg.catalog_id}/api`);
    expect(read.body).toMatchObject({ status: 'success', token_data: { access_token: 'lease-renew-1' } });
  });
});
