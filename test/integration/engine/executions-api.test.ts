// The execution read API: listing with filters and cursor paging, event history paging, 404s for
// unknown ids, request-shape checks and what `progress` reports. No workers: executions here finish
// on the server alone (steps without tools, template errors in a loop's `in`) or are cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  for (const yaml of PLAYBOOKS) {
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => t?.close());

const PLAYBOOKS = [
  // Completes when started: a step without tools does nothing and follows `next`.
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: done, path: list/done }
workflow:
  - step: start
`,
  // Fails when started: the loop's `in` is rendered on the server.
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: fail, path: list/fail }
workflow:
  - step: start
    loop: { in: "{{ nosuchfunction(1) }}" }
    tool: { name: n, kind: noop }
`,
  // Half done when started: the second step waits for a worker, and there is none.
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: half, path: list/half }
workflow:
  - step: start
    next: work
  - step: work
    tool: { name: n, kind: noop }
`,
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: steps, path: events/steps }
workflow:
  - step: start
    next: b
  - step: b
    next: c
  - step: c
`,
];

async function start(path: string, payload: unknown = {}): Promise<number> {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path, payload });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id;
}

async function list(query: string): Promise<Json> {
  const r = await http(t.url, 'GET', `/api/executions${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Follows next_cursor from the first page to the one that says null; returns the pages. */
async function allPages(query: string): Promise<Json[]> {
  const pages: Json[] = [];
  for (let cursor: string | null = null; ; ) {
    const page = await list(`?${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    pages.push(page);
    expect(page.count).toBe(page.executions.length);
    if (page.next_cursor === null) return pages;
    // The cursor is opaque (the last row's start time and id): the next page starts strictly after it.
    expect(page.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    cursor = page.next_cursor;
    if (pages.length > 100) throw new Error('paging does not end');
  }
}

const ids = (page: Json) => page.executions.map((e: Json) => e.execution_id);

describe('GET /api/executions', () => {
  // In start order: half, done, fail, half (cancelled), done, half, done, fail.
  let half1: number, done2: number, fail3: number, cancelled4: number, done5: number, half6: number, done7: number, fail8: number;
  beforeAll(async () => {
    half1 = await start('list/half');
    done2 = await start('list/done');
    fail3 = await start('list/fail');
    cancelled4 = await start('list/half');
    done5 = await start('list/done');
    half6 = await start('list/half');
    done7 = await start('list/done');
    fail8 = await start('list/fail');
    expect((await http(t.url, 'POST', `/api/executions/${cancelled4}/cancel`, {})).body.status).toBe('cancelled');
  });

  it('filters by status and by path, newest first', async () => {
    const by = async (q: string) => ids(await list(q));
    expect(await by('?path=list/done')).toEqual([done7, done5, done2]);
    expect(await by('?path=list/half')).toEqual([half6, cancelled4, half1]);
    expect(await by('?path=list/half&status=running')).toEqual([half6, half1]);
    expect(await by('?path=list/half&status=cancelled')).toEqual([cancelled4]);
    expect(await by('?path=list/fail&status=failed')).toEqual([fail8, fail3]);
    expect(await by('?path=list/fail&status=completed')).toEqual([]);
    expect(await by('?path=list/nothing')).toEqual([]);
    const statuses = (await list('?path=list/done')).executions.map((e: Json) => e.status);
    expect(statuses).toEqual(['completed', 'completed', 'completed']);
    // A status filter alone sees every path: at least ours, in order, and nothing of another status.
    const completed = (await list('?status=completed')).executions;
    expect(completed.every((e: Json) => e.status === 'completed')).toBe(true);
    expect(ids({ executions: completed }).filter((id: number) => [done7, done5, done2].includes(id))).toEqual([done7, done5, done2]);
  });

  it('lists items in the shape of GET /api/executions/{id}, less its retry links, waits, labels and who started it (reads of their own)', async () => {
    const listed = (await list('?path=list/half&limit=1')).executions[0];
    const { retry_of, resumed_from, resumed_as, retried_as, waits, waits_count, labels, requested_by, trigger, flow, limit_waits, limit_waits_count, ...one } = (await http(t.url, 'GET', `/api/executions/${listed.execution_id}`)).body;
    expect({ retry_of, resumed_from, resumed_as, retried_as, waits, waits_count, labels, requested_by, trigger, flow, limit_waits, limit_waits_count }).toEqual({
      retry_of: null, resumed_from: null, resumed_as: null, retried_as: [], waits: [], waits_count: 0, labels: {}, requested_by: 'local', trigger: null, flow: null, limit_waits: [], limit_waits_count: 0,
    });
    expect(listed).toEqual(one);
  });

  it('pages with limit and cursor to the end; next_cursor is null on the last page', async () => {
    // 3 per page over 3 items: one full page, and it is the last.
    const exact = await allPages('path=list/half&limit=3');
    expect(exact.map(ids)).toEqual([[half6, cancelled4, half1]]);
    const ones = await allPages('path=list/done&limit=1');
    expect(ones.map(ids)).toEqual([[done7], [done5], [done2]]);
    const twos = await allPages('path=list/done&limit=2');
    expect(twos.map(ids)).toEqual([[done7, done5], [done2]]);
    // Unfiltered: every execution of the database exactly once, newest first.
    const { rows } = await t.deps.db.query<{ execution_id: number }>(`SELECT execution_id FROM core.execution ORDER BY started_at DESC, execution_id DESC`);
    const everything = (await allPages('limit=3')).flatMap(ids);
    expect(everything).toEqual(rows.map((r) => r.execution_id));
    expect(everything.length).toBeGreaterThanOrEqual(8);
    // A bare execution id (the older cursor form) continues after that execution; past the oldest: an empty last page.
    expect(ids(await list(`?path=list/done&cursor=${done7}`))).toEqual([done5, done2]);
    const past = await list(`?path=list/done&cursor=${done2}`);
    expect(past).toEqual({ executions: [], count: 0, next_cursor: null, counts: { queued: 0, running: 0, paused: 0, completed: 3, failed: 0, cancelled: 0 } });
    // The default limit is 50.
    expect((await list('?path=list/done')).next_cursor).toBeNull();
  });

  it('rejects bad filters with 422', async () => {
    for (const q of ['?status=bogus', '?limit=0', '?limit=501', '?limit=x', '?cursor=abc', '?cursor=-1', '?started_after=yesterday', '?started_before=2026-02-30', '?parent=x']) {
      const r = await http(t.url, 'GET', `/api/executions${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.detail.message, q).toBe('invalid querystring');
    }
    // An empty value is a parameter not sent (as a form sends a blank field; foundation/empty-query-values).
    for (const q of ['?q=', '?path_prefix=']) expect((await http(t.url, 'GET', `/api/executions${q}`)).status, q).toBe(200);
  });

  it('reports progress: done steps over known steps whatever the outcome, 100 once completed', async () => {
    const one = async (id: number) => (await http(t.url, 'GET', `/api/executions/${id}`)).body;
    expect(await one(half1)).toMatchObject({ status: 'running', progress: 50 });
    expect(await one(done2)).toMatchObject({ status: 'completed', progress: 100 });
    // Its only step failed it: nothing was done.
    expect(await one(fail3)).toMatchObject({ status: 'failed', progress: 0, error: { code: 'template_error', step: 'start' } });
    // Cancelled with one of two steps done.
    expect(await one(cancelled4)).toMatchObject({ status: 'cancelled', progress: 50, error: { code: 'cancelled' } });
    // The alias and the list say the same.
    expect((await http(t.url, 'GET', `/api/execution/${fail3}`)).body.progress).toBe(0);
    const listed = (await list('?path=list/fail')).executions;
    expect(listed.map((e: Json) => e.progress)).toEqual([0, 0]);
    // Rows finished by older versions keep what they stored (100 for every finished one, or the share).
    await t.deps.db.query(`UPDATE core.execution SET progress = 100 WHERE execution_id = ANY($1)`, [[fail3, cancelled4]]);
    expect(await one(fail3)).toMatchObject({ status: 'failed', progress: 100 });
    expect(await one(cancelled4)).toMatchObject({ status: 'cancelled', progress: 100 });
    expect((await list('?path=list/fail')).executions.map((e: Json) => e.progress)).toEqual([0, 100]);
  });
});

describe('GET /api/events/{id}', () => {
  it('pages with since_event_id and limit; next_since_event_id is where the next page starts', async () => {
    const id = await start('events/steps');
    const full = (await http(t.url, 'GET', `/api/events/${id}`)).body;
    expect(full.execution_id).toBe(id);
    expect(full.events.map((e: Json) => (e.step ? `${e.event_type}:${e.step}` : e.event_type))).toEqual([
      'execution.started',
      'step.enter:start',
      'step.exit:start',
      'step.enter:b',
      'step.exit:b',
      'step.enter:c',
      'step.exit:c',
      'workflow.completed',
      'playbook.completed',
    ]);
    expect(full.events.map((e: Json) => e.event_id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(full.next_since_event_id).toBe(9);

    const pages: Json[] = [];
    for (let since = 0; ; ) {
      const page = (await http(t.url, 'GET', `/api/events/${id}?since_event_id=${since}&limit=4`)).body;
      pages.push(page);
      if (page.events.length === 0) break;
      expect(page.next_since_event_id).toBe(page.events.at(-1).event_id);
      since = page.next_since_event_id;
    }
    expect(pages.map((p) => p.events.map((e: Json) => e.event_id))).toEqual([[1, 2, 3, 4], [5, 6, 7, 8], [9], []]);
    // An empty page keeps the position: polling again from there loses nothing.
    expect(pages.at(-1).next_since_event_id).toBe(9);
    expect(pages.flatMap((p) => p.events)).toEqual(full.events);
    const middle = (await http(t.url, 'GET', `/api/events/${id}?since_event_id=2&limit=3`)).body;
    expect(middle.events.map((e: Json) => e.event_id)).toEqual([3, 4, 5]);
    expect(middle.next_since_event_id).toBe(5);
  });

  it('rejects a bad since_event_id or limit with 422', async () => {
    const id = await start('list/done');
    for (const q of ['since_event_id=-1', 'since_event_id=x', 'limit=0', 'limit=5001']) {
      expect((await http(t.url, 'GET', `/api/events/${id}?${q}`)).status, q).toBe(422);
    }
  });
});

describe('unknown ids', () => {
  it('answer 404 on every execution endpoint', async () => {
    const { rows } = await t.deps.db.query<{ id: number }>(`SELECT coalesce(max(execution_id), 0) + 1000 AS id FROM core.execution`);
    const unknown = rows[0].id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/execution/${unknown}`],
      ['GET', `/api/executions/${unknown}`],
      ['GET', `/api/events/${unknown}`],
      ['POST', `/api/executions/${unknown}/cancel`, {}],
    ];
    for (const [method, path, body] of calls) {
      const r = await http(t.url, method, path, body);
      expect(r.status, path).toBe(404);
      expect(r.body.detail, path).toMatch(new RegExp(`execution ${unknown}`));
    }
    // Not an id at all is a request-shape problem.
    expect((await http(t.url, 'GET', '/api/executions/abc')).status).toBe(422);
  });
});

describe('request bodies', () => {
  it('refuse an array payload or workload with 422 and start nothing', async () => {
    const count = async () => (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = 'list/done'`)).rows[0].n;
    const before = await count();
    const bad: [string, unknown, string][] = [
      ['/api/run/playbook', { path: 'list/done', payload: [1, 2] }, 'payload'],
      ['/api/execute', { path: 'list/done', workload: [1, 2] }, 'workload'],
      ['/api/execute', { path: 'list/done', payload: [] }, 'payload'],
      ['/api/run/playbook', { path: 'list/done', payload: 'text' }, 'payload'],
    ];
    for (const [path, body, field] of bad) {
      const r = await http(t.url, 'POST', path, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.detail.errors.some((e: string) => e.startsWith(`${field}: `)), JSON.stringify(r.body)).toBe(true);
    }
    const arrayAnswer = await http(t.url, 'POST', '/api/run/playbook', { path: 'list/done', payload: [1, 2] });
    expect(arrayAnswer.body.detail.errors).toContain('payload: must be a JSON object, not an array');
    expect(await count()).toBe(before);
    // An object still works, and reaches the execution as its input.
    const id = await start('list/done', { a: [1, 2] });
    const started = (await http(t.url, 'GET', `/api/events/${id}?limit=1`)).body.events[0];
    expect(started.context.input).toMatchObject({ args: { a: [1, 2] }, workload: { a: [1, 2] } });
  });
});
