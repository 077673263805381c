// A client command refused for a setting (SVC_SERVER_URL that is no http(s) URL: exit 78) wrote
// the command's usage line under the message, as for a wrong command line, though the command
// line was right and only the variable is to change. docs/cli.md: the message names the variable,
// as the server's one line does at start. Now that line alone; a usage error keeps its usage line.
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

describe('a setting refused (exit 78)', () => {
  it.each([[['list']], [['status', '1']], [['cleanup', '--dry-run']]])('svc %j: one line naming the variable, no usage line', async (args) => {
    const r = await runSvc(args, { SVC_SERVER_URL: 'notaurl' });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('invalid SVC_SERVER_URL');
    expect(r.stderr).not.toContain('usage:');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a usage error still shows the usage line', async () => {
    const r = await runSvc(['list', '--bogus'], { SVC_SERVER_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: svc list');
  });
});
