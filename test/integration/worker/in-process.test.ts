// The workers of `svc start` run in the server's process and reach it without a socket (fastify's
// inject: the same routes, hooks, auth, validation and answers), their reports straight to the
// report's handler (src/in-process-server.ts: checked and answered as the route does); their
// long-polling claims keep the socket, whose closing tells the server that a claimer went away.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessServer } from '../../../src/in-process-server.ts';
import { createLogger } from '../../../src/log.ts';
import type { ReportAnswer, ReportRequest } from '../../../src/protocol.ts';
import { ServerClient, ServerError, type InProcessServer } from '../../../src/worker/server-client.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const CHAIN = `apiVersion: svc/v1
metadata: { name: chain, path: in-process/chain }
workflow:
  - step: a
    tool: { name: t, kind: noop }
    next: b
  - step: b
    tool: { name: t, kind: noop }
    next: c
  - step: c
    tool: { name: t, kind: noop }
`;

let s: TestStack;
/** Requests that reached the server over a socket, by path. */
const onSockets: string[] = [];
/** Requests that reached it in process. */
const inProcess: string[] = [];
let server: InProcessServer;

beforeAll(async () => {
  s = await startTestStack({ workers: 0 });
  s.app.server.on('request', (req: { url?: string }) => onSockets.push(String(req.url).split('?')[0]));
  server = {
    inject: (request) => {
      inProcess.push(request.url.split('?')[0]);
      return s.app.inject(request);
    },
  };
  await s.register(CHAIN);
});
afterAll(async () => {
  await s?.close();
});

const worker = (token = s.workerToken) =>
  new Worker({ serverUrl: s.url, inProcess: server, token, concurrency: 1, env: {}, log: createLogger('silent'), claimWaitMs: 2_000 });

describe('a worker in its server\'s process', () => {
  it('registers, reports and heartbeats without a socket; executions complete as over HTTP', async () => {
    const w = worker();
    await w.start();
    try {
      const ids = [await s.run('in-process/chain'), await s.run('in-process/chain')];
      for (const id of ids) expect((await s.wait(id)).status).toBe('completed');
      for (const id of ids) {
        const types = (await s.events(id)).map((e) => e.event_type);
        expect(types.filter((t) => t === 'command.completed')).toHaveLength(3);
        expect(types.at(-1)).toBe('playbook.completed');
      }
    } finally {
      await w.stop();
    }
    expect(inProcess).toContain('/api/worker/pool/register');
    expect(inProcess.filter((p) => p === '/api/worker/report').length).toBeGreaterThanOrEqual(2);
    expect(inProcess).toContain('/api/worker/pool/deregister');
    expect(onSockets.filter((p) => p.startsWith('/api/worker/report') || p.startsWith('/api/worker/pool'))).toEqual([]);
    // Only its long polls went over the socket.
    expect(inProcess).not.toContain('/api/worker/claim');
    expect(onSockets).toContain('/api/worker/claim');
  });

  it('a stop during its long-polling claim ends the poll at once and takes nothing started meanwhile', async () => {
    const w = worker();
    await w.start();
    // Its first claim is in its long poll by now; the execution starts while the stop is under way.
    await new Promise((ok) => setTimeout(ok, 300));
    const t0 = performance.now();
    const stopped = w.stop();
    const id = await s.run('in-process/chain');
    await stopped;
    // In process, the poll could not be abandoned: the stop waited it out and it took the command.
    expect(performance.now() - t0).toBeLessThan(1_000);
    await new Promise((ok) => setTimeout(ok, 300));
    const { rows } = await s.deps.db.query<{ status: string; worker_id: string | null }>('SELECT status, worker_id FROM core.command WHERE execution_id = $1', [id]);
    expect(rows).toEqual([{ status: 'PENDING', worker_id: null }]);
    const next = worker();
    await next.start();
    try {
      expect((await s.wait(id)).status).toBe('completed');
    } finally {
      await next.stop();
    }
  });

  it('is refused as over HTTP: a wrong worker token is 401', async () => {
    const client = new ServerClient(s.url, { token: 'not-the-worker-token', inProcess: server });
    const err = await client.request('POST', '/api/worker/pool/register', { name: 'intruder', capacity: 1, labels: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).status).toBe(401);
  });

  it('a server gone answers as a socket refused: a TypeError naming the request, never sent again', async () => {
    let calls = 0;
    const gone: InProcessServer = {
      inject: () => {
        calls++;
        return Promise.reject(new Error('Fastify instance is already closed'));
      },
    };
    const client = new ServerClient(s.url, { token: s.workerToken, inProcess: gone });
    const err = await client.request('POST', '/api/worker/report', { worker_id: 'w', events: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(String(err)).toContain('POST /api/worker/report');
    expect(calls).toBe(1);
  });
});

describe("a pool's reports in the server's process (the report's handler, no HTTP)", () => {
  it('go to the handler, not through inject or a socket; executions complete as over HTTP', async () => {
    const real = inProcessServer(s.app);
    const seen = { injected: [] as string[], reports: 0 };
    const counted: InProcessServer = {
      inject: (request) => {
        seen.injected.push(request.url.split('?')[0]);
        return real.inject(request);
      },
      report: (body) => {
        seen.reports++;
        return real.report!(body);
      },
    };
    const before = onSockets.length;
    const w = new Worker({ serverUrl: s.url, inProcess: counted, token: s.workerToken, concurrency: 1, env: {}, log: createLogger('silent'), claimWaitMs: 2_000 });
    await w.start();
    try {
      const ids = [await s.run('in-process/chain'), await s.run('in-process/chain')];
      for (const id of ids) expect((await s.wait(id)).status).toBe('completed');
      for (const id of ids) expect((await s.events(id)).filter((e) => e.event_type === 'command.completed')).toHaveLength(3);
    } finally {
      await w.stop();
    }
    expect(seen.reports).toBeGreaterThanOrEqual(2);
    expect(seen.injected).not.toContain('/api/worker/report');
    expect(seen.injected).toContain('/api/worker/pool/register');
    expect(onSockets.slice(before).filter((p) => p.startsWith('/api/worker/report'))).toEqual([]);
  });

  /** The route's answer to `body` (through inject, as JSON text) and the handler's, side by side. */
  async function both(body: unknown): Promise<{ route: { status: number; body: unknown }; handler: { status: number; body: unknown } }> {
    const res = await s.app.inject({ method: 'POST', url: '/api/worker/report', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.workerToken}` }, payload: JSON.stringify(body) });
    const route = { status: res.statusCode, body: res.json() as unknown };
    const handler = await inProcessServer(s.app)
      .report!(body as ReportRequest)
      .then(
        (answer: ReportAnswer) => ({ status: 200, body: answer as unknown }),
        (err: unknown) => {
          if (!(err instanceof ServerError)) throw err;
          return { status: err.status, body: { detail: err.detail } };
        },
      );
    return { route, handler };
  }

  it('answer and refuse as the route does: bad bodies, text that cannot be stored, unknown commands', async () => {
    const bodies: [string, unknown, number][] = [
      ['no worker', { events: [] }, 422],
      ['events not a list', { worker_id: 'w', events: 'x' }, 422],
      ['a NUL in a result', { worker_id: 'w', events: [{ execution_id: 1, event_type: 'command.completed', command_id: 1, result: { out: 'a\u0000b' } }] }, 422],
      ['a prototype key', { worker_id: 'w', events: [{ execution_id: 1, event_type: 'command.completed', command_id: 1, result: JSON.parse('{"__proto__": {"x": 1}}') as unknown }] }, 400],
      ['a body over the limit', { worker_id: 'w', events: [{ execution_id: 1, event_type: 'command.completed', command_id: 1, result: { out: 'x'.repeat(9 * 1024 * 1024) } }] }, 413],
      ['an unknown execution and command', { worker_id: 'w', events: [{ execution_id: 987654, event_type: 'command.completed', command_id: 987654, result: {} }] }, 404],
    ];
    for (const [what, body, status] of bodies) {
      const { route, handler } = await both(body);
      expect(route.status, what).toBe(status);
      expect(handler, what).toEqual(route);
    }
  });

  it('a closing server refuses them as a socket refused: a TypeError, the pool keeps its results', async () => {
    // Only its closing signal is read before the refusal.
    const closing = Object.assign(Object.create(s.app) as typeof s.app, { closingSignal: AbortSignal.abort() });
    const err = await inProcessServer(closing).report!({ worker_id: 'w', events: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(String(err)).toContain('POST /api/worker/report');
  });
});
