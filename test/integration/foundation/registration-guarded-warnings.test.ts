// Registration answers a warning for a guarded read that no run can define (`outcome` in a task's
// field under `| default('')`, always ''): both registration routes, with the document stored; and
// `svc catalog register` prints it at its line and column (src/dsl/static-reference-problems.ts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;
beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-guarded-'));
});
afterAll(async () => {
  await a?.close();
  await rm(dir, { recursive: true, force: true });
});

const doc = (path: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: g, path: ${path} }
workflow:
  - step: notify
    tool:
      name: t
      kind: shell
      command: echo "$MSG"
      env:
        MSG: "{{ outcome.error.message | default('') }}"
`;
const WARNING = "workflow[0].tool.env.MSG: 'outcome' is never defined here (a task's field reads workload, args, vars, steps, execution, tasks, keychain): its | default(...) or is defined always takes the undefined side";

it('answers a warning for a guarded read no run defines, and stores the playbook', async () => {
  const one = await http(a.url, 'POST', '/api/catalog/playbook', { content: doc('g/one'), path: 'g/one' });
  expect(one.status).toBe(201);
  expect(one.body.warnings).toEqual([WARNING]);
  const two = await http(a.url, 'POST', '/api/catalog/register', { content: doc('g/two'), resource_type: 'playbook' });
  expect(two.status).toBe(201);
  expect(two.body.warnings).toEqual([WARNING]);
  expect((await http(a.url, 'GET', '/api/catalog/playbook/g/one')).status).toBe(200);
});

it('is printed by svc catalog register at its line and column', async () => {
  const file = join(dir, 'g.yaml');
  await writeFile(file, doc('g/cli'));
  const r = await runSvc(['catalog', 'register', file], { SVC_SERVER_URL: a.url });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`${file}:11:9: warning: ${WARNING}`);
});
