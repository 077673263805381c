// An MCP server's status while its last lifecycle action has not ended: a paused or a queued
// execution is still under way, never a failed action.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  // One execution at a time (an inline limit): a second deploy is queued behind the first.
  await stack.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow-deploy, path: lifecycle/slow-deploy }
concurrency: { limit: 1 }
workflow:
  - step: start
    wait: { for: 60s }
`);
  const doc = `
apiVersion: svc/v1
kind: Mcp
metadata: { name: slow }
endpoint: http://127.0.0.1:9/mcp
lifecycle: { deploy: lifecycle/slow-deploy }
`;
  const r = await http(stack.url, 'POST', '/api/catalog/register', { content: doc, resource_type: 'mcp' });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
}, 60_000);
afterAll(async () => stack?.close());

const serverStatus = async () => (await http(stack.url, 'GET', '/api/mcp/servers/slow')).body.status;
const executionStatus = async (id: number) => (await http(stack.url, 'GET', `/api/executions/${id}`)).body.status;

describe('an MCP server whose last action has not ended', () => {
  it('reads deploying while the deploy is paused or queued, not deploy_failed', async () => {
    const first = await http(stack.url, 'POST', '/api/mcp/mcp/slow/lifecycle/deploy', {});
    expect(first.status).toBe(202);
    const a = first.body.execution_id;
    await until('the deploy runs', async () => (await executionStatus(a)) === 'running', 10_000);
    expect(await serverStatus()).toBe('deploying');

    expect((await http(stack.url, 'POST', `/api/executions/${a}/pause`, {})).status).toBe(200);
    expect(await executionStatus(a)).toBe('paused');
    expect(await serverStatus()).toBe('deploying');
    expect((await http(stack.url, 'GET', '/api/mcp/servers')).body.items).toEqual([expect.objectContaining({ name: 'slow', status: 'deploying' })]);

    // The first holds the only slot (paused or not): the second waits for admission.
    const second = await http(stack.url, 'POST', '/api/mcp/mcp/slow/lifecycle/deploy', {});
    expect(second.status).toBe(202);
    const b = second.body.execution_id;
    expect(await executionStatus(b)).toBe('queued');
    expect(await serverStatus()).toBe('deploying');

    for (const id of [b, a]) expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
    expect(await serverStatus()).toBe('deploy_failed');
  });
});
