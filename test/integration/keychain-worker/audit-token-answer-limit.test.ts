// A keychain entry's token request reads no more of the answer than a task's answer (8 MiB), as an
// oauth2 credential's token request and an http task do: a token endpoint answering without end
// must not fill the worker's memory until the request's 30 s timeout.
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// The endpoint stops here if nobody stops reading: well past the limit, small enough for a test.
const SENT_AT_MOST = 64 * 1024 * 1024;

let s: TestStack;
let written = 0;
const server = createServer((req, res) => {
  // A JSON token answer whose access_token never ends.
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"access_token":"');
  const chunk = Buffer.alloc(64 * 1024, 120);
  const more = () => {
    while (!res.destroyed && written < SENT_AT_MOST && res.write(chunk)) written += chunk.length;
    if (res.destroyed) return;
    if (written >= SENT_AT_MOST) res.end('","expires_in":3600}');
    else res.once('drain', more);
  };
  more();
});
let base = '';

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  s = await startTestStack({ workers: 1, concurrency: 1 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('a keychain token answer larger than a task answer', () => {
  it('is read no further than 8 MiB: the entry fails to be made, saying so, and the step fails', async () => {
    const reg = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kc_endless, path: audit/kc-endless }
keychain:
  - { name: api, kind: oauth2, scope: global, endpoint: "${base}/token" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        method: GET
        url: "${base}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
`);
    const id = await s.run(reg.path, {});
    const final = await s.wait(id, 60_000);
    expect(final.status).toBe('failed');
    const failed = s.logs.find((line) => line.includes(`KEYCHAIN: Failed to create 'api'`));
    expect(JSON.parse(failed ?? '{}').reason).toMatch(/over 8 MiB/);
    // It stopped reading: the endpoint wrote little more than the limit (socket buffers) before the close.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    const events = await s.events(id);
    expect(events.find((e: Json) => e.event_type === 'call.error')?.error.code).toBe('template_error');
  });
});
