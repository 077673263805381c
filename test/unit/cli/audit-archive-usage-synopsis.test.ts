// `svc archive show FILE --execution abc` printed the usage of `list` alone
// ("usage: svc archive [list] [--dir DIR] [--json]"): the form the user typed, and where
// --execution goes, was not in it. A usage error now prints every form, as svc limits and svc
// triggers do.
import { describe, expect, it } from 'vitest';
import { archiveCommand } from '../../../src/cli/archive-command.ts';

describe('svc archive usage errors', () => {
  it.each([[['show', 'x.jsonl', '--execution', 'abc']], [['list', '--execution', '3']], [['bogus']]])('%j prints both forms of the command', async (argv) => {
    let out = '';
    let err = '';
    const code = await archiveCommand(argv, { write: (x: string) => (out += x) }, { write: (x: string) => (err += x) }, { SVC_ARCHIVE_DIR: '/nonexistent' });
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(/\nusage: svc archive \[list\] \[--dir DIR\] \[--json\]\n {7}svc archive show FILE \[--dir DIR\] \[--execution ID\] \[--json\]\n$/);
  });
});
