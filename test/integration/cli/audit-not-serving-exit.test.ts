// A server that answers 503 (its database away: docs/operations.md) made every svc client command
// exit 1, as a refused request does, so a script could not tell "try again later" from "your
// request is wrong". 502-504 are now exit 3, as an unreachable server (docs/cli.md, Exit codes);
// a 500 stays 1.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

let stub: Server;
let url: string;
let status = 503;

beforeAll(async () => {
  stub = createServer((req, res) => {
    req.resume();
    const detail = status === 503 ? { code: 'database_unavailable', message: 'the database is unavailable; try again shortly' } : { code: 'internal', message: 'internal error' };
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 503 ? { 'retry-after': '1' } : {}) }).end(JSON.stringify({ detail }));
  });
  stub.listen(0, '127.0.0.1');
  await once(stub, 'listening');
  const address = stub.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  url = `http://127.0.0.1:${address.port}`;
});
afterAll(() => {
  stub?.close();
});

const commands: string[][] = [
  ['status', '1'],
  ['list'],
  ['cancel', '1'],
  ['pause', '1'],
  ['triggers', 'list'],
  ['triggers', 'pause', 'a/b', 'nightly'],
  ['cleanup'],
  ['limits', 'list'],
  ['catalog', 'register', 'examples/hello.yaml'],
  ['run', 'examples/hello.yaml'],
];

describe('a server that cannot serve now (503)', () => {
  it.each(commands)('svc %s … is exit 3, saying what the server said', async (...args) => {
    status = 503;
    const r = await runSvc([...args, '--server', url], {});
    expect(r.stderr).toMatch(/503/);
    expect(r.code, r.stderr).toBe(3);
  });

  it('a 500 stays exit 1', async () => {
    status = 500;
    for (const args of [['status', '1'], ['triggers', 'list'], ['cleanup']]) {
      const r = await runSvc([...args, '--server', url], {});
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
    }
  });
});
