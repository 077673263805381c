// A step may be named anything but `__proto__` (docs/playbook-dsl.md, Steps), so also like a
// property every object inherits: `constructor`, `toString`, `valueOf`. The execution's view
// (GET /api/executions/{id}/state, the inspection stream's snapshots, the console's live
// statechart, a simulation's steps) read a step's last outcome as `context.steps[name]`, which for
// such a name is the inherited function on a step that never ran: the step showed `failed`, with
// an outcome, while it waited its turn (pending) and once the execution ended without it (skipped).
import { describe, expect, it } from 'vitest';
import { executionView } from '../../../machines/execution-view.ts';
import { Driver, shell } from './helpers.ts';

describe('the view of a step named like an inherited property', () => {
  for (const name of ['constructor', 'toString', 'valueOf']) {
    it(`${name}: pending until it runs, skipped when the execution ends without it`, () => {
      const d = Driver.of([
        { step: 'start', tool: [shell('a')], next: [{ step: name, when: "{{ outcome.status == 'error' }}" }, { step: 'done' }] },
        { step: name, tool: [shell('b')] },
        { step: 'done', tool: [shell('c')] },
      ]);
      const running = executionView(d.playbook, d.snapshot, null);
      expect(running.steps[name]).toEqual({ status: 'pending' });
      d.completeOk(d.pendingSeqs()[0]);
      const before = d.snapshot;
      d.completeOk(d.pendingSeqs()[0]);
      expect(d.value).toBe('completed');
      expect(executionView(d.playbook, d.snapshot, before).steps[name]).toEqual({ status: 'skipped' });
    });

    it(`${name}: its own outcome once it ran`, () => {
      const d = Driver.of([
        { step: 'start', tool: [shell('a')], next: name },
        { step: name, tool: [shell('b')] },
      ]);
      d.completeOk(d.pendingSeqs()[0]);
      expect(executionView(d.playbook, d.snapshot, null).steps[name]).toEqual({ status: 'active' });
      d.completeOk(d.pendingSeqs()[0]);
      expect(executionView(d.playbook, d.snapshot, null).steps[name]).toEqual({ status: 'completed', outcome: { status: 'ok', error: null } });
    });
  }
});
