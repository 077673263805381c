// `svc list --since 1h --until 2h` (the two swapped: started after an hour ago and before two hours
// ago) asked the server and printed "no executions", exit 0, as if nothing had run: a range that
// ends where it starts, or before, can match nothing. It is now a usage error naming both options
// and the times they came to, before anything is sent.
import { describe, expect, it } from 'vitest';
import { executionsCommand } from '../../../src/cli/executions-command.ts';
import { Capture } from '../../helpers/capture.ts';

// Nothing listens there: a request would be exit 3, "server unreachable".
const list = async (...args: string[]) => {
  const out = new Capture();
  const err = new Capture();
  const code = await executionsCommand('list', [...args, '--server', 'http://127.0.0.1:1'], out, err);
  return { code, out: out.text, err: err.text };
};

describe('svc list --since T --until T', () => {
  it.each([
    [['--since', '1h', '--until', '2h'], /^svc list: --until 2h \(\S+Z\) is not after --since 1h \(\S+Z\): no execution could match\n/],
    [['--since', '2026-12-03', '--until', '2026-12-02'], /^svc list: --until 2026-12-02 \(2026-12-02T00:00:00\.000Z\) is not after --since 2026-12-03 \(2026-12-03T00:00:00\.000Z\)/],
    [['--since', '2026-12-02T10:00:00Z', '--until', '2026-12-02T10:00:00Z'], /is not after --since/],
  ])('%j: a usage error, nothing sent', async (args, said) => {
    const r = await list(...args);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(said);
    expect(r.out).toBe('');
  });

  it('a range the right way round is sent (here: no server, exit 3)', async () => {
    expect((await list('--since', '2h', '--until', '1h')).code).toBe(3);
  });
});
