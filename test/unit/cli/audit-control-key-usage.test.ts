import { describe, expect, it } from 'vitest';
import { executionsCommand } from '../../../src/cli/executions-command.ts';
import { Capture } from '../../helpers/capture.ts';

// `svc signal` and `svc retry` sent any --idempotency-key to the server, which refuses an empty
// one, one past 255 characters or one not printable ASCII (422 invalid Idempotency-Key header,
// exit 1), where a bad option value is a usage error (exit 2, the usage line printed; docs/cli.md)
// and `svc events send` checks the same key before sending. They now refuse it before anything is
// sent: the server here is a port nobody listens on, so a request would exit 3.
describe('svc signal|retry --idempotency-key the server would refuse', () => {
  const nowhere = ['--server', 'http://127.0.0.1:1'];

  it.each([
    ['signal', ['7', 'approval'], '', '""'],
    ['signal', ['7', 'approval'], 'é', '"é"'],
    ['retry', ['7'], 'k'.repeat(256), '256 characters'],
    ['retry', ['7'], 'tab\there', '"tab\\there"'],
  ] as const)('svc %s %j with key %j: a usage error naming it, nothing sent', async (command, args, key, shown) => {
    const out = new Capture();
    const err = new Capture();
    expect(await executionsCommand(command, [...args, '--idempotency-key', key, ...nowhere], out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(new RegExp(`^svc ${command}: --idempotency-key expects 1 to 255 printable ASCII characters, got ${shown.replace(/[\\"]/g, '\\$&')}\\nusage: svc ${command} ID`));
  });

  it('a key it takes is sent (here: to nobody, exit 3)', async () => {
    const err = new Capture();
    expect(await executionsCommand('retry', ['7', '--idempotency-key', 'k'.repeat(255), ...nowhere], new Capture(), err)).toBe(3);
    expect(err.text).toContain('server unreachable');
  });
});
