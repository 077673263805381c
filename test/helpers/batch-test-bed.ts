import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startTestApp, type TestApp } from './app.ts';
import { batchApi, noopPlaybook, type BatchApi } from './batch.ts';
import { executionApi, type ExecutionApi } from './execution-api.ts';
import type { Json } from './http.ts';

export type BatchTestBed = {
  readonly t: TestApp;
  readonly ex: ExecutionApi;
  readonly b: BatchApi;
  readonly db: pg.Client;
  /** Runs the playbook and claims its first command as `worker`. */
  claimed(worker?: string): Promise<{ id: number; cmd: Json }>;
};

/**
 * A batch test file's world (call at its top level: it registers beforeAll and afterAll): a
 * server whose ack bound is 10 s (accepting is not what these files test), a noopPlaybook of
 * `steps` steps at `path`, the APIs and a database client.
 */
export function batchTestBed(path: string, steps: number): BatchTestBed {
  let world: { t: TestApp; ex: ExecutionApi; b: BatchApi; db: pg.Client } | undefined;
  let app: TestApp | undefined;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    app = await startTestApp();
    const ex = executionApi(app.url);
    await ex.register(noopPlaybook(path, steps));
    client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    world = { t: app, ex, b: batchApi(app.url), db: client };
  });
  afterAll(async () => {
    await client?.end();
    await app?.close();
  });
  const ready = () => {
    if (!world) throw new Error('batchTestBed: used before its beforeAll ran');
    return world;
  };
  return {
    get t() {
      return ready().t;
    },
    get ex() {
      return ready().ex;
    },
    get b() {
      return ready().b;
    },
    get db() {
      return ready().db;
    },
    async claimed(worker = 'w1') {
      const { ex, b, db } = ready();
      const id = await ex.run(path);
      const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
      return { id, cmd: await b.claim(Number(pending.rows[0].command_id), worker) };
    },
  };
}
