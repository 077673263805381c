// Lifecycle actions started at the same time (deploy and undeploy from two clients) recorded each
// as the server's last action when its request finished, not in the order they started: in 17 of
// 30 rounds of 8 at once the server's last_execution_id (and so its status) was an older action's.
// The newest started action now stays the last one, however the requests finish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
}, 60_000);
afterAll(async () => t?.close());

const playbook = (path: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: step, path: ${path} }
workflow:
  - step: start
    tool:
      - { name: w, kind: noop }
`;
const server = `apiVersion: svc/v1
kind: Mcp
metadata: { name: racing }
endpoint: http://127.0.0.1:1/mcp
lifecycle: { deploy: racing/deploy, undeploy: racing/undeploy }
`;

describe('lifecycle actions started at once', () => {
  it("the server's last action is the newest started, whichever request finishes last", async () => {
    for (const path of ['racing/deploy', 'racing/undeploy']) expect((await http(t.url, 'POST', '/api/catalog/register', { content: playbook(path) })).status).toBe(201);
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: server, resource_type: 'mcp' })).status).toBe(201);
    for (let round = 0; round < 10; round++) {
      const actions = Array.from({ length: 8 }, (_, i) => (i % 2 ? 'undeploy' : 'deploy'));
      const answers = await Promise.all(actions.map((action) => http(t.url, 'POST', `/api/mcp/mcp/racing/lifecycle/${action}`, {})));
      expect(answers.map((a) => a.status)).toEqual(actions.map(() => 202));
      const newest = answers.reduce((a, b) => (Number(b.body.execution_id) > Number(a.body.execution_id) ? b : a));
      const shown = await http(t.url, 'GET', '/api/mcp/servers/racing');
      expect({ round, id: shown.body.last_execution_id, action: shown.body.last_action }).toEqual({ round, id: newest.body.execution_id, action: newest.body.action });
    }
  }, 60_000);
});
