// A server whose clock runs ahead of PostgreSQL's (another host, no NTP yet): its timekeeper
// slept until a wake-up by its own clock, found the wait not yet due by the database's now(), and
// looked again at once, statement after statement, until the database's clock caught up: with a
// 3 s lead, one 2 s timer cost ~3,000 looks at core.wait (a core of the server and of PostgreSQL
// spinning) before it fired. The sleep is now counted by the database's clock, which decides
// what is due.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { startSkewedServer } from '../../helpers/skewed-server.ts';
import { until } from '../../helpers/until.ts';

const AHEAD_MS = 3000;

let ps: ServerProcesses;
let stop = () => {};
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  stop();
  await ps?.close();
});

/** Transactions committed in the test's database so far (each look at core.wait is one). */
async function commits(): Promise<number> {
  await ps.db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await ps.db.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0].n);
}

describe('a server whose clock is ahead of the database', () => {
  it('fires a timer once, without looking at core.wait again and again until the database catches up', async () => {
    // The server's wall clock AHEAD_MS ahead of the database's.
    const server = await startSkewedServer(ps, AHEAD_MS);
    stop = server.kill;
    const base = server.base;
    const reg = await http(base, 'POST', '/api/catalog/playbook', {
      content: `
apiVersion: svc/v1
metadata: { name: ahead, path: audit/ahead }
workflow:
  - step: nap
    wait: { for: 2s }
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    // Past the server's first looks, then a baseline: an idle server looks about once a second per loop.
    await new Promise((r) => setTimeout(r, 1500));
    const before = await commits();
    const started = await http(base, 'POST', '/api/run/playbook', { path: 'audit/ahead' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = Number(started.body.execution_id);
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await http(base, 'GET', `/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 20_000);
    expect(done).toMatchObject({ status: 'completed' });
    // PostgreSQL publishes its counters within a second.
    await new Promise((r) => setTimeout(r, 1500));
    const spent = (await commits()) - before;
    const events = (await http(base, 'GET', `/api/events/${id}?limit=100`)).body.events as Json[];
    expect(events.filter((e) => e.event_type === 'timer.fired')).toHaveLength(1);
    // ~8 s of a server's idle looks (its clocked loops and sweeps) and the run's own writes come
    // to ~200; a timekeeper spinning for the clocks' difference commits thousands (6,282 seen).
    expect(spent).toBeLessThan(1000);
  }, 60_000);
});
