import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { noopPlaybook } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

// A claim taken over on another server writes nothing to the execution's log, so the server that
// remembers the old claim (its worker reported through it) holds a command row that is out of
// date while its execution's row is not. A report decided on that row must not be refused: the
// new holder's report through that server is taken, and the old holder's is refused from the row
// as stored.

let a: TestApp;
let b: Awaited<ReturnType<typeof startSecondServer>>;
let ex: ExecutionApi;
let db: pg.Client;
beforeAll(async () => {
  // A claim whose worker is silent for a second may be taken over (after a reaper sweep).
  a = await startTestApp({ SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1', SVC_COMMAND_REAPER_ENABLED: 'false' });
  b = await startSecondServer(a);
  ex = executionApi(a.url);
  await ex.register(noopPlaybook('takeover/one', 1));
  db = new pg.Client({ connectionString: a.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await b?.close();
  await a?.close();
});

const claim = async (url: string, commandId: number, worker: string) => http(url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: worker }, asWorker);
const completed = (id: number, cmd: Json, worker: string, data: string) => ({ execution_id: id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: worker, event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data } } } });

describe('a claim taken over on another server', () => {
  it('the new holder\'s report through the server that remembers the old claim is taken; the old holder\'s is refused', async () => {
    const id = await ex.run('takeover/one');
    const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
    const commandId = Number(pending.rows[0].command_id);
    const old = (await claim(a.url, commandId, 'w-old')).body;
    // Through server a, which now remembers the claim of w-old.
    const started = await http(a.url, 'POST', '/api/events', { execution_id: id, command_id: commandId, attempt: old.attempt, worker_id: 'w-old', event_type: 'command.started' }, asWorker);
    expect(started.status).toBe(200);
    // w-old goes quiet; a sweep marks its claim stranded and w-new takes it over on server b.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await http(b.url, 'POST', '/api/admin/command_reaper/sweep', {})).status).toBe(200);
    const taken = await claim(b.url, commandId, 'w-new');
    expect(taken.status).toBe(200);
    expect(taken.body.attempt).toBe(old.attempt + 1);

    const stale = await http(a.url, 'POST', '/api/events', completed(id, old, 'w-old', 'old'), asWorker);
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatchObject({ code: 'stale_claim' });
    const current = await http(a.url, 'POST', '/api/events', completed(id, taken.body, 'w-new', 'new'), asWorker);
    expect(current.status, JSON.stringify(current.body)).toBe(200);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'new' });
    const events = await ex.events(id);
    expect(events.filter((e) => e.event_type === 'command.completed').map((e) => e.worker_id)).toEqual(['w-new']);
    expect(events.filter((e) => e.event_type === 'command.refused').map((e) => [e.worker_id, e.context.refused])).toEqual([['w-old', 'stale_claim']]);
  });
});
