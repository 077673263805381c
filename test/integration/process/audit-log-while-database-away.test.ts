// While the database was away, a `svc server` logged each try of its loops: the scheduler's, the
// timekeeper's and the admitter's look every second (`schedule tick failed; trying again`, ...),
// the periodic jobs every few seconds: 180 lines a minute from the clocked loops alone, an hour's
// outage some 14,000 lines. A failure is now logged when it starts, then once a minute while it
// goes on (with the count of tries), and once when the loop works again; the loops resume
// without a restart.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { FaultBed } from './audit-fault-bed.ts';

const bed = new FaultBed({ SVC_LOG_LEVEL: 'info' });
beforeAll(() => bed.open(1, 0), 120_000);
afterAll(() => bed.close());

/** The JSON log lines the server wrote from `from` on (its output's offset). */
function linesSince(from: number): { msg: string; failures?: number }[] {
  return bed.servers[0].proc
    .output()
    .slice(from)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

const LOOPS = ['schedule tick', 'firing due waits', 'admitting queued executions'];
/** How long the database stays away in this test, in ms: 20 looks of each clocked loop. */
const AWAY_MS = 20_000;

it('logs each failing loop once while the database is away, not at every try, and says when it works again', async () => {
  const from = bed.servers[0].proc.output().length;
  await bed.stopPostgres();
  await new Promise((r) => setTimeout(r, AWAY_MS));
  const away = linesSince(from);
  for (const what of LOOPS) {
    const failed = away.filter((l) => l.msg === `${what} failed; trying again`);
    expect(failed.length, `${what}: ${JSON.stringify(failed)}`).toBe(1);
  }
  // Every periodic job's failure once too (their intervals are 10 s or more).
  const periodic = away.filter((l) => /^periodic \S+ failed$/.test(l.msg));
  expect(new Set(periodic.map((l) => l.msg)).size, JSON.stringify(periodic)).toBe(periodic.length);
  console.log(`${away.length} log lines in ${AWAY_MS / 1000} s with the database away`);

  await bed.startPostgres();
  await until('the server serves again', async () => (await http(bed.servers[0].base, 'GET', '/api/executions')).status === 200, 30_000, 200);
  await until('each clocked loop says it works again', () => LOOPS.every((what) => linesSince(from).some((l) => l.msg === `${what} works again` && (l.failures ?? 0) > 1)), 15_000, 200);
}, 120_000);
