import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: claims/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n',
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function pendingCommand(): Promise<{ executionId: number; commandId: number }> {
  const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'claims/one' });
  const c = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [run.body.execution_id]);
  return { executionId: run.body.execution_id, commandId: c.rows[0].command_id };
}

describe('claims', () => {
  it('of many concurrent claims of one command exactly one wins; the rest get 409 active_claim', async () => {
    const { commandId } = await pendingCommand();
    for (let i = 0; i < 3; i++) await http(t.url, 'POST', '/api/worker/pool/register', { name: `w${i}`, capacity: 1 }, asWorker);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: i % 2 ? `w${i % 3}` : `adhoc-${i}` }, asWorker)),
    );
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0].body).toMatchObject({ command_id: commandId, attempt: 1, status: 'CLAIMED', step: 'start' });
    expect(winners[0].body.tasks[0]).toMatchObject({ kind: 'noop', name: 'n' });
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(409);
      expect(a.body.detail.code).toBe('active_claim');
    }
  });

  it('a finished command answers 409 already_terminal; an unknown one 404', async () => {
    const { executionId, commandId } = await pendingCommand();
    const claim = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'solo' }, asWorker);
    const report = await http(t.url, 'POST', '/api/events', {
      execution_id: executionId,
      command_id: commandId,
      attempt: claim.body.attempt,
      event_type: 'command.completed',
      result: { tasks: { n: { status: 'ok', data: null } } },
    }, asWorker);
    expect(report.status).toBe(200);
    expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('completed');
    const again = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'late' }, asWorker);
    expect(again.status).toBe(409);
    expect(again.body.detail.code).toBe('already_terminal');
    expect((await http(t.url, 'POST', '/api/commands/999999/claim', { worker_id: 'x' }, asWorker)).status).toBe(404);
  });

  it('a claim naming the execution takes only that execution\'s command: another\'s is 404 and stays pending', async () => {
    const { executionId, commandId } = await pendingCommand();
    const other = await pendingCommand();
    const wrong = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'keyed', execution_id: other.executionId }, asWorker);
    expect(wrong.status).toBe(404);
    expect(wrong.body.detail).toBe(`command ${commandId} of execution ${other.executionId} not found`);
    expect((await db.query(`SELECT status, attempt FROM core.command WHERE command_id = $1`, [commandId])).rows[0]).toEqual({ status: 'PENDING', attempt: 0 });
    const right = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'keyed', execution_id: executionId }, asWorker);
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ command_id: commandId, execution_id: executionId, attempt: 1, status: 'CLAIMED', worker_id: 'keyed' });
    // Taken: a second keyed claim is refused as any claim of a held command is.
    const again = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'other', execution_id: executionId }, asWorker);
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatchObject({ code: 'active_claim', message: `command ${commandId} is CLAIMED by another worker` });
    // The holder claiming again is told it holds it, not that another worker does.
    const mine = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'keyed' }, asWorker);
    expect(mine.status).toBe(409);
    expect(mine.body.detail).toMatchObject({ code: 'active_claim', message: `command ${commandId} is CLAIMED by this worker (keyed) already` });
    const bad = await http(t.url, 'POST', `/api/commands/${other.commandId}/claim`, { worker_id: 'keyed', execution_id: 'one' }, asWorker);
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toContain('execution_id');
  });

  it('fences a report from a stale claim and takes over a claim whose worker went away', async () => {
    const { executionId, commandId } = await pendingCommand();
    await http(t.url, 'POST', '/api/worker/pool/register', { name: 'gone', capacity: 1 }, asWorker);
    const first = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'gone' }, asWorker);
    await http(t.url, 'POST', '/api/worker/pool/deregister', { name: 'gone' }, asWorker);
    const second = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'taker' }, asWorker);
    expect(second.status).toBe(200);
    expect(second.body.attempt).toBe(first.body.attempt + 1);
    const stale = await http(t.url, 'POST', '/api/events', {
      execution_id: executionId, command_id: commandId, attempt: first.body.attempt, event_type: 'command.completed', result: { tasks: {} },
    }, asWorker);
    expect(stale.status).toBe(409);
    expect(stale.body.detail.code).toBe('stale_claim');
    expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('running');
    // Refused while the execution runs, and recorded as the refusal it is, never as the completion.
    const events = (await http(t.url, 'GET', `/api/events/${executionId}`)).body.events;
    expect(events.filter((e: { event_type: string }) => e.event_type === 'command.completed')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ event_type: 'command.refused', command_id: commandId, context: { reported: 'command.completed', refused: 'stale_claim', attempt: first.body.attempt, command_attempt: second.body.attempt } });
  });

  it('refuses a report from a worker that does not hold the claim, and one that names no claim', async () => {
    const { executionId, commandId } = await pendingCommand();
    const claim = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'holder' }, asWorker);
    expect(claim.status).toBe(200);
    const done = { execution_id: executionId, command_id: commandId, event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } };
    const intruder = await http(t.url, 'POST', '/api/events', { ...done, worker_id: 'intruder' }, asWorker);
    expect(intruder.status).toBe(409);
    expect(intruder.body.detail.code).toBe('not_holder');
    const intruderWithAttempt = await http(t.url, 'POST', '/api/events', { ...done, worker_id: 'intruder', attempt: claim.body.attempt }, asWorker);
    expect(intruderWithAttempt.status).toBe(409);
    const anonymous = await http(t.url, 'POST', '/api/events', done, asWorker);
    expect(anonymous.status).toBe(409);
    expect(anonymous.body.detail.message).toMatch(/worker_id or attempt/);
    const cmd = (await db.query(`SELECT status FROM core.command WHERE command_id = $1`, [commandId])).rows[0];
    expect(cmd.status).toBe('CLAIMED');
    expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('running');
    const logged: { event_type: string; worker_id: string | null; context: { refused?: string } | null }[] = (await http(t.url, 'GET', `/api/events/${executionId}`)).body.events;
    expect(logged.map((e) => e.event_type)).not.toContain('command.completed');
    // Each refusal that named the command is recorded as one (the log shows every report that ran), never as the event.
    expect(logged.filter((e) => e.event_type === 'command.refused').map((e) => [e.worker_id, e.context?.refused])).toEqual([
      ['intruder', 'not_holder'],
      ['intruder', 'not_holder'],
      [null, 'not_holder'],
    ]);
    // The holder, named by worker alone (as POST /api/events callers do), completes it.
    const own = await http(t.url, 'POST', '/api/events', { ...done, worker_id: 'holder' }, asWorker);
    expect(own.status).toBe(200);
    expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('completed');
  });

  it('refuses a report about a command nobody claimed', async () => {
    const { executionId, commandId } = await pendingCommand();
    const r = await http(t.url, 'POST', '/api/events', { execution_id: executionId, command_id: commandId, attempt: 0, worker_id: 'w', event_type: 'command.completed', result: { tasks: {} } }, asWorker);
    expect(r.status).toBe(409);
    expect(r.body.detail.code).toBe('not_claimed');
    expect((await db.query(`SELECT status FROM core.command WHERE command_id = $1`, [commandId])).rows[0].status).toBe('PENDING');
  });

  it('a late event for a finished execution is stored and changes nothing else', async () => {
    const { executionId, commandId } = await pendingCommand();
    const claim = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'solo' }, asWorker);
    const done = { execution_id: executionId, command_id: commandId, attempt: claim.body.attempt, event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } };
    await http(t.url, 'POST', '/api/events', done, asWorker);
    const before = (await db.query(`SELECT status, result, snapshot, last_event_id FROM core.execution WHERE execution_id = $1`, [executionId])).rows[0];
    const late = await http(t.url, 'POST', '/api/events', { ...done, result: { tasks: { n: { status: 'error', data: 2 } } } }, asWorker);
    expect(late.status).toBe(200);
    const after = (await db.query(`SELECT status, result, snapshot, last_event_id FROM core.execution WHERE execution_id = $1`, [executionId])).rows[0];
    expect(after.status).toBe('completed');
    expect(after.result).toEqual(before.result);
    expect(after.snapshot).toEqual(before.snapshot);
    expect(after.last_event_id).toBe(before.last_event_id + 1);
    const events = (await http(t.url, 'GET', `/api/events/${executionId}`)).body.events;
    expect(events.at(-1)).toMatchObject({ event_type: 'command.completed', step: 'start', context: { late: true, seq: 1, attempt: 1, command_attempt: 1, command_status: 'COMPLETED' } });
  });

  it('a report from an older claim that arrives after the new claim finished the command is refused (stale_claim) and recorded under its own attempt', async () => {
    const { executionId, commandId } = await pendingCommand();
    await http(t.url, 'POST', '/api/worker/pool/register', { name: 'slow', capacity: 1 }, asWorker);
    const first = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'slow' }, asWorker);
    await http(t.url, 'POST', '/api/worker/pool/deregister', { name: 'slow' }, asWorker);
    const second = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'fast' }, asWorker);
    expect(second.body.attempt).toBe(first.body.attempt + 1);
    const done = { execution_id: executionId, command_id: commandId, event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } };
    expect((await http(t.url, 'POST', '/api/events', { ...done, attempt: second.body.attempt, worker_id: 'fast' }, asWorker)).status).toBe(200);
    // The first claimer's report arrives once the command is over: a stale claim's, recorded as
    // a refusal under attempt 1 (both attempts show there), never as a second command.completed,
    // and folded into nothing.
    const late = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'slow', events: [{ ...done, attempt: first.body.attempt, worker_id: 'slow' }] }, asWorker);
    expect(late.status).toBe(200);
    expect(late.body.results[0]).toMatchObject({ event_id: null, error: 'stale_claim' });
    const events = (await http(t.url, 'GET', `/api/events/${executionId}`)).body.events;
    expect(events.at(-1)).toMatchObject({ event_type: 'command.refused', worker_id: 'slow', context: { reported: 'command.completed', refused: 'stale_claim', attempt: first.body.attempt, command_attempt: second.body.attempt } });
    expect(events.filter((e: { event_type: string; command_id: number }) => e.event_type === 'command.completed' && e.command_id === commandId)).toHaveLength(1);
    const row = (await db.query(`SELECT context FROM core.event WHERE execution_id = $1 ORDER BY event_id DESC LIMIT 1`, [executionId])).rows[0];
    expect(row.context).toMatchObject({ refused: 'stale_claim', attempt: 1, command_attempt: 2 });
  });

  it('refuses events workers may not report and unknown executions', async () => {
    const { executionId } = await pendingCommand();
    const forged = await http(t.url, 'POST', '/api/events', { execution_id: executionId, event_type: 'playbook.completed' }, asWorker);
    expect(forged.status).toBe(422);
    expect((await http(t.url, 'POST', '/api/events', { execution_id: 987654, event_type: 'command.started' }, asWorker)).status).toBe(404);
    expect((await http(t.url, 'GET', '/api/executions/987654')).status).toBe(404);
    expect((await http(t.url, 'GET', '/api/events/987654')).status).toBe(404);
  });

  it('a report sent again after its answer was lost gets back the commands its first attempt claimed, and claims no more', async () => {
    const { executionId, commandId } = await pendingCommand();
    await pendingCommand();
    const claim = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'wl' }, asWorker);
    const report = {
      worker_id: 'wl',
      report_id: 'report-1',
      events: [{ execution_id: executionId, command_id: commandId, attempt: claim.body.attempt, worker_id: 'wl', event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } }],
      claim: 1,
    };
    // The first attempt is carried out, but its answer never reaches the worker (server died).
    const first = await http(t.url, 'POST', '/api/worker/report', report, asWorker);
    expect(first.status).toBe(200);
    const handed: number[] = first.body.commands.map((c: { command_id: number }) => c.command_id);
    expect(handed).toHaveLength(1);
    await pendingCommand(); // more work waiting: the retry must not claim it on top
    const again = await http(t.url, 'POST', '/api/worker/report', { ...report, retry: true }, asWorker);
    expect(again.status).toBe(200);
    expect(again.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual(handed);
    expect(again.body.commands[0]).toMatchObject({ status: 'CLAIMED', attempt: 1, worker_id: 'wl' });
    const held = await db.query(`SELECT command_id FROM core.command WHERE worker_id = 'wl' AND status = 'CLAIMED'`);
    expect(held.rows.map((r) => r.command_id)).toEqual(handed);
    // The resent completion was stored by the first sending: answered so, stored once, the execution completed once.
    expect(again.body.results).toEqual([{ event_id: null, error: 'already_reported', detail: `report report-1 moved command ${commandId} already; nothing was stored again` }]);
    const completions = await db.query(`SELECT event_id FROM core.event WHERE execution_id = $1 AND command_id = $2 AND event_type = 'command.completed'`, [executionId, commandId]);
    expect(completions.rows.map((r) => r.event_id)).toEqual([first.body.results[0].event_id]);
    expect((await http(t.url, 'GET', `/api/executions/${executionId}`)).body.status).toBe('completed');
  });

  it('a report sent again after its answer was lost stores nothing twice: a late one, and one sent again before the first is written', async () => {
    // Late: the execution was cancelled while its command ran; the worker's completion is kept
    // once as late, and its sending again is answered already_reported.
    const { executionId, commandId } = await pendingCommand();
    const claim = await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: 'wl2' }, asWorker);
    expect((await http(t.url, 'POST', `/api/executions/${executionId}/cancel`, {})).status).toBe(200);
    const done = { execution_id: executionId, command_id: commandId, attempt: claim.body.attempt, worker_id: 'wl2', event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } };
    const report = { worker_id: 'wl2', report_id: 'report-late', events: [{ ...done, event_type: 'command.started' }, done] };
    const first = await http(t.url, 'POST', '/api/worker/report', report, asWorker);
    expect(first.body.results.map((r: { event_id: number | null }) => typeof r.event_id)).toEqual(['number', 'number']);
    const again = await http(t.url, 'POST', '/api/worker/report', { ...report, retry: true }, asWorker);
    expect(again.body.results.map((r: { error?: string }) => r.error)).toEqual(['already_reported', 'already_reported']);
    const late = await db.query(`SELECT event_type, context->>'late' AS late FROM core.event WHERE execution_id = $1 AND command_id = $2 AND event_type IN ('command.started', 'command.completed') ORDER BY event_id`, [executionId, commandId]);
    expect(late.rows).toEqual([{ event_type: 'command.started', late: 'true' }, { event_type: 'command.completed', late: 'true' }]);
    expect((await db.query(`SELECT status, report_id FROM core.command WHERE command_id = $1`, [commandId])).rows[0]).toEqual({ status: 'CANCELLED', report_id: 'report-late' });

    // Both sendings at once (the worker gave up waiting for the first answer): one is stored, the other told so.
    const next = await pendingCommand();
    const claimed = await http(t.url, 'POST', `/api/commands/${next.commandId}/claim`, { worker_id: 'wl3' }, asWorker);
    const ev = { execution_id: next.executionId, command_id: next.commandId, attempt: claimed.body.attempt, worker_id: 'wl3', event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: 1 } } } };
    const both = { worker_id: 'wl3', report_id: 'report-twice', events: [ev] };
    const answers = await Promise.all([http(t.url, 'POST', '/api/worker/report', both, asWorker), http(t.url, 'POST', '/api/worker/report', { ...both, retry: true }, asWorker)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const results = answers.map((a) => a.body.results[0]);
    expect(results.filter((r) => typeof r.event_id === 'number')).toHaveLength(1);
    expect(results.filter((r) => r.error === 'already_reported')).toHaveLength(1);
    const stored = await db.query(`SELECT count(*)::int AS n FROM core.event WHERE execution_id = $1 AND command_id = $2 AND event_type = 'command.completed'`, [next.executionId, next.commandId]);
    expect(stored.rows[0].n).toBe(1);
  });

  it('a long-poll claim sent again after its answer was lost gets back what it claimed', async () => {
    const { commandId } = await pendingCommand();
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE status = 'PENDING' AND command_id <> $1`, [commandId]);
    const body = { worker_id: 'wq', request_id: 'claim-1', max: 1, wait_ms: 0 };
    const first = await http(t.url, 'POST', '/api/worker/claim', body, asWorker);
    expect(first.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual([commandId]);
    const again = await http(t.url, 'POST', '/api/worker/claim', { ...body, retry: true }, asWorker);
    expect(again.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual([commandId]);
    // A new request (another id) finds nothing: the command was not claimed twice.
    expect((await http(t.url, 'POST', '/api/worker/claim', { ...body, request_id: 'claim-2' }, asWorker)).body.commands).toEqual([]);
    expect((await db.query(`SELECT attempt FROM core.command WHERE command_id = $1`, [commandId])).rows[0].attempt).toBe(1);
  });

  it('a start hands its command to a long-poll claim waiting on this server, in the start\'s own write (claim-ahead for starts)', async () => {
    // Nothing older to claim: the long poll finds nothing and waits.
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE status = 'PENDING'`);
    const waitMs = 10_000;
    const t0 = Date.now();
    const parked = http(t.url, 'POST', '/api/worker/claim', { worker_id: 'idle', request_id: 'parked-1', max: 1, wait_ms: waitMs }, asWorker);
    await sleep(300);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'claims/one' });
    expect(run.status).toBe(200);
    const answer = await parked;
    expect(Date.now() - t0).toBeLessThan(waitMs / 2);
    expect(answer.body.commands).toHaveLength(1);
    expect(answer.body.commands[0]).toMatchObject({ execution_id: run.body.execution_id, attempt: 1, status: 'CLAIMED', worker_id: 'idle' });
    // Claimed by the statement that started the execution: one transaction, one now(); a claim
    // of its own after the start's commit would be later.
    const { rows } = await db.query(
      `SELECT c.claimed_at = e.started_at AS same_write, c.claim_token FROM core.command c JOIN core.execution e USING (execution_id) WHERE c.execution_id = $1`,
      [run.body.execution_id],
    );
    expect(rows).toEqual([{ same_write: true, claim_token: 'parked-1' }]);
    // Under the request's id: the same request sent again after a lost answer gets it back.
    const again = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'idle', request_id: 'parked-1', max: 1, wait_ms: 0, retry: true }, asWorker);
    expect(again.body.commands.map((c: { command_id: number }) => c.command_id)).toEqual([answer.body.commands[0].command_id]);
  });

  it('a long poll that ended waits no more: a later start leaves its command pending for the next claim', async () => {
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE status = 'PENDING'`);
    const ended = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'gone', request_id: 'parked-2', max: 1, wait_ms: 200 }, asWorker);
    expect(ended.body.commands).toEqual([]);
    const { commandId } = await pendingCommand();
    const { rows } = await db.query(`SELECT status, worker_id FROM core.command WHERE command_id = $1`, [commandId]);
    expect(rows).toEqual([{ status: 'PENDING', worker_id: null }]);
  });

  it('a signal\'s routing hands the next step\'s command to a waiting long poll in its own write too', async () => {
    const yaml = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: signalled, path: claims/signalled }\nworkflow:\n  - step: start\n    wait: { signal: go }\n    next: work\n  - step: work\n    tool: { name: n, kind: noop }\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE status = 'PENDING'`);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'claims/signalled' });
    const parked = http(t.url, 'POST', '/api/worker/claim', { worker_id: 'idle', request_id: 'parked-3', max: 1, wait_ms: 10_000 }, asWorker);
    await sleep(300);
    expect((await http(t.url, 'POST', `/api/executions/${run.body.execution_id}/signals/go`, {})).status).toBeLessThan(300);
    const answer = await parked;
    expect(answer.body.commands).toHaveLength(1);
    expect(answer.body.commands[0]).toMatchObject({ execution_id: run.body.execution_id, step: 'work', worker_id: 'idle' });
    // Claimed by the write that issued it: its command.issued event has the same transaction time.
    const { rows } = await db.query(
      `SELECT c.claimed_at = v.created_at AS same_write FROM core.command c
         JOIN core.event v ON v.execution_id = c.execution_id AND v.event_type = 'command.issued' AND (v.context->>'seq')::int = c.seq
        WHERE c.execution_id = $1 AND c.step = 'work'`,
      [run.body.execution_id],
    );
    expect(rows).toEqual([{ same_write: true }]);
  });
});
