// `svc doctor serve` listens on loopback and acts with its own server credentials. A browser on
// this host is the exception loopback does not cover: another site's page could invoke a tool (a
// repair, with the doctor's token), or read the answers once it has rebound its name to 127.0.0.1.
// Such requests are refused, as SVC_AUTH=none refuses them, even with the doctor's bearer
// (audit-doctor-serve-callers); programs (no Origin) go on.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserRequest } from '../../helpers/browser-request.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { serveDoctor, type ServedDoctor } from './run-doctor.ts';

let target: HttpTarget;
let served: ServedDoctor;
let sweeps = 0;
beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded) => {
    if (recorded.path === '/api/admin/command_reaper/sweep') sweeps++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', scanned: 0, republished: 0 }));
  });
  served = await serveDoctor(target.url);
});
afterAll(async () => {
  await served?.stop();
  await target?.close();
});

it("refuses another site's page and a rebound name; a program's request goes on", async () => {
  const port = new URL(served.url).port;
  const invoke = (headers: Record<string, string>) => browserRequest(served.url, 'POST', '/tools/repair_trigger_reaper/invoke', { ...served.auth, ...headers });
  const crossSite = await invoke({ host: `127.0.0.1:${port}`, origin: 'https://evil.example' });
  expect(crossSite.status).toBe(403);
  expect(JSON.parse(crossSite.text)).toEqual({ detail: expect.stringContaining('https://evil.example') });
  const rebound = await browserRequest(served.url, 'GET', '/tools', { ...served.auth, host: `rebind.example:${port}` });
  expect(rebound.status).toBe(403);
  expect(sweeps).toBe(0);
  const program = await invoke({ host: `127.0.0.1:${port}` });
  expect(program.status).toBe(200);
  expect(sweeps).toBe(1);
});
