// The MCP lifecycle loop on one machine, as a user would try it: the shipped example playbooks
// (examples/mcp/local-*.yaml) deploy the shipped SDK server (examples/mcp/demo-server.mjs) as a
// real process through a real `svc worker`, an agent calls it by name, the CLI reports and
// undeploys it, and the process is gone.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { http } from '../../helpers/http.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import { ROOT, runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let stateDir: string;
let port: number;


const svc = (args: string[]) => runSvc(args, { SVC_SERVER_URL: stack.url });
const serverStatus = async (name: string) => (await http(stack.url, 'GET', `/api/mcp/servers/${name}`)).body.status as string;
const pidOf = async () => Number((await readFile(join(stateDir, 'pid'), 'utf8')).trim());
const healthy = async () => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  // The example deploys a local server that outlives its task and keeps state on the host: a
  // worker with SVC_SHELL_SANDBOX=off, as such deployments need (examples/mcp/local-deploy.yaml).
  stack = await startWorkerStack({ workerEnv: { SVC_SHELL_SANDBOX: 'off' } });
  stateDir = await mkdtemp(join(tmpdir(), 'svc-mcp-demo-'));
  port = await freePort();
  for (const file of ['local-deploy', 'local-undeploy', 'local-status']) {
    await stack.register(await readFile(join(ROOT, 'examples/mcp', `${file}.yaml`), 'utf8'));
  }
  const agent = await http(stack.url, 'POST', '/api/catalog/register', { content: await readFile(join(ROOT, 'examples/agents/mcp-agent.yaml'), 'utf8'), resource_type: 'agent' });
  expect(agent.status).toBe(201);
  // The shipped document, pointed at a free port, a temporary state directory and the script's absolute path.
  const doc = load(await readFile(join(ROOT, 'examples/mcp/demo.mcp.yaml'), 'utf8')) as Record<string, Record<string, unknown>>;
  doc.endpoint = `http://127.0.0.1:${port}/mcp` as never;
  doc.config = { script: join(ROOT, 'examples/mcp/demo-server.mjs'), port, state_dir: stateDir };
  const r = await http(stack.url, 'POST', '/api/catalog/register', { content: dump(doc), resource_type: 'mcp' });
  expect(r.status).toBe(201);
}, 60_000);

