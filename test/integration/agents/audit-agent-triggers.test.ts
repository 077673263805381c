// An agent playbook (metadata.agent: true) runs only via POST /api/execute with resource_kind agent
// (docs/playbook-dsl.md), yet its own `triggers:` were taken and fired it: a schedule or a webhook
// started an agent no one asked for as one, past the resource_kind check (a fire has no kind).
// Its triggers are now refused at registration, whichever resource_type, naming the field;
// `triggers: []` is none and is taken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const doc = (path: string, agent: boolean, triggers: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.split('/').at(-1)}, path: ${path}${agent ? ', agent: true' : ''} }
${triggers}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const schedule = 'triggers: [ { name: every, kind: schedule, cron: "* * * * *" } ]';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('triggers of an agent playbook', () => {
  it.each(['agent', 'playbook'])('are refused at registration as %s, naming triggers, nothing stored', async (resourceType) => {
    const path = `agents/trig-${resourceType}`;
    const r = await http(t.url, 'POST', '/api/catalog/register', { resource_type: resourceType, content: doc(path, true, schedule) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.detail.errors).toEqual([expect.stringMatching(/^triggers: .*agent.*POST \/api\/execute/)]);
    expect((await http(t.url, 'GET', `/api/catalog/playbook/${path}`)).status).toBe(404);
    const live = await t.deps.db.query(`SELECT count(*)::int AS n FROM core.catalog WHERE path = $1`, [path]);
    expect(live.rows[0].n).toBe(0);
  });

  it('an agent with triggers: [] and a plain playbook with triggers are taken', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content: doc('agents/trig-none', true, 'triggers: []') })).status).toBe(201);
    expect((await http(t.url, 'POST', '/api/catalog/register', { resource_type: 'playbook', content: doc('plain/trig', false, schedule) })).status).toBe(201);
  });
});
