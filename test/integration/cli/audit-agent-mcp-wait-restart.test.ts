// `svc agent run --wait` and `svc mcp ACTION NAME --wait` through a server restart, as real
// processes: they exited 3 at the first poll the server did not answer, though the execution went
// on (a deploy takes about a minute: a rolling restart fits in it). They now wait for the server
// up to 30 s, saying so on stderr, as svc run --wait and svc logs --follow do, then print the end.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

// An agent no worker runs (this bed has none) and a lifecycle action that waits for a signal.
const AGENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: cli/restart/agent, agent: true }
workflow:
  - step: start
    tool: { name: call, kind: mcp, endpoint: "http://127.0.0.1:9/mcp", method: tools/list }
`;
const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/restart/gate }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
`;
const MCP = `apiVersion: svc/v1
kind: Mcp
metadata: { name: restarted }
endpoint: http://127.0.0.1:9/mcp
lifecycle: { deploy: cli/restart/gate }
`;

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

describe('svc agent run --wait and svc mcp --wait', () => {
  it('wait on through a server restart and print the end', async () => {
    const port = await freePort();
    const first = await bed.server({}, port);
    for (const [resource_type, content] of [['agent', AGENT], ['playbook', GATE], ['mcp', MCP]]) {
      expect((await http(first.base, 'POST', '/api/catalog/register', { resource_type, content })).status).toBe(201);
    }
    const agent = spawnSvc(['agent', 'run', 'cli/restart/agent', '--wait'], { SVC_SERVER_URL: first.base });
    const deploy = spawnSvc(['mcp', 'deploy', 'restarted', '--wait'], { SVC_SERVER_URL: first.base });
    await until('both waiting', () => agent.output().includes('waiting') && deploy.output().includes('restarted: deploying'));
    const agentId = /execution (\d+) started/.exec(agent.output())?.[1];
    const deployId = /execution (\d+)/.exec(deploy.output())?.[1];

    first.proc.kill('SIGTERM');
    await first.proc.exited;
    await until('both lost the server', () => agent.output().includes('still waiting') && deploy.output().includes('still waiting'), 10_000);
    await sleep(1_000);
    const second = await bed.server({}, port);
    expect((await http(second.base, 'POST', `/api/executions/${agentId}/cancel`, {})).status).toBe(200);
    expect((await http(second.base, 'POST', `/api/executions/${deployId}/signals/go`, { payload: {} })).status).toBe(202);

    expect(await withTimeout(agent.exited, 20_000, 'svc agent run')).toBe(1);
    expect(await withTimeout(deploy.exited, 20_000, 'svc mcp deploy')).toBe(0);
    expect(agent.output()).toContain('server reachable again');
    expect(agent.output()).toContain(`execution ${agentId} cancelled`);
    expect(deploy.output()).toContain('server reachable again');
    expect(deploy.output()).toContain('deploy completed');
  }, 90_000);
});
