// `svc agent run --arg k=v` takes a value that reads as JSON as JSON, but a number JavaScript
// cannot hold as written changed without a word: --arg text=1e400 went as null (JSON.parse reads
// Infinity, JSON.stringify writes null). Such a value now goes as its text, by the rule the
// service keeps for numbers elsewhere (src/exact-json.ts).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { ROOT, runSvc } from '../../helpers/process.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
  const content = await readFile(`${ROOT}examples/agents/mcp-agent.yaml`, 'utf8');
  const r = await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'agent', content });
  expect(r.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await a?.close();
});

describe('svc agent run --arg numbers', () => {
  it('a number a double would change goes as its text; the others as numbers', async () => {
    const args = ['text=1e400', 'id=9007199254740993', 'n=3', 'x=0.5', 'flag=true', 'o={"k":1e400}'];
    const r = await runSvc(['agent', 'run', 'agents/mcp', '--tool', 'echo', ...args.flatMap((x) => ['--arg', x]), '--json'], { SVC_SERVER_URL: a.url });
    expect(r.code, r.stderr).toBe(0);
    const id: unknown = JSON.parse(r.stdout).execution_id;
    const events = await http(a.url, 'GET', `/api/events/${id}`);
    const started = events.body.events.find((e: { event_type: string }) => e.event_type === 'execution.started');
    expect(started.context.input.workload.arguments).toEqual({ text: '1e400', id: '9007199254740993', n: 3, x: 0.5, flag: true, o: { k: '1e400' } });
  });
});
