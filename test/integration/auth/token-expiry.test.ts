// API tokens with a lifetime (`svc token create --expires-in|--expires-at`), on a real server and
// PostgreSQL: refused once past their expiry exactly as a revoked token is, even when the server
// has the lookup cached; listed with expires_at; and tokens made before lifetimes existed keep
// working through the migration that adds them.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { newApiToken } from '../../../src/auth/api-token.ts';
import { tokenCommand } from '../../../src/cli/token-command.ts';
import { revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { Db } from '../../../src/db/db.ts';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';

/** Runs `svc <args>` as a real process to its end; its exit code and output. */
async function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnSvc(args, env);
  const code = await withTimeout(p.exited, 60_000, `svc ${args.join(' ')}`);
  return { code, output: p.output() };
}

/** `svc token <args>` in this process (the same code as the command; no process start in a timed test). */
async function tokenHere(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  let output = '';
  const sink = { write: (chunk: string) => (output += chunk) };
  const code = await tokenCommand(args, env, sink, sink);
  return { code, output };
}

describe('a token with a lifetime', () => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp({ SVC_AUTH: 'token' });
    env = { SVC_DATABASE_URL: t.databaseUrl };
  });
  afterAll(async () => t?.close());

  it('made for 2 s, works until then, and is refused right after, though just used and cached; refused as a revoked token is', async () => {
    // The cache must be what is tested: its period is longer than the whole lifetime.
    expect(API_TOKEN_CACHE_TTL_MS).toBeGreaterThan(2_000);
    const created = await tokenHere(['create', '--name', 'brief', '--role', 'viewer', '--expires-in', '2s', '--json'], env);
    expect(created.code, created.output).toBe(0);
    const answer = JSON.parse(created.output);
    expect(answer).toMatchObject({ name: 'brief', role: 'viewer', revoked_at: null });
    const expiresAt = Date.parse(answer.expires_at);
    expect(expiresAt - Date.parse(answer.created_at)).toBe(2_000);
    const token: string = answer.token;
    const at = (offsetMs: number) => sleep(Math.max(0, expiresAt + offsetMs - Date.now()));

    expect((await http(t.url, 'GET', '/api/executions', undefined, bearer(token))).status).toBe(200);
    // Used again shortly before its end: the lookup is cached now (stamped once, below).
    await at(-700);
    expect(Date.now()).toBeLessThan(expiresAt - 300);
    expect((await http(t.url, 'GET', '/api/executions', undefined, bearer(token))).status).toBe(200);
    const used = (await t.deps.db.query<{ last_used_at: Date | null }>(`SELECT last_used_at FROM core.api_token WHERE name = 'brief'`)).rows[0].last_used_at;
    expect(used).toBeInstanceOf(Date);

    await at(100);
    const refused = await http(t.url, 'GET', '/api/executions', undefined, bearer(token));
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(Object.keys(refused.body)).toEqual(['detail']);
    expect(refused.body.detail).toMatch(/expired/);
    expect(refused.body.detail).not.toContain(token);

    // The same refusal as a revoked token's: status, body shape, challenge.
    const other = await createApiToken(t.deps.db, 'revoked-beside', 'viewer');
    await revokeApiToken(t.deps.db, 'revoked-beside');
    const revoked = await http(t.url, 'GET', '/api/executions', undefined, bearer(other));
    expect(revoked.status).toBe(401);
    expect(Object.keys(revoked.body)).toEqual(Object.keys(refused.body));
    expect(typeof refused.body.detail).toBe(typeof revoked.body.detail);
    expect(refused.headers.get('www-authenticate')).toBe(revoked.headers.get('www-authenticate'));
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    // It stays refused (a cached refusal), and a refused use is not a use.
    for (let i = 0; i < 3; i++) expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'x/y' }, bearer(token))).status).toBe(401);
    const after = (await t.deps.db.query<{ last_used_at: Date | null }>(`SELECT last_used_at FROM core.api_token WHERE name = 'brief'`)).rows[0].last_used_at;
    expect(after?.getTime()).toBe(used?.getTime());

    const listed = await tokenHere(['list', '--json'], env);
    expect(listed.code, listed.output).toBe(0);
    expect(JSON.parse(listed.output).find((r: { name: string }) => r.name === 'brief')).toMatchObject({ expires_at: answer.expires_at, expired: true, revoked_at: null });
  });

  it('list shows expires_at and whether it passed, as JSON and in the table', async () => {
    const short = await tokenHere(['create', '--name', 'short-lived', '--role', 'operator', '--expires-in', '1s', '--json'], env);
    expect(short.code, short.output).toBe(0);
    const shortAnswer = JSON.parse(short.output);
    const later = await svc(['token', 'create', '--name', 'quarterly', '--role', 'viewer', '--expires-at', '2099-03-31T00:00:00Z'], env);
    expect(later.code, later.output).toBe(0);
    expect(later.output).toMatch(/created token 'quarterly' \(role viewer, expires 2099-03-31T00:00:00\.000Z\)/);
    expect((await svc(['token', 'create', '--name', 'forever', '--role', 'admin'], env)).code).toBe(0);
    await sleep(Math.max(0, Date.parse(shortAnswer.expires_at) + 50 - Date.now()));

    const listed = await svc(['token', 'list', '--json'], env);
    expect(listed.code, listed.output).toBe(0);
    const rows: { name: string; expires_at: string | null; expired: boolean }[] = JSON.parse(listed.output);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['short-lived']).toMatchObject({ role: 'operator', expires_at: shortAnswer.expires_at, expired: true });
    expect(byName.quarterly).toMatchObject({ expires_at: '2099-03-31T00:00:00.000Z', expired: false });
    expect(byName.forever).toMatchObject({ expires_at: null, expired: false });

    const table = await svc(['token', 'list'], env);
    expect(table.code, table.output).toBe(0);
    const [header, ...lines] = table.output.trim().split('\n');
    expect(header).toMatch(/^NAME\s+ROLE\s+PREFIX\s+CREATED\s+LAST USED\s+REVOKED\s+EXPIRES$/);
    const line = (name: string) => lines.find((l) => l.startsWith(`${name} `)) ?? '';
    expect(line('short-lived')).toMatch(new RegExp(`\\s${shortAnswer.expires_at.replace(/\./g, '\\.')} \\(expired\\)$`));
    expect(line('quarterly')).toMatch(/\s2099-03-31T00:00:00\.000Z$/);
    expect(line('forever')).toMatch(/\snever$/);
  });
});

