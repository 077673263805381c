// Auth as the `svc` processes see it: start refusals, the embedded default's worker token file,
// `svc worker` reading it, `svc token create|list|revoke` end to end, `svc run` with SVC_API_TOKEN.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { tokenCommand } from '../../../src/cli/token-command.ts';
import { freePort } from '../../helpers/ports.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer } from '../../helpers/auth.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess } from '../../helpers/worker-process.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-auth-cli-'));
  await chmod(dir, 0o755);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Runs `svc <args>` to its end; its exit code and output. */
async function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnSvc(args, env);
  const code = await withTimeout(p.exited, 60_000, `svc ${args.join(' ')}`);
  return { code, output: p.output() };
}

const QUICK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: quick, path: auth/quick }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';

describe('start refusals', () => {
  it('SVC_AUTH=none on a non-loopback SVC_HOST: exit 78, one line naming SVC_HOST and SVC_AUTH, nothing written', async () => {
    for (const command of ['start', 'server']) {
      const dataDir = join(dir, `refused-${command}`);
      const r = await svc([command], { SVC_HOST: '0.0.0.0', SVC_PORT: String(await freePort()), SVC_DATA_DIR: dataDir, SVC_WORKER_TOKEN: '' });
      expect(r.code, r.output).toBe(78);
      const lines = r.output.trim().split('\n');
      expect(lines, r.output).toHaveLength(1);
      expect(lines[0]).toMatch(/^svc \w+: SVC_HOST=0\.0\.0\.0 .*SVC_AUTH=none/);
      expect(existsSync(dataDir)).toBe(false);
    }
  });

  it('a server with SVC_DATABASE_URL and no SVC_WORKER_TOKEN refuses to start, naming it; so does a worker with no token', async () => {
    const db = await createTestDatabase();
    try {
      const server = await svc(['server'], {
        SVC_DATABASE_URL: db.url,
        SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        SVC_PORT: String(await freePort()),
        SVC_WORKER_TOKEN: '',
      });
      expect(server.code, server.output).toBe(78);
      expect(server.output).toMatch(/^svc server: SVC_WORKER_TOKEN is required when SVC_DATABASE_URL is set/);
    } finally {
      await db.drop();
    }
    const worker = await svc(['worker'], { SVC_SERVER_URL: 'http://127.0.0.1:9', SVC_DATA_DIR: join(dir, 'no-token-here'), SVC_WORKER_TOKEN: '' });
    expect(worker.code, worker.output).toBe(78);
    expect(worker.output).toMatch(/^svc worker: SVC_WORKER_TOKEN is required/);
  });
});

describe('the embedded default', () => {
  it('generates a worker token into the data dir (mode 0600) for its own pools; `svc worker` on the data dir reads it', async () => {
    const dataDir = join(dir, 'embedded');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_WORKER_TOKEN: '', SVC_WORKER_CONCURRENCY: '2' });
    try {
      await waitForHealth(`${base}/api/health`, 60_000);
      await waitForOutput(server, 'Ctrl-C stops it.', 20_000);
      const file = join(dataDir, 'worker.token');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const token = (await readFile(file, 'utf8')).trim();
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(server.output()).not.toContain(token);
      // The in-process pool presents it: an execution completes.
      expect((await http(base, 'POST', '/api/catalog/playbook', { content: QUICK })).status).toBe(201);
      const id = (await http(base, 'POST', '/api/run/playbook', { path: 'auth/quick' })).body.execution_id;
      await until('execution done', async () => (await http(base, 'GET', `/api/executions/${id}`)).body.status === 'completed');
      // Worker routes take that token only.
      expect((await http(base, 'POST', '/api/worker/pool/register', { name: 'stranger' }, asWorker)).status).toBe(401);
      expect((await http(base, 'POST', '/api/worker/pool/register', { name: 'insider' }, bearer(token))).status).toBe(200);
      const worker = await startWorkerProcess(base, { concurrency: 1, env: { SVC_DATA_DIR: dataDir, SVC_WORKER_TOKEN: '' } });
      try {
        const pools = (await http(base, 'GET', '/api/worker/pools')).body.pools.map((p: { name: string }) => p.name);
        expect(pools).toContain(worker.name);
      } finally {
        expect(await worker.stop()).toBe(0);
      }
    } finally {
      server.kill('SIGTERM');
      await withTimeout(server.exited, 30_000, 'svc start stop');
    }
  });
});

describe('svc token beside a running svc start (embedded default)', () => {
  it('uses the PostgreSQL the server holds; the token it makes works against that server at once', async () => {
    const dataDir = join(dir, 'shared');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_AUTH: 'token', SVC_WORKER_TOKEN: '', SVC_WORKER_CONCURRENCY: '0' });
    try {
      await waitForHealth(`${base}/api/health`, 60_000);
      const created = await svc(['token', 'create', '--name', 'beside', '--role', 'operator', '--json'], { SVC_DATA_DIR: dataDir });
      expect(created.code, created.output).toBe(0);
      const token: string = JSON.parse(created.output).token;
      expect((await http(base, 'POST', '/api/catalog/playbook', { content: QUICK })).status).toBe(401);
      expect((await http(base, 'POST', '/api/catalog/playbook', { content: QUICK }, bearer(token))).status).toBe(201);
      const listed = await svc(['token', 'list', '--json'], { SVC_DATA_DIR: dataDir });
      expect(listed.code, listed.output).toBe(0);
      expect(JSON.parse(listed.output).map((r: { name: string }) => r.name)).toEqual(['beside']);
      // The server's PostgreSQL is the server's: the commands beside it did not stop it.
      expect((await http(base, 'GET', '/api/health')).status).toBe(200);
    } finally {
      server.kill('SIGTERM');
      await withTimeout(server.exited, 30_000, 'svc start stop');
    }
  });
});

