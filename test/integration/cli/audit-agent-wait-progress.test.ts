// `svc agent run --wait` said "waiting" and then nothing until the end: an agent paused (or
// queued for admission) looked the same as one running. It now prints each status the execution
// passes through before it ends, as svc mcp --wait prints the server's.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { ROOT, spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
  const content = await readFile(`${ROOT}examples/agents/mcp-agent.yaml`, 'utf8');
  expect((await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await a?.close();
});

describe('svc agent run --wait', () => {
  it('prints paused and running again as they happen, then the end (no worker: it waits until cancelled)', async () => {
    const p = spawnSvc(['agent', 'run', 'agents/mcp', '--wait'], { SVC_SERVER_URL: a.url });
    await waitForOutput(p, 'waiting\n', 15_000);
    const id = /execution (\d+) started/.exec(p.output())?.[1];
    expect((await http(a.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
    await waitForOutput(p, `  execution ${id}: paused\n`, 10_000);
    expect((await http(a.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    await waitForOutput(p, `  execution ${id}: running\n`, 10_000);
    expect((await http(a.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
    expect(await withTimeout(p.exited, 10_000, 'svc agent run')).toBe(1);
    expect(p.output()).toContain(`  execution ${id}: paused\n  execution ${id}: running\nexecution ${id} cancelled\n`);
  });
});
