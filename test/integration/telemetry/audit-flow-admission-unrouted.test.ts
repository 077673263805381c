// The admitter counted an execution it admitted (svc_flow_admissions_total{kind=execution},
// svc_flow_wait_seconds) only once the routing of its execution.admitted succeeded; when that
// routing failed, the admission (committed, its slot taken) was routed again at the next look as
// `unrouted` (or later as a stray, `again`), neither of which is counted: it was never counted.
// It is now counted when the admission commits. The routing fails once here by a real fault of
// its statement: a trigger on core.event refuses the first execution.admitted.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { metricSum, scrape } from '../../helpers/metrics-text.ts';
import { until } from '../../helpers/until.ts';

const PATH = 'audit/admit-unrouted';
let t: TestApp;
let api: ExecutionApi;

beforeAll(async () => {
  t = await startTestApp();
  api = executionApi(t.url);
  // One at a time; each waits for a signal, holding its slot and no worker.
  await api.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: unrouted, path: ${PATH} }
concurrency: { limit: 1 }
workflow:
  - step: start
    wait: { signal: go, timeout: 1h }
`);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;

it('an admission whose first routing failed is counted once, as it commits', async () => {
  const first = await api.run(PATH);
  const second = await api.run(PATH);
  expect(await statusOf(first)).toBe('running');
  expect(await statusOf(second)).toBe('queued');
  // The first execution.admitted written fails (a sequence counts across rolled-back tries).
  await t.deps.db.query(`CREATE SEQUENCE public.audit_admitted_fault;
    CREATE FUNCTION public.audit_admitted_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.event_type = 'execution.admitted' AND nextval('public.audit_admitted_fault') = 1 THEN
        RAISE EXCEPTION 'injected fault: the routing of an admission fails once';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER audit_admitted_fault BEFORE INSERT ON core.event FOR EACH ROW EXECUTE FUNCTION public.audit_admitted_fault();`);
  // The cancel frees the slot: the admitter admits the second, its routing fails, the next look routes it.
  expect((await http(t.url, 'POST', `/api/executions/${first}/cancel`, {})).status).toBe(200);
  await until('the second execution admitted and routed', async () => (await statusOf(second)) === 'running', 20_000, 50);
  expect(Number((await t.deps.db.query(`SELECT last_value FROM public.audit_admitted_fault`)).rows[0].last_value)).toBeGreaterThanOrEqual(2);
  const samples = await scrape(t.url);
  const labels = { limit: `@${PATH}`, kind: 'execution' };
  // The first at its start, the second by the admitter: two admissions, two waits.
  expect({ queued: metricSum(samples, 'svc_flow_queued_total', labels), admitted: metricSum(samples, 'svc_flow_admissions_total', labels), waits: metricSum(samples, 'svc_flow_wait_seconds_count', labels) }).toEqual({ queued: 1, admitted: 2, waits: 2 });
}, 60_000);
