// `svc run FILE` registered every file as a plain playbook: run on an agent playbook's file
// (metadata.agent: true, registered as an agent by `svc catalog register`) it stored a new version
// of kind playbook, which runs neither way (docs/agents.md), so the agent stopped answering
// POST /api/execute. The file now goes the way its document says, as `svc catalog register` sends it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;
let file: string;

beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-run-agent-'));
  file = join(dir, 'agent.yaml');
  await writeFile(
    file,
    'apiVersion: svc/v1\nkind: Playbook\nmetadata:\n  name: run-agent\n  path: agents/run\n  agent: true\n  terminal: { visible: true, workspace: run }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n',
  );
}, 60_000);
afterAll(async () => {
  await a?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('svc run of an agent playbook file', () => {
  it('leaves the agent an agent: no playbook version is made, and it still runs as one', async () => {
    expect((await runSvc(['catalog', 'register', file], { SVC_SERVER_URL: a.url })).code).toBe(0);
    const r = await runSvc(['run', file], { SVC_SERVER_URL: a.url });
    // An agent starts only through POST /api/execute: the start is refused, saying so.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('agent');
    expect(r.stdout).toContain('agents/run version 1 unchanged');
    const versions = await http(a.url, 'GET', '/api/catalog/playbook/agents/run/versions');
    expect(versions.body.versions.map((x: { version: number; kind: string }) => [x.version, x.kind])).toEqual([[1, 'agent']]);
    expect((await http(a.url, 'POST', '/api/execute', { path: 'agents/run', resource_kind: 'agent', workload: {} })).status).toBe(200);
  });
});
