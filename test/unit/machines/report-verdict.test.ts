import { describe, expect, it } from 'vitest';
import { reportVerdict, type CommandState } from '../../../machines/report-verdict.ts';

const held = (over: Partial<CommandState> = {}): CommandState => ({ command_id: 7, status: 'CLAIMED', attempt: 2, worker_id: 'w1', ...over });

describe('reportVerdict', () => {
  it('moves a claimed command to RUNNING on progress, and on to COMPLETED or FAILED, for its holder', () => {
    expect(reportVerdict(held(), 'command.started', { attempt: 2, workerId: 'w1' })).toEqual({ kind: 'accept', status: 'RUNNING' });
    expect(reportVerdict(held(), 'call.done', { workerId: 'w1' })).toEqual({ kind: 'accept', status: 'RUNNING' });
    expect(reportVerdict(held({ status: 'RUNNING' }), 'call.error', { attempt: 2 })).toEqual({ kind: 'accept', status: 'RUNNING' });
    expect(reportVerdict(held({ status: 'RUNNING' }), 'command.completed', { attempt: 2 })).toEqual({ kind: 'accept', status: 'COMPLETED' });
    expect(reportVerdict(held(), 'command.failed', { workerId: 'w1' })).toEqual({ kind: 'accept', status: 'FAILED' });
    expect(reportVerdict(held(), 'command.heartbeat', { workerId: 'w1' })).toEqual({ kind: 'accept', status: 'CLAIMED' });
  });

  it('refuses an older attempt as stale_claim, another worker and an anonymous report as not_holder', () => {
    expect(reportVerdict(held(), 'command.completed', { attempt: 1, workerId: 'w1' })).toMatchObject({ kind: 'refused', code: 'stale_claim' });
    expect(reportVerdict(held(), 'command.completed', { attempt: 2, workerId: 'intruder' })).toMatchObject({ kind: 'refused', code: 'not_holder' });
    expect(reportVerdict(held(), 'command.completed', { workerId: 'intruder' })).toMatchObject({ kind: 'refused', code: 'not_holder' });
    expect(reportVerdict(held(), 'command.completed', {})).toMatchObject({ kind: 'refused', code: 'not_holder', message: expect.stringContaining('worker_id or attempt') });
  });

  it('refuses reports about a command nobody claimed', () => {
    expect(reportVerdict(held({ status: 'PENDING', attempt: 0, worker_id: null }), 'command.completed', { attempt: 0 })).toMatchObject({ kind: 'refused', code: 'not_claimed' });
  });

  it('a finished or cancelled command takes its own claim\'s (or an anonymous) report as late, an older claim\'s as stale, another worker\'s as not_holder', () => {
    for (const status of ['COMPLETED', 'FAILED', 'CANCELLED'] as const) {
      expect(reportVerdict(held({ status }), 'command.completed', { attempt: 2 })).toEqual({ kind: 'late', attempt: 2 });
      // An older claim's report arriving after a new claim finished the command is a stale claim's.
      expect(reportVerdict(held({ status }), 'command.completed', { attempt: 1, workerId: 'w0' })).toMatchObject({ kind: 'refused', code: 'stale_claim' });
      expect(reportVerdict(held({ status }), 'call.done', {})).toEqual({ kind: 'late', attempt: null });
      // So is another worker's naming no attempt, as it is refused while the command runs.
      expect(reportVerdict(held({ status }), 'command.completed', { workerId: 'w0' })).toMatchObject({ kind: 'refused', code: 'not_holder' });
      expect(reportVerdict(held({ status }), 'command.completed', { attempt: 2, workerId: 'w0' })).toMatchObject({ kind: 'refused', code: 'not_holder' });
      expect(reportVerdict(held({ status }), 'command.failed', { workerId: 'w1' })).toEqual({ kind: 'late', attempt: null });
      expect(reportVerdict(held({ status, worker_id: null }), 'command.failed', { workerId: 'w0' })).toEqual({ kind: 'late', attempt: null });
    }
  });
});

describe('reportVerdict agrees with the command machine run by xstate', () => {
  it('for every live status, report type and reporter', async () => {
    const { transition } = await import('xstate');
    const { commandMachine } = await import('../../../machines/command.machine.ts');
    const types = { 'command.started': 'start', 'call.done': 'start', 'command.heartbeat': 'heartbeat', 'command.completed': 'complete', 'command.failed': 'fail' } as const;
    const reporters = [{}, { attempt: 2 }, { attempt: 1 }, { attempt: 3 }, { workerId: 'w1' }, { workerId: 'w2' }, { attempt: 2, workerId: 'w1' }, { attempt: 2, workerId: 'w2' }, { attempt: 1, workerId: 'w1' }];
    let checked = 0;
    for (const status of ['CLAIMED', 'RUNNING'] as const) {
      for (const [eventType, type] of Object.entries(types)) {
        for (const r of reporters) {
          const snap = commandMachine.resolveState({ value: status, context: { attempt: 2, workerId: 'w1' } });
          const event = { type, attempt: r.attempt ?? null, workerId: 'workerId' in r ? r.workerId : null };
          const verdict = reportVerdict(held({ status }), eventType, r);
          if (snap.can(event)) expect(verdict).toEqual({ kind: 'accept', status: transition(commandMachine, snap, event)[0].value });
          else expect(verdict.kind).toBe('refused');
          checked++;
        }
      }
    }
    expect(checked).toBe(90);
  });
});
