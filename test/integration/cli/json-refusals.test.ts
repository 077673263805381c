// Every client command given --json puts a refusal on stdout as one JSON object, {error, status,
// detail}, so a program reads why as it reads an answer; the text goes to stderr as without
// --json, and the exit code is the command's own. Before, svc run, triggers, cleanup and catalog
// register did; list, status, logs, cancel, limits, agent, mcp, inspect and events send left stdout empty.
// No answer at all (the server unreachable) is put there the same way, with status null: before,
// only svc agent and mcp did.
import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let t: TestApp;
let dir: string;
/** An address nothing listens on: a port the system handed out, then closed. */
let closed: string;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  const probe = createServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
  const address = probe.address();
  await new Promise<void>((ok) => probe.close(() => ok()));
  closed = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 9}`;
  dir = await mkdtemp(join(tmpdir(), 'svc-json-refusals-'));
  await writeFile(join(dir, 'batch.json'), JSON.stringify({ execution_id: 1, worker_id: 'w', events: [{ event_type: 'command.heartbeat', command_id: 1, attempt: 1 }] }));
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const Refusal = v.strictObject({ error: v.string(), status: v.literal(401), detail: v.string() });

it.each([
  [['list'], 6],
  [['status', '1'], 6],
  [['logs', '1'], 6],
  [['cancel', '1'], 6],
  [['limits', 'list'], 6],
  [['agent', 'list'], 6],
  [['mcp', 'list'], 6],
  [['triggers', 'list'], 6],
  [['inspect', '1'], 6],
  [['events', 'send', 'BATCH'], 6],
])('svc %j --json refused: the refusal on stdout as JSON, its text on stderr', async (args, code) => {
  const argv = [...args.map((a) => (a === 'BATCH' ? join(dir, 'batch.json') : a)), '--json'];
  const r = await runSvc(argv, { SVC_SERVER_URL: t.url, SVC_API_TOKEN: 'svc_not-a-token' });
  expect(r.code, r.stderr).toBe(code);
  const refusal = v.parse(Refusal, JSON.parse(r.stdout));
  expect(refusal.detail).toBe('the API token is unknown or revoked');
  expect(r.stderr).toContain(`${refusal.error}`);
  expect(r.stderr).toContain('HTTP 401 the API token is unknown or revoked');
});

const NoAnswer = v.strictObject({ error: v.string(), status: v.null(), detail: v.null() });

it.each([
  [['list']],
  [['status', '1']],
  [['logs', '1']],
  [['cancel', '1']],
  [['pause', '1']],
  [['limits', 'list']],
  [['agent', 'list']],
  [['mcp', 'list']],
  [['triggers', 'list']],
  [['triggers', 'pause', 'a/b', 'nightly']],
  [['inspect', '1']],
  [['events', 'send', 'BATCH']],
  [['run', 'some/path']],
  [['cleanup', '--older-than-minutes', '5', '--dry-run']],
])('svc %j --json with the server unreachable: {error, status: null, detail: null} on stdout, exit 3', async (args) => {
  const argv = [...args.map((a) => (a === 'BATCH' ? join(dir, 'batch.json') : a)), '--json'];
  const r = await runSvc(argv, { SVC_SERVER_URL: closed });
  expect(r.code, r.stderr).toBe(3);
  const answer = v.parse(NoAnswer, JSON.parse(r.stdout));
  expect(answer.error).toContain('ECONNREFUSED');
  expect(r.stderr).toContain(answer.error);
});
