// metadata.terminal is the block GET /api/agents reads (visible, workspace, scopes, capabilities).
// Metadata is loose (labels of other tools), so a misspelt field there was stored in silence, and a
// `visibel: true` agent was simply missing from the terminal. Registration now says so.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => a?.close());

const agent = (path: string, terminal: string) => `
apiVersion: svc/v1
kind: Playbook
metadata:
  name: n
  path: ${path}
  agent: true
  terminal: ${terminal}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

it('warns at registration of a metadata.terminal field the terminal does not read, naming the close one', async () => {
  const typo = await http(a.url, 'POST', '/api/catalog/register', { content: agent('agents/typo', '{ visibel: true, workspace: demo, colour: red }'), resource_type: 'agent' });
  expect(typo.status).toBe(201);
  expect([...typo.body.warnings].sort()).toEqual([
    'metadata.terminal.colour is not a field the agents terminal reads (known: visible, workspace, scopes, capabilities): it has no effect',
    "metadata.terminal.visibel is not a field the agents terminal reads (did you mean 'visible'?): it has no effect",
  ]);
  // What the typo costs: the agent is not offered.
  expect((await http(a.url, 'GET', '/api/agents')).body.items).toEqual([]);
  // The fields it reads draw no warning.
  const good = await http(a.url, 'POST', '/api/catalog/register', { content: agent('agents/good', '{ visible: true, workspace: demo, scopes: [a], capabilities: [tools/list] }'), resource_type: 'agent' });
  expect(good.body.warnings).toEqual([]);
  expect((await http(a.url, 'GET', '/api/agents')).body.items.map((i: { path: string }) => i.path)).toEqual(['agents/good']);
});
