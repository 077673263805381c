import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

// A server can commit a report (and the next command it hands to the worker) and die before the
// answer gets out. Between a real worker and a real server sits a proxy that forwards requests
// but drops chosen answers: the worker sends the report again, and must get that command back.

let t: TestApp;
let proxy: Server;
let proxyUrl: string;
// Decides, seeing the request and the server's answer, whether that answer is lost.
let dropNext: ((path: string, body: Json, answer: Json) => boolean) | undefined;
const dropped: string[] = [];
const quiet = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));

beforeAll(async () => {
  t = await startTestApp();
  const target = new URL(t.url);
  proxy = createServer((req, res) => {
    req.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const parsed: Json = body.length ? JSON.parse(body.toString('utf8')) : {};
      const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        const back: Buffer[] = [];
        answer.on('data', (c: Buffer) => back.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(back).toString('utf8');
          const drop = dropNext?.(req.url ?? '', parsed, text.startsWith('{') ? JSON.parse(text) : {}) ?? false;
          if (drop) {
            dropNext = undefined;
            dropped.push(req.url ?? '');
            req.socket.destroy(); // carried out upstream, answer lost on the way back
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(back));
        });
      });
      // A client that goes away cancels its request upstream too, as a proxy does; the request it
      // cut then fails, and so may a client's socket this proxy dropped: both are expected here.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.on('error', () => {});
      res.on('error', () => {});
      upstream.end(body);
    });
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const yaml = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: lost, path: lost/three }\nworkflow:\n  - step: a\n    tool: { name: t, kind: noop }\n    next: b\n  - step: b\n    tool: { name: t, kind: noop }\n    next: c\n  - step: c\n    tool: { name: t, kind: noop }\n';
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((ok) => (proxy ? proxy.close(() => ok()) : ok()));
  await t?.close();
});

async function runThrough(drop: (path: string, body: Json, answer: Json) => boolean): Promise<Json> {
  const worker = new Worker({ serverUrl: proxyUrl, token: t.workerToken, concurrency: 1, env: {}, log: quiet, claimWaitMs: 300 });
  dropNext = drop;
  await worker.start();
  try {
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'lost/three' })).body.execution_id;
    const done = await until('the execution to finish', async () => {
      const r = (await http(t.url, 'GET', `/api/executions/${id}`)).body;
      return r.status === 'running' ? undefined : r;
    }, 10_000);
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${id}`)).body.events;
    return { ...done, events };
  } finally {
    await worker.stop();
  }
}

describe('a lost answer', () => {
  it('to a report that handed over the next command: the report sent again gets it back, and the run finishes', async () => {
    const out = await runThrough((path, _body, answer) => path === '/api/worker/report' && Array.isArray(answer.commands) && answer.commands.length > 0);
    expect(dropped).toContain('/api/worker/report');
    expect(out.status).toBe('completed');
    const exits = out.events.filter((e: Json) => e.event_type === 'step.exit').map((e: Json) => e.step);
    expect(exits).toEqual(['a', 'b', 'c']);
    // The resent completion of step a is kept as a late event; every step ran once.
    expect(out.events.filter((e: Json) => e.event_type === 'command.claimed')).toHaveLength(3);
  });

  it('to a long-poll claim: the claim sent again gets the command back, and the run finishes', async () => {
    dropped.length = 0;
    const out = await runThrough((path, _body, answer) => path === '/api/worker/claim' && Array.isArray(answer.commands) && answer.commands.length > 0);
    expect(dropped).toContain('/api/worker/claim');
    expect(out.status).toBe('completed');
  });
});
