// A worker's environment is not a postgres task's: pg fills a connection without a password from
// PGPASSWORD, so a playbook whose credential names a server of its own and no password received
// the worker's PGPASSWORD there. A real `svc worker` with PGPASSWORD set runs such a task against
// a server that asks for the password in clear text: it never gets it, nor does /proc show it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const workerPassword = `pgpw-${randomBytes(12).toString('hex')}`;
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
  s = await startWorkerStack({ workers: 1, workerEnv: { PGPASSWORD: workerPassword } });
  const cred = await http(s.url, 'POST', '/api/credentials', { name: 'own_server', type: 'postgres', data: { connection_string: `postgres://someone@127.0.0.1:${port}/db` } });
  expect(cred.status).toBeLessThan(300);
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: own-server, path: sandbox/own-server }
workflow:
  - step: start
    tool: { name: q, kind: postgres, auth: own_server, command: 'SELECT 1' }
`);
}, 120_000);
afterAll(async () => {
  await s?.close();
  server?.close();
});

describe("a postgres task's connection", () => {
  it("never carries the worker's PGPASSWORD to the credential's server, and the worker's /proc does not show it", async () => {
    const id = await s.run('sandbox/own-server', {});
    const done = await s.wait(id, 60_000);
    expect(done.status).toBe('failed');
    expect(received.length).toBeGreaterThan(0);
    expect(received).not.toContain(workerPassword);
    expect(readFileSync(`/proc/${s.workers[0].pid}/environ`, 'utf8')).not.toContain(workerPassword);
  });
});
