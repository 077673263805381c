// SVC_RETENTION_DAYS was accepted at any size, but retention compares finish times with now less
// that many days, and PostgreSQL's timestamps end at 4713 BC: from about 2,460,000 days ("keep it
// all, practically") every partition run failed with "timestamp out of range", logged each minute,
// fires never dropped. Such a value is now refused at start; the longest accepted runs cleanly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, MAX_RETENTION_DAYS } from '../../../src/config.ts';
import { createLogger } from '../../../src/log.ts';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

let d: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  d = await createMigratedDatabase();
  // Past the migration's first ranges, so that retention has ranges to judge.
  await d.db.query(`SELECT setval('core.execution_id_seq', 3000000, true)`);
});
afterAll(async () => {
  await d?.drop();
});

const run = (retentionDays: number) => keepEventPartitions({ db: d.db, log: createLogger('silent') }, { width: 1_000_000, retentionDays, archiveDir: null });

describe('SVC_RETENTION_DAYS', () => {
  it('past what the database can subtract from now is refused at start, naming the bound', async () => {
    // What such a value did to each run.
    await expect(run(3_000_000)).rejects.toThrow(/timestamp out of range/);
    for (const days of ['3000000', String(MAX_RETENTION_DAYS + 1)]) {
      expect(() => loadConfig({ SVC_RETENTION_DAYS: days })).toThrow(ConfigError);
      expect(() => loadConfig({ SVC_RETENTION_DAYS: days })).toThrow(`invalid SVC_RETENTION_DAYS: expects a number of days > 0, at most ${MAX_RETENTION_DAYS}`);
    }
  });

  it('the longest accepted runs cleanly', async () => {
    expect(loadConfig({ SVC_RETENTION_DAYS: String(MAX_RETENTION_DAYS) }).SVC_RETENTION_DAYS).toBe(MAX_RETENTION_DAYS);
    // The ranges no execution used (ids past the migration's first ones) go; nothing fails.
    const report = await run(MAX_RETENTION_DAYS);
    expect(report.skipped).toBeUndefined();
    expect(report.dropped.every((x) => x.executions === 0)).toBe(true);
  });
});
