import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { EXECUTION_MACHINE_VERSION } from '../../../machines/execution.machine.ts';
import { endBatches, itemRecords } from '../../../src/db/batch.repo.ts';
import { readUnit } from '../../../src/db/unit-read.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

// Statements that run at every routing of an execution this server does not hold in memory
// (hydration's read) or of every batch (its end and its items' records). Planned for their
// values they cost more to plan than to run (~1 ms against 0.2-0.4 ms), and where a value
// prunes core.event's ranges at planning a custom plan always looks cheaper, so PostgreSQL never
// chose the generic plan: their parameters are opaque so that it does.

const CALLS = 12;
// Custom plans PostgreSQL makes before it compares them with the generic one.
const CUSTOM_PLANS_FIRST = 5;

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
let client: pg.Client;
beforeAll(async () => {
  t = await createMigratedDatabase();
  client = new pg.Client({ connectionString: t.url });
  await client.connect();
  // Several ranges of the log, as a server makes ahead: a custom plan would prune all but one.
  for (let lo = 0; lo < 6_000_000; lo += 1_000_000) await client.query('SELECT core.svc_event_partition_create($1, $2)', [lo, lo + 1_000_000]);
});
afterAll(async () => {
  await client?.end();
  await t?.drop();
});

async function plansOf(name: string): Promise<{ custom: number; generic: number }> {
  const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1`, [name]);
  expect(rows).toHaveLength(1);
  return { custom: Number(rows[0].custom_plans), generic: Number(rows[0].generic_plans) };
}

describe('statements run per routing settle on their generic plan on a connection', () => {
  it('hydration\'s read (svc_read_unit)', async () => {
    for (let i = 0; i < CALLS; i++) {
      await readUnit(client, [i + 1, i + 2, i + 3], [{ execution_id: i + 1, command_id: i + 10 }], new Map([[i + 2, 4]]), EXECUTION_MACHINE_VERSION);
    }
    const plans = await plansOf('svc_read_unit');
    expect(plans.custom).toBeLessThanOrEqual(CUSTOM_PLANS_FIRST);
    expect(plans.generic).toBeGreaterThanOrEqual(CALLS - CUSTOM_PLANS_FIRST);
  });

  it('a batch\'s end (svc_batch_end) and its items\' records (svc_batch_item_records)', async () => {
    for (let i = 0; i < CALLS; i++) {
      // Batches that do not exist: the statements run and change nothing.
      await endBatches(client, 'complete', [
        {
          batch_id: 100 + i,
          execution_id: 1_500 + i,
          worker_id: null,
          state: 'completed',
          event_type: EVENT.batchCompleted,
          context: {},
          result: { context: {} },
          error: null,
          commands_generated: 0,
          message: '',
        },
      ]);
      await itemRecords(client, [{ batch_id: 100 + i, execution_id: 2_500 + i, event_ids: [1, 2] }]);
    }
    for (const name of ['svc_batch_end', 'svc_batch_item_records']) {
      const plans = await plansOf(name);
      expect(plans.custom, name).toBeLessThanOrEqual(CUSTOM_PLANS_FIRST);
      expect(plans.generic, name).toBeGreaterThanOrEqual(CALLS - CUSTOM_PLANS_FIRST);
    }
  });
});
