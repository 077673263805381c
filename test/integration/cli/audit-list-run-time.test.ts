// `svc list`'s RUN TIME counted from the start, the time an execution waited queued by flow control
// (its playbook's `concurrency`) included: one queued 2 s behind another, then run for 0.3 s, showed
// ~2.3 s, and one still queued showed its wait as "so far" run time. GET /api/executions did not say
// when an execution was admitted. Its items (and GET /api/executions/{id}) now carry `admitted_at`
// (its first execution.admitted; null when it never queued or still waits), and RUN TIME counts
// from it (from the start when never queued); a queued one shows `queued` and for how long.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({});
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1
metadata: { name: one-at-a-time, path: runtime/one }
concurrency: { limit: 1 }
workflow:
  - step: gate
    wait: { signal: go }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const start = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'runtime/one' })).body.execution_id as number;
const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status as string;
const go = async (id: number) => expect((await http(t.url, 'POST', `/api/executions/${id}/signals/go`, { payload: {} })).status).toBe(202);
/** The RUN TIME cell of execution `id` in `svc list`'s table. */
async function runTimeCell(id: number): Promise<string> {
  const r = await runSvc(['list', '--path-prefix', 'runtime/'], { SVC_SERVER_URL: t.url });
  expect(r.code, r.stderr).toBe(0);
  const [header, ...rows] = r.stdout.trimEnd().split('\n');
  const column = header.indexOf('RUN TIME');
  const row = rows.find((line) => line.startsWith(`${id} `));
  expect(row, r.stdout).toBeDefined();
  return (row ?? '').slice(column, header.indexOf('PROGRESS')).trim();
}
const seconds = (text: string): number => (/^(\d+)ms/.test(text) ? Number(/^(\d+)ms/.exec(text)?.[1]) / 1000 : Number(/^([\d.]+)s/.exec(text)?.[1]));

it('RUN TIME counts from the admission, not the start; a queued execution says so', async () => {
  const first = await start();
  const second = await start();
  await until('the second queued', async () => (await statusOf(second)) === 'queued');
  await new Promise((r) => setTimeout(r, 2000));
  expect(await runTimeCell(second)).toMatch(/^queued [\d.]+s$/);

  await go(first);
  await until('the second admitted', async () => (await statusOf(second)) === 'running');
  await go(second);
  await until('the second completed', async () => (await statusOf(second)) === 'completed');

  const listed = (await http(t.url, 'GET', '/api/executions?path_prefix=runtime/')).body.executions as Array<Record<string, unknown>>;
  const item = listed.find((e) => e.execution_id === second);
  const never = listed.find((e) => e.execution_id === first);
  expect(never?.admitted_at).toBeNull();
  expect(typeof item?.admitted_at).toBe('string');
  const waited = Date.parse(String(item?.admitted_at)) - Date.parse(String(item?.started_at));
  expect(waited).toBeGreaterThanOrEqual(2000);
  expect((await http(t.url, 'GET', `/api/executions/${second}`)).body.admitted_at).toBe(item?.admitted_at);

  const ran = Date.parse(String(item?.finished_at)) - Date.parse(String(item?.admitted_at));
  const cell = await runTimeCell(second);
  expect(seconds(cell), cell).toBeCloseTo(ran / 1000, 2);
  expect(seconds(cell), cell).toBeLessThan(waited / 1000);
  // Never queued: from its start, as before.
  const firstCell = await runTimeCell(first);
  expect(seconds(firstCell), firstCell).toBeCloseTo((Date.parse(String(never?.finished_at)) - Date.parse(String(never?.started_at))) / 1000, 2);

  const json = await runSvc(['list', '--path-prefix', 'runtime/', '--json'], { SVC_SERVER_URL: t.url });
  expect(JSON.parse(json.stdout).executions.find((e: { execution_id: number }) => e.execution_id === second).admitted_at).toBe(item?.admitted_at);
}, 60_000);
