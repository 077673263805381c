// Every report can be stored, or fails its command (issue 10, item 3 and fault 4): a real
// `svc worker` against a real server. Output with NUL and lone surrogates (shell, http, postgres)
// is escaped and flagged, and the execution completes; a report whose tasks together come to more
// than the server's body limit is held to it (the largest outcomes fail `response_too_large`) and
// stored at the first try; a report the server refuses fails its command with `report_rejected`
// after one refusal, not a retry loop; and the worker then drains at SIGTERM at once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimitBytes } from '../../../src/body-limit.ts';
import { loadConfig } from '../../../src/config.ts';
import { NUL_ESCAPE } from '../../../src/worker/storable.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

const SHELL_OUTPUT_LIMIT_BYTES = DEFAULT_SHELL_SETTINGS.outputBytes;

// A drained worker with nothing left to report exits well within this.
const PROMPT_DRAIN_MS = 5_000;

let t: TestApp;
let api: ExecutionApi;
let target: HttpTarget;
let db: pg.Client;
let worker: WorkerProcess | undefined;
/** Status of every answered POST /api/worker/report, in order. */
const reportAnswers: number[] = [];

beforeAll(async () => {
  target = await startHttpTarget((req, res, recorded) => {
    if (recorded.path === '/nul-json') {
      // Escapes in JSON text that parse to a NUL and to a lone surrogate, in a value and in a key.
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"a\\u0000b","k\\u0000ey":1,"lone":"x\\ud800y"}');
    } else if (recorded.path === '/big-int') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1152921504606846977,"safe":9007199254740991}');
    } else if (recorded.path === '/nul-text') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.from('before\0after'));
    }
  });
  t = await startTestApp();
  api = executionApi(t.url);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  t.app.server.on('request', (req, res) => {
    if (req.url === '/api/worker/report') res.once('finish', () => reportAnswers.push(res.statusCode));
  });
}, 120_000);
afterAll(async () => {
  await worker?.kill();
  await db?.end();
  await t?.close();
  await target?.close();
});

const startWorker = async () => {
  worker = await startWorkerProcess(t.url, { concurrency: 2, env: { SVC_ALLOW_SERVICE_DB_TASKS: 'true', SVC_DATABASE_URL: t.databaseUrl } });
  return worker;
};

async function drainsPromptly(w: WorkerProcess): Promise<void> {
  const started = Date.now();
  expect(await w.stop(PROMPT_DRAIN_MS)).toBe(0);
  expect(Date.now() - started).toBeLessThan(PROMPT_DRAIN_MS);
}

const completedTasks = async (id: number) => {
  const done = (await api.events(id)).filter((e: { event_type: string }) => e.event_type === 'command.completed');
  return Object.assign({}, ...done.map((e: { result: { tasks: object } }) => e.result.tasks));
};

describe('reports with output PostgreSQL cannot hold', () => {
  it('a shell, http and postgres task returning NUL and lone surrogates complete, escaped and flagged', async () => {
    const w = await startWorker();
    await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: nul, path: storable/nul }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - { name: json, kind: http, url: "{{ workload.base }}/nul-json" }
      - { name: text, kind: http, url: "{{ workload.base }}/nul-text" }
      - { name: sql, kind: postgres, command: "SELECT '{\\"v\\": \\"p\\\\u0000q\\", \\"s\\": \\"\\\\udc00\\"}'::json AS j" }
      - { name: nul, kind: shell, command: "printf 'a\\\\000b'" }
`);
    const id = await api.run('storable/nul');
    const execution = await api.wait(id, 20_000);
    expect(execution.status).toBe('completed');
    expect(execution.result).toEqual({ exit_code: 0, stdout: `a${NUL_ESCAPE}b`, stderr: '' });

    const tasks = await completedTasks(id);
    expect(tasks.nul.escaped).toEqual(['data.stdout']);
    expect(tasks.json.data.body).toEqual({ text: `a${NUL_ESCAPE}b`, [`k${NUL_ESCAPE}ey`]: 1, lone: 'x\ufffdy' });
    expect(tasks.json.escaped).toEqual(['data.body.text', `data.body.k${NUL_ESCAPE}ey`, 'data.body.lone']);
    expect(tasks.text.data.body).toBe(`before${NUL_ESCAPE}after`);
    expect(tasks.sql.data.rows).toEqual([{ j: { v: `p${NUL_ESCAPE}q`, s: '\ufffd' } }]);
    expect(tasks.sql.escaped).toEqual(['data.rows.0.j.v', 'data.rows.0.j.s']);
    // Stored as written: PostgreSQL holds the escaped text.
    const stored = await db.query(`SELECT result->'tasks'->'nul'->'data'->>'stdout' AS stdout FROM core.event WHERE execution_id = $1 AND event_type = 'command.completed'`, [id]);
    expect(stored.rows.map((r) => r.stdout)).toContain(`a${NUL_ESCAPE}b`);
    expect(reportAnswers.every((s) => s === 200)).toBe(true);
    await drainsPromptly(w);
  });
});

describe('output with integers past 2^53', () => {
  // The http tool reads JSON numbers exactly (src/exact-json.ts): one a double would change comes
  // as its own text, as a bigint column's does, so nothing is rounded nor escaped for storing.
  it('an http task answering one completes, the integer kept as its exact text', async () => {
    const w = await startWorker();
    await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: big-int, path: storable/big-int }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool: { name: ids, kind: http, url: "{{ workload.base }}/big-int" }
`);
    const before = reportAnswers.length;
    const id = await api.run('storable/big-int');
    expect((await api.wait(id, 20_000)).status).toBe('completed');
    const tasks = await completedTasks(id);
    expect(tasks.ids.data.body).toEqual({ id: '1152921504606846977', safe: 9007199254740991 });
    expect(tasks.ids.escaped).toBeUndefined();
    expect(reportAnswers.slice(before).every((s) => s === 200)).toBe(true);
    await drainsPromptly(w);
  });
});

