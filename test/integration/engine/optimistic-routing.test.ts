import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

// Every report takes one line: hydrate (from memory when this server routed the execution last and
// handed out the reported command: no reads), fold, and one write statement guarded on what was
// read. That statement must write nothing when the rows moved on meanwhile (another server, a new
// claim, an inbox event); the unit is then read afresh and routed again.

let t: TestApp;
const db = { query: (text: string, params?: unknown[]) => t.deps.db.query(text, params) };
beforeAll(async () => {
  t = await startTestApp();
  const two = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: two, path: mem/two }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n    next: second\n  - step: second\n    tool: { name: b, kind: noop }\n';
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: two })).status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

async function counter(name: 'routedFromMemory' | 'routeRetries', reason?: string): Promise<number> {
  const values = (await t.deps.metrics[name].get()).values;
  return values.filter((v) => reason === undefined || v.labels.reason === reason).reduce((n, v) => n + v.value, 0);
}

async function startAndClaim(worker: string): Promise<{ executionId: number; commandId: number; attempt: number }> {
  const executionId = (await http(t.url, 'POST', '/api/run/playbook', { path: 'mem/two' })).body.execution_id;
  const { rows } = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [executionId]);
  const claim = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: worker }, asWorker);
  expect(claim.status).toBe(200);
  return { executionId, commandId: rows[0].command_id, attempt: claim.body.attempt };
}

const report = (c: { executionId: number; commandId: number }, worker: string, attempt: number, task = 'a', url = t.url) =>
  http(url, 'POST', '/api/worker/report', {
    worker_id: worker,
    events: [
      { execution_id: c.executionId, command_id: c.commandId, attempt, worker_id: worker, event_type: 'command.started' },
      { execution_id: c.executionId, command_id: c.commandId, attempt, worker_id: worker, event_type: 'command.completed', result: { tasks: { [task]: { status: 'ok', data: 1 } } } },
    ],
    claim: 1,
  }, asWorker);

