// An execution's state (GET /state, and the read a signal starts with) is folded from the
// snapshot the execution stores on, as the engine hydrates it, not from the whole log: a log of
// 48,000 events took the server's thread 2 s for each of those reads. A finished execution keeps
// the last snapshot stored while it ran.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionFollower, followExecution, loadAppliedEvents } from '../../../actors/execution-state.ts';
import { getExecution, type ExecutionRow } from '../../../src/db/execution.repo.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const ITEMS = 150;
const PLAYBOOK = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: big_then_wait, path: tests/big-then-wait }
workflow:
  - step: start
    loop: { in: "{{ range(${ITEMS}) | list }}", iterator: i, mode: parallel, max_in_flight: 8 }
    tool: { name: n, kind: noop }
    next: hold
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: done
  - step: done
    tool: { name: d, kind: noop }
`;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

/** `q`, recording the events each read of the log started after (the `svc_events_after` statement). */
function recording(q: Queryable): { q: Queryable; after: number[] } {
  const after: number[] = [];
  return {
    after,
    q: {
      query<R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) {
        if (typeof text !== 'string' && text.name === 'svc_events_after') after.push(Number(text.values?.[1]));
        return q.query<R>(text, params);
      },
    },
  };
}

describe('the state of a live execution', () => {
  it('is folded from its stored snapshot on, and reads as the fold of its whole log does; a signal takes it on', async () => {
    await s.register(PLAYBOOK);
    const id = await s.run('tests/big-then-wait');
    await until('the execution waits for its signal', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.hold?.status === 'waiting', 30_000);
    const row = await getExecution(s.deps.db, id);
    if (!row) throw new Error('no row');
    // Stored when it began to wait: past the loop's hundreds of events.
    expect(row.snapshot_event_id).toBeGreaterThan(ITEMS);
    expect(row.snapshot_event_id).toBe(row.applied_event_id);

    const read = recording(s.deps.db);
    const followed = await followExecution(read.q, s.deps.cache, row);
    // No read of the log before the snapshot (here none at all: it holds every applied event).
    expect(read.after.filter((after) => after < row.snapshot_event_id)).toEqual([]);
    const whole = new ExecutionFollower(await s.deps.cache.get(s.deps.db, row.catalog_id));
    whole.fold(await loadAppliedEvents(s.deps.db, row, 0));
    expect(followed.view()).toEqual(whole.view());
    expect(followed.lastEventId).toBe(whole.lastEventId);

    const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body as Json;
    expect(state).toMatchObject({ status: 'running', active_steps: ['hold'], last_event_id: row.applied_event_id, steps: { start: { status: 'completed' }, hold: { status: 'waiting', wait: { kind: 'signal', signal: 'go' } }, done: { status: 'pending' } } });

    const sent = await http(s.url, 'POST', `/api/executions/${id}/signals/go`, { payload: { ok: true } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    // Finished, it keeps the snapshot stored while it waited: its state is folded on from there
    // too, and reads as the fold of its whole log does.
    const done = await getExecution(s.deps.db, id);
    if (!done) throw new Error('no row');
    expect(done.snapshot_event_id).toBe(row.snapshot_event_id);
    await expectFoldedFromSnapshot(done);
    expect((await followExecution(s.deps.db, s.deps.cache, done)).view()?.steps).toMatchObject({ start: { status: 'completed' }, hold: { status: 'completed' }, done: { status: 'completed' } });
  });

  it('of one cancelled while it waited names the step it cut short, folded from its stored snapshot', async () => {
    const id = await s.run('tests/big-then-wait');
    await until('the execution waits for its signal', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.hold?.status === 'waiting', 30_000);
    const cancelled = await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBeLessThan(300);
    expect(await s.wait(id)).toMatchObject({ status: 'cancelled' });
    const row = await getExecution(s.deps.db, id);
    if (!row) throw new Error('no row');
    expect(row.snapshot_event_id).toBeGreaterThan(ITEMS);
    expect(row.snapshot_event_id).toBeLessThan(row.applied_event_id);
    const view = await expectFoldedFromSnapshot(row);
    expect(view?.steps).toMatchObject({ start: { status: 'completed' }, hold: { status: 'cancelled' }, done: { status: 'skipped' } });
    const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body as Json;
    expect(state).toMatchObject({ status: 'cancelled', steps: { hold: { status: 'cancelled' } } });
  });
});

/** Folds `row` as /state does: no read of its log before its stored snapshot, the same view as the fold of its whole log. */
async function expectFoldedFromSnapshot(row: ExecutionRow) {
  const read = recording(s.deps.db);
  const followed = await followExecution(read.q, s.deps.cache, row);
  expect(read.after).toEqual([row.snapshot_event_id]);
  const whole = new ExecutionFollower(await s.deps.cache.get(s.deps.db, row.catalog_id));
  whole.fold(await loadAppliedEvents(s.deps.db, row, 0));
  expect(followed.view()).toEqual(whole.view());
  expect(followed.lastEventId).toBe(whole.lastEventId);
  return followed.view();
}
