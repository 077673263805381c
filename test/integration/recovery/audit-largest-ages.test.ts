// The ages the reaper, the claim policy and auto-resume compare timestamps with (now less that
// many seconds or minutes) were unbounded: SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS=999999999999
// (an operator's "never") started, then every reaper sweep, timer or nudge, failed with "timestamp
// out of range" (the nudge answered 500). The largest value each setting takes now works end to end.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { interruptedRoots } from '../../../src/db/execution.repo.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// 1,000,000 days (as SVC_RETENTION_DAYS), the longest age taken; a timer's longest wait, the stale threshold's.
const MAX_AGE_SECONDS = 86_400_000_000;
const MAX_INTERVAL_SECONDS = 2_147_483;
let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({
    env: {
      SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS: String(MAX_AGE_SECONDS),
      SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS: String(MAX_AGE_SECONDS),
      SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: String(MAX_AGE_SECONDS),
      SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(MAX_INTERVAL_SECONDS),
      SVC_AUTO_RESUME_MIN_STALE_SECONDS: String(MAX_AGE_SECONDS),
      RESUME_WINDOW_MINUTES: String(MAX_AGE_SECONDS / 60),
    },
  });
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: ages, path: audit/ages }
workflow:
  - step: start
    tool: { name: t, kind: shell, command: "echo hi" }
`);
});
afterAll(async () => {
  await s?.close();
});

it('runs, sweeps and looks for interrupted executions at the largest ages the settings take', async () => {
  const done = await s.wait(await s.run('audit/ages'));
  expect(done.status).toBe('completed');
  const sweep = await http(s.url, 'POST', '/api/admin/command_reaper/sweep', {});
  expect(sweep.status, JSON.stringify(sweep.body)).toBe(200);
  expect(sweep.body).toMatchObject({ status: 'ok', republished: 0 });
  const c = s.deps.config;
  const roots = await interruptedRoots(s.deps.db, {
    minStaleSeconds: c.SVC_AUTO_RESUME_MIN_STALE_SECONDS,
    windowMinutes: c.RESUME_WINDOW_MINUTES,
    workerStaleSeconds: c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS,
    afterId: 0,
    limit: 10,
  });
  expect(roots).toEqual([]);
});