describe('optimistic routing', () => {
  it('a report on an execution and command this server holds reads nothing and is written in one statement', async () => {
    const c = await startAndClaim('w1');
    const before = await counter('routedFromMemory');
    const first = await report(c, 'w1', c.attempt);
    expect(first.status).toBe(200);
    expect(await counter('routedFromMemory')).toBe(before + 1);
    // Claim-ahead handed over the second step's command; its report goes from memory too.
    const next: Json = first.body.commands[0];
    expect(next).toMatchObject({ execution_id: c.executionId, step: 'second', attempt: 1 });
    const second = await report({ executionId: c.executionId, commandId: next.command_id }, 'w1', next.attempt, 'b');
    expect(second.status).toBe(200);
    expect(await counter('routedFromMemory')).toBe(before + 2);
    expect((await http(t.url, 'GET', `/api/executions/${c.executionId}`)).body).toMatchObject({ status: 'completed', progress: 100 });
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${c.executionId}`)).body.events;
    expect(events.map((e) => e.event_type)).toEqual([
      'execution.started', 'step.enter', 'command.issued',
      'command.claimed', 'command.started', 'command.completed', 'step.exit', 'step.enter', 'command.issued',
      'command.claimed', 'command.started', 'command.completed', 'step.exit', 'workflow.completed', 'playbook.completed',
    ]);
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    const { rows } = await db.query(`SELECT step, status, attempt, worker_id FROM core.command WHERE execution_id = $1 ORDER BY seq`, [c.executionId]);
    expect(rows).toEqual([
      { step: 'start', status: 'COMPLETED', attempt: 1, worker_id: 'w1' },
      { step: 'second', status: 'COMPLETED', attempt: 1, worker_id: 'w1' },
    ]);
  });

  it('a command claimed again since (attempt 2): the write finds it moved, writes nothing, and the report routed again is refused as stale', async () => {
    const c = await startAndClaim('w1');
    // Another server's claimer took the command over (as after a stale heartbeat).
    await db.query(`UPDATE core.command SET attempt = 2, worker_id = 'w2', claimed_at = now() WHERE command_id = $1`, [c.commandId]);
    const lastBefore = (await db.query(`SELECT last_event_id FROM core.execution WHERE execution_id = $1`, [c.executionId])).rows[0].last_event_id;
    const moved = await counter('routeRetries', 'moved');
    const answer = await report(c, 'w1', c.attempt);
    expect(answer.status).toBe(200);
    expect(await counter('routeRetries', 'moved')).toBe(moved + 1);
    expect(answer.body.results.map((r: Json) => r.error)).toEqual(['stale_claim', 'stale_claim']);
    expect(answer.body.commands).toEqual([]);
    const after = await db.query(`SELECT e.last_event_id, c.status, c.attempt FROM core.execution e JOIN core.command c USING (execution_id) WHERE c.command_id = $1`, [c.commandId]);
    // The refused report is kept in the log as refusals (folded into nothing); the command is the new holder's.
    expect(after.rows[0]).toEqual({ last_event_id: lastBefore + 2, status: 'CLAIMED', attempt: 2 });
    const recorded: Json[] = (await http(t.url, 'GET', `/api/events/${c.executionId}`)).body.events.slice(-2);
    expect(recorded.map((e) => [e.event_type, e.context.reported])).toEqual([['command.refused', 'command.started'], ['command.refused', 'command.completed']]);
    for (const e of recorded) expect(e.context).toMatchObject({ refused: 'stale_claim', attempt: c.attempt, command_attempt: 2 });
    expect((await http(t.url, 'GET', `/api/executions/${c.executionId}`)).body.status).toBe('running');
  });

  it('an event appended behind its back (inbox): the write finds the execution moved on, and the unit routed again applies both', async () => {
    const c = await startAndClaim('w1');
    // What a child's result or another server's cancel does: an event after the last applied one.
    await db.query(
      `WITH bump AS (UPDATE core.execution SET last_event_id = last_event_id + 1 WHERE execution_id = $1 RETURNING execution_id, catalog_id, last_event_id)
       INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, context)
       SELECT execution_id, last_event_id, catalog_id, 'execution.cancelled', 'running', '{"reason": "test"}' FROM bump`,
      [c.executionId],
    );
    const moved = await counter('routeRetries', 'moved');
    const answer = await report(c, 'w1', c.attempt);
    expect(answer.status).toBe(200);
    expect(await counter('routeRetries', 'moved')).toBe(moved + 1);
    expect((await http(t.url, 'GET', `/api/executions/${c.executionId}`)).body.status).toBe('cancelled');
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${c.executionId}`)).body.events;
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event_type === 'execution.cancelled')).toHaveLength(1);
  });

  it('a child whose last report is routed from memory tells its parent in the same statement (inbox), and the parent completes', async () => {
    const one = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: mem/one }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n';
    const parent = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: parent, path: mem/parent }\nworkflow:\n  - step: kid\n    tool: { name: sub, kind: playbook, path: mem/one }\n';
    for (const content of [one, parent]) expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
    const parentId: number = (await http(t.url, 'POST', '/api/run/playbook', { path: 'mem/parent' })).body.execution_id;
    const { rows } = await db.query(
      `SELECT c.command_id, c.execution_id FROM core.command c JOIN core.execution e USING (execution_id) WHERE e.parent_execution_id = $1 AND c.status = 'PENDING'`,
      [parentId],
    );
    expect(rows).toHaveLength(1);
    const claim = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: 'w1' }, asWorker);
    expect(claim.status).toBe(200);
    const fromMemory = await counter('routedFromMemory');
    const fallbacks = await counter('routeRetries');
    const answer = await report({ executionId: rows[0].execution_id, commandId: rows[0].command_id }, 'w1', claim.body.attempt);
    expect(answer.status).toBe(200);
    expect(await counter('routedFromMemory')).toBe(fromMemory + 1);
    expect(await counter('routeRetries')).toBe(fallbacks);
    expect((await http(t.url, 'GET', `/api/executions/${parentId}`)).body).toMatchObject({ status: 'completed' });
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${parentId}`)).body.events;
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event_type === 'child.finished')).toEqual([expect.objectContaining({ context: expect.objectContaining({ child_execution_id: rows[0].execution_id, status: 'completed' }) })]);
  });

  it('two servers, one execution, concurrent reports: every report folded once, no gap in event_id, one completion per command', async () => {
    const b = await startSecondServer(t);
    try {
      const items = 12;
      const fan = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: fan, path: mem/fan }\nworkflow:\n  - step: fan\n    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: ${items} }\n    tool: { name: a, kind: noop }\n`;
      expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: fan })).status).toBe(201);
      const executionId: number = (await http(t.url, 'POST', '/api/run/playbook', { path: 'mem/fan', payload: { items: Array.from({ length: items }, (_, i) => i) } })).body.execution_id;
      const { rows } = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY command_id`, [executionId]);
      expect(rows).toHaveLength(items);
      // Each command claimed through one server and reported to the other, all at once.
      const claims = await Promise.all(rows.map((r: Json, i: number) => http(i % 2 ? b.url : t.url, 'POST', `/api/commands/${r.command_id}/claim`, { worker_id: `w${i}` }, asWorker)));
      for (const c of claims) expect(c.status, JSON.stringify(c.body)).toBe(200);
      const retriesBefore = (await counter('routeRetries', 'moved')) + (await b.deps.metrics.routeRetries.get()).values.reduce((n, v) => n + v.value, 0);
      const answers = await Promise.all(rows.map((r: Json, i: number) => report({ executionId, commandId: r.command_id }, `w${i}`, claims[i].body.attempt, 'a', i % 2 ? t.url : b.url)));
      for (const a of answers) expect(a.status).toBe(200);
      expect(answers.flatMap((a) => a.body.results.map((r: Json) => r.error ?? null))).toEqual(Array(items * 2).fill(null));
      expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('completed');
      const events: Json[] = (await http(t.url, 'GET', `/api/events/${executionId}`)).body.events;
      expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
      const completions = events.filter((e) => e.event_type === 'command.completed').map((e) => e.command_id);
      expect(completions.sort()).toEqual(rows.map((r: Json) => r.command_id).sort());
      expect(events.filter((e) => e.event_type === 'loop.done')).toHaveLength(1);
      expect(events.filter((e) => e.event_type === 'playbook.completed')).toHaveLength(1);
      const retriesAfter = (await counter('routeRetries', 'moved')) + (await b.deps.metrics.routeRetries.get()).values.reduce((n, v) => n + v.value, 0);
      // Reports of one execution arriving together at two servers: some writes met a moved row.
      expect(retriesAfter).toBeGreaterThan(retriesBefore);
    } finally {
      await b.close();
    }
  });

  it('a report whose execution other writers move on at every attempt: 503 write_contended with Retry-After, nothing written', async () => {
    const c = await startAndClaim('w1');
    const before = (await db.query(`SELECT e.last_event_id, c.status FROM core.execution e JOIN core.command c USING (execution_id) WHERE c.command_id = $1`, [c.commandId])).rows[0];
    // A trigger that swallows every move of this execution's row stands for writers that always got there first.
    await db.query(`CREATE OR REPLACE FUNCTION public.test_never_moves() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await db.query(`CREATE TRIGGER test_never_moves BEFORE UPDATE ON core.execution FOR EACH ROW WHEN (OLD.execution_id = ${Number(c.executionId)}) EXECUTE FUNCTION public.test_never_moves()`);
    try {
      const retries = await counter('routeRetries', 'moved');
      const answer = await report(c, 'w1', c.attempt);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBeTruthy();
      expect(answer.body.detail).toMatchObject({ code: 'write_contended' });
      expect(await counter('routeRetries', 'moved')).toBe(retries + 7);
    } finally {
      await db.query('DROP TRIGGER test_never_moves ON core.execution');
    }
    const after = (await db.query(`SELECT e.last_event_id, c.status FROM core.execution e JOIN core.command c USING (execution_id) WHERE c.command_id = $1`, [c.commandId])).rows[0];
    expect(after).toEqual(before);
    // Sent again once the others are gone, the same report goes through.
    expect((await report(c, 'w1', c.attempt)).status).toBe(200);
  });
});
