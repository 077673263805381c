// The doctor's next steps are commands to paste for the server it examined (--server): an svc
// command among them that names no --server would act on SVC_SERVER_URL or the local default
// instead, another server than the one found stuck.
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../../src/doctor/detection-checks.ts';

const SERVER = 'http://remote.example:9082';
const T = { stuck_minutes: 30, pending_seconds: 300, worker_stale_seconds: 60, limit: 20 };
const at = '2026-11-28T10:00:00Z';
const waits = { waits_for: null, signal: null, limit_name: null, until: null };

const found = {
  stuck_executions: { count: 1, items: [{ execution_id: 8, path: 'p', started_at: at, last_progress_at: at, idle_minutes: 95, reason: 'no_progress', ...waits }], waiting: 0, waiting_items: [] },
  dead_worker_claims: { count: 1, items: [{ command_id: 5, execution_id: 8, step: 'start', status: 'CLAIMED', worker_id: 'w', reason: 'silent', silent_seconds: 602 }] },
  stranded_pending_commands: { count: 1, items: [{ command_id: 5, execution_id: 8, step: 'start', waiting_seconds: 400 }], live_pools: 1 },
  stale_worker_pools: { count: 1, items: [{ name: 'dead-pool', status: 'ready', silent_seconds: 602 }], live_pools: 1 },
};

describe('the next steps of each finding', () => {
  it.each(Object.keys(found) as (keyof typeof found)[])('%s: every svc command names the --server examined', (name) => {
    const finding = CHECKS[name].interpret({ rows: [found[name]] }, T, SERVER, 1);
    expect(finding, `${name} did not read its row`).toBeDefined();
    const commands = finding!.next_steps.filter((s) => /^svc /.test(s));
    for (const command of commands) expect(command.split('#')[0]).toContain(`--server ${SERVER}`);
  });
});
