// Waiting, control and flow control with two `svc server`s on one database, on each bus
// (DESIGN.md "Waiting and control", "Flow control", "Scale-out"): what one server began, the
// other carries on, promptly (within ~2 s, not after a worker's 5 s claim wait) and once (no
// event twice, no gap in event_id).
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { withTimeout } from '../../helpers/process.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Work that goes on within this of what let it: an announcement heard, not a claim's 5 s wait. */
const PROMPT_MS = 2_000;

const PLAYBOOKS = (dir: string) => [
  `apiVersion: svc/v1
metadata: { name: two, path: m/two }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: two
  - step: two
    tool: { name: b, kind: noop }
`,
  `apiVersion: svc/v1
metadata: { name: gate, path: m/gate }
workflow:
  - step: gate
    wait: { signal: go }
    next: after
  - step: after
    tool: { name: t, kind: noop }
`,
  `apiVersion: svc/v1
metadata: { name: timed, path: m/timed }
workflow:
  - step: nap
    wait: { for: 3s }
    next: after
  - step: after
    tool: { name: t, kind: noop }
`,
  `apiVersion: svc/v1
metadata: { name: limited, path: m/limited }
concurrency: { limit: m_one }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        env: { HOLD: "${join(dir, 'limited')}" }
        command: 'while [ -e "$HOLD" ]; do sleep 0.05; done; echo done'
`,
  `apiVersion: svc/v1
metadata: { name: child, path: m/child }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        env: { HOLD: "${join(dir, 'child')}" }
        command: 'while [ -e "$HOLD" ]; do sleep 0.05; done; echo done'
`,
  `apiVersion: svc/v1
metadata: { name: parent, path: m/parent }
workflow:
  - step: start
    tool: { name: c, kind: playbook, path: m/child }
`,
  `apiVersion: svc/v1
metadata: { name: chain, path: m/chain }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        env: { HOLD: "${join(dir, 'chain')}" }
        command: 'while [ -e "$HOLD" ]; do sleep 0.05; done; echo done'
    next: two
  - step: two
    tool: { name: b, kind: noop }
`,
  `apiVersion: svc/v1
metadata: { name: flaky, path: m/flaky }
workflow:
  - step: one
    tool: { name: a, kind: noop }
    next: two
  - step: two
    tool:
      - name: check
        kind: shell
        env: { OK: "${join(dir, 'ok')}" }
        command: 'test -e "$OK"'
`,
];

