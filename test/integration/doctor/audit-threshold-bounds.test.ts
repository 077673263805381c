// The doctor's thresholds had a floor and no ceiling. `--stuck-minutes` written with 400 digits is
// Infinity to JavaScript, which the run's payload carried as null: every detection statement then
// matched nothing and detect answered ok, exit 0, about a server with a stuck execution. One past
// 2^53 (`"stuck_minutes": 1e20` to `svc doctor serve`) was refused by the server as the run's
// body (422 invalid body), which the doctor answered 502, the server could not be examined, not
// naming the argument. Each is now refused as an argument, as the server's own ages are bounded.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AGE_SECONDS } from '../../../src/config.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { runDoctor, serveDoctor } from './run-doctor.ts';

let db: TestDatabase;
let proc: SvcProcess;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // In-process workers run the detection playbooks; port 0, read from the banner.
  proc = spawnSvc(['start'], { SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATABASE_URL: db.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  await waitForOutput(proc, 'Ctrl-C stops it.', 60_000);
  const api = /API\s+(http:\/\/\S+)\/api/.exec(proc.output());
  if (!api) throw new Error(`no API address in the banner:\n${proc.output()}`);
  url = api[1];
  await waitForHealth(`${url}/api/health`, 10_000);
}, 90_000);
afterAll(async () => {
  proc?.kill('SIGTERM');
  if (proc) await withTimeout(proc.exited, 30_000, 'svc start stop');
  await db?.drop();
});

describe('doctor thresholds past any age the server takes', () => {
  it('svc doctor detect refuses them as a usage error naming the option', async () => {
    for (const [flag, value] of [
      ['--stuck-minutes', `1${'0'.repeat(400)}`],
      ['--pending-seconds', String(MAX_AGE_SECONDS + 1)],
      ['--worker-stale-seconds', `1${'0'.repeat(20)}`],
    ]) {
      const run = await runDoctor(['detect', '--server', url, '--json', flag, value]);
      expect(run.code, run.stdout).toBe(3);
      expect(run.stderr).toContain(`${flag}: must be <=`);
    }
    // The bounds themselves are taken.
    const run = await runDoctor(['detect', '--server', url, '--json', '--pending-seconds', String(MAX_AGE_SECONDS), '--stuck-minutes', String(MAX_AGE_SECONDS / 60)]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it('svc doctor serve answers 400 naming the argument', async () => {
    const served = await serveDoctor(url);
    try {
      const r = await http(served.url, 'POST', '/tools/detect/invoke', { stuck_minutes: 1e20 });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.detail.errors).toEqual([expect.stringMatching(/^stuck_minutes: must be <=/)]);
    } finally {
      await served.stop();
    }
  });
});
