// A worker SIGSTOPped while its claim long-polls: the server hands that claim the commands started
// meanwhile, the reaper lets them go once the worker is silent past its threshold, and another
// worker runs them. When the first woke up, it ran what the claim's answer (waiting in its socket)
// handed it, its http call a second time, for a refused report. It now asks first (a heartbeat).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { StopBed } from './audit-stop-bed.ts';

const bed = new StopBed();
beforeAll(() => bed.open(), 90_000);
afterAll(() => bed.close());

const HIT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hit, path: stop/hit }
workload: { target: "" }
workflow:
  - step: s1
    tool: { name: t, kind: http, method: GET, url: "{{ workload.target }}/echo?e={{ execution.id }}" }
`;

it('runs nothing the stopped worker was handed once another worker took it over', async () => {
  expect((await http(bed.servers[0].base, 'POST', '/api/catalog/playbook', { content: HIT })).status).toBe(201);
  await bed.workers[1].kill();
  const sleeper = bed.workers[0];
  // Parked in its long poll (the claim waits up to 5 s for work): stop it there.
  await new Promise((r) => setTimeout(r, 1_000));
  process.kill(sleeper.pid, 'SIGSTOP');
  let ids: number[] = [];
  try {
    for (let i = 0; i < 3; i++) ids.push((await http(bed.servers[0].base, 'POST', '/api/run/playbook', { path: 'stop/hit', payload: { target: bed.target.url } })).body.execution_id);
    const { rows } = await bed.db.query(`SELECT count(*)::int AS n FROM core.command WHERE status = 'CLAIMED' AND execution_id = ANY($1)`, [ids]);
    console.log(`claimed for the stopped worker: ${rows[0].n}`);
    bed.workers.push(await bed.worker0Like());
    await until('the executions completed by the other worker', async () => {
      const r = await bed.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1) AND status = 'completed'`, [ids]);
      return r.rows[0].n === ids.length;
    }, 40_000, 200);
  } finally {
    process.kill(sleeper.pid, 'SIGCONT');
  }
  await new Promise((r) => setTimeout(r, 4_000));
  const hits = ids.map((id) => bed.target.requests.filter((q) => Number(q.query.e) === id).length);
  expect(hits, 'each execution hit the target once').toEqual(ids.map(() => 1));
}, 90_000);
