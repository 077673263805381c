// Auto-resume's restart is two writes: the interrupted execution cancelled, then its successor
// started. A server that died between them (or whose start failed there) left the old execution
// cancelled with no successor, the work lost until someone retried it by hand (docs/operations.md
// said so). The cancel now says a successor is due (`successor: true`), and the next auto-resume
// starts the successors that never started, each exactly once (keyed by the old execution: a
// second run, or one racing it, starts nothing). Real server and database; the failure between
// the two writes is a trigger that refuses the successor's insert, as a crash there would leave it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { interruptAsAStopDoes, whileAPoolBeats } from '../../helpers/interrupted.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.query('DROP TRIGGER IF EXISTS refuse_successor ON core.execution').catch(() => undefined);
  await db?.end();
  await t?.close();
});

const successorsOf = async (id: number) =>
  (await db.query<{ execution_id: number }>(`SELECT execution_id::int FROM core.event WHERE event_type = 'execution.started' AND context->>'resumed_from' = $1`, [String(id)])).rows.map((r) => r.execution_id);

describe('a successor auto-resume did not start', () => {
  it('is started by the next auto-resume, once', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: r, path: resume/crash }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n' })).status).toBe(201);
    await whileAPoolBeats(t.url, async () => {
      const id: number = (await http(t.url, 'POST', '/api/run/playbook', { path: 'resume/crash', payload: { n: 7 } })).body.execution_id;
      await interruptAsAStopDoes(t.url, id);

      // The successor's write fails after the cancel committed.
      await db.query(`CREATE OR REPLACE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the server died here'; END $$`);
      await db.query('CREATE TRIGGER refuse_successor BEFORE INSERT ON core.execution FOR EACH ROW EXECUTE FUNCTION pg_temp.refuse()');
      const first = (await autoResume(t.deps)).find((r) => r.execution_id === id);
      expect(first, 'the first run').toMatchObject({ action: 'skipped' });
      await db.query('DROP TRIGGER refuse_successor ON core.execution');
      expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('cancelled');
      const cancel = (await http(t.url, 'GET', `/api/events/${id}`)).body.events.find((e: { event_type: string }) => e.event_type === 'execution.cancelled');
      expect(cancel.context).toMatchObject({ reason: 'auto_resume', successor: true });
      expect(await successorsOf(id)).toEqual([]);

      // The next run (a server's next start) starts it.
      const second = (await autoResume(t.deps)).find((r) => r.execution_id === id);
      expect(second, 'the second run').toMatchObject({ action: 'restarted' });
      expect(await successorsOf(id)).toEqual([second!.resumed_as]);
      const started = (await http(t.url, 'GET', `/api/events/${second!.resumed_as}`)).body.events[0];
      expect(started.context).toMatchObject({ resumed_from: id, input: { args: { n: 7 } } });

      // And only once.
      expect((await autoResume(t.deps)).find((r) => r.execution_id === id)).toBeUndefined();
      expect(await successorsOf(id)).toHaveLength(1);
      await http(t.url, 'POST', `/api/executions/${second!.resumed_as}/cancel`, { reason: 'test over' });
    });
  });
});
