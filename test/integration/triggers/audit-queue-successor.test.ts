// With `overlap: queue`, a due time that falls while the trigger's run is unfinished waits for it,
// and a run auto-resume restarted is still the trigger's run (docs/triggers.md). Until when the
// times waited (queuedThrough) was read from the fires' own executions: for a restarted run, the
// restart's cancel, so the times that fell while its successor ran longer than the scheduler's
// 60 s grace were taken as missed (catch-up decided) instead of waiting their turn. The run now
// ends when its last successor does (`resumed_from`, followed on its index). Real server and
// database: the restart by auto-resume, the successor's end by a cancel; the fire row as a
// schedule's tick writes it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuedThrough } from '../../../src/db/trigger.repo.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { interruptAsAStopDoes, whileAPoolBeats } from '../../helpers/interrupted.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const finishedAt = async (id: number): Promise<Date> => (await db.query<{ finished_at: Date }>('SELECT finished_at FROM core.execution WHERE execution_id = $1', [id])).rows[0].finished_at;

describe('a queued schedule waiting for a run auto-resume restarted', () => {
  it('waited until the successor ended, not until the restart cancelled the first', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: q, path: queue/successor }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n' })).status).toBe(201);
    await whileAPoolBeats(t.url, async () => {
      const first: number = (await http(t.url, 'POST', '/api/run/playbook', { path: 'queue/successor' })).body.execution_id;
      await interruptAsAStopDoes(t.url, first);
      const restarted = (await autoResume(t.deps)).find((r) => r.execution_id === first);
      expect(restarted).toMatchObject({ action: 'restarted' });
      const successor = restarted!.resumed_as!;
      // The successor runs on a while after the restart's cancel, then ends.
      await new Promise((r) => setTimeout(r, 500));
      expect((await http(t.url, 'POST', `/api/executions/${successor}/cancel`, { reason: 'its run ended' })).status).toBe(200);

      const { rows } = await db.query<{ started_at: Date }>('SELECT started_at FROM core.execution WHERE execution_id = $1', [first]);
      const firedAt = rows[0].started_at;
      await db.query(`INSERT INTO core.trigger_fire (path, name, fire_key, outcome, execution_id, scheduled_time, fired_at) VALUES ('queue/successor', 'every', $1, 'started', $2, $3, $3)`, [
        firedAt.toISOString(),
        first,
        firedAt,
      ]);
      const until = (await queuedThrough(t.deps.db, [{ path: 'queue/successor', name: 'every', before: new Date(Date.now() + 60_000) }])).get('queue/successor\nevery');
      expect(until?.getTime()).toBe((await finishedAt(successor)).getTime());
      expect(until!.getTime()).toBeGreaterThan((await finishedAt(first)).getTime());
    });
  });
});
