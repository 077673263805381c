import { describe, expect, it } from 'vitest';
import { createExecutionMachine } from '../../../machines/execution.machine.ts';
import { EXECUTION_STATUSES, isLiveExecutionStatus, isTerminalExecutionStatus, TERMINAL_EXECUTION_STATUSES } from '../../../machines/statuses.ts';
import { playbookOf, shell } from './helpers.ts';

describe('execution statuses', () => {
  // The one list the API, the database and the CLI use is the machine's own top-level states, and
  // `paused` (running with the machine's paused flag) and `queued` (running before its admission).
  it('are the execution machine top-level states, paused and queued; the terminal ones are its final states', () => {
    const machine = createExecutionMachine(playbookOf([{ step: 'start', tool: [shell('a')] }]));
    const states = Object.values(machine.root.states);
    expect([...states.map((s) => s.key), 'paused', 'queued'].sort()).toEqual([...EXECUTION_STATUSES].sort());
    expect(EXECUTION_STATUSES.filter(isLiveExecutionStatus)).toEqual(['queued', 'running', 'paused']);
    expect(states.filter((s) => s.type === 'final').map((s) => s.key).sort()).toEqual([...TERMINAL_EXECUTION_STATUSES].sort());
  });

  it('isTerminalExecutionStatus reads any text', () => {
    expect(EXECUTION_STATUSES.filter(isTerminalExecutionStatus)).toEqual(TERMINAL_EXECUTION_STATUSES);
    expect(isTerminalExecutionStatus('COMPLETED')).toBe(false);
    expect(isTerminalExecutionStatus('')).toBe(false);
  });
});
