// An MCP server's lifecycle action starts its playbook as a plain playbook, so it refuses an agent
// playbook as POST /api/run/playbook does (docs/agents.md): one marked `metadata.agent: true` but
// stored as a plain playbook "runs neither way", and one registered as an agent runs only as one
// (POST /api/execute, resource_kind agent). Before, a lifecycle action started either (202).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const playbook = (path: string, agent: boolean) => `apiVersion: svc/v1
kind: Playbook
metadata:
  name: ${path.replace(/\W/g, '_')}
  path: ${path}
${agent ? '  agent: true\n' : ''}workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const register = async (body: Record<string, unknown>) => {
    const r = await http(t.url, 'POST', '/api/catalog/register', body);
    if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  // Marked as an agent, stored as a plain playbook: registered with a warning that it runs neither way.
  const marked = await register({ content: playbook('lc/marked', true), resource_type: 'playbook' });
  expect(JSON.stringify(marked)).toMatch(/agent/);
  await register({ content: playbook('lc/agent', true), resource_type: 'agent' });
  await register({ content: playbook('lc/plain', false), resource_type: 'playbook' });
  await register({
    resource_type: 'mcp',
    content: `apiVersion: svc/v1
kind: Mcp
metadata: { name: lc }
endpoint: http://127.0.0.1:9/mcp
lifecycle: { deploy: lc/marked, restart: lc/agent, status: lc/plain }
`,
  });
});
afterAll(async () => t?.close());

const executions = async () => Number((await t.deps.db.query(`SELECT count(*)::int AS n FROM core.execution`)).rows[0].n);
const lastAction = async () => (await t.deps.db.query(`SELECT last_action, last_execution_id FROM core.resource WHERE kind = 'mcp' AND name = 'lc'`)).rows[0];

describe('an MCP lifecycle action whose playbook is an agent', () => {
  it('is refused as POST /api/run/playbook refuses it, starting nothing, for a marked one stored as a plain playbook and for a registered agent', async () => {
    for (const [action, path] of [
      ['deploy', 'lc/marked'],
      ['restart', 'lc/agent'],
    ]) {
      const run = await http(t.url, 'POST', '/api/run/playbook', { path, payload: {} });
      expect(run.status).toBe(422);
      const before = await executions();
      const recorded = JSON.stringify(await lastAction());
      const r = await http(t.url, 'POST', `/api/mcp/mcp/lc/lifecycle/${action}`, {});
      expect(r.status).toBe(422);
      expect(r.body.code).toBe(run.body.code);
      expect(r.body.detail).toEqual(run.body.detail);
      expect(await executions()).toBe(before);
      // No dispatch recorded: the server's status does not follow an action that never ran.
      expect(JSON.stringify(await lastAction())).toBe(recorded);
    }
  });

  it('still starts a plain playbook', async () => {
    const r = await http(t.url, 'POST', '/api/mcp/mcp/lc/lifecycle/status', {});
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ server: 'lc', action: 'status', status: 'started', path: 'lc/plain' });
  });
});
