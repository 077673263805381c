// The embedded PostgreSQL of `svc start` listens on a port found free beforehand; anything may take
// that port before PostgreSQL binds it (an outgoing connection's local port, another program).
// A start whose port was taken meanwhile goes on on another (onFreePort), with real PostgreSQL
// failures: the port held by a listener of this test.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onFreePort, startEmbedded, type EmbeddedDatabase } from '../../../src/db/embedded.ts';
import { freePort } from '../../helpers/ports.ts';

let dir: string;
let holder: Server;
let taken: number;
let db: EmbeddedDatabase | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-embedded-port-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach the directory
  taken = await freePort();
  holder = createServer();
  await new Promise<void>((ok) => holder.listen(taken, '127.0.0.1', ok));
});

afterAll(async () => {
  await db?.stop();
  await new Promise((ok) => holder.close(ok));
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('a start whose port was taken after it was picked starts on the next port picked', async () => {
  const picked: number[] = [];
  const free = await freePort();
  const picks = [taken, free];
  const { port, value } = await onFreePort(
    async () => {
      const p = picks.shift();
      if (p === undefined) throw new Error('picked more than twice');
      picked.push(p);
      return p;
    },
    (p) => startEmbedded(dir, () => {}, { port: p }),
  );
  db = value;
  expect(picked).toEqual([taken, free]);
  expect(port).toBe(free);
  expect(db.port).toBe(free);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
  } finally {
    await client.end();
  }
}, 120_000);

/** A start that always fails with `err`, counting its calls. */
function failing(err: Error): { start: () => Promise<never>; calls: () => number } {
  let calls = 0;
  return {
    start: async () => {
      calls++;
      throw err;
    },
    calls: () => calls,
  };
}

it('gives up after its tries, and throws at once what is not a taken port', async () => {
  const takenError = new Error('PostgreSQL exited before it was ready: LOG:  could not bind IPv4 address "127.0.0.1": Address already in use');
  const taken3 = failing(takenError);
  await expect(onFreePort(async () => taken, taken3.start, 3)).rejects.toBe(takenError);
  expect(taken3.calls()).toBe(3);
  const other = new Error('PostgreSQL was not ready after 60000 ms');
  const once = failing(other);
  await expect(onFreePort(async () => taken, once.start)).rejects.toBe(other);
  expect(once.calls()).toBe(1);
});
