// SVC_AUTH=none lets every caller in as the local admin because only this machine can reach a
// loopback address. A browser on this machine is the exception: any site it visits can send it
// there (a form or fetch POST, a WebSocket, with its own Origin), and a site whose name it
// rebinds to 127.0.0.1 reads the answers too (its requests then carry that name as Host). Such
// requests must be refused; the console at /ui/, the CLI and other local programs go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { browserRequest } from '../../helpers/browser-request.ts';
import { http } from '../../helpers/http.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp(); // SVC_AUTH=none on 127.0.0.1
  const made = await http(app.url, 'POST', '/api/credentials', { name: 'prod_db', type: 'bearer', data: { token: 'the-secret-token-value' } });
  expect(made.status).toBe(201);
});
afterAll(async () => app?.close());

const send = (method: string, path: string, headers: Record<string, string>) => browserRequest(app.url, method, path, headers);

describe('SVC_AUTH=none and browsers', () => {
  const port = () => new URL(app.url).port;

  it('refuses a request addressed to another name (DNS rebinding): no credential data', async () => {
    const rebound = await send('GET', '/api/credentials/prod_db?include_data=true', { host: `rebind.example:${port()}` });
    expect(rebound.status).toBe(403);
    expect(rebound.text).not.toContain('the-secret-token-value');
    expect(JSON.parse(rebound.text)).toEqual({ detail: expect.stringContaining('rebind.example') });
    // Loopback names are this machine's.
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, 'localhost']) {
      const local = await send('GET', '/api/credentials/prod_db?include_data=true', { host });
      expect(local.status, host).toBe(200);
      expect(local.text).toContain('the-secret-token-value');
    }
  });

  it('refuses a request another site\'s page sends (its Origin): nothing cancelled or started', async () => {
    const crossSite = await send('POST', '/api/executions/cleanup', { host: `127.0.0.1:${port()}`, origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.text)).toEqual({ detail: expect.stringContaining('https://evil.example') });
    expect((await send('POST', '/api/executions/cleanup', { host: `127.0.0.1:${port()}`, origin: 'null' })).status).toBe(403);
    // The console's own page (same origin) and programs that send no Origin are let in.
    expect((await send('POST', '/api/executions/cleanup', { host: `127.0.0.1:${port()}`, origin: app.url })).status).toBe(200);
    expect((await send('POST', '/api/executions/cleanup', { host: `127.0.0.1:${port()}`, origin: `http://localhost:${port()}` })).status).toBe(200);
    expect((await send('POST', '/api/executions/cleanup', { host: `127.0.0.1:${port()}` })).status).toBe(200);
  });

  it('keeps public routes public whoever asks', async () => {
    expect((await send('GET', '/api/health', { host: `rebind.example:${port()}`, origin: 'https://evil.example' })).status).toBe(200);
  });
});
