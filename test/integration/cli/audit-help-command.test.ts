// `svc help run` printed the list of commands, the word after help ignored: it is now
// `svc run --help`, as git and npm read it; an unknown command after help is a usage error.
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

describe('svc help COMMAND', () => {
  it.each([['run', 'usage: svc run <file.yaml | catalog path>'], ['mcp', 'usage: svc mcp [list]'], ['status', 'usage: svc status ID']])('svc help %s prints that command\'s help (exit 0)', async (command, first) => {
    const r = await runSvc(['help', command], {});
    expect(r.stdout.startsWith(first), r.stdout).toBe(true);
    expect(r.stdout).toBe((await runSvc([command, '--help'], {})).stdout);
    expect(r.code).toBe(0);
  });

  it('svc help with an unknown command names it (exit 2); svc help alone (or with an option) lists the commands', async () => {
    const r = await runSvc(['help', 'bogus'], {});
    expect(r.stderr).toContain("svc: unknown command 'bogus'");
    expect(r.code).toBe(2);
    for (const args of [['help'], ['help', '--json']]) {
      const all = await runSvc(args, {});
      expect(all.stdout).toContain('usage: svc <command> [options]');
      expect(all.code).toBe(0);
    }
  });
});
