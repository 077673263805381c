// An answer a client command does not understand (a server that is not an svc server, say) is
// exit 1 saying so, never "server unreachable" (3): docs/cli.md's exit codes, the same for every
// svc client command.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

let foreign: Server;
let foreignUrl: string;
const seen: string[] = [];

beforeAll(async () => {
  // Answers 200 with JSON of another shape to every request: what no svc server answers.
  foreign = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: 5, execution_id: 'x' }));
  });
  foreign.listen(0, '127.0.0.1');
  await once(foreign, 'listening');
  const address = foreign.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  foreignUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(() => {
  foreign?.close();
});

describe('an answer svc agent and svc mcp do not understand', () => {
  it.each([
    [['mcp', 'list'], 'GET /api/mcp/servers'],
    [['mcp', 'deploy', 'demo'], 'POST /api/mcp/mcp/demo/lifecycle/deploy'],
    [['agent', 'list'], 'GET /api/agents'],
    [['agent', 'run', 'agents/mcp'], 'POST /api/execute'],
    [['triggers', 'list'], 'GET /api/triggers'],
  ])('svc %j is exit 1, an unexpected answer (not unreachable)', async (args, request) => {
    const r = await runSvc([...args, '--server', foreignUrl], {});
    expect(seen).toContain(`${request.split(' ')[0]} ${request.split(' ')[1]}`);
    expect(r.stderr).toMatch(/unexpected answer/);
    expect(r.stderr).not.toMatch(/unreachable/);
    expect(r.code).toBe(1);
  });
});
