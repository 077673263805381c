// The newest version at a path decides (docs/agents.md): an agent registered again as a plain
// playbook no longer runs as an agent (404). GET /api/agents, what a terminal offers, kept
// listing it (its old version), so the GUI and svc agent list offered an agent that cannot start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
const doc = (agent: boolean, description: string) => `
apiVersion: svc/v1
kind: Playbook
metadata:
  name: flip
  path: agents/flip
  agent: ${agent}
  description: ${description}
  terminal: { visible: true, workspace: demo }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const paths = async () => (await http(a.url, 'GET', '/api/agents')).body.items.map((i: { path: string; version: number }) => `${i.path}@${i.version}`);

beforeAll(async () => {
  a = await startTestApp();
}, 60_000);
afterAll(async () => a?.close());

describe('GET /api/agents after the path was registered again', () => {
  it('lists the agent only while its newest version is the agent: as a plain playbook it is gone, as an agent again it is back', async () => {
    expect((await http(a.url, 'POST', '/api/catalog/register', { content: doc(true, 'first'), resource_type: 'agent' })).status).toBe(201);
    expect(await paths()).toEqual(['agents/flip@1']);

    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: doc(false, 'plain now') })).status).toBe(201);
    expect((await http(a.url, 'POST', '/api/execute', { path: 'agents/flip', resource_kind: 'agent', workload: {} })).status).toBe(404);
    expect(await paths()).toEqual([]);

    expect((await http(a.url, 'POST', '/api/catalog/register', { content: doc(true, 'again'), resource_type: 'agent' })).status).toBe(201);
    expect(await paths()).toEqual(['agents/flip@3']);
    expect((await http(a.url, 'POST', '/api/execute', { path: 'agents/flip', resource_kind: 'agent', workload: {} })).status).toBe(200);
  });
});
