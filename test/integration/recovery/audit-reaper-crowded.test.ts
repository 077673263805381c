// SVC_COMMAND_REAPER_MAX_PER_RUN places go first to claims nobody has marked yet, and a gone
// holder's before a hard timeout's: a healthy worker's hours-long claim (which stays with it
// without SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS) and a marked claim waiting for a
// claimer are found again at every sweep, and must not keep a dead worker's claim unrecovered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sweepStrandedCommands } from '../../../src/periodic/command-reaper.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;
const PATH = 'crowded/one';
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: ${PATH} }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`,
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const register = (name: string) => http(t.url, 'POST', '/api/worker/pool/register', { name, capacity: 4 }, asWorker);
const beat = (name: string, running: number[]) => http(t.url, 'POST', '/api/worker/pool/heartbeat', { name, running }, asWorker);
async function claimedBy(worker: string): Promise<number> {
  const id = (await http(t.url, 'POST', '/api/run/playbook', { path: PATH })).body.execution_id;
  const commandId: number = (await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id])).rows[0].command_id;
  expect((await http(t.url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: worker }, asWorker)).status).toBe(200);
  return commandId;
}
const reclaimAttempt = async (id: number) => (await db.query(`SELECT reclaim_attempt FROM core.command WHERE command_id = $1`, [id])).rows[0].reclaim_attempt;

describe('command reaper with more stranded claims than places', () => {
  it("marks a dead worker's claim although a healthy worker's long claim and an already marked one come first by id; then a gone holder's before a hard timeout's", async () => {
    await register('slow');
    await register('gone');
    await register('dead');
    const slow = await claimedBy('slow');
    const gone = await claimedBy('gone');
    const dead = await claimedBy('dead');
    // 'slow' beats and lists its command, held past the hard timeout: it keeps it.
    await db.query(`UPDATE core.command SET claimed_at = now() - interval '2 hours' WHERE command_id = $1`, [slow]);
    expect((await beat('slow', [slow])).status).toBe(200);
    // 'gone' went quiet and its claim was marked by an earlier sweep; no claimer came yet.
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'gone'`);
    await db.query(`UPDATE core.command SET reclaim_attempt = attempt WHERE command_id = $1`, [gone]);
    // 'dead' went quiet just now: nobody has marked its claim.
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'dead'`);

    const deps = { ...t.deps, config: { ...t.deps.config, SVC_COMMAND_REAPER_MAX_PER_RUN: 1 } };
    const first = await sweepStrandedCommands(deps, { trigger: 'nudge', minGapSeconds: null });
    expect(first).toMatchObject({ status: 'ok', republished: 1, by_reason: { worker_stale: 1 } });
    expect(await reclaimAttempt(dead)).toBe(1);
    // With two places: the unmarked ones (the dead claim, then the hard timeout, which the claim
    // policy lets go when SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS is set).
    await db.query(`UPDATE core.command SET reclaim_attempt = NULL WHERE command_id = $1`, [dead]);
    const two = { ...deps, config: { ...deps.config, SVC_COMMAND_REAPER_MAX_PER_RUN: 2 } };
    expect(await sweepStrandedCommands(two, { trigger: 'nudge', minGapSeconds: null })).toMatchObject({ republished: 2, by_reason: { worker_stale: 1, hard_timeout: 1 } });
    expect([await reclaimAttempt(dead), await reclaimAttempt(slow)]).toEqual([1, 1]);
    // All marked: a gone holder's claims before a hard timeout's.
    expect(await sweepStrandedCommands(two, { trigger: 'nudge', minGapSeconds: null })).toMatchObject({ republished: 2, by_reason: { worker_stale: 2 } });
  });
});