for (const bus of ['postgres', 'nats'] as const) {
  describe(`two servers on the ${bus} bus`, () => {
    let bed: ServerProcesses;
    let nats: Awaited<ReturnType<typeof jetStreamServer>> | undefined;
    let env: Record<string, string> = {};
    beforeAll(async () => {
      if (bus === 'nats') {
        nats = await jetStreamServer();
        env = { SVC_NATS_URL: nats.url };
      }
      bed = await ServerProcesses.open(env);
    });
    // The two servers serve every test of the bus (each spawn costs seconds of CPU); a test's
    // workers stop after it, so the next test's worker polls the server it names, alone. A test
    // that killed A gets a new A beside the same B (one spawn, not a stop and two).
    let pair: { a: ServerProcess; b: ServerProcess } | undefined;
    afterEach(async () => {
      const alive = (s: ServerProcess) => !s.proc.proc.killed && s.proc.proc.exitCode === null && s.proc.proc.signalCode === null;
      if (pair && alive(pair.b)) {
        await bed?.stopWorkers();
        if (!alive(pair.a)) pair = { a: await bed.server(), b: pair.b };
      } else {
        pair = undefined;
        await bed?.stopAll();
      }
    });
    afterAll(async () => {
      await bed?.close();
      await nats?.close();
    });

    const post = async (base: string, path: string, body: Json = {}): Promise<Json> => {
      const r = await http(base, 'POST', path, body);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
      return r.body;
    };
    const status = async (id: number): Promise<string> =>
      (await bed.db.query<{ status: string }>(`SELECT status FROM core.execution WHERE execution_id = $1`, [id])).rows[0]?.status;
    const reached = (id: number, want: string, ms = 20_000) => until(`execution ${id} ${want}`, async () => (await status(id)) === want, ms, 20);
    /** Every event of `id` once, numbered 1..n without a gap; the types in order. */
    async function cleanLog(id: number): Promise<string[]> {
      const { rows } = await bed.db.query<{ event_id: string; event_type: string }>(`SELECT event_id, event_type FROM core.event WHERE execution_id = $1 ORDER BY event_id`, [id]);
      expect(rows.map((r) => Number(r.event_id))).toEqual(rows.map((_, i) => i + 1));
      return rows.map((r) => r.event_type);
    }
    const count = (types: string[], t: string) => types.filter((x) => x === t).length;

    async function two() {
      if (pair) return pair;
      const a = await bed.server();
      const b = await bed.server();
      for (const content of PLAYBOOKS(bed.dir)) await post(a.base, '/api/catalog/playbook', { content });
      pair = { a, b };
      return pair;
    }

    it('paused on A, resumed on B: the held commands are claimed promptly by a worker polling B', async () => {
      const { a, b } = await two();
      const id = (await post(a.base, '/api/run/playbook', { path: 'm/two' })).execution_id as number;
      await post(a.base, `/api/executions/${id}/pause`);
      await bed.worker(b.base, 2);
      // The worker is in its claim's wait (5 s) on B when the resume comes.
      await sleep(800);
      expect(await status(id)).toBe('paused');
      const t0 = performance.now();
      await post(b.base, `/api/executions/${id}/resume`);
      await reached(id, 'completed');
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS);
      const log = await cleanLog(id);
      expect(count(log, 'execution.resumed')).toBe(1);
      expect(count(log, 'command.issued')).toBe(2);
    }, 60_000);

    it('paused on A mid-step, resumed on B: the step held meanwhile is claimed promptly by a worker polling A', async () => {
      const { a, b } = await two();
      const hold = join(bed.dir, 'chain');
      await writeFile(hold, '');
      await bed.worker(a.base, 2);
      const id = (await post(a.base, '/api/run/playbook', { path: 'm/chain' })).execution_id as number;
      await until('claimed', async () => (await bed.db.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED','RUNNING')`, [id])).rows.length > 0, 10_000, 20);
      await post(a.base, `/api/executions/${id}/pause`);
      await rm(hold);
      // The running command finishes and is recorded; the next step's command is held.
      await until('first step done', async () => (await bed.db.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND status = 'COMPLETED'`, [id])).rows.length > 0, 10_000, 20);
      await sleep(800);
      expect(await status(id)).toBe('paused');
      expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = $1`, [id])).rows[0].n).toBe(1);
      const t0 = performance.now();
      await post(b.base, `/api/executions/${id}/resume`);
      await reached(id, 'completed');
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS);
      const log = await cleanLog(id);
      expect(count(log, 'command.issued')).toBe(2);
    }, 60_000);

    it('a signal sent to B for a wait A set is delivered once and the step moves on promptly', async () => {
      const { a, b } = await two();
      await bed.worker(a.base, 2);
      const id = (await post(a.base, '/api/run/playbook', { path: 'm/gate' })).execution_id as number;
      await until('waiting', async () => (await bed.db.query(`SELECT 1 FROM core.wait WHERE execution_id = $1`, [id])).rows.length > 0, 10_000, 20);
      await sleep(800);
      const t0 = performance.now();
      expect(await post(b.base, `/api/executions/${id}/signals/go`, { payload: { x: 1 } })).toMatchObject({ status: 'delivered', step: 'gate' });
      await reached(id, 'completed');
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS);
      const log = await cleanLog(id);
      expect(count(log, 'signal.received')).toBe(1);
      expect(count(log, 'command.issued')).toBe(1);
      expect((await http(a.base, 'POST', `/api/executions/${id}/signals/go`, { payload: 2 })).status).toBe(409);
    }, 60_000);

    it('a timer A set fires once on B after A is killed', async () => {
      const { a, b } = await two();
      await bed.worker(b.base, 2);
      const id = (await post(a.base, '/api/run/playbook', { path: 'm/timed' })).execution_id as number;
      const wake = (await bed.db.query<{ at: Date }>(`SELECT wake_at AS at FROM core.wait WHERE execution_id = $1`, [id])).rows[0].at;
      a.proc.kill('SIGKILL');
      await withTimeout(a.proc.exited, 10_000, 'A exit');
      await reached(id, 'completed');
      expect(Date.now() - wake.getTime()).toBeLessThan(PROMPT_MS);
      const log = await cleanLog(id);
      expect(count(log, 'timer.fired')).toBe(1);
      expect(count(log, 'command.issued')).toBe(1);
    }, 60_000);

    it('a queued execution is admitted and run promptly when the running one ends on the other server', async () => {
      const { a, b } = await two();
      expect((await http(a.base, 'PUT', '/api/limits/m_one', { concurrency: 1 })).status).toBe(200);
      const hold = join(bed.dir, 'limited');
      await writeFile(hold, '');
      await bed.worker(a.base, 2);
      const first = (await post(a.base, '/api/run/playbook', { path: 'm/limited' })).execution_id as number;
      await until('first claimed', async () => (await bed.db.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED','RUNNING')`, [first])).rows.length > 0, 10_000, 20);
      const second = (await post(b.base, '/api/run/playbook', { path: 'm/limited' })).execution_id as number;
      expect(await status(second)).toBe('queued');
      await sleep(800);
      const t0 = performance.now();
      await rm(hold);
      await reached(first, 'completed');
      await reached(second, 'completed');
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS + 500);
      const log = await cleanLog(second);
      expect(count(log, 'execution.queued')).toBe(1);
      expect(count(log, 'execution.admitted')).toBe(1);
      await cleanLog(first);
    }, 60_000);

    it('a cancel on B cascades to the child A started, at once', async () => {
      const { a, b } = await two();
      const hold = join(bed.dir, 'child');
      await writeFile(hold, '');
      await bed.worker(a.base, 2);
      const parent = (await post(a.base, '/api/run/playbook', { path: 'm/parent' })).execution_id as number;
      const child = await until('child running', async () => (await bed.db.query<{ id: string }>(`SELECT c.execution_id AS id FROM core.execution c JOIN core.command m ON m.execution_id = c.execution_id WHERE c.parent_execution_id = $1 AND m.status IN ('CLAIMED','RUNNING')`, [parent])).rows[0]?.id, 10_000, 20);
      const t0 = performance.now();
      expect(await post(b.base, `/api/executions/${parent}/cancel`, { reason: 'test', cascade: true })).toMatchObject({ status: 'cancelled' });
      await reached(Number(child), 'cancelled', PROMPT_MS + 1000);
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS);
      expect(await status(parent)).toBe('cancelled');
      await rm(hold);
      await sleep(1000);
      for (const id of [parent, Number(child)]) expect(count(await cleanLog(id), 'execution.cancelled')).toBe(1);
      expect(await status(Number(child))).toBe('cancelled');
    }, 60_000);

    it('a retry on B of an execution that failed on A runs promptly, replaying what was done', async () => {
      const { a, b } = await two();
      const ok = join(bed.dir, 'ok');
      await rm(ok, { force: true });
      await bed.worker(a.base, 2);
      const id = (await post(a.base, '/api/run/playbook', { path: 'm/flaky' })).execution_id as number;
      await reached(id, 'failed');
      await writeFile(ok, '');
      await sleep(800);
      const t0 = performance.now();
      const retried = (await post(b.base, `/api/executions/${id}/retry`)).execution_id as number;
      await reached(retried, 'completed');
      expect(performance.now() - t0).toBeLessThan(PROMPT_MS);
      const log = await cleanLog(retried);
      expect(count(log, 'step.replayed')).toBe(1);
      expect(count(log, 'command.issued')).toBe(1);
      expect((await http(a.base, 'GET', `/api/executions/${id}`)).body).toMatchObject({ retried_as: [retried] });
    }, 60_000);
  });
}
