// Headers the HTTP client writes itself from the request. A task's Content-Length shorter than
// its body (headers copied from curl, the body then changed) made the request wait for ever: a
// task without timeout_seconds held its worker slot and left its execution running for good.
// Transfer-Encoding, Keep-Alive, Upgrade and Expect were refused by the client as if the target
// could not be reached (`connection`, which a retry.when on connection errors retried). Each is
// now the task's invalid_task, naming the header; a Content-Length that is the body's is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

// Long enough for a task that fails at once; the hanging request never ended within it.
const ENDS_WITHIN_MS = 15_000;

let stack: TestStack;
let target: HttpTarget;
beforeAll(async () => {
  [stack, target] = await Promise.all([startTestStack(), startHttpTarget()]);
}, 60_000);
afterAll(async () => Promise.all([stack?.close(), target?.close()]));

async function runTask(name: string, headers: string) {
  const path = `audit/${name}`;
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: ${path} }
workflow:
  - step: start
    tool:
      - name: notify
        kind: http
        method: POST
        url: "${target.url}/echo"
        headers: ${headers}
        body: { event: deployed, service: "{{ workload.service }}" }
        retry: { attempts: 3, delay_seconds: 0.1, when: "{{ outcome.error.code == 'connection' }}" }
`);
  return stack.wait(await stack.run(path, { service: 'billing-api' }), ENDS_WITHIN_MS);
}

describe('an http task writing a header the HTTP client writes itself', () => {
  it('fails invalid_task at once when its Content-Length is not the body’s', async () => {
    const execution = await runTask('cl_short', '{ Content-Type: application/json, Content-Length: "12" }');
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'invalid_task', message: expect.stringContaining('headers.Content-Length') } });
  });

  it('fails invalid_task, not retried as a connection error, for Expect, Transfer-Encoding, Keep-Alive and Upgrade', async () => {
    for (const header of ['Expect: 100-continue', 'Transfer-Encoding: chunked', 'Keep-Alive: timeout=5', 'Upgrade: websocket']) {
      const name = header.split(':')[0];
      const execution = await runTask(`h_${name.toLowerCase().replace('-', '_')}`, `{ ${header} }`);
      expect(execution, header).toMatchObject({ status: 'failed', error: { code: 'invalid_task', message: expect.stringContaining(`headers.${name}`) } });
      const attempts = (await stack.events(execution.execution_id)).filter((e: { event_type: string }) => e.event_type === 'call.attempt');
      expect(attempts, header).toEqual([]);
    }
  });

  it('sends the body when its Content-Length is the body’s', async () => {
    const body = JSON.stringify({ event: 'deployed', service: 'billing-api' });
    const execution = await runTask('cl_right', `{ Content-Length: "${Buffer.byteLength(body)}" }`);
    expect(execution).toMatchObject({ status: 'completed', result: { status: 200 } });
    expect(target.requests.filter((r) => r.path === '/echo').map((r) => r.body)).toEqual([body]);
  });
});
