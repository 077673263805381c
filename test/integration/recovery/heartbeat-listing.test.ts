// A worker pool's heartbeat lists every command it holds, including finished ones whose report
// has not been answered yet: the reaper counts a claimed command its pool no longer lists as
// orphaned and lets another worker take it over, so a slow report must not look like a lost command.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let proxy: http.Server;
let proxyUrl: string;
let holdReports = true;
const held: (() => void)[] = [];

beforeAll(async () => {
  t = await startTestApp();
  const target = new URL(t.url);
  // Forwards everything to the server; holds report requests while `holdReports` is set.
  proxy = http.createServer((req, res) => {
    const forward = () => {
      const out = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (holdReports && req.url === '/api/worker/report') held.push(forward);
    else forward();
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  holdReports = false;
  for (const f of held.splice(0)) f();
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  await t?.close();
});

describe('heartbeat listing', () => {
  it('names a finished command until its report is answered', async () => {
    const api = executionApi(t.url);
    await api.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: listing/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n');
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    const worker = new Worker({ token: t.workerToken, serverUrl: proxyUrl, concurrency: 1, env: {}, log: createLogger('silent', sink), claimWaitMs: 500, idleHeartbeatIntervalMs: 100, busyHeartbeatIntervalMs: 100 });
    await worker.start();
    try {
      const id = await api.run('listing/one');
      await until('the report to be held', () => held.length > 0);
      const commandId = (await t.deps.db.query<{ command_id: number }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id])).rows[0].command_id;
      // The command ran; its report waits. Beats heard since still list it.
      const listed = await until('a beat listing the command', async () => {
        const { rows } = await t.deps.db.query<{ held_commands: number[] | null }>(`SELECT held_commands::int[] AS held_commands FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`, [worker.name]);
        return rows[0]?.held_commands?.includes(commandId) ? rows[0].held_commands : undefined;
      }, 5_000);
      expect(listed).toEqual([commandId]);
      await new Promise((r) => setTimeout(r, 400));
      const again = await t.deps.db.query<{ held_commands: number[] }>(`SELECT held_commands::int[] AS held_commands FROM core.runtime WHERE name = $1`, [worker.name]);
      expect(again.rows[0].held_commands).toEqual([commandId]);
      holdReports = false;
      for (const f of held.splice(0)) f();
      expect((await api.wait(id)).status).toBe('completed');
      await until('a beat listing nothing', async () => {
        const { rows } = await t.deps.db.query<{ held_commands: number[] }>(`SELECT held_commands::int[] AS held_commands FROM core.runtime WHERE name = $1`, [worker.name]);
        return rows[0].held_commands.length === 0 ? true : undefined;
      }, 5_000);
    } finally {
      holdReports = false;
      for (const f of held.splice(0)) f();
      await worker.stop();
    }
  });
});
