// `svc token --help` told an operator to stop a running `svc start` before making a token ("the
// embedded one in SVC_DATA_DIR (which a running `svc start` holds: stop it first)"), though
// `svc token` uses that server's PostgreSQL (openDatabase shareRunning) and docs/operations.md
// says so: following the help took the service down for nothing. The help now says what it does.
import { describe, expect, it } from 'vitest';
import { TOKEN_USAGE } from '../../../src/cli/token-usage.ts';

describe('svc token --help on the embedded database', () => {
  it('does not send the operator to stop the running server', () => {
    expect(TOKEN_USAGE).not.toMatch(/stop it first/);
    expect(TOKEN_USAGE.replace(/\s+/g, ' ')).toContain('a running `svc start` (or `svc server`) on the same SVC_DATA_DIR serves it');
  });
});
