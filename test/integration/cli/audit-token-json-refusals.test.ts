// `svc token create --json` of a name taken, and `svc token revoke NAME --json` of no such token,
// exited 1 with the reason on stderr and stdout empty: a program that reads stdout, as --json
// asks, found nothing to read. Both now also write {error, status: null, detail} there, as a
// refusal of the other commands reads (no server asked: no status), exit 1 as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenCommand } from '../../../src/cli/token-command.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import type { Db } from '../../../src/db/db.ts';
import { Capture } from '../../helpers/capture.ts';

async function token(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out = new Capture();
  const err = new Capture();
  const code = await tokenCommand(args, env, out, err);
  return { code, out: out.text, err: err.text };
}

describe('svc token --json refused', () => {
  let d: TestDatabase & { db: Db };
  beforeAll(async () => {
    d = await createMigratedDatabase();
  });
  afterAll(async () => d?.drop());

  it('create of a name taken: the refusal on stdout as JSON, its line on stderr, exit 1', async () => {
    const env = { SVC_DATABASE_URL: d.url };
    expect((await token(['create', '--name', 'taken', '--role', 'viewer', '--json'], env)).code).toBe(0);
    const r = await token(['create', '--name', 'taken', '--role', 'viewer', '--json'], env);
    expect(r.code).toBe(1);
    const detail = "a token named 'taken' exists (revoked tokens keep their names); choose another name";
    expect(JSON.parse(r.out)).toEqual({ error: `svc token: ${detail}`, status: null, detail });
    expect(r.err).toBe(`svc token: ${detail}\n`);
    // Without --json, stdout stays empty.
    expect((await token(['create', '--name', 'taken', '--role', 'viewer'], env)).out).toBe('');
  });

  it('revoke of no such token: the same', async () => {
    const r = await token(['revoke', 'nobody', '--json'], { SVC_DATABASE_URL: d.url });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({ error: "svc token: no token named 'nobody'", status: null, detail: "no token named 'nobody'" });
    expect(r.err).toBe("svc token: no token named 'nobody'\n");
  });
});
