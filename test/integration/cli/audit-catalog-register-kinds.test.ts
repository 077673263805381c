// `svc catalog register FILE` sent every file to POST /api/catalog/playbook: an MCP server
// document (kind Mcp) was refused with a playbook's problems, and an agent playbook
// (metadata.agent: true) was stored as a plain one, which runs neither way (docs/agents.md), with
// the server's warning to register it through POST /api/catalog/register: no svc command could.
// Each file now goes the way its document says: kind Mcp as an MCP server, an agent as an agent.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;

beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-catalog-'));
  await writeFile(join(dir, 'tools.mcp.yaml'), 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: cli-tools }\nendpoint: http://127.0.0.1:9/mcp\n');
  await writeFile(
    join(dir, 'agent.yaml'),
    'apiVersion: svc/v1\nkind: Playbook\nmetadata:\n  name: cli-agent\n  path: agents/cli\n  agent: true\n  terminal: { visible: true, workspace: cli }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n',
  );
  await writeFile(join(dir, 'plain.yaml'), 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: plain, path: cli/plain }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n');
}, 60_000);
afterAll(async () => {
  await a?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('svc catalog register of an MCP server document, an agent and a playbook', () => {
  it('registers each as its document says: the server, the agent (it runs as one) and the playbook', async () => {
    const files = ['tools.mcp.yaml', 'agent.yaml', 'plain.yaml'].map((f) => join(dir, f));
    const r = await runSvc(['catalog', 'register', ...files, '--json'], { SVC_SERVER_URL: a.url });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.path, l.kind])).toEqual([
      ['mcp/cli-tools', 'mcp'],
      ['agents/cli', 'agent'],
      ['cli/plain', 'playbook'],
    ]);
    expect((await http(a.url, 'GET', '/api/mcp/servers/cli-tools')).body).toMatchObject({ name: 'cli-tools', endpoint: 'http://127.0.0.1:9/mcp' });
    expect((await http(a.url, 'POST', '/api/execute', { path: 'agents/cli', resource_kind: 'agent', workload: {} })).status).toBe(200);
    expect((await http(a.url, 'GET', '/api/agents?workspace=cli')).body.items).toEqual([expect.objectContaining({ path: 'agents/cli' })]);
  });

  it('prints what became of each file for people', async () => {
    const r = await runSvc(['catalog', 'register', join(dir, 'tools.mcp.yaml')], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mcp\/cli-tools version 1 unchanged \(.*tools\.mcp\.yaml\)\n$/);
  });
});
