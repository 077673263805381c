// The bus's stream made again on the same NATS (deleted by an operator; a NATS that lost its
// store): the first server that misses it makes it, at a new time, and each live server records
// that time at its next beat (src/bus/server-bus.ts compares it to tell another NATS). A server
// starting before those beats was refused, exit 78, as on "another NATS", and the live servers
// logged that error of each other: it now starts, and nothing is logged.
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const NAMESPACE = 'made_again';
const STREAM = `SVC_COMMANDS_${NAMESPACE}`;
const KEY = randomBytes(32).toString('base64');
let bed: ServerProcesses;
let nats: Awaited<ReturnType<typeof jetStreamServer>>;
beforeAll(async () => {
  nats = await jetStreamServer();
  bed = await ServerProcesses.open({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: NAMESPACE, SVC_ENCRYPTION_KEY: KEY });
});
afterAll(async () => {
  await bed?.close();
  await nats?.close();
});

describe('the bus stream made again on the same NATS', () => {
  it('lets a server start right after, and no server calls the others another NATS', async () => {
    const a = await bed.server();
    const b = await bed.server();
    // A claimer waiting on a: its pull finds the stream gone and makes it again.
    await bed.worker(a.base, 1);
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const before = (await jsm.streams.info(STREAM)).created;
      await jsm.streams.delete(STREAM);
      const made = await until('made again', () => jsm.streams.info(STREAM).then((i) => i.created, () => undefined), 10_000, 50);
      expect(made).not.toBe(before);
      const c = spawnSvc(['server'], { SVC_DATABASE_URL: bed.database.url, SVC_ENCRYPTION_KEY: KEY, SVC_HOST: '127.0.0.1', SVC_PORT: String(await freePort()), SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: NAMESPACE });
      try {
        const started = await Promise.race([
          until('the third server registered', async () => (await bed.db.query(`SELECT count(*)::int AS n FROM core.runtime WHERE kind = 'server'`)).rows[0].n === 3 || undefined, 40_000, 200).then(() => 'started'),
          c.exited.then((code) => `exited ${code}`),
        ]);
        expect(started, c.output()).toBe('started');
        // Two beats of each live server, and none named the others another NATS.
        await new Promise((r) => setTimeout(r, 21_000));
        for (const s of [a.proc, b.proc, c]) expect(s.output()).not.toContain('another NATS');
      } finally {
        c.kill('SIGTERM');
        await withTimeout(c.exited, 20_000, 'the stop').catch(() => c.kill('SIGKILL'));
      }
    } finally {
      await nc.close();
    }
  }, 120_000);
});
