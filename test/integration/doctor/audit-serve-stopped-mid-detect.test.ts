// `svc doctor serve` stopped (SIGTERM from its supervisor, Ctrl-C) while a detect invocation waits
// for its detection playbooks: it waited for the detection to end, up to its timeout_seconds (600
// at most), before it exited, and a supervisor that kills what does not stop within seconds left
// the four detection executions running (where no worker runs them, PENDING for ever: the next
// detect called them stuck). It now stops the detection as `svc doctor detect` stops on a signal:
// the executions are cancelled, the invocation answered 503, and the doctor exits 0 at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { withTimeout } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { serveDoctor } from './run-doctor.ts';

// No worker: the detection executions wait.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function doctorExecutions(): Promise<Json[]> {
  const r = await http(t.url, 'GET', '/api/executions?path_prefix=doctor/&limit=100');
  expect(r.status).toBe(200);
  return r.body.executions;
}

describe('svc doctor serve stopped while a detection waits', () => {
  it('cancels the detection executions and exits within seconds', async () => {
    const served = await serveDoctor(t.url);
    try {
      const invoked = served.call('POST', '/tools/detect/invoke', { timeout_seconds: 300 }).catch((e: unknown) => e);
      const mine = await until(
        'the four detection executions to start',
        async () => {
          const now = await doctorExecutions();
          return now.length === 4 ? now.map((e) => e.execution_id as number) : undefined;
        },
        60_000,
        100,
      );
      served.proc.kill('SIGTERM');
      expect(await withTimeout(served.proc.exited, 30_000, 'svc doctor serve to stop').catch((e) => { throw new Error(`${e}\n${served.proc.output()}`); })).toBe(0);
      const answer = (await invoked) as { status: number; body: Json };
      expect(answer.status).toBe(503);
      expect(answer.body.detail).toMatch(/^svc doctor serve is stopping: stopped: cancelled the detection executions /);
      for (const id of mine) {
        const ex = await http(t.url, 'GET', `/api/executions/${id}`);
        expect(ex.body.status, `execution ${id}`).toBe('cancelled');
      }
    } finally {
      served.proc.kill('SIGKILL');
    }
  });
});
