import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_MACHINE_VERSION } from '../../../machines/execution.machine.ts';
import { readUnit } from '../../../src/db/unit-read.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

// Hydration's read (svc_read_unit) runs at every routing of an execution this server does not
// hold in memory (batch processing, timers, another server's executions). Planned for its values
// it cost ~1 ms of planning a call against 0.2-0.3 ms of running, and PostgreSQL never chose its
// generic plan: its parameters are opaque so that it does.

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
let client: pg.Client;
beforeAll(async () => {
  t = await createMigratedDatabase();
  client = new pg.Client({ connectionString: t.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await t?.drop();
});

describe('the hydration read', () => {
  it('settles on its generic plan on a connection: planned for its values at most five times', async () => {
    for (let i = 0; i < 12; i++) {
      const ids = [i + 1, i + 2, i + 3];
      await readUnit(client, ids, [{ execution_id: i + 1, command_id: i + 10 }], new Map([[i + 2, 4]]), EXECUTION_MACHINE_VERSION);
    }
    const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
      `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'svc_read_unit'`,
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].custom_plans)).toBeLessThanOrEqual(5);
    expect(Number(rows[0].generic_plans)).toBeGreaterThanOrEqual(7);
  });
});
