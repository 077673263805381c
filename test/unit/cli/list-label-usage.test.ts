import { describe, expect, it } from 'vitest';
import { executionsCommand } from '../../../src/cli/executions-command.ts';
import { Capture } from '../../helpers/capture.ts';

// `svc list --label a=b --label a=c` asks for executions with two values of one label, which
// none has: the server refuses it (422, exit 1), where a bad option value is a usage error (exit
// 2, the usage line printed; docs/cli.md). It is refused before anything is sent: the server here
// is a port nobody listens on, so a request would exit 3.
describe('svc list --label naming one key twice', () => {
  const nowhere = ['--server', 'http://127.0.0.1:1'];

  it('with two values: a usage error, nothing sent', async () => {
    const out = new Capture();
    const err = new Capture();
    expect(await executionsCommand('list', ['--label', 'a=b', '--label', 'a=c', ...nowhere], out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(/^svc list: --label names a twice, with two values \(an execution has one value per label\)\nusage: svc list \[--status S\]/);
  });

  it('with the same value twice: sent, as the server takes it', async () => {
    const err = new Capture();
    expect(await executionsCommand('list', ['--label', 'a=b', '--label', 'a=b', ...nowhere], new Capture(), err)).toBe(3);
    expect(err.text).toContain('server unreachable');
  });

  it('with a key no label can have (a colon, a leading digit): a usage error, nothing sent', async () => {
    for (const label of ['a:x=1', '1a=b', '=b', 'nokey']) {
      const err = new Capture();
      expect(await executionsCommand('list', ['--label', label, ...nowhere], new Capture(), err), label).toBe(2);
      expect(err.text).toContain(`--label expects key=value with key of letters, digits, _ . - (at most 64), got ${JSON.stringify(label)}`);
    }
  });
});
