// The commands cli.ts runs itself (start, server, worker, migrate, rekey) and `svc gateway` answer a
// usage error as every other `svc` command does: exit 2, the flag or argument named, the usage
// line printed; nothing starts and no database is opened. They once exited 1 with no usage, the
// code of a failure, so a script could not tell a typo from a failed migration.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

// A data dir of its own and a port no one listens on: should anything start, it collides with no one.
const env = { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-usage-')), SVC_PORT: '1', SVC_SERVER_URL: 'http://127.0.0.1:1' };

const cases: Array<[string[], string, string]> = [
  [['start', '--bogus'], "'--bogus'", 'usage: svc start'],
  [['server', 'extra'], "'extra'", 'usage: svc server'],
  [['worker', '--bogus'], "'--bogus'", 'usage: svc worker'],
  [['worker', '--concurrency', '0'], '--concurrency', 'usage: svc worker'],
  [['migrate', '--bogus'], "'--bogus'", 'usage: svc migrate'],
  [['rekey', '--batch-size', 'abc'], '--batch-size', 'usage: svc rekey'],
  [['gateway', '--bogus'], "'--bogus'", 'usage: svc gateway'],
  [['gateway', '--port', 'abc'], '--port', 'usage: svc gateway'],
];

describe('svc start, server, worker, migrate, rekey and gateway: usage errors', () => {
  it.each(cases)('svc %j exits 2 naming %s, with the usage', async (args, named, usage) => {
    const r = await runSvc(args, env);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`svc ${args[0]}: `);
    expect(r.stderr).toContain(named);
    expect(r.stderr).toContain(usage);
    expect(r.code).toBe(2);
  });
});
