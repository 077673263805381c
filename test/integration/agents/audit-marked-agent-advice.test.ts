// A playbook marked `metadata.agent: true` but registered as a playbook is refused on both start
// routes (422, docs/agents.md), and POST /api/execute with resource_kind agent answers it 404
// `Executable catalog entry not found`: it is registered as no agent. The 422 said "start it with
// POST /api/execute and resource_kind "agent"", the one request that cannot start it. It now says
// to register it as an agent first; done so, that start works. Real server and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const marked = `apiVersion: svc/v1
kind: Playbook
metadata: { name: marked, path: advice/marked, agent: true }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;

describe('an agent registered as a playbook', () => {
  it('is refused with advice that works: register it as an agent, then execute it as one', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: marked, resource_type: 'playbook' })).status).toBe(201);
    for (const [route, body] of [
      ['/api/run/playbook', { path: 'advice/marked' }],
      ['/api/execute', { path: 'advice/marked' }],
    ] as const) {
      const r = await http(t.url, 'POST', route, body);
      expect(r.status, route).toBe(422);
      expect(r.body.detail.errors).toEqual(['resource_kind: required for agent playbooks']);
      expect(r.body.detail.message, route).toContain('register it as an agent (POST /api/catalog/register with resource_type "agent")');
    }
    // What the old advice alone asked for: no agent is registered at that path.
    const asAgent = { path: 'advice/marked', resource_kind: 'agent', workload: {} };
    const before = await http(t.url, 'POST', '/api/execute', asAgent);
    expect(before.status).toBe(404);
    expect(before.body.detail).toBe('Executable catalog entry not found');
    // The advice followed.
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: marked, resource_type: 'agent' })).status).toBe(201);
    const started = await http(t.url, 'POST', '/api/execute', asAgent);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // Registered as an agent, the refusal says only how to start it.
    const refused = await http(t.url, 'POST', '/api/run/playbook', { path: 'advice/marked' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.message).toBe('advice/marked is an agent playbook: start it with POST /api/execute and resource_kind "agent"');
  });
});
