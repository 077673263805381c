// A listening address that cannot be had stopped `svc server` and `svc gateway` with exit 1 and
// Node's words alone: "svc server: getaddrinfo ENOTFOUND nosuch.invalid", "svc gateway: listen
// EADDRNOTAVAIL: address not available 10.9.9.9", naming neither SVC_HOST nor SVC_GATEWAY_HOST
// (nor --host, when the gateway's flag gave it). A host name that does not resolve, or an address
// that is not this machine's, is a bad setting: exit 78 naming it, as every other one.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-listen-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function exitOf(args: string[], env: Record<string, string>, ms = 20_000): Promise<{ code: number | null; output: string }> {
  const p = spawnSvc(args, { SVC_DATA_DIR: dataDir, SVC_SERVER_URL: `http://127.0.0.1:${await freePort()}`, SVC_GATEWAY_SECRET: randomBytes(32).toString('base64'), ...env });
  const code = await withTimeout(p.exited, ms, `svc ${args.join(' ')}`).catch((err: unknown) => {
    p.kill('SIGKILL');
    throw err;
  });
  return { code, output: p.output() };
}

it('svc gateway: SVC_GATEWAY_HOST (or --host) that does not resolve, or is not this machine\'s, stops it (78) naming it', async () => {
  const unknown = await exitOf(['gateway'], { SVC_GATEWAY_HOST: 'nosuch.invalid', SVC_GATEWAY_PORT: '0' });
  expect(unknown.code, unknown.output).toBe(78);
  expect(unknown.output).toMatch(/^svc gateway: invalid SVC_GATEWAY_HOST: nosuch\.invalid /m);
  const foreign = await exitOf(['gateway'], { SVC_GATEWAY_HOST: '10.9.9.9', SVC_GATEWAY_PORT: '0' });
  expect(foreign.code, foreign.output).toBe(78);
  expect(foreign.output).toMatch(/^svc gateway: invalid SVC_GATEWAY_HOST: 10\.9\.9\.9 /m);
  const flag = await exitOf(['gateway', '--host', 'nosuch.invalid', '--port', '0'], {});
  expect(flag.code, flag.output).toBe(2);
  expect(flag.output).toMatch(/^svc gateway: --host: nosuch\.invalid does not resolve/m);
});

it('svc server: an SVC_HOST that does not resolve stops it (78) naming SVC_HOST', async () => {
  const r = await exitOf(['server'], { SVC_HOST: 'nosuch.invalid', SVC_AUTH: 'token', SVC_PORT: '0' }, 90_000);
  expect(r.code, r.output).toBe(78);
  expect(r.output).toMatch(/^svc server: invalid SVC_HOST: nosuch\.invalid /m);
}, 120_000);
