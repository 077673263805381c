// An `http` keychain entry without `token_field` is its token endpoint's whole answer (no field is
// required of it when it is made). With auto_renew its renewal must take the same answer: it used
// to require an `access_token` the answer never had, so the entry worked for its first lifetime and
// then failed every run, for good ("token endpoint answer has no non-empty string field 'access_token'").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
const issued: string[] = [];

beforeAll(async () => {
  target = await startHttpTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    // An API key service: its answer names the key `key`, and it lives one second.
    if (url.pathname === '/issue-key') {
      const key = `key-${issued.length + 1}-${Math.random().toString(36).slice(2)}`;
      issued.push(key);
      return json(200, { key, expires_in: 1 });
    }
    // Accepts only the key issued last.
    if (url.pathname === '/needs-latest-key') return req.headers['x-api-key'] === issued.at(-1) ? json(200, { ok: true }) : json(401, { error: 'unauthorized' });
  });
  s = await startTestStack({ workers: 1, concurrency: 2 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const PLAYBOOK = () => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: whole_answer, path: kcw/whole-answer }
keychain:
  - { name: api, kind: http, scope: global, auto_renew: true, method: GET, endpoint: "${target.url}/issue-key" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "${target.url}/needs-latest-key", headers: { X-Api-Key: "{{ keychain.api.key }}" } }
`;

describe('an auto-renewing http keychain entry whose value is the whole token answer', () => {
  it('is renewed from that answer when it expired, and the task uses the renewed value', async () => {
    await s.register(PLAYBOOK());
    const first = await s.wait(await s.run('kcw/whole-answer'));
    expect(first.status, JSON.stringify(first)).toBe('completed');
    expect(issued).toHaveLength(1);

    await new Promise((r) => setTimeout(r, 1_300)); // expires_in was 1 s
    const second = await s.wait(await s.run('kcw/whole-answer'));
    expect(second.status, JSON.stringify(second.error)).toBe('completed');
    expect(issued).toHaveLength(2);
    const calls = target.requests.filter((r) => r.path === '/needs-latest-key');
    expect(calls.at(-1)?.headers['x-api-key']).toBe(issued[1]);
    expect(s.logs.join('')).not.toContain(`KEYCHAIN: Failed to renew 'api'`);
    const events: Json[] = await s.events(second.execution_id);
    expect(events.some((e) => e.event_type === 'call.error')).toBe(false);
  });
});
