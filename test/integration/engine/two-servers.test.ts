import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { buildApp } from '../../../src/app.ts';
import { createPostgresBus } from '../../../src/bus/postgres.ts';
import { loadConfig } from '../../../src/config.ts';
import { Db } from '../../../src/db/db.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import type { FastifyInstance } from 'fastify';

let a: TestApp;
let bApp: FastifyInstance;
let bDb: Db;
let bUrl: string;
const workers: Worker[] = [];
const quiet = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));

beforeAll(async () => {
  a = await startTestApp();
  // A second server on the same database: its own pool, bus, cache and metrics.
  bDb = new Db(a.databaseUrl, 10);
  bApp = await buildApp({
    config: a.deps.config,
    db: bDb,
    log: quiet,
    metrics: createMetrics(),
    keyring: a.deps.keyring,
    cache: new PlaybookCache(),
    bus: await createPostgresBus(bDb),
  });
  bUrl = await bApp.listen({ port: 0, host: '127.0.0.1' });
  for (const url of [a.url, bUrl]) {
    const w = new Worker({ serverUrl: url, concurrency: 4, env: {}, log: quiet, claimWaitMs: 1000 });
    await w.start();
    workers.push(w);
  }
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await bApp?.close();
  await bDb?.close();
  await a?.close();
});

describe('two servers on one database', () => {
  it('never both advance one execution: every run completes with a clean, ordered log', async () => {
    const steps = 5;
    const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: chain, path: two/chain }
workflow:
${Array.from({ length: steps }, (_, i) => `  - step: s${i}\n    tool: { name: t, kind: noop }\n${i < steps - 1 ? `    next: s${i + 1}\n` : ''}`).join('')}`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push((await http(i % 2 ? bUrl : a.url, 'POST', '/api/run/playbook', { path: 'two/chain' })).body.execution_id);
    for (const id of ids) {
      let status: Json;
      for (let n = 0; n < 400; n++) {
        status = (await http(a.url, 'GET', `/api/executions/${id}`)).body;
        if (status.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(status!.status).toBe('completed');
      const events: Json[] = (await http(bUrl, 'GET', `/api/events/${id}`)).body.events;
      expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((e) => e.event_type === 'step.exit').map((e) => e.step)).toEqual(Array.from({ length: steps }, (_, i) => `s${i}`));
      const seqs = events.filter((e) => e.event_type === 'command.issued').map((e) => e.context.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(events.filter((e) => e.event_type === 'playbook.completed')).toHaveLength(1);
    }
  });
});
