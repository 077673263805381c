// Retention dropped a range no execution had started in as soon as the sequence was past it,
// while the server that was handed its ids still held them unused (StartPreludeCache fetches a
// block ahead during a burst of starts, for ID_HOLD_MS): with SVC_EVENT_PARTITION_EXECUTIONS=10,
// 40 starts in a burst left ids 3000041..3000063 held, the run dropped [3000050, 3000060), and the
// next 12 starts wrote the events of 3000050..3000052 to the default partition, where no range
// ever takes them (retention never archives nor drops them). An empty range now goes only once an
// execution past it started 2 × ID_HOLD_MS ago.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const WIDTH = 10;
const FIRST_ID = 3_000_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, false)`, [FIRST_ID]);
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: g, path: held/gate }\nworkflow:\n  - step: gate\n    wait: { signal: go }\n' })).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const start = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'held/gate' })).body.execution_id;
const settings = (retentionDays: number | null) => ({ width: WIDTH, retentionDays, archiveDir: null });

it('keeps an empty range whose ids a server still holds; the starts that take them write to their range', async () => {
  expect(await start()).toBe(FIRST_ID);
  await keepEventPartitions(t.deps, settings(null));
  // Starts close together (each refill within 1 s of the one before) fetch ids in growing
  // blocks; the ones a block has left are held. A whole range past the last id used, handed out
  // and held, is the premise: a machine so loaded that a burst was too slow for it tries again.
  let used = 0;
  let held = false;
  for (let burst = 0; burst < 5 && !held; burst++) {
    for (let i = 0; i < 40; i++) used = Math.max(used, await start());
    const { rows: [seq] } = await t.deps.db.query<{ last: string }>(`SELECT last_value AS last FROM core.execution_id_seq`);
    held = Math.floor(Number(seq.last) / WIDTH) - Math.ceil((used + 1) / WIDTH) >= 1;
  }
  expect(held).toBe(true);

  // The executions wait (the ranges they are in cannot go): only held ranges could.
  const report = await keepEventPartitions(t.deps, settings(1));
  expect(report.dropped).toEqual([]);

  const more: number[] = [];
  for (let i = 0; i < 12; i++) more.push(await start());
  expect(Math.max(...more)).toBeGreaterThanOrEqual(Math.ceil((used + 1) / WIDTH) * WIDTH);
  const { rows: [stray] } = await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.event_default`);
  expect(stray.n).toBe(0);
  const { rows: [logged] } = await t.deps.db.query<{ n: number }>(`SELECT count(DISTINCT execution_id)::int AS n FROM core.event WHERE execution_id = ANY($1::bigint[])`, [more]);
  expect(logged.n).toBe(more.length);
}, 60_000);
