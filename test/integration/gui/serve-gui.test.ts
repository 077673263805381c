// The API server serves the built console at /ui/ and its runtime settings; without built files
// it says how to build them and serves the API as before.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { CONSOLE_POLICY } from '../../../src/security-headers.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-gui-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const appWith = (guiDir: string, auth: 'none' | 'token' | 'gateway' = 'none') =>
  buildApp({ ...t.deps, guiDir, config: { ...t.deps.config, SVC_AUTH: auth, SVC_GATEWAY_SECRET: 'g'.repeat(40) } });

describe('console files at /ui/', () => {
  it('serves index.html, hashed assets (cached for good) and an unknown path as the app’s route; nothing outside the build', async () => {
    const app = await appWith(dir);
    const index = await app.inject({ url: '/ui/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toContain('text/html');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.body).toContain('<title>console</title>');
    // Its policy loads only this origin's files and lets no other site frame it; the rest loads nothing.
    expect(index.headers['content-security-policy']).toBe(CONSOLE_POLICY);
    expect(index.headers['x-frame-options']).toBe('DENY');
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect((await app.inject({ url: '/ui' })).headers.location).toBe('/ui/');
    const asset = await app.inject({ url: '/ui/assets/index-abc123.js' });
    expect(asset.headers['content-type']).toContain('text/javascript');
    expect(asset.headers['cache-control']).toContain('immutable');
    expect(asset.body).toBe('console.log(1)');
    expect(asset.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    // A link written as a path goes to the console as its route (index.html here would load nothing).
    const link = await app.inject({ url: '/ui/executions/12?status=failed' });
    expect(link.statusCode).toBe(302);
    expect(link.headers.location).toBe('/ui/#/executions/12?status=failed');
    expect((await app.inject({ url: '/ui/assets/missing.js' })).statusCode).toBe(404);
    for (const url of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2fpackage.json']) {
      const r = await app.inject({ url });
      expect(r.body, url).not.toContain('svc-orchestrator');
    }
    await app.close();
  });

  it('answers runtime settings by SVC_AUTH: only none lets the console skip authentication', async () => {
    const expected = {
      none: { auth: 'none', api_base: '/api', login_url: null, logout_url: null, me_url: null, allow_skip_auth: true },
      token: { auth: 'token', api_base: '/api', login_url: null, logout_url: null, me_url: null, allow_skip_auth: false },
      // The login is the gateway's (its own settings name it): the server's console takes API tokens.
      gateway: { auth: 'gateway', api_base: '/api', login_url: null, logout_url: null, me_url: null, allow_skip_auth: false },
    } as const;
    for (const auth of ['none', 'token', 'gateway'] as const) {
      const app = await appWith(dir, auth);
      const r = await app.inject({ url: '/ui/runtime-config.json' });
      expect(r.statusCode, auth).toBe(200);
      expect(r.json(), auth).toEqual(expected[auth]);
      // The console's files are public; the API behind them still checks callers.
      expect((await app.inject({ url: '/ui/' })).statusCode, auth).toBe(200);
      if (auth !== 'none') expect((await app.inject({ url: '/api/executions' })).statusCode, auth).toBe(401);
      await app.close();
    }
  });

  it('without built files: logs how to build them, /ui/ is 404 and the API answers as before', async () => {
    const before = t.logs.length;
    const app = await appWith(join(dir, 'nothing-here'));
    expect(t.logs.slice(before).join('')).toContain('npm run build:gui');
    expect((await app.inject({ url: '/ui/' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/api/health' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/ui/runtime-config.json' })).statusCode).toBe(200);
    await app.close();
  });
});
