// `svc doctor detect` starts four detection executions and waits up to --timeout-seconds for them;
// when the time runs out it cancels those left ("left running, they would show up as stuck
// executions themselves"). A person who stops the wait with Ctrl-C (no worker runs them: the wait
// is the whole minute) left all four running, PENDING for ever where no worker can run them: the
// next detect listed the doctor's own executions as stuck and its commands as stranded. Ctrl-C
// (or SIGTERM from a supervisor) now cancels them as the timeout does, and exits 130 (SIGTERM 143).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { NODE24, ROOT, withTimeout } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

// No worker: the detection executions wait, as where no pool may run read_only tasks.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function doctorExecutions(): Promise<Json[]> {
  const r = await http(t.url, 'GET', '/api/executions?path_prefix=doctor/&limit=100');
  expect(r.status).toBe(200);
  return r.body.executions ?? r.body.items ?? r.body;
}

describe('svc doctor detect stopped while it waits', () => {
  it.each([['SIGINT', 130], ['SIGTERM', 143]] as const)('%s cancels the detection executions it started, exit %i', async (signal, exit) => {
    const before = new Set((await doctorExecutions()).map((e) => e.execution_id));
    const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'doctor', 'detect', '--json', '--server', t.url, '--timeout-seconds', '300'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (c) => (stderr += String(c)));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      const mine = await until(
        'the four detection executions to start',
        async () => {
          const now = (await doctorExecutions()).filter((e) => !before.has(e.execution_id));
          return now.length === 4 ? now.map((e) => e.execution_id as number).sort((a, b) => a - b) : undefined;
        },
        60_000,
        100,
      );
      proc.kill(signal);
      const code = await withTimeout(exited, 30_000, 'svc doctor detect to stop');
      expect(code, stderr).toBe(exit);
      expect(stderr).toMatch(new RegExp(`${signal}: stopped: cancelled the detection executions ${mine.join(', ')}`));
      for (const id of mine) {
        const ex = await http(t.url, 'GET', `/api/executions/${id}`);
        expect(ex.body.status, `execution ${id}`).toBe('cancelled');
      }
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
