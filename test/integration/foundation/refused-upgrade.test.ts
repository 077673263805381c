// A WebSocket upgrade the server refuses (no token, an unknown path) is answered over HTTP on a
// socket node's HTTP server no longer tracks (it was handed over for the upgrade): the server
// must end that socket itself. Left open, a client that hangs up leaves it in CLOSE-WAIT, and the
// server's close (SIGTERM) then waits for it for ever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { rawUpgrade as upgrade } from '../../helpers/raw-upgrade.ts';

let t: TestApp | undefined;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
});
afterAll(async () => t?.close());

describe('a refused WebSocket upgrade', () => {
  it('is answered and its socket ended by the server; the server then closes at once', async () => {
    const app = t!;
    const refused = await upgrade(app.url, '/api/executions/1/inspect', 3_000);
    expect(refused.text).toMatch(/^HTTP\/1\.1 401 /);
    const unknown = await upgrade(app.url, '/api/no-such-route', 3_000);
    expect(unknown.text).toMatch(/^HTTP\/1\.1 404 /);
    expect([refused.ended, unknown.ended]).toEqual([true, true]);
    refused.socket.destroy();
    unknown.socket.destroy();
    // A client that keeps its end open does not hold the server's close either.
    const lingering = await upgrade(app.url, '/api/executions/1/inspect', 200);
    const started = Date.now();
    t = undefined;
    await Promise.race([app.close(), new Promise((_r, reject) => setTimeout(() => reject(new Error('the server did not close within 10 s')), 10_000))]);
    expect(Date.now() - started).toBeLessThan(10_000);
    lingering.socket.destroy();
  }, 30_000);
});
