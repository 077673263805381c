// A parallel loop on a limit queues a command an item, and GET /api/executions/{id} listed each one
// it waited for room: 5,000 items answered 520 KB, each second the console polled it. The view now
// lists the first EXECUTION_VIEW_WAITS_MAX by seq and says how many there are in all
// (`limit_waits_count`, `waits_count`); `svc status` says the list is cut.
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExecutionDetail, statusText } from '../../../src/cli/execution-status-view.ts';
import { EXECUTION_VIEW_WAITS_MAX } from '../../../src/db/execution-view.repo.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const ITEMS = EXECUTION_VIEW_WAITS_MAX + 50;

it('lists the first waits for room by seq and counts them all', async () => {
  const content = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: many-limit-waits, path: audit/many-limit-waits }
workflow:
  - step: fan
    loop: { in: "{{ range(${ITEMS}) | list }}", iterator: i, mode: parallel }
    tool: { name: x, kind: noop, limit: { name: never-defined, key: "k" } }
`;
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
  const started = await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/many-limit-waits' });
  expect(started.status).toBe(200);
  const id = Number(started.body.execution_id);
  const view = await until('every item waits for room', async () => {
    const r = await http(t.url, 'GET', `/api/executions/${id}`);
    return r.body.limit_waits_count === ITEMS ? r : undefined;
  });
  expect(view.status).toBe(200);
  const detail = v.parse(ExecutionDetail, view.body);
  const seqs = (view.body.limit_waits as { seq: number }[]).map((w) => w.seq);
  expect(seqs).toHaveLength(EXECUTION_VIEW_WAITS_MAX);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(view.body.limit_waits[0]).toMatchObject({ step: 'fan', limit: 'never-defined', key: 'k', defined: false });
  expect(view.body).toMatchObject({ waits: [], waits_count: 0 });
  expect(statusText(detail, { fan: { status: 'active' } })).toMatch(
    new RegExp(`waiting +${ITEMS} commands wait for room on a limit in all, the first ${EXECUTION_VIEW_WAITS_MAX} below`),
  );
  // The page's own line counts what it lists, not what the server has.
  expect(statusText(detail, { fan: { status: 'active' } })).toMatch(new RegExp(`fan +active +${EXECUTION_VIEW_WAITS_MAX} commands wait for room on limit never-defined`));
}, 60_000);
