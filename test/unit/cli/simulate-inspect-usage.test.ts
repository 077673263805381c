import { describe, expect, it } from 'vitest';
import { inspectCommand } from '../../../src/cli/inspect.ts';
import { simulateCommand } from '../../../src/cli/simulate.ts';
import { Capture } from '../../helpers/capture.ts';

// Every client command answers a command line it cannot take with the problem, its usage
// synopsis and exit code 2; simulate and inspect printed the problem alone.
describe('svc simulate and svc inspect on a usage error', () => {
  const simulateCases: string[][] = [[], ['a.yaml', 'b.yaml'], ['a.yaml', '--bogus'], ['a.yaml', '--outcome', 'step=maybe'], ['a.yaml', '--result', 'step'], ['a.yaml', '--payload', '[1]']];
  it.each(simulateCases)('simulate %j: the problem, then the usage synopsis, exit 2', async (...args) => {
    const out = new Capture();
    const err = new Capture();
    expect(await simulateCommand(args, out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(/^svc simulate: .+\nusage: svc simulate PLAYBOOK\.yaml \[--outcome /);
  });

  // Exit 2 after the options parsed is a usage error too (SIMULATE_USAGE): it printed the problem alone.
  const laterCases: string[][] = [
    ['examples/approval.yaml', '--outcome', 'nosuch=ok'],
    ['examples/approval.yaml', '--result', 'nosuch=1'],
    ['examples/approval.yaml', '--payload', '{"version": 5}'],
    ['test/no/such/playbook.yaml'],
  ];
  it.each(laterCases)('simulate %j: the problem, then the usage synopsis, exit 2', async (...args) => {
    const out = new Capture();
    const err = new Capture();
    expect(await simulateCommand(args, out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(/^svc simulate: .+\nusage: svc simulate PLAYBOOK\.yaml \[--outcome /);
  });

  const inspectCases: string[][] = [[], ['abc'], ['1', '2'], ['1', '--bogus'], ['1', '--server', 'ftp://x']];
  it.each(inspectCases)('inspect %j: the problem, then the usage synopsis, exit 2', async (...args) => {
    const out = new Capture();
    const err = new Capture();
    expect(await inspectCommand(args, out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(/^svc inspect: .+\nusage: svc inspect EXECUTION_ID \[--json\] \[--server URL\]\n$/);
  });
});
