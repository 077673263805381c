import type { SnapshotFrom, StateValue } from 'xstate';
import { EXECUTION_MACHINE_VERSION, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionContext } from '../machines/execution/types.ts';
import type { ExecutionRow } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { undecided, withChildTaskTimers } from './child-task-timers.ts';
import { pureRestore } from './pure-transition.ts';

/**
 * The snapshot `row` stores (as of its `snapshot_event_id`), restored: null when it has none this
 * machine version reads. A snapshot stored before a start recorded its treatment of playbook tasks
 * has it decided from the log in the database (actors/child-task-timers.ts).
 */
export async function restoreStoredSnapshot(q: Queryable, machine: ExecutionMachine, row: ExecutionRow): Promise<SnapshotFrom<ExecutionMachine> | null> {
  if (!row.snapshot || row.machine_version !== EXECUTION_MACHINE_VERSION) return null;
  const stored = row.snapshot as { value: StateValue; context: ExecutionContext };
  const from = undecided(stored.context.input) ? { ...stored, context: { ...stored.context, input: await withChildTaskTimers(q, stored.context.input) } } : stored;
  return pureRestore(machine, from);
}
