// Signals, approvals, webhook deliveries, backfills and fires by hand through real faults:
// PostgreSQL restarted while they are sent, and the server SIGKILLed with them in flight. A client
// sends each again with its key after a 503 or a lost answer (to the other server), as webhook
// senders do. Each signal is taken once (one signal.received) or refused, never twice; each
// delivery, backfilled time and fire key starts one execution, and a repeat answers that one
// (duplicate); no answer is a 500, and every 503 says Retry-After and database_unavailable.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { FaultBed, type Answer } from './audit-fault-bed.ts';

const SECRET = 'whsec-fault-3c9d2a7e41b8f605';
const GATE = `apiVersion: svc/v1
metadata: { name: gate, path: fault/gate }
workflow:
  - step: gate
    wait: { signal: go }
    next: approve
  - step: approve
    wait: { signal: approval, approval: { roles: [operator] } }
    next: done
  - step: done
    tool: { name: t, kind: noop }
`;
const HOOKED = `apiVersion: svc/v1
metadata: { name: hooked, path: fault/hooked }
workload: { n: 0 }
triggers:
  - name: push
    kind: webhook
    auth: fault_hook
    signature: github
    delivery_id: "{{ request.headers['x-delivery'] }}"
    payload: { n: "{{ request.body.n }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

const MINUTELY = `apiVersion: svc/v1
metadata: { name: minutely, path: fault/minutely }
workload: { at: "" }
triggers:
  - { name: tick, kind: schedule, cron: "* * * * *", overlap: allow, payload: { at: "{{ trigger.scheduled_time }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

const bed = new FaultBed();
beforeAll(async () => {
  await bed.open(2, 1);
  const made = await http(bed.servers[0].base, 'POST', '/api/credentials', { name: 'fault_hook', type: 'custom', data: { secret: SECRET } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await bed.register(GATE);
  await bed.register(HOOKED);
  await bed.register(MINUTELY);
}, 120_000);
afterAll(() => bed.close(), 60_000);

/** Starts `n` gates and waits until each waits for `go`. */
async function gates(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await http(bed.servers[i % 2].base, 'POST', '/api/run/playbook', { path: 'fault/gate' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body.execution_id);
  }
  await until('every gate waits', async () => (await bed.count(`SELECT count(*) AS n FROM core.wait WHERE execution_id = ANY($1::bigint[])`, [ids])) === n, 30_000, 100);
  return ids;
}

const signal = (i: number, id: number, name: string) => bed.sendUntilAnswered(i % 2, `/api/executions/${id}/signals/${name}`, JSON.stringify({ payload: { ok: true } }), { 'idempotency-key': `${name}-${id}` });
const deliveryBody = (n: number) => JSON.stringify({ n });
const delivery = (first: number, key: string, n: number) => {
  const body = deliveryBody(n);
  return bed.sendUntilAnswered(first, '/api/hooks/fault/hooked/push', body, { 'x-delivery': key, 'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` });
};

/** Each gate took each signal once and completed; each answer a signal got in the end was the first's (202 and its event). */
async function expectSignalledOnce(ids: readonly number[], finals: ReadonlyMap<string, Answer>): Promise<void> {
  for (const id of ids) {
    await until(`gate ${id} completes`, async () => (await http(bed.servers[1].base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 60_000, 100);
    const events: Json[] = (await http(bed.servers[1].base, 'GET', `/api/events/${id}?limit=1000`)).body.events;
    const received = events.filter((e) => e.event_type === 'signal.received');
    expect(received, `gate ${id}`).toHaveLength(2);
    for (const name of ['go', 'approval']) {
      const a = finals.get(`${name}-${id}`)!;
      expect(a.status, `${name} to ${id}: ${JSON.stringify(a.body)}`).toBe(202);
    }
  }
}

/** Each delivery key fired once, started one execution, and every final answer names it. */
async function expectDeliveredOnce(finals: ReadonlyMap<string, Answer>): Promise<void> {
  const { rows } = await bed.db.query<{ fire_key: string; execution_id: string; outcome: string }>(
    `SELECT fire_key, execution_id, outcome FROM core.trigger_fire WHERE path = 'fault/hooked' AND fire_key = ANY($1::text[])`,
    [[...finals.keys()]],
  );
  expect(rows.length).toBe(finals.size);
  const started = await bed.db.query<{ k: string; n: string }>(
    `SELECT context->'trigger'->>'fire_key' AS k, count(*) AS n FROM core.event WHERE event_type = 'execution.started' AND context->'trigger'->>'fire_key' = ANY($1::text[]) GROUP BY 1`,
    [[...finals.keys()]],
  );
  expect(started.rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
  expect(started.rows.length).toBe(finals.size);
  for (const r of rows) {
    expect(r.outcome).toBe('started');
    const a = finals.get(r.fire_key)!;
    expect(a.status, `${r.fire_key}: ${JSON.stringify(a.body)}`).toBe(202);
    expect(a.body.execution_id, r.fire_key).toBe(Number(r.execution_id));
  }
  // A sender whose answer was lost sends again: the same execution, duplicate.
  for (const [key, a] of finals) {
    const again = await delivery(1, key, Number(key.split('-').at(-1)));
    expect(again.body, key).toEqual({ execution_id: a.body.execution_id, duplicate: true });
  }
}

describe('signals, approvals and webhook deliveries through faults', () => {
  it('PostgreSQL restarted while they are sent: each is taken once, 503 with Retry-After meanwhile, never a 500', async () => {
    const ids = await gates(20);
    const finals = new Map<string, Answer>();
    let sending = true;
    // One client per kind, one request after another, so many fall on the outage.
    const signals = (async () => {
      for (let i = 0; i < ids.length; i++) {
        finals.set(`go-${ids[i]}`, await signal(i, ids[i], 'go'));
        await until(`gate ${ids[i]} waits for approval`, async () => (await bed.count(`SELECT count(*) AS n FROM core.wait WHERE execution_id = $1 AND signal = 'approval'`, [ids[i]]).catch(() => 0)) === 1, 60_000, 50);
        finals.set(`approval-${ids[i]}`, await signal(i + 1, ids[i], 'approval'));
      }
    })();
    const hooks = (async () => {
      for (let n = 0; sending || n < 30; n++) {
        finals.set(`pg-${n}`, await delivery(n % 2, `pg-${n}`, n));
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    await until('a few answered before the outage', () => finals.size >= 10, 30_000, 20);
    await bed.stopPostgres();
    await new Promise((r) => setTimeout(r, 2_500));
    await bed.startPostgres();
    sending = false;
    await Promise.all([signals, hooks]);

    const unavailable = bed.answers.filter((a) => a.status === 503).length;
    console.log(`${bed.answers.length} answers, ${unavailable} of them 503`);
    expect(unavailable, 'some requests fell on the outage').toBeGreaterThan(0);
    bed.expectNo500();
    await expectSignalledOnce(ids, finals);
    await expectDeliveredOnce(new Map([...finals].filter(([k]) => k.startsWith('pg-'))));
    bed.expectNo500();
  }, 150_000);

  it('the server SIGKILLed with them in flight, each sent again to the other server: each is taken once, the repeat answered as the first', async () => {
    bed.answers.length = 0;
    const ids = await gates(20);
    const finals = new Map<string, Answer>();
    // All at once to server 0, which is killed while they are being written.
    const sent = [
      ...ids.map(async (id) => finals.set(`go-${id}`, await signal(0, id, 'go'))),
      ...Array.from({ length: 40 }, async (_, n) => finals.set(`kill-${n}`, await delivery(0, `kill-${n}`, n))),
    ];
    // Killed once some are written: those written before it lost their answers, the rest were not written.
    await until('some written', async () => (await bed.count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = 'fault/hooked' AND fire_key LIKE 'kill-%'`)) > 0, 30_000, 5);
    await bed.killServer(0);
    await Promise.all(sent);
    const lost = bed.answers.filter((a) => a.status === 'lost').length;
    console.log(`${bed.answers.length} answers, ${lost} lost to the kill`);
    await bed.startServer(0);
    await until('every gate waits for approval', async () => (await bed.count(`SELECT count(*) AS n FROM core.wait WHERE execution_id = ANY($1::bigint[]) AND signal = 'approval'`, [ids])) === ids.length, 30_000, 100);
    await Promise.all(ids.map(async (id, i) => finals.set(`approval-${id}`, await signal(i, id, 'approval'))));
    bed.expectNo500();
    await expectSignalledOnce(ids, finals);
    await expectDeliveredOnce(new Map([...finals].filter(([k]) => k.startsWith('kill-'))));
  }, 150_000);

  it('a backfill and fires by hand with a fire_key, sent through a PostgreSQL restart and again: each time and key started once', async () => {
    bed.answers.length = 0;
    const minute = 60_000;
    const to = new Date(Math.floor(Date.now() / minute) * minute - 10 * minute);
    const from = new Date(to.getTime() - 300 * minute);
    const backfill = JSON.stringify({ from: from.toISOString(), to: to.toISOString() });
    const finals: Answer[] = [];
    let firing = true;
    const byHand = (async () => {
      for (let n = 0; firing || n < 20; n++) {
        finals.push(await bed.sendUntilAnswered(n % 2, '/api/triggers/fault/minutely/tick/fire', JSON.stringify({ fire_key: `hand-${n}` }), {}));
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    await until('a few fired by hand', () => finals.length >= 5, 30_000, 20);
    // The backfill is sent as PostgreSQL goes: its answer is lost, or it is refused and sent again.
    const first = bed.send(bed.servers[0].base, '/api/triggers/fault/minutely/tick/backfill', backfill, {});
    await new Promise((r) => setTimeout(r, 50));
    await bed.stopPostgres();
    const again = bed.sendUntilAnswered(1, '/api/triggers/fault/minutely/tick/backfill', backfill, {}, 500);
    await new Promise((r) => setTimeout(r, 2_500));
    await bed.startPostgres();
    firing = false;
    const [a, b] = await Promise.all([first, again, byHand]);
    console.log(`backfill answers: ${a.status}, ${b.status}; ${bed.answers.filter((x) => x.status === 503).length} answers 503`);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    for (const f of finals) expect(f.status, JSON.stringify(f.body)).toBe(202);
    // 300 times and every key by hand: one fire and one execution each.
    expect(await bed.count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = 'fault/minutely' AND fire_key >= $1 AND fire_key < $2 AND outcome = 'started'`, [from.toISOString(), to.toISOString()])).toBe(300);
    expect(await bed.count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = 'fault/minutely' AND fire_key LIKE 'hand-%'`)).toBe(finals.length);
    const twice = await bed.db.query(
      `SELECT context->'trigger'->>'fire_key' AS k, count(*)::int AS n FROM core.event WHERE event_type = 'execution.started' AND context->'trigger'->>'name' = 'tick' GROUP BY 1 HAVING count(*) > 1`,
    );
    expect(twice.rows).toEqual([]);
    const started = await bed.count(`SELECT count(*) AS n FROM core.event v JOIN core.execution e USING (execution_id) WHERE e.path = 'fault/minutely' AND v.event_type = 'execution.started'`);
    expect(started).toBe(await bed.count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = 'fault/minutely' AND outcome = 'started'`));
    // Each answer by hand names its key's one execution.
    for (const f of finals) {
      const { rows } = await bed.db.query<{ execution_id: string }>(`SELECT execution_id FROM core.trigger_fire WHERE path = 'fault/minutely' AND fire_key = $1`, [f.body.fire_key]);
      expect(f.body.execution_id).toBe(Number(rows[0].execution_id));
    }
    bed.expectNo500();
  }, 150_000);
});
