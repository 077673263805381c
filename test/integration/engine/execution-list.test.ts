// The execution list at scale (issue 29, item 4): newest first by start time across servers that
// hand out ids from blocks, a cursor that holds under inserts, every filter, counts per status,
// index-served pages (EXPLAIN over a few thousand rows), and `progress` of a run failing halfway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listExecutions, countExecutionsByStatus, executionsWithInbox, runningStartedBefore, type ExecutionListFilter } from '../../../src/db/execution.repo.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { EXECUTION_STATUSES, LIVE_EXECUTION_STATUSES } from '../../../machines/statuses.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
let second: Awaited<ReturnType<typeof startSecondServer>>;

// Paths hold no digit, so that `q=<id>` finds the id alone.
const PLAYBOOKS = [
  ['listing/alpha/one', 'workflow:\n  - step: start\n'],
  ['listing/alpha/two', 'workflow:\n  - step: start\n'],
  ['listing/beta', 'workflow:\n  - step: start\n'],
  ['listing/order', 'workflow:\n  - step: start\n'],
  ['listing/page', 'workflow:\n  - step: start\n'],
  ['listing/child', 'workflow:\n  - step: start\n'],
  ['listing/parent', 'workflow:\n  - step: start\n    tool: { name: sub, kind: playbook, path: listing/child }\n'],
  // Waits for a worker (there is none): stays running.
  ['listing/waits', 'workflow:\n  - step: start\n    next: work\n  - step: work\n    tool: { name: n, kind: noop }\n'],
  ['listing/fired', 'triggers:\n  - { name: nightly, kind: schedule, cron: "@daily" }\nworkflow:\n  - step: start\n    next: work\n  - step: work\n    tool: { name: n, kind: noop }\n'],
  // Five steps; the second fails on the server (its loop's `in` does not render).
  [
    'listing/fails',
    'workflow:\n  - step: start\n    next: second\n  - step: second\n    loop: { in: "{{ nosuchfunction(1) }}" }\n    tool: { name: n, kind: noop }\n    next: third\n' +
      '  - step: third\n    next: fourth\n  - step: fourth\n    next: fifth\n  - step: fifth\n',
  ],
] as const;

