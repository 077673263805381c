// Hydration fallback: the stored snapshot is a cache of the event log. A running execution whose
// snapshot is gone (NULL), or was written by another machine version, must carry on from a full
// replay of its log when its next report arrives, exactly as if nothing had happened.
//
// The reports are sent by hand (claim, then report) so the snapshot can be spoiled between two of
// them, and the spoiled report goes to a second, freshly started `svc server` process: a server that
// has routed the execution before may hold its state in memory and never read the stored snapshot.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { readUnit } from '../../../src/db/unit-read.ts';
import { EXECUTION_MACHINE_VERSION } from '../../../machines/execution.machine.ts';
import { FOLDING_EVENT_TYPES, type EventType } from '../../../machines/event-types.ts';

let a: TestApp;
let b: SvcProcess | undefined;
let bUrl: string;
const WORKER = 'by-hand';

beforeAll(async () => {
  a = await startTestApp();
  const port = await freePort();
  bUrl = `http://127.0.0.1:${port}`;
  b = spawnSvc(['server'], { SVC_DATABASE_URL: a.databaseUrl, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
  await waitForHealth(`${bUrl}/api/health`, 30_000).catch((error) => {
    throw new Error(`${String(error)}\n${b?.output()}`);
  });
  const r = await http(a.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  if (b) {
    b.kill('SIGTERM');
    await withTimeout(b.exited, 15_000, 'svc server stop');
  }
  await a?.close();
});

// State that only the log can rebuild: a var set by an arc from a task's data, and a parallel
// loop stopped half-way (one item done, one in flight, one not started).
const PLAYBOOK = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: hydrate, path: hydrate/loop }
workload: { items: [a, b, c], tag: T }
workflow:
  - step: start
    tool: { name: first, kind: noop }
    next: [ { step: each, set: { tag: "{{ workload.tag }}-{{ outcome.result.n }}" } } ]
  - step: each
    loop: { in: "{{ workload.items }}", iterator: it, mode: parallel, max_in_flight: 2 }
    tool: { name: visit, kind: noop }
    next: end
  - step: end
    # Never run (reports are sent by hand); its template makes the command carry vars and steps.
    tool: { name: last, kind: shell, command: "echo {{ workload.tag }} {{ vars.tag }} {{ steps.start.result | tojson }} {{ steps.each.result | tojson }}" }
`;

/** Claims every pending command (all of them belong to `executionId`: executions here run one at a time). */
async function claim(url: string, executionId: number, expected: number): Promise<Json[]> {
  const r = await http(url, 'POST', '/api/worker/claim', { worker_id: WORKER, max: 10, wait_ms: 0 }, asWorker);
  expect(r.status).toBe(200);
  const commands: Json[] = r.body.commands;
  expect(commands.map((c: Json) => c.execution_id)).toEqual(Array(expected).fill(executionId));
  return commands.sort((x: Json, y: Json) => (x.loop_index ?? -1) - (y.loop_index ?? -1));
}

/** Reports a command's one task as done with `data`, as a worker would. */
async function report(url: string, cmd: Json, data: unknown): Promise<void> {
  const task = cmd.tasks[0].name;
  const base = { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: WORKER, step: cmd.step };
  const r = await http(url, 'POST', '/api/worker/report', {
    worker_id: WORKER,
    events: [
      { ...base, event_type: 'command.started', context: { loop_index: cmd.loop_index } },
      { ...base, event_type: 'call.done', context: { task, kind: cmd.tasks[0].kind, attempts: 1 } },
      { ...base, event_type: 'command.completed', result: { tasks: { [task]: { status: 'ok', data } } } },
    ],
  }, asWorker);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.results.every((x: Json) => typeof x.event_id === 'number'), JSON.stringify(r.body.results)).toBe(true);
}

type Spoil = (executionId: number) => Promise<void>;

/**
 * Runs one execution to the end by hand. Up to the first loop item's report everything goes to
 * server A; then `spoil` runs, and the rest goes to server B (`spoil` undefined: all to A).
 */
async function runByHand(spoil?: Spoil): Promise<{ id: number; final: Json; events: Json[]; endContext: Json }> {
  const id = (await http(a.url, 'POST', '/api/run/playbook', { path: 'hydrate/loop' })).body.execution_id;
  const [first] = await claim(a.url, id, 1);
  await report(a.url, first, { n: 1 });
  const [item0, item1] = await claim(a.url, id, 2);
  await report(a.url, item0, { item: 'a' });
  const later = spoil ? bUrl : a.url;
  if (spoil) await spoil(id);
  // The report that needs the spoiled state: it ends item 1 while item 2 (launched by item 0's end) runs.
  await report(later, item1, { item: 'b' });
  const [item2] = await claim(later, id, 1);
  expect(item2.loop_index).toBe(2);
  await report(later, item2, { item: 'c' });
  const [end] = await claim(later, id, 1);
  expect(end.step).toBe('end');
  await report(later, end, { done: true });
  const final = (await http(a.url, 'GET', `/api/executions/${id}`)).body;
  const events = (await http(a.url, 'GET', `/api/events/${id}`)).body.events;
  return { id, final, events, endContext: end.context };
}

const trace = (events: Json[]) => events.map((e: Json) => (e.step ? `${e.event_type}:${e.step}` : e.event_type));

async function commandsOf(id: number): Promise<{ step: string; loop_index: number | null; status: string }[]> {
  const { rows } = await a.deps.db.query<{ step: string; loop_index: number | null; status: string }>(
    `SELECT step, loop_index, status FROM core.command WHERE execution_id = $1 ORDER BY command_id`,
    [id],
  );
  return rows;
}

describe('hydration fallback', () => {
  let control: Awaited<ReturnType<typeof runByHand>>;
  beforeAll(async () => {
    control = await runByHand();
  });

  it('the untouched run (the reference)', async () => {
    expect(control.final).toMatchObject({ status: 'completed', progress: 100, result: { done: true }, error: null });
    expect(control.endContext.workload).toEqual({ items: ['a', 'b', 'c'], tag: 'T' });
    expect(control.endContext.vars).toEqual({ tag: 'T-1' });
    expect(control.endContext.steps.each.result).toEqual([{ item: 'a' }, { item: 'b' }, { item: 'c' }]);
    expect(control.endContext.steps.start.result).toEqual({ n: 1 });
    expect(await commandsOf(control.id)).toEqual([
      { step: 'start', loop_index: null, status: 'COMPLETED' },
      { step: 'each', loop_index: 0, status: 'COMPLETED' },
      { step: 'each', loop_index: 1, status: 'COMPLETED' },
      { step: 'each', loop_index: 2, status: 'COMPLETED' },
      { step: 'end', loop_index: null, status: 'COMPLETED' },
    ]);
  });

  const cases: [string, Spoil][] = [
    [
      'snapshot set to NULL',
      async (id) => {
        await a.deps.db.query(`UPDATE core.execution SET snapshot = NULL WHERE execution_id = $1`, [id]);
      },
    ],
    [
      'machine_version of 1 (an old snapshot that disagrees with the log)',
      async (id) => {
        // An old-version snapshot said to hold every event so far, with other inputs, vars and no
        // step done or pending: trusted, it would end the run at once with another result.
        await a.deps.db.query(
          `UPDATE core.execution x
              SET machine_version = 1,
                  snapshot_event_id = x.last_event_id,
                  snapshot = jsonb_build_object('value', 'running', 'context', jsonb_build_object(
                    'input', jsonb_set(e.context->'input', '{workload}', '{"items": ["x"], "tag": "stale"}'),
                    'vars', '{"tag": "stale"}'::jsonb, 'steps', '{}'::jsonb, 'runs', '{}'::jsonb, 'pending', '{}'::jsonb,
                    'nextSeq', 1, 'nextRun', 1, 'completedSteps', '[]'::jsonb, 'lastResult', null, 'finished', null))
             FROM core.event e
            WHERE x.execution_id = $1 AND e.execution_id = x.execution_id AND e.event_type = 'execution.started'`,
          [id],
        );
      },
    ],
  ];

  for (const [name, spoil] of cases) {
    it(`finishes like the reference when the next report meets a ${name}`, async () => {
      const run = await runByHand(spoil);
      expect(run.final).toMatchObject({ status: 'completed', progress: 100, result: { done: true }, error: null });
      expect(trace(run.events)).toEqual(trace(control.events));
      expect(run.events.map((e: Json) => e.event_id)).toEqual(run.events.map((_: Json, i: number) => i + 1));
      // What the last step saw was rebuilt from the log: the arc's var, every loop item in order.
      const seen = (c: Json) => ({ workload: c.workload, vars: c.vars, steps: c.steps });
      expect(seen(run.endContext)).toEqual(seen(control.endContext));
      // Replaying issued nothing twice.
      expect(await commandsOf(run.id)).toEqual(await commandsOf(control.id));
    });
  }

  it('a read with no usable snapshot takes, of the events already applied, only those that fold', async () => {
    const id = (await http(a.url, 'POST', '/api/run/playbook', { path: 'hydrate/loop' })).body.execution_id;
    const [first] = await claim(a.url, id, 1);
    await report(a.url, first, { n: 1 });
    const [item0, item1] = await claim(a.url, id, 2);
    await report(a.url, item0, { item: 'a' });
    await a.deps.db.query(`UPDATE core.execution SET snapshot = NULL WHERE execution_id = $1`, [id]);
    const log: Json[] = (await http(a.url, 'GET', `/api/events/${id}`)).body.events;
    const folding = new Set<string>(FOLDING_EVENT_TYPES);
    const { executions } = await readUnit(a.deps.db, [id], [], new Map(), EXECUTION_MACHINE_VERSION);
    expect(executions).toHaveLength(1);
    const read = executions[0].applied;
    expect(executions[0].inbox).toEqual([]);
    expect(executions[0].applied_event_id).toBe(executions[0].last_event_id);
    expect(read.map((e) => e.event_id)).toEqual(log.filter((e) => folding.has(e.event_type)).map((e) => e.event_id));
    expect(read.map((e) => e.event_type as EventType)).toEqual(['execution.started', 'command.completed', 'command.completed']);
    expect(log.length).toBeGreaterThan(read.length);
    // One row each, parsed as they arrive while PostgreSQL reads on: not one aggregate parsed at
    // the end (a 10,000-event log's 1,666 folding events: docs/benchmarks.md, forty-fourth session).
    let rowsSent = 0;
    const counted: Queryable = {
      query: async <R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) => {
        const r = await a.deps.db.query<R>(text, params);
        rowsSent += r.rows.length;
        return r;
      },
    };
    const again = await readUnit(counted, [id], [], new Map(), EXECUTION_MACHINE_VERSION);
    expect(again.executions[0].applied).toEqual(read);
    expect(rowsSent).toBe(1 + read.length);
    // Folded from them, the run goes on as if nothing had been read apart: item 1 ends, item 2 is issued.
    await report(a.url, item1, { item: 'b' });
    const [item2] = await claim(a.url, id, 1);
    expect(item2.loop_index).toBe(2);
  });
});
