// Retry from a step (DESIGN.md "Waiting and control": the outcomes of steps completed before
// from_step "are replayed from the old log, not run") when the step whose failure ended the
// execution had run ok before from_step: a paging loop fetches page 1, stores it, then fails to
// fetch page 2. Retried from `store`, page 1's fetch ran again (its INSERT twice): every run of the
// failed step was left out of the replay, not just the run that failed. The failing run itself is
// still never replayed: a wait that timed out with no arc for it, retried from a sibling branch's
// step, waits again instead of failing at once on its recorded timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
beforeAll(async () => {
  s = await startWorkerStack({ serviceDbTasks: true });
  await s.deps.db.query(`CREATE TABLE public.page_log (step text, n int)`);
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const logged = async (): Promise<string[]> =>
  (await s.deps.db.query<{ step: string; n: number }>(`SELECT step, n FROM public.page_log ORDER BY step, n`)).rows.map((r) => `${r.step} ${r.n}`);
const replayedOf = async (id: number): Promise<string[]> => (await s.events(id)).filter((e) => e.event_type === 'step.replayed').map((e) => String(e.step));

// `fetch` writes its page and fails on page 2 (the statement rolls back: page 2 is never logged).
const pages = `
apiVersion: svc/v1
metadata: { name: pages, path: retry_reentered/pages }
workflow:
  - step: start
    next: [ { step: fetch, set: { page: 1 } } ]
  - step: fetch
    tool: { name: f, kind: postgres, command: "WITH i AS (INSERT INTO public.page_log VALUES ('fetch', $1) RETURNING n) SELECT n, 1 / (2 - n) AS one FROM i", params: ["{{ vars.page }}"] }
    next: store
  - step: store
    tool: { name: s, kind: postgres, command: "INSERT INTO public.page_log VALUES ('store', $1) RETURNING n", params: ["{{ steps.fetch.result.rows[0].n }}"] }
    next: [ { step: fetch, set: { page: "{{ vars.page + 1 }}" } } ]
`;

// `ask` times out with no arc for it (the execution fails there) while `hold` still waits.
const branches = `
apiVersion: svc/v1
metadata: { name: branches, path: retry_reentered/branches }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: hold }, { step: ask } ] }
  - step: hold
    wait: { for: 1h }
  - step: ask
    wait: { signal: approval, timeout: 1s }
`;

describe('retry from a step after which the failed step had run ok', () => {
  it("replays the failed step's runs that ended ok before from_step; never the run that failed", async () => {
    await s.register(pages);
    const first = await s.run('retry_reentered/pages');
    expect(await s.wait(first)).toMatchObject({ status: 'failed', error: { step: 'fetch' } });
    expect(await logged()).toEqual(['fetch 1', 'store 1']);

    const retried = await post(`/api/executions/${first}/retry`, { from_step: 'store' });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ from_step: 'store', replayed: ['start', 'fetch'] });
    const second = retried.body.execution_id as number;
    expect(await s.wait(second)).toMatchObject({ status: 'failed', error: { step: 'fetch' } });
    // Page 1 was fetched once, in the first execution; `store` ran again from its recorded result.
    expect(await logged()).toEqual(['fetch 1', 'store 1', 'store 1']);
    expect(await replayedOf(second)).toEqual(['start', 'fetch']);

    await s.register(branches);
    const timedOut = await s.run('retry_reentered/branches');
    expect(await s.wait(timedOut, 10_000)).toMatchObject({ status: 'failed', error: { code: 'wait_timeout', step: 'ask' } });
    const fromSibling = await post(`/api/executions/${timedOut}/retry`, { from_step: 'hold' });
    expect(fromSibling.status, JSON.stringify(fromSibling.body)).toBe(201);
    expect(fromSibling.body).toMatchObject({ from_step: 'hold', replayed: ['start'] });
    const third = fromSibling.body.execution_id as number;
    // `ask` waits for its signal again (its timeout was the failure, not an outcome to take).
    await until(`execution ${third} waits for approval`, async () => ((await http(s.url, 'GET', `/api/executions/${third}`)).body.waits as Json[] | undefined)?.some((w) => w.signal === 'approval'), 10_000);
    expect(await replayedOf(third)).toEqual(['start']);
    expect((await post(`/api/executions/${third}/cancel`)).body).toMatchObject({ status: 'cancelled' });
  });
});
