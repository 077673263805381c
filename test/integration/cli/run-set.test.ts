// `svc run --set key=value`: each value read as the type the playbook's inputs: declare, and the
// merged workload checked as the server checks it; a refusal names the field and sends nothing.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

let app: TestApp;
let dir: string;
beforeAll(async () => {
  app = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-run-set-'));
});
afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const typed = (path: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: ${path} }
inputs:
  n: { type: integer, required: true }
  ratio: { type: number, default: 0.5 }
  on: { type: boolean }
  tags: { type: array }
workflow:
  - step: start
`;

function svcRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: app.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
}

const executionsOf = async (path: string) => (await app.deps.db.query(`SELECT execution_id FROM core.execution WHERE path = $1`, [path])).rows.length;

describe('svc run --set', () => {
  it('reads each value as its declared type and starts with them', async () => {
    const file = join(dir, 'ok.yaml');
    await writeFile(file, typed('cli/set_ok'));
    const r = await svcRun([file, '--set', 'n=3', '--set', 'on=true', '--set', 'tags=["a"]', '--set', 'note=7', '--json', '--wait']);
    expect(r.code, r.stderr).toBe(0);
    const id = JSON.parse(r.stdout).execution_id;
    const events = (await http(app.url, 'GET', `/api/events/${id}?since_event_id=0`)).body.events;
    const started = JSON.stringify(events.find((e: { event_type: string }) => e.event_type === 'execution.started'));
    for (const part of ['"n":3', '"on":true', '"tags":["a"]', '"note":"7"', '"ratio":0.5']) expect(started).toContain(part);
  });

  it('refuses a value not of its type, or a missing required one, naming the field, before anything is sent', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, typed('cli/set_bad'));
    const wrong = await svcRun([file, '--set', 'n=abc']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('workload.n: must be integer, got "abc"');
    const missing = await svcRun([file, '--set', 'on=1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('workload.on: must be boolean');
    // Every field at once, as the server's 422: the required n left out is named beside it.
    expect(missing.stderr).toContain('workload.n: is required');
    // A program asking for --json reads the refusal on stdout, each field at its path.
    const json = await svcRun([file, '--set', 'n=abc', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 422, stage: 'workload', problems: [{ path: 'workload.n', message: 'must be integer, got "abc"' }] });
    const required = await svcRun([file, '--set', 'ratio=2']);
    expect(required.code).toBe(2);
    expect(required.stderr).toContain('workload.n: is required');
    // Not even registered.
    expect((await http(app.url, 'GET', '/api/catalog/playbook/cli/set_bad')).status).toBe(404);
    expect(await executionsOf('cli/set_bad')).toBe(0);
  });

  it('types --set for a catalog path by the newest version there', async () => {
    expect((await http(app.url, 'POST', '/api/catalog/playbook', { content: typed('cli/set_catalog') })).status).toBe(201);
    const wrong = await svcRun(['cli/set_catalog', '--set', 'n=1.5']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('workload.n: must be integer, got "1.5"');
    expect(await executionsOf('cli/set_catalog')).toBe(0);
    const ok = await svcRun(['cli/set_catalog', '--set', 'n=2']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await executionsOf('cli/set_catalog')).toBe(1);
  });

  it('prints the server 422 naming the field when --payload fails the inputs of a catalog path', async () => {
    const r = await svcRun(['cli/set_catalog', '--payload', '{"n": "x"}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('workload.n: must be integer, got string');
  });
});
