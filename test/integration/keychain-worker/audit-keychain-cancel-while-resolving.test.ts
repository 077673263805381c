// A command cancelled while the worker resolved its keychain entries held its worker slot until
// the token request ended: with a token endpoint slow to answer (up to its 30 s bound, longer
// behind a renewal lease another worker held), a cancelled execution's command kept a worker of
// concurrency 1 busy, and the next execution (a noop) waited 18.6 s for it. docs/operations.md says
// a worker hears of a cancel at its next heartbeat and stops the command: it now stops waiting for
// the entries then, runs none of the tasks, and the slot is free.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
let target: HttpTarget;
/** Answers every held token request: until then the token endpoint does not answer. */
let release: () => void = () => {};
const released = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    if (new URL(req.url ?? '/', 'http://target').pathname !== '/held-token') return;
    await released;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'late-token', expires_in: 600 }));
  });
  s = await startTestStack({ workers: 1, concurrency: 1 });
}, 120_000);
afterAll(async () => {
  release();
  await s?.close();
  await target?.close();
});

describe('a command cancelled while its keychain entry is being made', () => {
  it('frees its worker slot at once instead of waiting for the token endpoint', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: held_token, path: kcc/held-token }
workload: { base: "${target.url}" }
keychain:
  - { name: api, kind: oauth2, scope: local, endpoint: "{{ workload.base }}/held-token" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "{{ workload.base }}/echo", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`);
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: quick, path: kcc/quick }
workflow:
  - step: start
    tool: { name: nothing, kind: noop }
`);
    const held = await s.run('kcc/held-token');
    await until('the token request', () => target.requests.some((r) => r.path === '/held-token'));
    expect((await http(s.url, 'POST', `/api/executions/${held}/cancel`, { reason: 'not needed' })).status).toBe(200);

    const started = Date.now();
    const quick = await s.wait(await s.run('kcc/quick'), 25_000);
    expect(quick.status).toBe('completed');
    // Before: the slot came free only when the token request ended (here: never, till the test's end).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await s.wait(held)).status).toBe('cancelled');
    // Nothing was sent with a token the command never got.
    expect(target.requests.filter((r) => r.path === '/echo')).toEqual([]);
  }, 60_000);
});
