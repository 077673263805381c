// The doctor's next steps are commands to paste (docs/operations.md): the one it gives for a
// silent worker pool, deregistering it, must work as given. The route takes only the worker
// token (in every auth mode), which the step did not send: pasted, it answered 401.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asWorker, TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

let svc: StartedSvc | undefined;
let url: string;

beforeAll(async () => {
  svc = await startSvc({ SVC_COMMAND_REAPER_ENABLED: 'false' });
  url = svc.url;
}, 90_000);
afterAll(async () => {
  await svc?.stop();
});

/** Runs a next step as a person pastes it into bash, with the worker token in the environment. */
function paste(command: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn('bash', ['-c', command], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += String(c)));
  child.stderr.on('data', (c) => (out += String(c)));
  return new Promise((ok) => child.on('close', (code) => ok({ code, out })));
}

describe('the next step for a silent worker pool', () => {
  it('deregisters it when pasted, the worker token kept off the command line', async () => {
    expect((await http(url, 'POST', '/api/worker/pool/register', { name: 'gone-pool', capacity: 1 }, asWorker)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3_500));
    const run = await runDoctor(['detect', '--server', url, '--worker-stale-seconds', '3', '--json']);
    const check = run.json().data.checks.stale_worker_pools;
    expect(check.items).toContainEqual(expect.objectContaining({ name: 'gone-pool' }));
    const step: string = check.next_steps.find((s: string) => s.includes('/api/worker/pool/deregister'));
    expect(step).toBeDefined();
    expect(step).not.toContain(TEST_WORKER_TOKEN);
    // The silent pool it names: the oldest heartbeat (the in-process pool, idle, may be older).
    const named = /"name": "([^"]+)"/.exec(step)?.[1];
    expect(check.items.map((i: { name: string }) => i.name)).toContain(named);
    const command = step.slice(step.indexOf('curl'));
    const pasted = await paste(command, { SVC_WORKER_TOKEN: TEST_WORKER_TOKEN });
    expect(pasted.out).toBe(JSON.stringify({ status: 'deregistered', name: named }));
    if (named === 'gone-pool') {
      const pools = (await http(url, 'GET', '/api/worker/pools')).body.pools;
      expect(pools).toContainEqual(expect.objectContaining({ name: 'gone-pool', status: 'stopped' }));
    }
  });
});
