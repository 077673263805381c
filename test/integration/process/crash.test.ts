import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freePort } from '../../helpers/ports.ts';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { http, type Json } from '../../helpers/http.ts';
import { TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let t: TestDatabase;
let db: pg.Client;
const key = randomBytes(32).toString('base64');
beforeAll(async () => {
  t = await createTestDatabase();
  db = new pg.Client({ connectionString: t.url });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.drop();
});

async function startServer(port: number): Promise<SvcProcess> {
  const p = spawnSvc(['server'], { SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: key, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
  await waitForHealth(`http://127.0.0.1:${port}/api/health`, 30_000);
  return p;
}

async function register(base: string, yaml: string) {
  const r = await http(base, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(r.status).toBe(201);
}


describe('crashes', () => {
  it('a worker killed with SIGKILL mid-command leaves the execution running and no event half-written', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = await startServer(port);
    try {
      await register(base, `
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: crash/slow }
workflow:
  - step: start
    tool: { name: s, kind: shell, command: "echo first" }
    next: wait
  - step: wait
    tool: { name: w, kind: shell, command: "sleep 20" }
`);
      const worker = spawnSvc(['worker', '--server', base, '--concurrency', '1'], {});
      const id = (await http(base, 'POST', '/api/run/playbook', { path: 'crash/slow' })).body.execution_id;
      // Wait until the second command is claimed and running.
      await until('the sleep to be claimed', async () => {
        const r = await db.query(`SELECT status FROM core.command WHERE execution_id = $1 AND step = 'wait'`, [id]);
        return r.rows[0]?.status === 'CLAIMED' || r.rows[0]?.status === 'RUNNING' ? true : undefined;
      });
      worker.kill('SIGKILL');
      await worker.exited;
      await new Promise((r) => setTimeout(r, 500));
      const status = (await http(base, 'GET', `/api/executions/${id}`)).body;
      expect(status.status).toBe('running');
      const events: Json[] = (await http(base, 'GET', `/api/events/${id}`)).body.events;
      expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
      // The first step is fully recorded; nothing of the killed command's outcome is.
      const waitEvents = events.filter((e) => e.step === 'wait').map((e) => e.event_type);
      expect(waitEvents).toEqual(['step.enter', 'command.issued']);
      for (const e of events) expect(e.event_type).toBeTruthy();
      const cmd = await db.query(`SELECT status FROM core.command WHERE execution_id = $1 AND step = 'wait'`, [id]);
      expect(cmd.rows[0].status).toBe('CLAIMED');
      await http(base, 'POST', `/api/executions/${id}/cancel`, { reason: 'test cleanup' });
    } finally {
      server.kill('SIGTERM');
      await withTimeout(server.exited, 20_000, 'server stop');
    }
  });

  it('a server killed mid-run restarts and carries on with the events already accepted', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let server = await startServer(port);
    const worker = new Worker({ serverUrl: base, token: TEST_WORKER_TOKEN, concurrency: 2, env: {}, log: createLogger('silent'), claimWaitMs: 500 });
    try {
      await register(base, `
apiVersion: svc/v1
kind: Playbook
metadata: { name: steps, path: crash/steps }
workflow:
${Array.from({ length: 12 }, (_, i) => `  - step: s${i}\n    tool: { name: t, kind: shell, command: "sleep 0.1; echo ${i}" }\n${i < 11 ? `    next: s${i + 1}\n` : ''}`).join('')}
`);
      await worker.start();
      const id = (await http(base, 'POST', '/api/run/playbook', { path: 'crash/steps' })).body.execution_id;
      await until('a few steps to complete', async () => {
        const r = await db.query(`SELECT count(*)::int AS n FROM core.event WHERE execution_id = $1 AND event_type = 'step.exit'`, [id]);
        return r.rows[0].n >= 3 ? true : undefined;
      });
      server.kill('SIGKILL');
      await server.exited;
      const before = await db.query(`SELECT count(*)::int AS n FROM core.event WHERE execution_id = $1 AND event_type = 'step.exit'`, [id]);
      server = await startServer(port);
      const final = await until('the execution to finish', async () => {
        const r = (await http(base, 'GET', `/api/executions/${id}`)).body;
        return r.status === 'running' ? undefined : r;
      }, 30_000);
      expect(final.status).toBe('completed');
      expect(final.result.stdout).toBe('11\n');
      const events: Json[] = (await http(base, 'GET', `/api/events/${id}`)).body.events;
      expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
      const exits = events.filter((e) => e.event_type === 'step.exit').map((e) => e.step);
      expect(exits).toEqual(Array.from({ length: 12 }, (_, i) => `s${i}`));
      expect(before.rows[0].n).toBeLessThan(12);
    } finally {
      await worker.stop();
      server.kill('SIGTERM');
      await withTimeout(server.exited, 20_000, 'server stop');
    }
  });
});
