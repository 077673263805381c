// A flag node:util's parseArgs refused was reported in its words: a value starting with a dash
// (`svc limits set x --concurrency -1`) as three lines ("argument is ambiguous. / Did you forget
// ... / To specify an option argument starting with a dash use '--concurrency=-XYZ'."), an unknown
// option with a hint about `--` and positionals (`Unknown option '--bogus'. To specify a positional
// argument starting with a '-', place it at the end ...`). Each is now one line naming the flag,
// then the usage, exit 2 (svc doctor: 3), nothing on stdout, for every command that parses options.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

// No server listens there, no database is opened: each case is refused before anything is sent.
const env = { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-option-line-')), SVC_SERVER_URL: 'http://127.0.0.1:1' };

const cases: Array<[string[], string, number?]> = [
  [['limits', 'set', 'x', '--concurrency', '-1'], "svc limits: --concurrency needs a value (a value starting with - goes after =: --concurrency=-1)"],
  [['list', '--limit', '-5'], "svc list: --limit needs a value (a value starting with - goes after =: --limit=-5)"],
  [['list', '--bogus'], "svc list: unknown option '--bogus'"],
  [['logs', '1', '--limit'], 'svc logs: --limit needs a value'],
  [['status', '1', '--server'], 'svc status: --server needs a value'],
  [['triggers', '--bogus'], "svc triggers: unknown option '--bogus'"],
  [['run', 'x.yaml', '--priority', '-1'], 'svc run: --priority needs a value (a value starting with - goes after =: --priority=-1)'],
  [['cleanup', '--older-than-minutes', '-3'], 'svc cleanup: --older-than-minutes needs a value (a value starting with - goes after =: --older-than-minutes=-3)'],
  [['events', 'send', 'f.json', '--bogus'], "svc events: unknown option '--bogus'"],
  [['simulate', 'f.yaml', '--bogus'], "svc simulate: unknown option '--bogus'"],
  [['catalog', 'register', 'f.yaml', '--bogus'], "svc catalog: unknown option '--bogus'"],
  [['inspect', '1', '--bogus'], "svc inspect: unknown option '--bogus'"],
  [['token', 'list', '--bogus'], "svc token: unknown option '--bogus'"],
  [['archive', '--dir'], 'svc archive: --dir needs a value'],
  [['agent', '--bogus'], "svc agent: unknown option '--bogus'"],
  [['mcp', '--bogus'], "svc mcp: unknown option '--bogus'"],
  [['worker', '--concurrency', '-2'], 'svc worker: --concurrency needs a value (a value starting with - goes after =: --concurrency=-2)'],
  [['start', '--bogus'], "svc start: unknown option '--bogus'"],
  [['gateway', 'revoke', 'sub', '--bogus'], "svc gateway: unknown option '--bogus'"],
  [['migrate', '--json=1'], 'svc migrate: --json takes no value'],
  // svc doctor answers a bad option 3, could not run, as its help says (2 is an anomaly found).
  [['doctor', 'detect', '--limit', '-1'], 'svc doctor: --limit needs a value (a value starting with - goes after =: --limit=-1)', 3],
  [['doctor', 'detect', '--bogus'], "svc doctor: unknown option '--bogus'", 3],
];

describe('an option parseArgs refuses: one line naming it, then the usage', () => {
  it.each(cases)('svc %j', async (args, line, code = 2) => {
    const r = await runSvc(args, env);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toBe('');
    const [first, second] = r.stderr.split('\n');
    expect(first).toBe(line);
    expect(second).toMatch(/^usage: svc /);
  });
});
