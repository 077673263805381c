// Servers on one database must use one bus (docs/scaling.md "The bus"): a server with
// SVC_NATS_URL and one without do not hear each other, so work waits for polls and the reaper and
// nothing says why. A `svc server` started beside a live server on the other bus refuses to start
// (exit 78, as other bad settings) naming both buses and the live server; once that one has
// stopped it starts. Registrations take turns, so two at once cannot both pass.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registerServer } from '../../../src/db/server.repo.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const KEY = randomBytes(32).toString('base64');
let bed: ServerProcesses;
let nats: Awaited<ReturnType<typeof jetStreamServer>>;
beforeAll(async () => {
  nats = await jetStreamServer();
  bed = await ServerProcesses.open({ SVC_ENCRYPTION_KEY: KEY });
});
afterEach(async () => {
  await bed?.stopAll();
});
afterAll(async () => {
  await bed?.close();
  await nats?.close();
});

/** A `svc server` on the bed's database expected not to start: its exit code and output. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnSvc(['server'], { SVC_DATABASE_URL: bed.database.url, SVC_ENCRYPTION_KEY: KEY, SVC_HOST: '127.0.0.1', SVC_PORT: String(await freePort()), ...env });
  const code = await withTimeout(p.exited, 40_000, 'the refused start').catch((err: unknown) => {
    p.kill('SIGKILL');
    throw err;
  });
  return { code, output: p.output() };
}

const servers = async () => (await bed.db.query<{ name: string; bus: string }>(`SELECT name, labels->>'bus' AS bus FROM core.runtime WHERE kind = 'server' ORDER BY name`)).rows;

describe('servers on one database on two buses', () => {
  it('a server without SVC_NATS_URL beside a live one with it refuses to start (exit 78) naming both; after that one stops it starts, and the other way round', async () => {
    const a = await bed.server({ SVC_NATS_URL: nats.url });
    const [live] = await servers();
    expect(live.bus).toBe('nats');

    const refused = await refusedStart({});
    expect(refused.code, refused.output).toBe(78);
    expect(refused.output).toContain('PostgreSQL LISTEN/NOTIFY');
    expect(refused.output).toContain('NATS JetStream');
    expect(refused.output).toContain(live.name);
    // Nothing of it recorded, and the live one still serves.
    expect(await servers()).toEqual([live]);
    expect((await http(a.base, 'GET', '/api/health')).status).toBe(200);

    // A stop removes the server's row: a start on the other bus is then a change of bus, and goes.
    a.proc.kill('SIGTERM');
    expect(await withTimeout(a.proc.exited, 20_000, 'the stop')).toBe(0);
    expect(await servers()).toEqual([]);
    const b = await bed.server();
    expect((await servers()).map((s) => s.bus)).toEqual(['postgres']);

    const refusedNats = await refusedStart({ SVC_NATS_URL: nats.url });
    expect(refusedNats.code, refusedNats.output).toBe(78);
    expect(refusedNats.output).toContain('NATS JetStream');
    expect(refusedNats.output).toContain('PostgreSQL LISTEN/NOTIFY');
    // A second server on the same bus starts beside it.
    await bed.server();
    await until('two servers recorded', async () => (await servers()).length === 2, 5_000);
    expect((await http(b.base, 'GET', '/api/health')).status).toBe(200);
  }, 120_000);

  it('two registering at once on different buses: the second waits for the first and finds it', async () => {
    await bed.db.query(`DELETE FROM core.runtime WHERE kind = 'server'`);
    const one = new pg.Client({ connectionString: bed.database.url });
    const two = new pg.Client({ connectionString: bed.database.url });
    await one.connect();
    await two.connect();
    try {
      await one.query('BEGIN');
      await two.query('BEGIN');
      expect(await registerServer(one, { name: 'race-one', bus: 'nats', liveSeconds: 30 })).toEqual([]);
      // Not committed yet: without turns the second would find nothing and register too.
      const second = registerServer(two, { name: 'race-two', bus: 'postgres', liveSeconds: 30 });
      await new Promise((r) => setTimeout(r, 300));
      await one.query('COMMIT');
      expect(await second).toMatchObject([{ name: 'race-one', bus: 'nats' }]);
      await two.query('COMMIT');
      expect((await servers()).map((s) => s.name)).toEqual(['race-one']);
    } finally {
      await one.end();
      await two.end();
      await bed.db.query(`DELETE FROM core.runtime WHERE kind = 'server'`);
    }
  }, 30_000);
});