afterAll(async () => {
  const pid = await pidOf().catch(() => 0);
  if (pid && processAlive(pid)) process.kill(pid, 'SIGKILL');
  await stack?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('lifecycle dispatch', () => {
  it('answers 404 with detail for an unknown server or action', async () => {
    const noServer = await http(stack.url, 'POST', '/api/mcp/mcp/nowhere/lifecycle/deploy', {});
    expect(noServer.status).toBe(404);
    expect(noServer.body.detail).toContain("MCP server 'nowhere' not found");
    const noAction = await http(stack.url, 'POST', '/api/mcp/mcp/demo/lifecycle/explode', {});
    expect(noAction.status).toBe(404);
    expect(noAction.body.detail).toBe("MCP server 'demo' has no lifecycle action 'explode' (its actions: deploy, undeploy, status)");
    expect(await serverStatus('demo')).toBe('registered');
  });

  it('deploys the example server: 202 at once, then running, and an agent calls it by name', async () => {
    const r = await http(stack.url, 'POST', '/api/mcp/mcp/demo/lifecycle/deploy', {});
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ execution_id: expect.any(Number), server: 'demo', action: 'deploy', status: 'started' });
    expect(['deploying', 'running']).toContain(await serverStatus('demo'));
    const done = await stack.wait(r.body.execution_id, 90_000);
    const log = await readFile(join(stateDir, 'server.log'), 'utf8').catch((e) => String(e));
    expect(done.status, `${JSON.stringify(done.error)}\nserver.log: ${log}`).toBe('completed');
    expect(done.result.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['echo', 'add', 'time']));
    expect(await serverStatus('demo')).toBe('running');
    expect(processAlive(await pidOf())).toBe(true);
    expect(await healthy()).toBe(true);

    const call = await http(stack.url, 'POST', '/api/execute', { path: 'agents/mcp', resource_kind: 'agent', workload: { method: 'tools/call', tool: 'echo', arguments: { text: 'hello demo' } } });
    expect(call.status).toBe(200);
    expect(await stack.wait(call.body.execution_id)).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'hello demo' }] } });
  }, 120_000);

  it('the CLI lists servers and agents, checks status, runs the agent, and undeploys', async () => {
    const list = await svc(['mcp', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+STATUS\s+TRANSPORT\s+ENDPOINT/m);
    expect(list.stdout).toMatch(/^demo\s+running\s+streamable-http\s+http:\/\/127\.0\.0\.1:\d+\/mcp\s+deploy,undeploy,status/m);
    const listJson = await svc(['mcp', 'list', '--json']);
    expect(JSON.parse(listJson.stdout).items[0]).toMatchObject({ name: 'demo', status: 'running' });

    const agents = await svc(['agent', 'list', '--workspace', 'demo']);
    expect(agents.code, agents.stderr).toBe(0);
    expect(agents.stdout).toMatch(/^agents\/mcp\s+mcp-agent\s+demo\s+tools\/list,tools\/call\s+mcp\.tools$/m);

    const run = await svc(['agent', 'run', 'agents/mcp', '--tool', 'add', '--arg', 'a=40', '--arg', 'b=2', '--wait', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 42 } } });

    const status = await svc(['mcp', 'status', 'demo', '--wait']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('status of demo started: execution');
    expect(status.stdout).toMatch(/demo: running/);

    const pid = await pidOf();
    const undeploy = await svc(['mcp', 'undeploy', 'demo', '--wait']);
    expect(undeploy.code, undeploy.stderr + undeploy.stdout).toBe(0);
    expect(undeploy.stdout).toMatch(/demo: stopped/);
    expect(undeploy.stdout).toContain('undeploy completed');
    await until('the demo server process to be gone', () => !processAlive(pid), 10_000);
    expect(await healthy()).toBe(false);
    expect(await serverStatus('demo')).toBe('stopped');

    const after = await svc(['mcp', 'status', 'demo', '--wait', '--json']);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout)).toMatchObject({ action: 'status', execution_status: 'failed', server_status: 'unreachable' });
  }, 120_000);

  it('a relative config.script (the shipped document as it is) fails at once, naming it: a task runs in a private directory', async () => {
    const doc = load(await readFile(join(ROOT, 'examples/mcp/demo.mcp.yaml'), 'utf8')) as Record<string, Record<string, unknown>>;
    doc.metadata = { ...doc.metadata, name: 'demo-relative', path: 'mcp/demo-relative' };
    doc.config = { ...doc.config, port: await freePort(), state_dir: join(stateDir, 'relative') };
    expect((await http(stack.url, 'POST', '/api/catalog/register', { content: dump(doc), resource_type: 'mcp' })).status).toBe(201);
    const r = await http(stack.url, 'POST', '/api/mcp/mcp/demo-relative/lifecycle/deploy', {});
    expect(r.status).toBe(202);
    const done = await stack.wait(r.body.execution_id, 60_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'exit_code', step: 'start' });
    // The step's report carries the task's stderr, which names the field.
    const events = await http(stack.url, 'GET', `/api/events/${r.body.execution_id}`);
    const failed = JSON.stringify(events.body).match(/config\.script must be an absolute path on the worker's machine \(got: examples\/mcp\/demo-server\.mjs\)/);
    expect(failed, JSON.stringify(events.body)).not.toBeNull();
    expect(await serverStatus('demo-relative')).toBe('deploy_failed');
  }, 90_000);

  it('CLI usage errors exit 2; an unknown server exits 4 (not found) with the detail', async () => {
    const noName = await svc(['mcp', 'deploy']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('deploy needs the server NAME');
    const unknown = await svc(['mcp', 'deploy', 'nowhere']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("MCP server 'nowhere' not found");
  });
});
