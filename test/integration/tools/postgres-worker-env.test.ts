// A worker's environment is not a postgres task's: pg fills a connection without a password from
// PGPASSWORD, else from the worker user's ~/.pgpass (or PGPASSFILE), so a playbook whose
// credential names a server of its own and no password received the worker's password there. A
// real `svc worker` with PGPASSWORD and a PGPASSFILE matching every server runs such tasks (a
// connection string, and fields) against a server that asks for the password in clear text: it
// never gets either, nor does /proc show PGPASSWORD.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const workerPassword = `pgpw-${randomBytes(12).toString('hex')}`;
const pgpassPassword = `pgpass-${randomBytes(12).toString('hex')}`;
const pgpassDir = mkdtempSync(join(tmpdir(), 'svc-pgpass-'));
const pgpassFile = join(pgpassDir, 'pgpass');
let s: WorkerStack;
let server: Server;
let port = 0;
const received: string[] = [];

// Answers a startup message with AuthenticationCleartextPassword and keeps what comes back.
function fakePostgres(socket: Socket): void {
  let buffer = Buffer.alloc(0);
  let started = false;
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (!started && buffer.length >= 8 && buffer.length >= buffer.readInt32BE(0)) {
      started = true;
      buffer = buffer.subarray(buffer.readInt32BE(0));
      socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]));
    }
    if (started && buffer.length >= 5 && buffer.length >= 1 + buffer.readInt32BE(1)) {
      received.push(buffer.subarray(5, 1 + buffer.readInt32BE(1)).toString('utf8'));
      socket.destroy();
    }
  });
}

beforeAll(async () => {
  server = createServer(fakePostgres);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  port = address.port;
  // pgpass reads only a file of mode 0600 or stricter; every host, port, database and user match.
  writeFileSync(pgpassFile, `*:*:*:*:${pgpassPassword}\n`, { mode: 0o600 });
  s = await startWorkerStack({ workers: 1, workerEnv: { PGPASSWORD: workerPassword, PGPASSFILE: pgpassFile } });
  const creds = [
    { name: 'own_server', type: 'postgres', data: { connection_string: `postgres://someone@127.0.0.1:${port}/db` } },
    { name: 'own_fields', type: 'postgres', data: { host: '127.0.0.1', port, user: 'someone', database: 'db', password: '' } },
  ];
  for (const cred of creds) expect((await http(s.url, 'POST', '/api/credentials', cred)).status).toBeLessThan(300);
  for (const [path, auth] of [['sandbox/own-server', 'own_server'], ['sandbox/own-fields', 'own_fields']]) {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${auth.replace('_', '-')}, path: ${path} }
workflow:
  - step: start
    tool: { name: q, kind: postgres, auth: ${auth}, command: 'SELECT 1' }
`);
  }
}, 120_000);
afterAll(async () => {
  await s?.close();
  server?.close();
  rmSync(pgpassDir, { recursive: true, force: true });
});

describe("a postgres task's connection", () => {
  it.each(['sandbox/own-server', 'sandbox/own-fields'])("%s: never carries the worker's PGPASSWORD or ~/.pgpass password to the credential's server, and the worker's /proc does not show it", async (path) => {
    const before = received.length;
    const id = await s.run(path, {});
    const done = await s.wait(id, 60_000);
    expect(done.status).toBe('failed');
    expect(received.length).toBeGreaterThan(before);
    // Each password message as sent, its NUL terminator included: looked for as text within.
    expect(received.join('\n')).not.toContain(workerPassword);
    expect(received.join('\n')).not.toContain(pgpassPassword);
    expect(readFileSync(`/proc/${s.workers[0].pid}/environ`, 'utf8')).not.toContain(workerPassword);
  });
});
