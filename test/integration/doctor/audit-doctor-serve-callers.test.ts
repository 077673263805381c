// `svc doctor serve` checked no caller: on loopback it acted with its own server credentials (an
// admin's API token), so any local process could invoke its tools, the admin-only reaper sweep
// included: a test program with no credential, and an http task (a real worker) aimed at it. Now
// every caller but of /healthz presents the bearer the doctor writes to its 0600 --token-file.
import { statSync, existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { serveDoctor, type ServedDoctor } from './run-doctor.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: poke-doctor, path: audit/poke-doctor }
workflow:
  - step: start
    tool: { name: sweep, kind: http, method: POST, url: "{{ workload.doctor }}/tools/repair_trigger_reaper/invoke" }
`;

let target: HttpTarget;
let served: ServedDoctor;
let stack: TestStack;
let sweeps = 0;
beforeAll(async () => {
  // The server the doctor examines: it counts the reaper sweeps the doctor asks for.
  target = await startHttpTarget((_req, res, recorded) => {
    if (recorded.path === '/api/admin/command_reaper/sweep') sweeps++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', scanned: 0, republished: 0 }));
  });
  served = await serveDoctor(target.url);
  stack = await startTestStack();
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await served?.stop();
  await target?.close();
});

describe('svc doctor serve checks its callers', () => {
  it('refuses a local program without its bearer, or with another; serves one with it', async () => {
    const strangers: Record<string, string>[] = [{}, { authorization: 'Bearer svcdoc_made-up' }, { authorization: `Basic ${served.token}` }];
    for (const headers of strangers) {
      for (const [method, path] of [['POST', '/tools/repair_trigger_reaper/invoke'], ['POST', '/tools/detect/invoke'], ['GET', '/tools']] as const) {
        const refused = await http(served.url, method, path, undefined, headers);
        expect(refused.status, `${method} ${path}`).toBe(401);
        expect(refused.headers.get('www-authenticate')).toContain('Bearer');
        expect(refused.body).toEqual({ detail: `svc doctor serve needs its token: send Authorization: Bearer <the token in ${served.tokenFile}>` });
      }
    }
    expect(sweeps).toBe(0);
    // A supervisor's liveness probe needs nothing, and learns nothing else.
    expect(await http(served.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // The bearer is this user's alone to read.
    expect(statSync(served.tokenFile).mode & 0o777).toBe(0o600);
    expect(served.token).toMatch(/^svcdoc_[A-Za-z0-9_-]{43}$/);
    expect((await served.call('POST', '/tools/repair_trigger_reaper/invoke')).status).toBe(200);
    expect(sweeps).toBe(1);
  });

  it("an http task aimed at it is refused: a task was not given the doctor's bearer", async () => {
    const before = sweeps;
    const api = executionApi(stack.url);
    await api.register(PLAYBOOK);
    const id = await api.run('audit/poke-doctor', { doctor: served.url });
    await api.wait(id, 30_000);
    expect(sweeps).toBe(before);
    expect(JSON.stringify(await api.events(id))).toContain('401');
  });

  it('removes its bearer when it stops', async () => {
    await served.stop();
    expect(existsSync(served.tokenFile)).toBe(false);
  });
});
