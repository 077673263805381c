// `svc agent` and `svc mcp` as a user types them: a stray argument or an option of the other
// subcommand is a usage error naming it (exit 2), never silently ignored.
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

describe('svc agent and svc mcp usage errors', () => {
  it.each([
    [['mcp', 'list', 'extra'], 'unexpected arguments: extra'],
    [['mcp', 'list', '--wait'], '--wait does not apply to list'],
    [['agent', 'list', 'extra'], 'unexpected arguments: extra'],
    [['agent', 'list', '--tool', 'add'], '--tool does not apply to list'],
    [['agent', 'list', '--arg', 'a=1'], '--arg does not apply to list'],
    [['agent', 'list', '--wait'], '--wait does not apply to list'],
    [['agent', 'run', 'agents/mcp', '--workspace', 'demo'], '--workspace does not apply to run'],
  ])('svc %j is exit 2 naming what is wrong, nothing sent', async (args, message) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('usage: svc');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it('without a subcommand each lists, as svc limits does', async () => {
    expect(await runSvc(['mcp'], { SVC_SERVER_URL: a.url })).toMatchObject({ code: 0, stdout: 'no MCP servers\n', stderr: '' });
    expect(await runSvc(['agent', '--workspace', 'demo'], { SVC_SERVER_URL: a.url })).toMatchObject({ code: 0, stdout: 'no agents\n', stderr: '' });
    expect(await runSvc(['mcp', '--wait'], { SVC_SERVER_URL: a.url })).toMatchObject({ code: 2, stderr: expect.stringContaining('--wait does not apply to list') });
  });
});
