// `svc agent run` refused by the server (422) names what it refused, as svc run does: the
// answer's detail.errors, one indented line each, not the bare "HTTP 422 invalid body".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
}, 60_000);
afterAll(async () => {
  await a?.close();
});

describe('svc agent run refused by the server', () => {
  it.each([
    [['agent', 'run', 'agents//mcp'], '  - path: must be slash-separated names'],
    [['agent', 'run', 'agents/mcp', '--tool', 'echo', '--arg', 'text="a\\u0000b"'], '  - workload.arguments.text: contains NUL (\\u0000), which cannot be stored'],
  ])('svc %j prints the field the server names (exit 1)', async (args, line) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).toContain('svc agent: POST /api/execute: HTTP 422 invalid body\n');
    expect(r.stderr).toContain(line);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(1);
  });
});