describe('a report over the server body limit', () => {
  it('is held to it: the largest outcomes fail response_too_large, the report is stored at once and the worker drains at once', async () => {
    const w = await startWorker();
    // Each task reports both of its streams in full: enough tasks take the report past the body limit
    // (each within its own cap: it used to fail report_rejected, every outcome lost).
    const tasks = Math.ceil(bodyLimitBytes(loadConfig({})) / (2 * SHELL_OUTPUT_LIMIT_BYTES)) + 1;
    const big = `head -c ${SHELL_OUTPUT_LIMIT_BYTES} /dev/zero | tr '\\\\0' x; head -c ${SHELL_OUTPUT_LIMIT_BYTES} /dev/zero | tr '\\\\0' y >&2`;
    await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: big, path: storable/big }
workflow:
  - step: start
    tool:
${Array.from({ length: tasks }, (_, i) => `      - { name: t${i}, kind: shell, command: "${big}" }`).join('\n')}
`);
    const before = reportAnswers.length;
    const id = await api.run('storable/big');
    const execution = await api.wait(id, 30_000);
    expect(execution.status).toBe('failed');
    const failed = (await api.events(id)).find((e: { event_type: string }) => e.event_type === 'command.failed');
    expect(failed.error).toMatchObject({ code: 'response_too_large' });
    // The outcomes cut are the last ones (equal in size); the others are kept whole.
    const outcomes = Object.values(failed.result.tasks as Record<string, { status: string; data: { stdout?: string } | null }>);
    expect(outcomes[0]).toMatchObject({ status: 'ok', data: { stdout: 'x'.repeat(SHELL_OUTPUT_LIMIT_BYTES) } });
    expect(outcomes.at(-1)).toMatchObject({ status: 'error', data: null, error: { code: 'response_too_large' } });
    const command = await db.query('SELECT status FROM core.command WHERE execution_id = $1', [id]);
    expect(command.rows).toEqual([{ status: 'FAILED' }]);

    // One report, stored; then nothing more, however long we wait.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(reportAnswers.slice(before)).toEqual([200]);
    await drainsPromptly(w);
    expect(w.output()).not.toContain('report_rejected');
  });
});

describe('a server that refuses even the failure', () => {
  it('gets the report and the report_rejected failure once each; the worker drops the command and drains', async () => {
    // A stand-in server that speaks the worker protocol: it hands out one command and refuses
    // (422) every report, as an input guard would refuse something it cannot store.
    const reports: { events: { event_type: string; error?: unknown }[] }[] = [];
    let handedOut = false;
    const fake = await startHttpTarget((req, res, recorded) => {
      const answer = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (recorded.path === '/api/worker/claim') {
        if (handedOut) return new Promise<void>((r) => setTimeout(() => r(answer(200, { commands: [] })), 200));
        handedOut = true;
        const command = { command_id: 7, execution_id: 3, catalog_id: 1, path: 'x', step: 'start', seq: 1, loop_index: null, status: 'CLAIMED', attempt: 1, worker_id: 'w', tasks: [{ name: 'n', kind: 'noop' }], context: {}, keychain: [] };
        return answer(200, { commands: [command] });
      }
      if (recorded.path === '/api/worker/report') {
        reports.push(JSON.parse(recorded.body));
        return answer(422, { detail: { code: 'invalid_input', message: 'events[0].context: not storable' } });
      }
      if (recorded.path.startsWith('/api/worker/pool/')) return answer(200, { status: 'ok', name: 'w', cancelled: [] });
    });
    try {
      const w = await startWorkerProcess(fake.url, { concurrency: 1 });
      await until('the report and its failure are refused', () => reports.length >= 2, 10_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(reports.map((r) => r.events.map((e) => e.event_type))).toEqual([['command.started', 'call.done', 'command.completed'], ['command.failed']]);
      expect(reports[1].events[0].error).toEqual({ code: 'report_rejected', message: "the server refused this command's report (HTTP 422): invalid_input: events[0].context: not storable" });
      await drainsPromptly(w);
      expect(w.output()).toContain('report_rejected failure of command 7 refused by the server too; dropped');
    } finally {
      await fake.close();
    }
  });
});
