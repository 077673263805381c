// A usage error prints what is wrong, then the command's usage: every form of it, as its --help
// begins (the lines up to the first blank one). svc token, svc catalog and svc gateway revoke
// printed their whole help there instead (20, 9 and 10 lines under the one that said what was
// wrong), where every other client command prints the forms alone.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

// Refused before any database is opened or request sent: nothing listens there.
const env = { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-usage-synopsis-')), SVC_SERVER_URL: 'http://127.0.0.1:1' };

const cases: Array<[string[], string]> = [
  [['token', 'create', '--name', 'a', '--role', 'bogus'], 'svc token: --role expects one of viewer, operator, admin'],
  [['token', 'frob'], "svc token: unknown subcommand 'frob'"],
  [['catalog'], 'svc catalog: a subcommand is required (register)'],
  [['catalog', 'register'], 'svc catalog: register needs at least one FILE'],
  [['gateway', 'revoke'], "svc gateway: revoke expects one subject (the provider's `sub` of the person)"],
  [['limits', 'frob'], "svc limits: unknown subcommand 'frob' (list, show, set or delete)"],
];

describe('a usage error: the problem, then the usage forms', () => {
  it.each(cases)('svc %j', async (args, problem) => {
    const help = await runSvc([args[0], '--help'], env);
    const synopsis = help.stdout.split('\n\n')[0];
    expect(synopsis).toMatch(/^usage: svc /);
    const r = await runSvc(args, env);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${problem}\n${synopsis}\n`);
  });
});
