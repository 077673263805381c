import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

let a: TestApp;
let b: Awaited<ReturnType<typeof startSecondServer>>;
let bUrl: string;
const workers: Worker[] = [];
const quiet = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));

beforeAll(async () => {
  a = await startTestApp();
  // A second server on the same database: its own pool, bus, cache and metrics.
  b = await startSecondServer(a);
  bUrl = b.url;
  for (const url of [a.url, bUrl]) {
    const w = new Worker({ serverUrl: url, token: a.workerToken, concurrency: 4, env: {}, log: quiet, claimWaitMs: 1000 });
    await w.start();
    workers.push(w);
  }
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await b?.close();
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

  it('an execution whose reports alternate between the servers folds the same state on both (stored snapshot + events, hot snapshots)', async () => {
    const steps = 30;
    const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: alt, path: two/alt }
workflow:
${Array.from({ length: steps }, (_, i) => `  - step: s${i}\n    tool: { name: t, kind: noop }\n${i < steps - 1 ? `    next: [{ step: s${i + 1}, set: { total: "{{ (vars.total | default(0)) + steps.s${i}.result }}" } }]\n` : ''}`).join('')}
    next: [{ step: good, when: "{{ vars.total == ${((steps - 1) * (steps - 2)) / 2} and steps.s0.result == 0 }}" }, { step: bad }]
  - step: good
  - step: bad
`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    // The pools above must not take these commands: stop them first.
    for (const w of workers.splice(0)) await w.stop();
    const id = (await http(a.url, 'POST', '/api/run/playbook', { path: 'two/alt' })).body.execution_id;
    let snapshotSeen = 0;
    for (let i = 0; i < steps; i++) {
      const url = i % 2 ? bUrl : a.url;
      const pending = await a.deps.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
      expect(pending.rows).toHaveLength(1);
      const commandId = pending.rows[0].command_id;
      const claim = await http(url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: `hand-${i % 2}` }, asWorker);
      expect(claim.status).toBe(200);
      const done = await http(url, 'POST', '/api/events', {
        execution_id: id, command_id: commandId, attempt: claim.body.attempt, worker_id: `hand-${i % 2}`,
        event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data: i } } },
      }, asWorker);
      expect(done.status).toBe(200);
      const row = (await a.deps.db.query(`SELECT snapshot_event_id, applied_event_id, last_event_id FROM core.execution WHERE execution_id = $1`, [id])).rows[0];
      if (i < steps - 1) {
        expect(row.applied_event_id).toBe(row.last_event_id);
        expect(row.applied_event_id - row.snapshot_event_id).toBeLessThan(64);
        snapshotSeen = Math.max(snapshotSeen, Number(row.snapshot_event_id));
      }
    }
    expect(snapshotSeen).toBeGreaterThan(0);
    const final = (await http(bUrl, 'GET', `/api/executions/${id}`)).body;
    expect(final).toMatchObject({ status: 'completed', progress: 100 });
    // `good` is reached only if vars and every step's outcome were carried across both servers.
    const exits = (await http(a.url, 'GET', `/api/events/${id}`)).body.events.filter((e: Json) => e.event_type === 'step.exit');
    expect(exits.map((e: Json) => e.step)).toEqual([...Array.from({ length: steps }, (_, i) => `s${i}`), 'good']);
    // A finished execution keeps the last snapshot stored while it ran (its state is read from
    // there on), never one of its end: the log is the record of how it finished.
    const sets = (await a.deps.db.query(`SELECT snapshot, snapshot_event_id, last_event_id FROM core.execution WHERE execution_id = $1`, [id])).rows[0];
    expect(Number(sets.snapshot_event_id)).toBe(snapshotSeen);
    expect(Number(sets.snapshot_event_id)).toBeLessThan(Number(sets.last_event_id));
    expect(sets.snapshot).toMatchObject({ value: expect.anything() });
  });

  it('a start uses the newest version even when another server registered it after this one cached the head', async () => {
    const version = (v: number) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ver, path: two/ver }\nworkload: { v: ${v} }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n`;
    const v1 = (await http(a.url, 'POST', '/api/catalog/playbook', { content: version(1) })).body;
    const first = (await http(a.url, 'POST', '/api/run/playbook', { path: 'two/ver' })).body;
    expect(first.catalog_id).toBe(v1.catalog_id);
    const v2 = (await http(bUrl, 'POST', '/api/catalog/playbook', { content: version(2) })).body;
    expect(v2.version).toBe(v1.version + 1);
    // Server a holds v1 as the head in memory: its write's guard sees v2 and the start is redone.
    const second = (await http(a.url, 'POST', '/api/run/playbook', { path: 'two/ver' })).body;
    expect(second.catalog_id).toBe(v2.catalog_id);
    const events: Json[] = (await http(a.url, 'GET', `/api/events/${second.execution_id}`)).body.events;
    expect(events[0]).toMatchObject({ event_id: 1, event_type: 'execution.started' });
    expect(events[0].context.input).toMatchObject({ catalogId: v2.catalog_id, workload: { v: 2 } });
    // The refused write left nothing behind: every execution row has its log, every log its row.
    const orphans = await a.deps.db.query(
      `SELECT (SELECT count(*) FROM core.event e WHERE NOT EXISTS (SELECT 1 FROM core.execution x WHERE x.execution_id = e.execution_id))::int AS events,
              (SELECT count(*) FROM core.execution x WHERE NOT EXISTS (SELECT 1 FROM core.event e WHERE e.execution_id = x.execution_id))::int AS executions`,
    );
    expect(orphans.rows[0]).toEqual({ events: 0, executions: 0 });
  });
});