describe('svc token', () => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp({ SVC_AUTH: 'token' });
    env = { SVC_DATABASE_URL: t.databaseUrl };
  });
  afterAll(async () => t?.close());

  it('create prints the token once, list shows it by prefix, revoke stops it; only hashes are stored', async () => {
    const created = await svc(['token', 'create', '--name', 'ci', '--role', 'operator', '--json'], env);
    expect(created.code, created.output).toBe(0);
    const answer = JSON.parse(created.output);
    expect(Object.keys(answer).sort()).toEqual(['created_at', 'last_used_at', 'name', 'prefix', 'revoked_at', 'role', 'token']);
    expect(answer).toMatchObject({ name: 'ci', role: 'operator', last_used_at: null, revoked_at: null });
    const token: string = answer.token;
    expect(answer.prefix).toBe(token.slice(0, 12));

    const plain = await svc(['token', 'create', '--name', 'reader', '--role', 'viewer'], env);
    expect(plain.code, plain.output).toBe(0);
    const readerToken = plain.output.trim().split('\n').at(-1)!;
    expect(readerToken).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(plain.output).toMatch(/created token 'reader' \(role viewer\)/);

    const stored = JSON.stringify((await t.deps.db.query('SELECT * FROM core.api_token')).rows);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(readerToken);

    // The token works with its role's reach, and no further.
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: QUICK }, bearer(token))).status).toBe(201);
    expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/quick' }, bearer(token))).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/quick' }, bearer(readerToken))).status).toBe(403);
    expect((await http(t.url, 'GET', '/api/executions', undefined, bearer(readerToken))).status).toBe(200);

    const listed = await svc(['token', 'list', '--json'], env);
    expect(listed.code, listed.output).toBe(0);
    const rows = JSON.parse(listed.output);
    expect(rows.map((r: { name: string }) => r.name)).toEqual(['ci', 'reader']);
    expect(rows[0]).toMatchObject({ name: 'ci', role: 'operator', prefix: token.slice(0, 12), revoked_at: null });
    expect(rows[0].last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const table = await svc(['token', 'list'], env);
    expect(table.code).toBe(0);
    const [header, ...lines] = table.output.trim().split('\n');
    expect(header).toMatch(/^NAME\s+ROLE\s+PREFIX\s+CREATED\s+LAST USED\s+REVOKED$/);
    expect(lines[0]).toMatch(new RegExp(`^ci\\s+operator\\s+${token.slice(0, 12)}\\s+\\d{4}-`));
    for (const out of [listed.output, table.output]) {
      expect(out).not.toContain(token);
      expect(out).not.toContain(readerToken);
    }

    const revoked = await svc(['token', 'revoke', 'ci'], env);
    expect(revoked.code, revoked.output).toBe(0);
    expect(revoked.output).toMatch(/^revoked token 'ci'/);
    await until('revoked token refused', async () => (await http(t.url, 'GET', '/api/executions', undefined, bearer(token))).status === 401, API_TOKEN_CACHE_TTL_MS + 2_000, 100);
    expect(JSON.parse((await svc(['token', 'list', '--json'], env)).output)[0].revoked_at).toMatch(/^\d{4}-/);
    // --json for programs, as every other client subcommand answers: the token as list shows it.
    const again = await svc(['token', 'revoke', 'ci', '--json'], env);
    expect(again.code, again.output).toBe(0);
    expect(JSON.parse(again.output)).toMatchObject({ name: 'ci', role: 'operator', revoked_at: expect.stringMatching(/^\d{4}-/), expired: false });
  });

  it('refuses a taken name, an unknown token and bad arguments with exit codes 1 and 2', async () => {
    expect((await svc(['token', 'create', '--name', 'twice', '--role', 'admin'], env)).code).toBe(0);
    const again = await svc(['token', 'create', '--name', 'twice', '--role', 'viewer'], env);
    expect(again.code).toBe(1);
    expect(again.output).toMatch(/a token named 'twice' exists/);
    expect((await svc(['token', 'revoke', 'nobody'], env)).code).toBe(1);
    // Usage errors are found before any database is opened: in process, with no database at all.
    for (const args of [[], ['grant'], ['create', '--name', 'x', '--role', 'root'], ['create', '--name', 'has space', '--role', 'viewer'], ['create', '--role', 'viewer'], ['list', '--bogus'], ['revoke']]) {
      let text = '';
      const sink = { write: (chunk: string) => (text += chunk) };
      const code = await tokenCommand(args, { SVC_DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' }, sink, sink);
      expect(code, `${args.join(' ')}: ${text}`).toBe(2);
      expect(text).toMatch(/usage: svc token/);
    }
  });

  it('svc run sends SVC_API_TOKEN; without one a token-mode server refuses it', async () => {
    const created = JSON.parse((await svc(['token', 'create', '--name', 'runner', '--role', 'operator', '--json'], env)).output);
    const file = join(dir, 'quick.yaml');
    await writeFile(file, QUICK);
    const ok = await svc(['run', file, '--json'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: created.token });
    expect(ok.code, ok.output).toBe(0);
    const refused = await svc(['run', file], { SVC_SERVER_URL: t.url });
    expect(refused.code).toBe(6);
    expect(refused.output).toMatch(/401/);
    expect(refused.output).not.toContain(created.token);
  });
});
