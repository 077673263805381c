// `svc run --payload` and `svc signal --data` took JSON only as typed on the command line, so a
// payload holding a secret (a token for the run) sat in /proc/<pid>/cmdline, which every user of
// the machine reads (ps), for as long as `svc run --wait` ran. `@FILE` reads it from a file, `@-`
// from standard input; a file that cannot be read is a usage error naming it, and nothing starts.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { NODE24, ROOT, runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-payload-file-'));
  await writeFile(join(dir, 'gate.yaml'), `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: audit/payload_file }
workflow:
  - step: gate
    wait: { signal: go }
`);
}, 60_000);
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SECRET = 'tok-5f1e0c7a9d2b';
const env = () => ({ SVC_SERVER_URL: app.url });
const executions = async () => (await app.deps.db.query<{ execution_id: number }>(`SELECT execution_id FROM core.execution WHERE path = 'audit/payload_file' ORDER BY execution_id`)).rows.map((r) => r.execution_id);
const eventOf = async (id: number, type: string) => (await app.deps.db.query<{ context: unknown; result: unknown }>(`SELECT context, result FROM core.event WHERE execution_id = $1 AND event_type = $2`, [id, type])).rows[0];

it('svc run --payload @- and svc signal --data @FILE: the values arrive, the command lines hold neither', async () => {
  const run = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', join(dir, 'gate.yaml'), '--payload', '@-', '--wait'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env() }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  run.stdout.on('data', (c) => (out += String(c)));
  run.stderr.on('data', (c) => (out += String(c)));
  const closed = new Promise<number | null>((ok) => run.on('close', ok));
  run.stdin.end(JSON.stringify({ token: SECRET }));
  const [id] = await until('the execution started', async () => {
    const ids = await executions();
    return ids.length ? ids : undefined;
  }, 20_000, 50);
  // Waiting for its signal: svc run --wait is still running, its command line as ps shows it.
  const cmdline = await readFile(`/proc/${run.pid}/cmdline`, 'utf8');
  expect(cmdline).toContain('@-');
  expect(cmdline).not.toContain(SECRET);
  expect(JSON.stringify(await eventOf(id, 'execution.started'))).toContain(SECRET);

  await writeFile(join(dir, 'approval.json'), '{"approved": true, "note": "from a file"}');
  const signalled = await runSvc(['signal', String(id), 'go', '--data', `@${join(dir, 'approval.json')}`], env());
  expect(signalled.stderr).toBe('');
  expect(signalled.code).toBe(0);
  expect((await eventOf(id, 'signal.received')).result).toEqual({ approved: true, note: 'from a file' });
  expect(await closed, out).toBe(0);
}, 60_000);

it('a file that cannot be read is a usage error naming it; nothing starts', async () => {
  const before = await executions();
  const missing = join(dir, 'nope.json');
  const r = await runSvc(['run', join(dir, 'gate.yaml'), '--payload', `@${missing}`], env());
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`--payload @${missing}: cannot read the file (ENOENT)`);
  const empty = await runSvc(['run', join(dir, 'gate.yaml'), '--payload', '@'], env());
  expect(empty.code).toBe(2);
  expect(empty.stderr).toContain('--payload @FILE expects a file name after the @ (@- reads standard input)');
  await writeFile(join(dir, 'list.json'), '[1, 2]');
  const list = await runSvc(['triggers', 'fire', 'audit/payload_file', 'nightly', '--payload', `@${join(dir, 'list.json')}`], env());
  expect(list.code).toBe(2);
  expect(list.stderr).toContain(`--payload must be a JSON object like '{"day": "2026-01-31"}', got an array`);
  // Not JSON: the parser's words quote the text, the secret it holds with it; only where is said.
  await writeFile(join(dir, 'broken.json'), `{"token": ${SECRET}}`);
  const broken = await runSvc(['run', join(dir, 'gate.yaml'), '--payload', `@${join(dir, 'broken.json')}`], env());
  expect(broken.code).toBe(2);
  expect(broken.stderr).toContain(`--payload is not valid JSON (in ${join(dir, 'broken.json')}, not quoted here)`);
  expect(broken.stderr).not.toContain(SECRET);
  await writeFile(join(dir, 'approval.json'), `{"token": "${SECRET}",}`);
  const signal = await runSvc(['signal', '1', 'go', '--data', `@${join(dir, 'approval.json')}`], env());
  expect(signal.code).toBe(2);
  expect(signal.stderr).toContain(`--data is not valid JSON (at line 1 column ${SECRET.length + 14} of ${join(dir, 'approval.json')})`);
  expect(signal.stderr).not.toContain(SECRET);
  expect(await executions()).toEqual(before);
}, 60_000);
