// A server on the same NATS as the live servers of its database but with another
// SVC_NATS_NAMESPACE (or none beside one) waited a beat (11.7 s) and was refused, exit 78, as on
// "another NATS: its stream of this database made …", told to give it "their SVC_NATS_URL",
// which it had. The refusal is right (another stream: they would not hear each other's work),
// the reason was not. A server now records its stream's name too, and one on another stream is
// refused at once, naming that stream and SVC_NATS_NAMESPACE; one of the same namespace starts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
}, 60_000);
afterAll(async () => {
  await bed?.close();
  await nats?.close();
});

const servers = async () => (await bed.db.query<{ name: string; stream: string | null }>(`SELECT name, labels->>'stream' AS stream FROM core.runtime WHERE kind = 'server' ORDER BY name`)).rows;

describe('servers on one database and one NATS with two namespaces', () => {
  it('one of another namespace is refused at once, naming the stream and SVC_NATS_NAMESPACE; one of the same namespace starts', async () => {
    await bed.server({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: 'blue' });
    const [live] = await servers();
    expect(live.stream).toBe('SVC_COMMANDS_blue');

    const p = spawnSvc(['server'], { SVC_DATABASE_URL: bed.database.url, SVC_ENCRYPTION_KEY: KEY, SVC_HOST: '127.0.0.1', SVC_PORT: String(await freePort()), SVC_NATS_URL: nats.url });
    const code = await withTimeout(p.exited, 40_000, 'the refused start').catch((err: unknown) => {
      p.kill('SIGKILL');
      throw err;
    });
    expect(code, p.output()).toBe(78);
    expect(p.output()).toContain(`${live.name} (another stream on NATS: SVC_COMMANDS_blue, of another SVC_NATS_NAMESPACE`);
    expect(p.output()).toContain('their SVC_NATS_URL and SVC_NATS_NAMESPACE');
    expect(p.output()).not.toContain('another NATS');
    expect(await servers()).toEqual([live]);

    await bed.server({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: 'blue' });
    await until('two servers recorded', async () => (await servers()).length === 2, 5_000);
    await bed.stopAll();
  }, 120_000);
});
