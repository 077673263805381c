// Concurrency limits per key through real faults: a server and a worker SIGKILLed while
// executions queued on a playbook's `concurrency` key and commands held by a task's `limit` run,
// and PostgreSQL restarted. Sampled all along, no key ever holds more slots than its limit; in
// the end every execution completed, each admitted once, each step completed once, and every key
// holds nothing: no slot was leaked or granted twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess } from '../../helpers/worker-process.ts';
import { FaultBed } from './audit-fault-bed.ts';

// A dead worker's claim is let go after 5 s, not the production minute; auto-resume stays out
// of it (it would cancel and restart what the reaper hands on: another test's matter).
const bed = new FaultBed({
  SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1',
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '5',
  SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '2',
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: '3600',
});

const QUEUED = `apiVersion: svc/v1
metadata: { name: queued, path: fault/queued }
workload: { t: a }
concurrency: { limit: tenant, key: "{{ workload.t }}" }
workflow:
  - step: s1
    tool: { name: t, kind: shell, command: "sleep 0.4" }
    next: pause
  - step: pause
    wait: { for: 1s }
    next: s2
  - step: s2
    tool: { name: t, kind: shell, command: "sleep 0.3" }
`;
const LIMITED = `apiVersion: svc/v1
metadata: { name: limited, path: fault/limited }
workload: { t: a }
workflow:
  - step: s1
    tool: { name: t, kind: shell, command: "sleep 0.6", limit: { name: partner, key: "{{ workload.t }}" } }
    next: s2
  - step: s2
    tool: { name: t, kind: noop }
`;
const KEYS = ['k1', 'k2', 'k3'];
const PER_KEY = 4;

beforeAll(async () => {
  await bed.open(2, 2);
  for (const [name, concurrency] of [['tenant', 2], ['partner', 1]] as const) {
    const r = await http(bed.servers[0].base, 'PUT', `/api/limits/${name}`, { concurrency });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  await bed.register(QUEUED);
  await bed.register(LIMITED);
}, 120_000);
afterAll(() => bed.close(), 60_000);

/** Starts PER_KEY executions of `path` per key, on both servers; their ids. */
async function startAll(path: string, round: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < PER_KEY; i++) {
    for (const [k, t] of KEYS.entries()) {
      const a = await bed.sendUntilAnswered((i + k) % 2, '/api/run/playbook', JSON.stringify({ path, payload: { t } }), { 'idempotency-key': `${round}-${path}-${t}-${i}` });
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      ids.push(a.body.execution_id);
    }
  }
  return ids;
}

/** Samples every key's slots until stopped: the most each (name, key) held at once. */
function sampleSlots(): { stop(): Promise<Map<string, number>> } {
  const most = new Map<string, number>();
  let on = true;
  const loop = (async () => {
    while (on) {
      const rows = await bed.db.query<{ name: string; key: string; running: number }>(`SELECT name, key, running FROM core.flow_key`).catch(() => ({ rows: [] }));
      for (const r of rows.rows) most.set(`${r.name}/${r.key}`, Math.max(most.get(`${r.name}/${r.key}`) ?? 0, r.running));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return most;
    },
  };
}

/** Every execution of `ids` completed, admitted at most once, each step completed once. */
async function expectSettled(ids: readonly number[], steps: number): Promise<void> {
  await until('every execution finished', async () => (await bed.count(`SELECT count(*) AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND finished_at IS NULL`, [ids])) === 0, 120_000, 500);
  const { rows } = await bed.db.query<{ execution_id: string; status: string }>(`SELECT execution_id, status FROM core.execution WHERE execution_id = ANY($1::bigint[])`, [ids]);
  expect(rows.filter((r) => r.status !== 'completed')).toEqual([]);
  const admitted = await bed.db.query<{ execution_id: string; n: number }>(
    `SELECT execution_id, count(*)::int AS n FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_type = 'execution.admitted' GROUP BY 1 HAVING count(*) > 1`,
    [ids],
  );
  expect(admitted.rows, 'admitted once').toEqual([]);
  const done = await bed.db.query<{ execution_id: string; step: string; n: number }>(
    `SELECT execution_id, step, count(*)::int AS n FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_type = 'command.completed' GROUP BY 1, 2`,
    [ids],
  );
  expect(done.rows.filter((d) => d.n !== 1), 'each command completed once').toEqual([]);
  expect(done.rows.length).toBe(steps * ids.length);
}

async function expectKeysEmpty(): Promise<void> {
  // A slot is given back by the write that ends its holder: by now every one.
  await until('every key holds nothing', async () => (await bed.count(`SELECT count(*) AS n FROM core.flow_key WHERE running <> 0`)) === 0 || undefined, 20_000, 200).catch(async (err) => {
    console.log((await bed.db.query(`SELECT * FROM core.flow_key`)).rows);
    throw err;
  });
  expect(await bed.count(`SELECT count(*) AS n FROM core.admission`), 'no admission left').toBe(0);
}

describe('concurrency limits through faults', () => {
  it('a server and a worker SIGKILLed mid-run: no key over its limit, every execution admitted once and completed, no slot left held', async () => {
    const slots = sampleSlots();
    const queued = await startAll('fault/queued', 'kill');
    const limited = await startAll('fault/limited', 'kill');
    // Both kinds of slot are held when the kill comes.
    await until('slots held on both limits', async () => (await bed.count(`SELECT count(DISTINCT name) AS n FROM core.flow_key WHERE running > 0`)) === 2, 30_000, 50);
    await bed.workers[0].kill();
    await bed.killServer(0);
    await new Promise((r) => setTimeout(r, 1_500));
    await bed.startServer(0);
    bed.workers[0] = await startWorkerProcess(bed.servers[0].base, { concurrency: 4 });
    await expectSettled(queued, 2);
    await expectSettled(limited, 2);
    const most = await slots.stop();
    console.log('most slots held at once:', Object.fromEntries(most));
    for (const t of KEYS) {
      expect(most.get(`tenant/${t}`), `tenant/${t}`).toBeLessThanOrEqual(2);
      expect(most.get(`partner/${t}`), `partner/${t}`).toBeLessThanOrEqual(1);
    }
    await expectKeysEmpty();
    bed.expectNo500();
  }, 180_000);

  it('PostgreSQL restarted mid-run: no key over its limit, every execution admitted once and completed, no slot left held', async () => {
    const slots = sampleSlots();
    const queued = await startAll('fault/queued', 'restart');
    const limited = await startAll('fault/limited', 'restart');
    await until('slots held on both limits', async () => (await bed.count(`SELECT count(DISTINCT name) AS n FROM core.flow_key WHERE running > 0`)) === 2, 30_000, 50);
    await bed.stopPostgres();
    await new Promise((r) => setTimeout(r, 2_500));
    await bed.startPostgres();
    await expectSettled(queued, 2);
    await expectSettled(limited, 2);
    const most = await slots.stop();
    for (const t of KEYS) {
      expect(most.get(`tenant/${t}`), `tenant/${t}`).toBeLessThanOrEqual(2);
      expect(most.get(`partner/${t}`), `partner/${t}`).toBeLessThanOrEqual(1);
    }
    await expectKeysEmpty();
    bed.expectNo500();
  }, 180_000);
});
