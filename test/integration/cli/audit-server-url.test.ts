// SVC_SERVER_URL of another scheme (ftp://, file://) is a setting error, as one that is no URL at
// all is (exit 78, naming the variable) and as --server ftp://… is a usage error: the setting's
// own message says "expects an http(s) URL". It was taken, and each client then said "server
// unreachable" (exit 3), sending the reader to look for a server that was never asked.
import { describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

describe('SVC_SERVER_URL of a scheme other than http(s)', () => {
  it.each([
    ['ftp://127.0.0.1:1', ['list']],
    ['ftp://127.0.0.1:1', ['mcp', 'list']],
    ['file:///tmp/x', ['agent', 'list']],
    ['notaurl', ['status', '1']],
  ])('SVC_SERVER_URL=%s svc %j: exit 78, invalid SVC_SERVER_URL', async (url, args) => {
    const r = await runSvc(args, { SVC_SERVER_URL: url });
    expect(r.stderr).toContain('invalid SVC_SERVER_URL: expects an http(s) URL');
    expect(r.stderr).not.toMatch(/unreachable/);
    expect(r.code).toBe(78);
  });

  it('an http(s) one is taken (here nothing listens: unreachable, exit 3)', async () => {
    const r = await runSvc(['list'], { SVC_SERVER_URL: 'http://127.0.0.1:1' });
    expect(r.stderr).toMatch(/unreachable/);
    expect(r.code).toBe(3);
  });
});
