// `svc worker` with SVC_WORKER_CONCURRENCY=0 (what `svc start` reads as "no in-process workers")
// exited 2 with "--concurrency expects an integer >= 1, got undefined", naming a flag nobody gave
// as a usage error; and the flag took what Number() takes (0x10 ran 16 slots). The setting is now
// refused as settings are (exit 78, naming SVC_WORKER_CONCURRENCY), the flag as digits from 1 to 1024.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

async function worker(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // Nothing listens there: a worker that started would wait for its server, not exit.
  const p = spawnSvc(['worker', ...args], { SVC_SERVER_URL: `http://127.0.0.1:${await freePort()}`, SVC_WORKER_TOKEN: randomBytes(32).toString('base64'), ...env });
  const code = await withTimeout(p.exited, 20_000, `svc worker ${args.join(' ')}`).catch((err: unknown) => {
    p.kill('SIGKILL');
    throw err;
  });
  return { code, output: p.output() };
}

it('SVC_WORKER_CONCURRENCY=0 is refused naming the variable (exit 78); --concurrency takes digits from 1 to 1024 (exit 2 otherwise)', async () => {
  const zero = await worker([], { SVC_WORKER_CONCURRENCY: '0' });
  expect(zero.code, zero.output).toBe(78);
  expect(zero.output).toMatch(/^svc worker: invalid SVC_WORKER_CONCURRENCY: svc worker expects an integer from 1 to 1024 \(got 0/m);
  for (const flag of ['0x10', '1e3', '0', '1025', '2.5']) {
    const bad = await worker(['--concurrency', flag], {});
    expect(bad.code, `${flag}: ${bad.output}`).toBe(2);
    expect(bad.output).toContain(`svc worker: --concurrency expects an integer from 1 to 1024, got "${flag}"`);
  }
});
