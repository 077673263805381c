// Settings that passed the parser and then failed in another library's words, or later:
// `svc gateway` with SVC_GATEWAY_TRUSTED_PROXIES=10.0.0.0/99 exited 1 saying "invalid range on
// address: 10.0.0.0/99" (no variable named); `svc worker` with SVC_SHELL_FILE_MB=17592186044416
// started and logged "shell tasks are refused: the sandbox cannot run ... install bubblewrap",
// refusing every shell task. Both now stop at start, exit 78, naming the variable.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

async function exitOf(command: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // Nothing listens at SVC_SERVER_URL: a worker or gateway that started would wait, not exit.
  const p = spawnSvc([command], { SVC_SERVER_URL: `http://127.0.0.1:${await freePort()}`, SVC_GATEWAY_PORT: '0', SVC_GATEWAY_SECRET: randomBytes(32).toString('base64'), SVC_WORKER_TOKEN: randomBytes(32).toString('base64'), ...env });
  const code = await withTimeout(p.exited, 20_000, `svc ${command}`).catch((err: unknown) => {
    p.kill('SIGKILL');
    throw err;
  });
  return { code, output: p.output() };
}

it('svc gateway: a trusted proxy that is no address or CIDR stops it (78) naming SVC_GATEWAY_TRUSTED_PROXIES', async () => {
  for (const value of ['10.0.0.0/99', '::::']) {
    const r = await exitOf('gateway', { SVC_GATEWAY_TRUSTED_PROXIES: value });
    expect(r.code, r.output).toBe(78);
    expect(r.output).toMatch(/^svc gateway: invalid SVC_GATEWAY_TRUSTED_PROXIES: /m);
  }
});

it('svc worker: a shell limit too large to write exactly stops it (78) naming the variable', async () => {
  for (const name of ['SVC_SHELL_FILE_MB', 'SVC_SHELL_MEMORY_MB']) {
    const r = await exitOf('worker', { [name]: '17592186044416' });
    expect(r.code, r.output).toBe(78);
    expect(r.output).toMatch(new RegExp(`^svc worker: invalid ${name}: expects an integer from \\d+ to 8589934591`, 'm'));
    expect(r.output).not.toContain('sandbox cannot run');
  }
});
