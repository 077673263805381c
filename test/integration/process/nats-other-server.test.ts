// Servers on one database must share one NATS (docs/scaling.md "The bus"): two nats-servers that
// are not one cluster carry nothing from one to the other, as a server on PostgreSQL's bus and one
// on NATS do not (nats-mixed-bus.test.ts). Each server writing SVC_NATS_URL=nats://127.0.0.1:4222
// with a NATS beside it on its own host is such a fleet: work started on one server waited out
// the claim wait of every worker on another, and the bus check, comparing the kind of bus only,
// let it start. Now a server on another NATS than the live ones refuses to start (exit 78)
// naming them; one on the same NATS starts beside them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const KEY = randomBytes(32).toString('base64');
let bed: ServerProcesses;
let natsOne: Awaited<ReturnType<typeof jetStreamServer>>;
let natsTwo: Awaited<ReturnType<typeof jetStreamServer>>;
beforeAll(async () => {
  natsOne = await jetStreamServer();
  natsTwo = await jetStreamServer();
  bed = await ServerProcesses.open({ SVC_ENCRYPTION_KEY: KEY });
}, 60_000);
afterAll(async () => {
  await bed?.close();
  await natsOne?.close();
  await natsTwo?.close();
});

const servers = async () => (await bed.db.query<{ name: string; nats: string | null }>(`SELECT name, labels->>'nats' AS nats FROM core.runtime WHERE kind = 'server' ORDER BY name`)).rows;

describe('servers on one database on two NATS servers', () => {
  it('a server on another NATS than the live one refuses to start (exit 78) naming it; one on the same NATS starts', async () => {
    const a = await bed.server({ SVC_NATS_URL: natsOne.url });
    const [live] = await servers();

    const p = spawnSvc(['server'], { SVC_DATABASE_URL: bed.database.url, SVC_ENCRYPTION_KEY: KEY, SVC_HOST: '127.0.0.1', SVC_PORT: String(await freePort()), SVC_NATS_URL: natsTwo.url });
    const code = await withTimeout(p.exited, 40_000, 'the refused start').catch((err: unknown) => {
      p.kill('SIGKILL');
      throw err;
    });
    expect(code, p.output()).toBe(78);
    expect(p.output()).toContain('another NATS');
    expect(p.output()).toContain(live.name);
    expect(await servers()).toEqual([live]);

    // The same NATS: the same stream, made once.
    await bed.server({ SVC_NATS_URL: natsOne.url });
    await until('two servers recorded', async () => (await servers()).length === 2, 5_000);
    expect(live.nats).not.toBeNull();
    expect(new Set((await servers()).map((s) => s.nats))).toEqual(new Set([live.nats]));
    expect((await http(a.base, 'GET', '/api/health')).status).toBe(200);
    await bed.stopAll();
  }, 120_000);
});
