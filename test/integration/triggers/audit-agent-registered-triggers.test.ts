// A document registered as an agent (POST /api/catalog/register, resource_type "agent") without
// metadata.agent: true had its triggers registered, and a fire started the agent (202, execution
// 1) though it runs only via POST /api/execute with resource_kind "agent" (POST /api/run/playbook
// answers it 422) and docs/triggers.md says no trigger may start an agent. Registration now
// refuses its triggers as it refuses those of a document marked metadata.agent: a 400 problem at
// `triggers`, nothing registered, no trigger live.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const document = (triggers: string) => `apiVersion: svc/v1
metadata: { name: helper, path: audit/agent-triggers }
${triggers}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const WITH_TRIGGERS = document(`triggers:\n  - { name: nightly, kind: schedule, cron: "@daily" }`);
const listed = async () => (await http(a.url, 'GET', '/api/triggers')).body.triggers.map((t: { path: string; name: string }) => `${t.path} ${t.name}`);

describe('triggers of a document registered as an agent', () => {
  it('are a 400 problem at triggers: nothing registered, no trigger live, nothing fired', async () => {
    const res = await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: WITH_TRIGGERS });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.detail).toMatchObject({ code: 'invalid_playbook', problems: [{ path: 'triggers', message: expect.stringContaining('resource_kind "agent": no trigger may start it'), line: 3 }] });
    expect((await http(a.url, 'GET', '/api/catalog/playbook/audit/agent-triggers')).status).toBe(404);
    expect(await listed()).toEqual([]);
    expect((await http(a.url, 'POST', '/api/triggers/audit/agent-triggers/nightly/fire', {})).status).toBe(404);
  });

  it('a playbook with triggers made an agent by a new version keeps its triggers only if that version has none', async () => {
    expect((await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'playbook', content: WITH_TRIGGERS })).status).toBe(201);
    expect(await listed()).toEqual(['audit/agent-triggers nightly']);
    // The same document as an agent: refused, the playbook's version and triggers stay.
    expect((await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: WITH_TRIGGERS })).status).toBe(400);
    expect((await http(a.url, 'GET', '/api/catalog/playbook/audit/agent-triggers')).body).toMatchObject({ version: 1, kind: 'playbook' });
    // An agent without triggers registers, and its path has none live.
    const agent = await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: document('') });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    expect(agent.body).toMatchObject({ version: 2, kind: 'agent' });
    expect(await listed()).toEqual([]);
  });
});
