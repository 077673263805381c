import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/db/queryable.ts';
import { STEP_WRITE_NO_PICK_STATEMENT, writeUnit, type UnitWrite } from '../../../src/db/unit-write.ts';
import { noUnit } from '../../helpers/hot-statements.ts';

// What the step write sends PostgreSQL: jsonb_to_recordset reads an absent key as NULL, as it
// reads a null, so the records go without their null fields (fewer bytes and keys to parse per
// step); nulls inside a record's values (a context, a result, an input) are data and stay.

/** Records each statement sent (its name and values) and answers with no rows. */
function recording(): { q: Queryable; sent: pg.QueryConfig[] } {
  const sent: pg.QueryConfig[] = [];
  const q: Queryable = {
    query: async <R extends pg.QueryResultRow>(text: string | pg.QueryConfig) => {
      if (typeof text !== 'string') sent.push(text);
      return { rows: [] as R[], command: 'SELECT', rowCount: 0, oid: 0, fields: [] };
    },
  };
  return { q, sent };
}

const step: UnitWrite = {
  ...noUnit,
  claimPolicy: null,
  appends: [{ execution_id: 7, expected: 3, n: 2, applied: 'all', proj: true, status: 'running', progress: 50, result: null, error: null, snapshot: null, machine_version: 8, snapshot_event_id: null }],
  events: [
    { execution_id: 7, ord: 1, event_type: 'command.completed', status: 'running', step: 's1', command_id: 4, worker_id: 'w', context: { seq: 1, loop_index: null }, result: { tasks: { t: { status: 'ok', data: null } } }, error: null, issued_seq: null, event_id: null },
    { execution_id: 7, ord: 2, event_type: 'command.issued', status: 'running', step: 's2', command_id: null, worker_id: null, context: { seq: 2, loop_index: null }, result: null, error: null, issued_seq: 2 },
  ],
  commands: [{ execution_id: 7, catalog_id: 1, seq: 2, step: 's2', loop_index: null, status: 'CLAIMED', input: { tasks: [], context: { parent: null } }, worker_id: 'w', claim_token: null, priority: 5, limit_name: null, limit_key: null }],
  commandUpdates: [{ execution_id: 7, command_id: 4, status: 'COMPLETED', expected_status: 'CLAIMED', expected_attempt: 1, report_id: 'r-1' }],
};

describe('the step write sends its records without their null fields', () => {
  it('leaves top-level nulls out and keeps those inside values', async () => {
    const { q, sent } = recording();
    await writeUnit(q, step);
    expect(sent.map((s) => s.name)).toEqual([STEP_WRITE_NO_PICK_STATEMENT]);
    const [appends, appendIds, events, commands, commandUpdates, commandUpdateIds, guarded] = sent[0].values ?? [];
    expect(JSON.parse(String(appends))).toEqual([{ execution_id: 7, expected: 3, n: 2, applied: 'all', proj: true, status: 'running', progress: 50, machine_version: 8 }]);
    expect(JSON.parse(String(events))).toEqual([
      { execution_id: 7, ord: 1, event_type: 'command.completed', status: 'running', step: 's1', command_id: 4, worker_id: 'w', context: { seq: 1, loop_index: null }, result: { tasks: { t: { status: 'ok', data: null } } } },
      { execution_id: 7, ord: 2, event_type: 'command.issued', status: 'running', step: 's2', context: { seq: 2, loop_index: null }, issued_seq: 2 },
    ]);
    expect(JSON.parse(String(commands))).toEqual([{ execution_id: 7, catalog_id: 1, seq: 2, step: 's2', status: 'CLAIMED', input: { tasks: [], context: { parent: null } }, worker_id: 'w', priority: 5 }]);
    expect(JSON.parse(String(commandUpdates))).toEqual(step.commandUpdates);
    expect([appendIds, commandUpdateIds, guarded]).toEqual([[7], [4], 1]);
  });
});
