// The doctor's thresholds had a floor and no ceiling. `--stuck-minutes` written with 400 digits is
// Infinity to JavaScript, which the run's payload carried as null: every detection statement then
// matched nothing and detect answered ok, exit 0, about a server with a stuck execution. One past
// 2^53 (`"stuck_minutes": 1e20` to `svc doctor serve`) was refused by the server as the run's
// body (422 invalid body), which the doctor answered 502, the server could not be examined, not
// naming the argument. Each is now refused as an argument, as the server's own ages are bounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AGE_SECONDS } from '../../../src/config.ts';
import { http } from '../../helpers/http.ts';
import { runDoctor, serveDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

let svc: StartedSvc | undefined;
let url: string;

beforeAll(async () => {
  // In-process workers run the detection playbooks; port 0, read from the banner.
  svc = await startSvc();
  url = svc.url;
}, 90_000);
afterAll(async () => {
  await svc?.stop();
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
      const r = await served.call('POST', '/tools/detect/invoke', { stuck_minutes: 1e20 });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.detail.errors).toEqual([expect.stringMatching(/^stuck_minutes: must be <=/)]);
    } finally {
      await served.stop();
    }
  });
});
