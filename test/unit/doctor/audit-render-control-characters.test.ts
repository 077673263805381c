// `svc doctor` at a terminal prints its findings readably, and they quote data: a step's name (a
// playbook may name a step "s\u001b[2J\rX": registration takes it), a path, a pool's name, an
// error a server answered. The readable form wrote them raw, so a step name's ESC sequence cleared
// the operator's screen and a CR rewrote the finding's line, where svc status, logs and triggers
// write control characters as escapes. The doctor's readable form now does too; --json is the
// object itself.
import { describe, expect, it } from 'vitest';
import { renderOutcome } from '../../../src/doctor/render-outcome.ts';
import { outcome } from '../../../src/doctor/outcome.ts';

const STEP = 's\u001b[2J\rX';

describe("the doctor's readable form", () => {
  it('writes control characters in findings as escapes, never raw', () => {
    const text = renderOutcome(
      outcome('detect', 'critical', {
        summary: '1 command is held by a worker pool that stopped',
        next_steps: ['svc doctor repair'],
        server: 'http://127.0.0.1:8082',
        checks: {
          dead_worker_claims: {
            severity: 'critical',
            summary: '1 command is held by a worker pool that stopped',
            count: 1,
            items: [{ command_id: 5, execution_id: 8, step: STEP, status: 'CLAIMED', worker_id: 'dead', reason: 'silent', silent_seconds: 602 }],
          },
          stranded_pending_commands: {
            severity: 'critical',
            summary: '1 command waits unclaimed',
            count: 1,
            items: [{ command_id: 6, execution_id: 9, step: STEP, waiting_seconds: 400 }],
          },
          stuck_executions: { severity: 'error', error: 'the detection playbook failed: \u001b]0;owned\u0007', execution_id: 3 },
        },
      }),
    );
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('step s\\u001b[2J\\rX, CLAIMED');
    expect(text).toContain('(step s\\u001b[2J\\rX): PENDING for 400 s');
    expect(text).toContain('failed: \\u001b]0;owned\\u0007 (execution 3)');
  });

  it("writes a server's answer quoted in the summary as escapes", () => {
    const text = renderOutcome(outcome('repair_trigger_reaper', 'error', { summary: 'POST /api/admin/command_reaper/sweep: the server answered 500 (\u001b[31mboom\r)', next_steps: [], server: 'http://127.0.0.1:8082', failure: 'server_error' }));
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('(\\u001b[31mboom\\r)');
  });
});