beforeAll(async () => {
  t = await startTestApp();
  second = await startSecondServer(t);
  for (const [path, body] of PLAYBOOKS) {
    const name = path.replaceAll('/', '_');
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: ${path} }\n${body}` });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

async function start(path: string, base = t.url): Promise<number> {
  const r = await http(base, 'POST', '/api/run/playbook', { path, payload: {} });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id;
}

async function list(query: string): Promise<Json> {
  const r = await http(t.url, 'GET', `/api/executions${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const ids = (page: Json): number[] => page.executions.map((e: Json) => e.execution_id);

/** Ids of `path` in start order, newest first, as the database has them. */
async function byStartTime(pathPrefix: string): Promise<number[]> {
  const { rows } = await t.deps.db.query<{ execution_id: number }>(
    `SELECT execution_id FROM core.execution WHERE path LIKE $1 ORDER BY started_at DESC, execution_id DESC`,
    [`${pathPrefix}%`],
  );
  return rows.map((r) => r.execution_id);
}

describe('GET /api/executions at scale', () => {
  it('lists by start time, not id, when two servers hand out ids from blocks fetched ahead', async () => {
    // A's second start within a second fetches a block of two and keeps one; B's start takes an id
    // past that block; A's next start uses the kept id: started after B's, with a smaller id.
    const started: number[] = [];
    for (let round = 0; round < 3; round++) {
      started.push(await start('listing/order'), await start('listing/order'), await start('listing/order', second.url), await start('listing/order'));
    }
    const listed = ids(await list('?path=listing/order'));
    // The database's start order, and ids out of it: the case the list must not get wrong.
    expect(listed).toEqual(await byStartTime('listing/order'));
    expect(listed).toEqual([...started].reverse());
    expect(listed).not.toEqual([...listed].sort((a, b) => b - a));
    // Paged one at a time the same.
    const paged: number[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: Json = await list(`?path=listing/order&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...ids(page));
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    expect(paged).toEqual(listed);
  });

  it('pages stably while executions start: no duplicate, no gap', async () => {
    const first: number[] = [];
    for (let i = 0; i < 6; i++) first.push(await start('listing/page', i % 2 ? second.url : t.url));
    const p1 = await list('?path=listing/page&limit=2');
    expect(ids(p1)).toEqual([first[5], first[4]]);
    // New executions start between pages, on both servers.
    const later = [await start('listing/page'), await start('listing/page', second.url), await start('listing/page')];
    const p2 = await list(`?path=listing/page&limit=2&cursor=${p1.next_cursor}`);
    expect(ids(p2)).toEqual([first[3], first[2]]);
    const p3 = await list(`?path=listing/page&limit=2&cursor=${p2.next_cursor}`);
    expect(ids(p3)).toEqual([first[1], first[0]]);
    expect(p3.next_cursor).toBeNull();
    // A fresh first page sees the new ones on top.
    expect(ids(await list('?path=listing/page&limit=3'))).toEqual([...later].reverse());
  });

  it('filters by path prefix, status, start time, parent, trigger, requester and q, and counts per status', async () => {
    const one = await start('listing/alpha/one');
    const two = await start('listing/alpha/two');
    const beta = await start('listing/beta');
    const waits = await start('listing/waits');
    const parent = await start('listing/parent');
    const fired: number[] = [];
    for (const key of ['k1', 'k2']) {
      const r = await http(t.url, 'POST', '/api/triggers/listing/fired/nightly/fire', { fire_key: key });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      fired.push(r.body.execution_id);
    }

    expect(ids(await list('?path_prefix=listing/alpha/'))).toEqual([two, one]);
    expect(ids(await list('?path_prefix=listing/alpha'))).toEqual([two, one]);
    // LIKE's wildcards are literal in a prefix.
    expect(ids(await list('?path_prefix=listing/%25'))).toEqual([]);
    expect(ids(await list('?path_prefix=listing/_lpha'))).toEqual([]);
    expect(ids(await list('?path_prefix=listing/&status=running')).slice(0, 3)).toEqual([fired[1], fired[0], waits]);

    // Start time: [after, before).
    const at = async (id: number) => (await http(t.url, 'GET', `/api/executions/${id}`)).body.started_at as string;
    const range = `started_after=${encodeURIComponent(await at(two))}&started_before=${encodeURIComponent(await at(waits))}`;
    expect(ids(await list(`?path_prefix=listing/&${range}`))).toEqual([beta, two]);
    expect(ids(await list(`?path=listing/alpha/one&started_after=2000-01-01&started_before=2000-01-02`))).toEqual([]);

    // Parent: the child the parent's playbook task started.
    const children = (await list(`?parent=${parent}`)).executions;
    expect(children.map((e: Json) => [e.path, e.parent_execution_id])).toEqual([['listing/child', parent]]);
    expect(ids(await list(`?parent=${beta}`))).toEqual([]);

    // Trigger and requester: from the execution.started event.
    expect(ids(await list('?trigger=nightly'))).toEqual([fired[1], fired[0]]);
    expect(ids(await list('?trigger=nightly&status=completed'))).toEqual([]);
    expect(ids(await list('?trigger=nope'))).toEqual([]);
    const local = ids(await list('?requested_by=local&path_prefix=listing/&limit=500'));
    expect(local).toEqual(expect.arrayContaining([one, two, beta, waits, parent]));
    expect(local).not.toContain(fired[0]);
    expect(ids(await list('?requested_by=someone-else'))).toEqual([]);

    // q: an id exactly, or path text, case-insensitive.
    expect(ids(await list(`?q=${beta}`))).toEqual([beta]);
    expect(ids(await list('?q=ALPHA/T'))).toEqual([two]);
    expect(ids(await list('?q=alpha'))).toEqual([two, one]);

    // Counts: every status, for the filters other than status.
    const counted = await list('?path_prefix=listing/alpha/&status=failed');
    expect(counted.executions).toEqual([]);
    expect(counted.counts).toEqual({ queued: 0, running: 0, paused: 0, completed: 2, failed: 0, cancelled: 0 });
    const { rows } = await t.deps.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM core.execution WHERE path LIKE 'listing/%' GROUP BY status`);
    const expected = Object.fromEntries(EXECUTION_STATUSES.map((s) => [s, rows.find((r) => r.status === s)?.n ?? 0]));
    expect((await list('?path_prefix=listing/')).counts).toEqual(expected);
    expect(expected.running).toBeGreaterThanOrEqual(3);

    // A misspelt filter is refused naming it, never taken for no filter at all.
    const misspelt = await http(t.url, 'GET', '/api/executions?stauts=failed');
    expect(misspelt).toMatchObject({ status: 422, body: { detail: { code: 'unprocessable', errors: ["stauts: unknown field (did you mean 'status'?)"] } } });
  });

  it('keeps the progress a failed execution reached: failing at step 2 of 5 is 20, a completed one 100', async () => {
    const failed = await start('listing/fails');
    const row = (await http(t.url, 'GET', `/api/executions/${failed}`)).body;
    expect(row).toMatchObject({ status: 'failed', progress: 20, error: { step: 'second' } });
    expect((await list(`?q=${failed}`)).executions[0].progress).toBe(20);
    const done = await start('listing/beta');
    expect((await http(t.url, 'GET', `/api/executions/${done}`)).body).toMatchObject({ status: 'completed', progress: 100 });
  });
});

describe('index-served pages', () => {
  /** Runs what the repository sends under EXPLAIN, collecting the plans' text. */
  function explaining(plans: string[]): Queryable {
    return {
      async query(text: unknown, params?: unknown[]) {
        if (typeof text !== 'string') throw new Error('a listing statement is plain text');
        const r = await t.deps.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
        plans.push(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
        return { ...r, rows: [] };
      },
    } as Queryable;
  }

  beforeAll(async () => {
    // 5,000 executions over a day and 12 events each: 40 paths, mostly finished, some children,
    // some started by triggers, some by one of several callers.
    const db = t.deps.db;
    const { rows } = await db.query<{ catalog_id: number }>(`SELECT catalog_id FROM core.catalog ORDER BY catalog_id LIMIT 1`);
    const catalogId = rows[0]!.catalog_id;
    await db.query(
      `WITH ids AS (SELECT nextval('core.execution_id_seq') AS id, g FROM generate_series(1, 5000) g)
       INSERT INTO core.execution (execution_id, catalog_id, path, parent_execution_id, root_execution_id, status, progress, started_at, last_event_id, finished_at)
       SELECT id, $1, 'seed/team' || (g % 8) || '/flow' || (g % 5), NULL, id,
              CASE WHEN g % 50 = 0 THEN 'running' WHEN g % 7 = 0 THEN 'failed' WHEN g % 31 = 0 THEN 'cancelled' ELSE 'completed' END,
              100, now() - make_interval(secs => 86400 - g * 17.28), 12, now()
         FROM ids`,
      [catalogId],
    );
    await db.query(`UPDATE core.execution c SET parent_execution_id = p.execution_id, root_execution_id = p.execution_id
                      FROM core.execution p WHERE c.path LIKE 'seed/team3/%' AND p.path LIKE 'seed/team%' AND p.execution_id = c.execution_id - 1 AND c.execution_id % 3 = 0`);
    await db.query(
      `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context, created_at)
       SELECT e.execution_id, n, e.catalog_id,
              CASE WHEN n = 1 THEN 'execution.started' WHEN n = 12 THEN 'playbook.completed' ELSE 'step.enter' END, e.status,
              CASE WHEN n > 1 THEN '{}'::jsonb
                   WHEN e.execution_id % 4 = 0 THEN jsonb_build_object('trigger', jsonb_build_object('name', 'hourly' || (e.execution_id % 3), 'kind', 'schedule', 'fire_key', e.execution_id::text))
                   WHEN e.execution_id % 2 = 0 THEN jsonb_build_object('requested_by', jsonb_build_object('sub', 'user' || (e.execution_id % 20), 'role', 'operator', 'via', 'token'))
                   ELSE jsonb_build_object('requested_by', jsonb_build_object('sub', 'user' || (e.execution_id % 20), 'role', 'operator', 'via', 'token'),
                                           'labels', jsonb_build_object('tenant', 't' || (e.execution_id % 10), 'tier', 'gold')) END,
              e.started_at
         FROM core.execution e CROSS JOIN generate_series(1, 12) n WHERE e.path LIKE 'seed/%'`,
    );
    await db.query('ANALYZE core.execution');
    await db.query('ANALYZE core.event');
  });

  const day = new Date(Date.now() - 12 * 3600_000);
  const FILTERS: [string, ExecutionListFilter & { status?: (typeof EXECUTION_STATUSES)[number] }][] = [
    ['none', {}],
    ['status', { status: 'running' }],
    ['path', { path: 'seed/team1/flow1' }],
    ['path prefix', { pathPrefix: 'seed/team2/' }],
    ['path prefix and status', { pathPrefix: 'seed/team2/', status: 'failed' }],
    ['time range', { startedAfter: day, startedBefore: new Date(day.getTime() + 3600_000) }],
    ['parent', { parent: 4242 }],
    ['trigger', { trigger: 'hourly1' }],
    ['requester', { requestedBy: 'user7' }],
    ['requester and status', { requestedBy: 'user7', status: 'failed' }],
    ['q id', { q: '1234' }],
    ['q text', { q: 'team5/flow' }],
    ['label', { labels: { tenant: 't3' } }],
    ['labels and status', { labels: { tenant: 't3', tier: 'gold' }, status: 'completed' }],
  ];

  it.each(FILTERS)('a page filtered by %s reads indexes, not the tables', async (_name, filter) => {
    const plans: string[] = [];
    await listExecutions(explaining(plans), { ...filter, limit: 50 });
    await listExecutions(explaining(plans), { ...filter, limit: 50, cursor: { startedAt: new Date(Date.now() - 3600_000).toISOString().replace('Z', '000Z'), id: 99999 } });
    if (Object.keys(filter).some((k) => k !== 'status')) await countExecutionsByStatus(explaining(plans), filter, EXECUTION_STATUSES);
    for (const plan of plans) {
      expect(plan, plan).not.toMatch(/Seq Scan on (core\.)?(execution|event)\b/);
      expect(plan, plan).toMatch(/Index/);
    }
  });

  it('reads live executions in id order by the index of live executions (migration 0030)', async () => {
    const plans: string[] = [];
    await executionsWithInbox(explaining(plans), 100);
    await runningStartedBefore(explaining(plans), { olderThanMinutes: 5, afterId: 0, limit: 100 });
    for (const plan of plans) expect(plan, plan).toMatch(/execution_live_idx/);
    // Its predicate is the statuses the code calls live: a status added to one list and not the other fails here.
    const { rows } = await t.deps.db.query<{ def: string }>(`SELECT pg_get_indexdef('core.execution_live_idx'::regclass) AS def`);
    const listed = [...rows[0]!.def.matchAll(/'(\w+)'::text/g)].map((m) => m[1]).sort();
    expect(listed).toEqual([...LIVE_EXECUTION_STATUSES].sort());
  });

  it('pages through the seeded rows by cursor as the database orders them', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = await list(`?path_prefix=seed/team2/&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...ids(page));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(await byStartTime('seed/team2/'));
    expect(seen.length).toBe(625);
  });
});
