// A schedule's run interrupted by a crash and restarted by auto-resume is still the trigger's
// run for `overlap` (docs/triggers.md: a due time "while the trigger's previous run is still
// running" is skipped). The server and its worker are SIGKILLed while a run of an every-second
// `overlap: skip` schedule is mid-step; the server back cancels that run and starts its successor
// (`resumed_from`). Before, the successor was no run of the trigger (the trigger's runs were read
// through its fire rows only), so the next second started another run beside it: two at once.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  // Auto-resume soon after a start; no reaper, which would hand the dead worker's command to the
  // new one and leave the run itself going (auto-resume then leaves it alone).
  bed = await ServerProcesses.open({ SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2', SVC_COMMAND_REAPER_ENABLED: 'false' });
  await writeFile(join(bed.dir, 'hold'), '');
});
afterAll(async () => {
  await bed?.close();
});

const PATH = 'fault/nightly';
const yaml = (hold: string, stop: string) => `apiVersion: svc/v1
metadata: { name: nightly, path: ${PATH} }
triggers:
  - { name: tick, kind: schedule, cron: "* * * * * *", overlap: skip, catch_up: none }
workflow:
  - step: load
    tool:
      - name: wait
        kind: shell
        env: { HOLD: "${hold}", STOP: "${stop}" }
        command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done'
`;

type Run = { execution_id: number; status: string; resumed_from: number | null };
async function runs(): Promise<Run[]> {
  const { rows } = await bed.db.query<{ execution_id: string; status: string; resumed_from: string | null }>(
    `SELECT e.execution_id, e.status, s.context->>'resumed_from' AS resumed_from
       FROM core.execution e JOIN core.event s ON s.execution_id = e.execution_id AND s.event_id = 1
      WHERE e.path = $1 ORDER BY e.execution_id`,
    [PATH],
  );
  return rows.map((r) => ({ execution_id: Number(r.execution_id), status: r.status, resumed_from: r.resumed_from === null ? null : Number(r.resumed_from) }));
}

describe('a scheduled run restarted by auto-resume', () => {
  it('still holds its schedule back (overlap skip): no second run starts beside it', async () => {
    const a = await bed.server();
    const w = await bed.worker(a.base, 2);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: yaml(join(bed.dir, 'hold'), bed.stopFile) })).status).toBe(201);
    // The first run is mid-step, and a later second was skipped for it.
    const first = await until('the first run mid-step', async () => {
      const { rows } = await bed.db.query<{ execution_id: string }>(`SELECT c.execution_id FROM core.command c JOIN core.execution e USING (execution_id) WHERE e.path = $1 AND c.status IN ('CLAIMED', 'RUNNING')`, [PATH]);
      return rows.length ? Number(rows[0].execution_id) : undefined;
    }, 30_000, 100);
    await until('a fire skipped for it', async () => (await bed.db.query(`SELECT 1 FROM core.trigger_fire WHERE path = $1 AND outcome = 'skipped'`, [PATH])).rows.length > 0, 30_000, 100);
    await w.kill();
    a.proc.kill('SIGKILL');
    await withTimeout(a.proc.exited, 10_000, 'server exit');
    // Longer than SVC_AUTO_RESUME_MIN_STALE_SECONDS without an event.
    await new Promise((r) => setTimeout(r, 1_500));
    const b = await bed.server();
    await bed.worker(b.base, 2);
    const successor = await until('auto-resume restarts the run', async () => (await runs()).find((r) => r.resumed_from === first && r.status === 'running'), 60_000, 100);
    const since = new Date();
    // Seconds of due times while the successor runs: each is skipped for it.
    await new Promise((r) => setTimeout(r, 4_000));
    const { rows: fires } = await bed.db.query<{ fire_key: string; outcome: string; execution_id: string | null; error: string | null }>(
      `SELECT fire_key, outcome, execution_id, error FROM core.trigger_fire WHERE path = $1 AND fired_at > $2 ORDER BY fire_key`,
      [PATH, since],
    );
    expect(fires.length, 'the schedule ticked meanwhile').toBeGreaterThanOrEqual(2);
    expect(fires.filter((f) => f.outcome !== 'skipped'), 'no run started beside the restarted one').toEqual([]);
    expect(fires.every((f) => f.error?.includes(String(successor.execution_id))), JSON.stringify(fires)).toBe(true);
    // Nor did a tick between auto-resume's cancel and its successor's start (the cancelled run is
    // the trigger's till then): the successor is the only run.
    expect((await runs()).filter((r) => r.status === 'running').map((r) => r.execution_id)).toEqual([successor.execution_id]);
    await writeFile(bed.stopFile, '');
  }, 120_000);
});