describe('the migration that adds lifetimes', () => {
  let bed: ServerProcesses;
  let older: string;
  beforeAll(async () => {
    bed = await ServerProcesses.open({ SVC_AUTH: 'token' });
    older = await mkdtemp(join(tmpdir(), 'svc-migrations-'));
  });
  afterAll(async () => {
    await bed?.close();
    await rm(older, { recursive: true, force: true });
  });

  it('keeps every token of a database made before it, unchanged and valid (revoked ones revoked)', async () => {
    const files = await readdir(MIGRATIONS_DIR);
    const adding = files.find((f) => /^\d{4}_api_token_expiry\.sql$/.test(f));
    expect(adding, 'the migration adding expires_at').toBeDefined();
    for (const f of files) if (/^\d{4}_.+\.sql$/.test(f) && f < adding!) await copyFile(join(MIGRATIONS_DIR, f), join(older, f));
    const db = new Db(bed.database.url, 2);
    const made = { live: newApiToken(), used: newApiToken(), gone: newApiToken() };
    try {
      await migrate(db, older);
      // Rows as the code before lifetimes wrote them.
      for (const [name, m] of Object.entries(made)) {
        await db.query(`INSERT INTO core.api_token (name, role, hash, prefix) VALUES ($1, $2, $3, $4)`, [name, name === 'live' ? 'operator' : 'viewer', m.hash, m.prefix]);
      }
      await db.query(`UPDATE core.api_token SET last_used_at = now() - interval '3 days', created_at = now() - interval '400 days' WHERE name = 'used'`);
      await db.query(`UPDATE core.api_token SET revoked_at = now() WHERE name = 'gone'`);
    } finally {
      await db.close();
    }
    const columns = 'id, name, role, hash, prefix, created_at, last_used_at, revoked_at';
    const before = (await bed.db.query(`SELECT ${columns} FROM core.api_token ORDER BY id`)).rows;
    expect(before).toHaveLength(3);

    // A server of this version migrates the database as it starts.
    const server = await bed.server();
    const applied = (await bed.db.query<{ version: string }>(`SELECT version FROM core.schema_migration WHERE version = $1`, [adding])).rows;
    expect(applied).toHaveLength(1);
    expect((await bed.db.query(`SELECT ${columns} FROM core.api_token ORDER BY id`)).rows).toEqual(before);
    expect((await bed.db.query(`SELECT name, expires_at FROM core.api_token ORDER BY id`)).rows).toEqual([
      { name: 'live', expires_at: null },
      { name: 'used', expires_at: null },
      { name: 'gone', expires_at: null },
    ]);

    expect((await http(server.base, 'GET', '/api/executions', undefined, bearer(made.live.token))).status).toBe(200);
    expect((await http(server.base, 'GET', '/api/executions', undefined, bearer(made.used.token))).status).toBe(200);
    expect((await http(server.base, 'GET', '/api/executions', undefined, bearer(made.gone.token))).status).toBe(401);
    const listed = await svc(['token', 'list', '--json'], { SVC_DATABASE_URL: bed.database.url });
    expect(listed.code, listed.output).toBe(0);
    expect(JSON.parse(listed.output).map((r: { name: string; expires_at: string | null; expired: boolean }) => [r.name, r.expires_at, r.expired])).toEqual([
      ['live', null, false],
      ['used', null, false],
      ['gone', null, false],
    ]);
  });
});
