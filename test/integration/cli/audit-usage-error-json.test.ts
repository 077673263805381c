// A usage error (an unknown option, a missing argument, a bad value) of a command given --json
// left stdout empty: only the text on stderr, exit 2. A program reading stdout found no JSON to
// read. Every command now also writes {error, status: null, detail} there (nothing was sent, so
// no status; detail names the option), keeping the text on stderr and its exit code.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

// No server listens there, no database is opened: each case is refused before anything is sent.
const env = { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-usage-json-')), SVC_SERVER_URL: 'http://127.0.0.1:1' };

const UsageJson = v.strictObject({ error: v.string(), status: v.null(), detail: v.string() });

const cases: Array<[string[], string, number?]> = [
  [['list', '--json', '--bogus'], "unknown option '--bogus'"],
  [['list', '--json', '--limit', 'abc'], '--limit'],
  [['status', '--json'], 'status needs an execution ID'],
  [['logs', '1', '--json', '--cascade'], '--cascade does not apply to logs'],
  [['cancel', 'x', '--json'], 'the execution ID must be a positive integer, got "x"'],
  [['signal', '1', 'go', '--json', '--data', '{bad'], '--data'],
  [['limits', 'set', 'x', '--json', '--concurrency', '-1'], '--concurrency needs a value'],
  [['triggers', '--json', '--bogus'], "unknown option '--bogus'"],
  [['agent', '--json', '--bogus'], "unknown option '--bogus'"],
  [['mcp', '--json', '--bogus'], "unknown option '--bogus'"],
  [['inspect', '--json'], 'inspect needs an execution ID'],
  [['events', 'send', '--json'], 'expects one batch file'],
  [['run', 'x.yaml', '--json', '--priority', '12'], '--priority expects an integer from 0'],
  [['cleanup', '--json', '--older-than-minutes', 'soon'], '--older-than-minutes'],
  [['catalog', 'register', '--json'], 'register needs at least one FILE'],
  [['simulate', '--json', '--bogus'], "unknown option '--bogus'"],
  [['archive', 'show', '--json', '--bogus'], "unknown option '--bogus'"],
  [['token', 'list', '--json', '--bogus'], "unknown option '--bogus'"],
  [['gateway', 'revoke', '--json'], 'revoke expects one subject'],
  [['migrate', '--json', '--bogus'], "unknown option '--bogus'"],
  [['rekey', '--json', '--batch-size', '0'], '--batch-size expects an integer >= 1'],
  // svc doctor answers a bad option 3, could not run, as its help says (2 is an anomaly found).
  [['doctor', 'detect', '--json', '--limit'], '--limit needs a value', 3],
];

describe('a usage error given --json: {error, status: null, detail} on stdout, the text on stderr', () => {
  it.each(cases)('svc %j', async (args, named, code = 2) => {
    const r = await runSvc(args, env);
    expect(r.code, r.stderr).toBe(code);
    const answer = v.parse(UsageJson, JSON.parse(r.stdout));
    expect(answer.detail).toContain(named);
    expect(answer.error).toBe(`svc ${args[0]}: ${answer.detail}`);
    const [first, second] = r.stderr.split('\n');
    expect(first).toBe(answer.error);
    expect(second).toMatch(/^usage: svc /);
  });

  it('an unknown command given --json: {error, status: null, detail} too, the command list on stderr', async () => {
    const r = await runSvc(['lsit', '--json'], env);
    expect(r.code).toBe(2);
    expect(v.parse(UsageJson, JSON.parse(r.stdout))).toEqual({ error: "svc: unknown command 'lsit'", status: null, detail: "unknown command 'lsit'" });
    expect(r.stderr).toMatch(/^svc: unknown command 'lsit'\n\nusage: svc <command>/);
  });

  it('a --json after `--` is an argument, not the option: stdout stays empty', async () => {
    const r = await runSvc(['simulate', '--bogus', '--', '--json'], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  it('svc simulate --json of a file that is not UTF-8: its line and column beside the error, as docs/cli.md says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-usage-json-file-'));
    const file = join(dir, 'latin1.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, Buffer.concat([Buffer.from('name: x\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    const r = await runSvc(['simulate', file, '--json'], env);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ error: `svc simulate: ${file}:2:6: not UTF-8 text (save the file as UTF-8)`, status: null, file, line: 2, column: 6, detail: `${file}:2:6: not UTF-8 text (save the file as UTF-8)` });
  });
});
