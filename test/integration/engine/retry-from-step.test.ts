// Retry from the failed step (POST /api/executions/{id}/retry): a 4-step playbook whose first two
// steps write to a PostgreSQL table and whose third fails until a flag row exists. The retry takes
// the first two steps' recorded outcomes (step.replayed), so the table shows they ran once, and
// runs on from the third: the new execution completes, linked both ways to the old one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
beforeAll(async () => {
  s = await startWorkerStack({ serviceDbTasks: true });
  await s.deps.db.query(`CREATE TABLE public.retry_log (step text, n int)`);
  await s.deps.db.query(`CREATE TABLE public.retry_flag (ok int)`);
});
afterAll(async () => {
  await s?.close();
});

const yaml = `
apiVersion: svc/v1
metadata: { name: retried, path: tests/retried }
workload: { n: 7 }
workflow:
  - step: start
    tool: { name: one, kind: postgres, command: "INSERT INTO public.retry_log VALUES ('start', $1) RETURNING n", params: ["{{ workload.n }}"] }
    next: second
  - step: second
    tool: { name: two, kind: postgres, command: "INSERT INTO public.retry_log VALUES ('second', $1) RETURNING n", params: ["{{ steps.start.result.rows[0].n + 1 }}"] }
    next: third
  - step: third
    tool: { name: three, kind: postgres, command: "SELECT 1 / (SELECT count(*)::int FROM public.retry_flag) AS one" }
    next: fourth
  - step: fourth
    tool: { name: four, kind: postgres, command: "INSERT INTO public.retry_log VALUES ('fourth', $1) RETURNING n", params: ["{{ steps.second.result.rows[0].n + 1 }}"] }
`;

describe('retry from the failed step', () => {
  it('replays the steps before it (their writes happened once), runs on from it, and links both executions', async () => {
    const reg = await s.register(yaml);
    const first = await s.run(reg.path, { n: 7 });
    expect(await s.wait(first)).toMatchObject({ status: 'failed', error: { step: 'third' } });
    // Not while it runs: nothing to retry yet. Here it finished: a step that is not there is 422.
    expect((await http(s.url, 'POST', `/api/executions/${first}/retry`, { from_step: 'nope' })).status).toBe(422);

    await s.deps.db.query(`INSERT INTO public.retry_flag VALUES (1)`);
    const res = await http(s.url, 'POST', `/api/executions/${first}/retry`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ retry_of: first, from_step: 'third', replayed: ['start', 'second'] });
    const second = res.body.execution_id as number;
    expect(await s.wait(second)).toMatchObject({ status: 'completed', error: null });

    const { rows } = await s.deps.db.query(`SELECT step, n FROM public.retry_log ORDER BY n`);
    expect(rows).toEqual([
      { step: 'start', n: 7 },
      { step: 'second', n: 8 },
      { step: 'fourth', n: 9 },
    ]);
    const events = await s.events(second);
    expect(events.filter((e: Json) => e.event_type === 'step.replayed').map((e: Json) => e.step)).toEqual(['start', 'second']);
    expect(events.filter((e: Json) => e.event_type === 'command.issued').map((e: Json) => e.step)).toEqual(['third', 'fourth']);
    expect(events[0].context).toMatchObject({ retry_of: first, from_step: 'third' });
    expect((await http(s.url, 'GET', `/api/executions/${first}`)).body).toMatchObject({ retry_of: null, retried_as: [second] });
    expect((await http(s.url, 'GET', `/api/executions/${second}`)).body).toMatchObject({ retry_of: first, retried_as: [] });
    // A replayed step ran in the execution retried: its step view says where.
    expect((await http(s.url, 'GET', `/api/executions/${second}/steps/start`)).body).toMatchObject({ runs: [], replayed_from: first });
    expect((await http(s.url, 'GET', `/api/executions/${second}/steps/third`)).body).toMatchObject({ runs: [expect.objectContaining({ status: 'completed' })], replayed_from: null });
    expect((await http(s.url, 'GET', `/api/executions/${first}/steps/start`)).body).toMatchObject({ runs: [expect.objectContaining({ status: 'completed' })], replayed_from: null });

    // From an earlier step: only what came before it is replayed.
    const again = await http(s.url, 'POST', `/api/executions/${first}/retry`, { from_step: 'second' });
    expect(again.body.replayed).toEqual(['start']);
    expect(await s.wait(again.body.execution_id)).toMatchObject({ status: 'completed' });
    expect((await s.deps.db.query(`SELECT count(*)::int AS n FROM public.retry_log WHERE step = 'start'`)).rows[0].n).toBe(1);
  });

  it('refuses a running execution (409), an unknown one (404), and a completed one without from_step (422)', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: held, path: tests/held_retry }
workflow:
  - step: start
    tool: { name: wait, kind: shell, command: "sleep 2" }
`);
    const running = await s.run('tests/held_retry', {});
    expect((await http(s.url, 'POST', `/api/executions/${running}/retry`, {})).status).toBe(409);
    expect((await http(s.url, 'POST', `/api/executions/999999999/retry`, {})).status).toBe(404);
    expect(await s.wait(running)).toMatchObject({ status: 'completed' });
    const done = await http(s.url, 'POST', `/api/executions/${running}/retry`, {});
    expect(done.status).toBe(422);
    expect(JSON.stringify(done.body)).toContain('from_step');
  });
});
