// `svc <command> --help` named flags in its usage forms that it never described below them:
// svc worker (--server, --concurrency), svc gateway (--port, --host), svc token (--name,
// --role), svc catalog (--server), svc doctor serve (--port, --host) and svc agent (--workspace,
// --method, --mcp-server, --endpoint). Every flag a usage form names is now described in the help.
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

const COMMANDS = ['start', 'server', 'worker', 'gateway', 'migrate', 'rekey', 'token', 'run', 'catalog', 'doctor', 'triggers', 'limits', 'archive', 'events', 'cleanup', 'agent', 'mcp', 'simulate', 'inspect', 'list', 'status', 'logs', 'cancel', 'pause', 'resume', 'retry', 'signal'];

describe('svc <command> --help', () => {
  it('lists every command this test covers', async () => {
    const listed = (await runSvc(['--help'], {})).stdout.split('\n').flatMap((l) => /^ {2}([a-z]+) {2,}/.exec(l)?.[1] ?? []);
    expect(listed.sort()).toEqual([...COMMANDS].sort());
  });

  it.each(COMMANDS)('svc %s --help describes each flag of its usage forms', async (command) => {
    const help = await runSvc([command, '--help'], {});
    expect(help.code).toBe(0);
    const [forms, ...rest] = help.stdout.split('\n\n');
    const body = rest.join('\n\n');
    const flags = [...new Set([...forms.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]))];
    const undescribed = flags.filter((flag) => !new RegExp(`(^|\\n) +${flag}\\b`).test(body));
    expect(undescribed, help.stdout).toEqual([]);
  });
});
