// `svc doctor serve` takes a JSON object of arguments, or no body: a JSON `null` was read as no
// body and ran the tool (a detection registers and starts playbooks on the server), where an
// array is refused. It is refused the same way now, and nothing runs.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { serveDoctor, type ServedDoctor } from './run-doctor.ts';

let served: ServedDoctor;
// Nothing listens there: a tool that ran would answer 502 (severity error, unreachable).
beforeAll(async () => {
  served = await serveDoctor(`http://127.0.0.1:${await freePort()}`);
});
afterAll(async () => served?.stop());

it('a JSON null body is 400 like an array, the tool not run; no body still means no arguments', async () => {
  for (const tool of ['reachability', 'detect', 'repair_trigger_reaper']) {
    const refused = await served.call('POST', `/tools/${tool}/invoke`, 'null', { 'content-type': 'application/json' });
    expect(refused.status, tool).toBe(400);
    expect(refused.body).toEqual({ detail: 'the body must be a JSON object of arguments' });
  }
  const none = await served.call('POST', '/tools/reachability/invoke');
  expect(none.status).toBe(502);
  expect(none.body).toMatchObject({ action: 'reachability', severity: 'error', data: { failure: 'unreachable' } });
});
