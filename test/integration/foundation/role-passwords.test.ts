// No role password travels to PostgreSQL in the SQL text: the service owner (embedded default) and
// the reader role are given a SCRAM-SHA-256 secret computed here, which PostgreSQL stores as is.
// The proof is PostgreSQL's own log with log_statement = 'all', and every statement and parameter
// the pg client sent.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { startEmbedded, type EmbeddedDatabase } from '../../../src/db/embedded.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { SCRAM_ITERATIONS, scramVerifier } from '../../../src/db/scram-verifier.ts';
import { prepareServiceOwner, SERVICE_OWNER } from '../../../src/db/service-owner.ts';
import { runAsServiceReader, serviceReaderLogin } from '../../../src/db/sql-execute.ts';

async function withClient<T>(url: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

async function storedSecret(superuserUrl: string, role: string): Promise<string> {
  return withClient(superuserUrl, async (c) => (await c.query<{ p: string }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [role])).rows[0].p);
}

/** Every SQL text and parameter the pg client sends while `f` runs. */
async function recordingStatements(f: () => Promise<void>): Promise<string[]> {
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  try {
    await f();
    return spy.mock.calls.map(([query, values]: unknown[]) => {
      // A string, a config ({text, values}) or a pg.Query (the same fields).
      const config = typeof query === 'object' && query !== null && 'text' in query ? query : { text: query };
      return JSON.stringify([config.text, 'values' in config ? config.values : undefined, values]);
    });
  } finally {
    spy.mockRestore();
  }
}

/** `password` as it may show in text: itself, and its base64 (and base64url). */
const forms = (password: string) => [password, Buffer.from(password).toString('base64'), Buffer.from(password).toString('base64url')];

describe('scramVerifier', () => {
  it('is byte for byte the secret PostgreSQL makes of the same password, salt and iterations', async () => {
    await withClient(inject('adminDatabaseUrl'), async (c) => {
      await c.query('BEGIN');
      try {
        await c.query(`SET LOCAL password_encryption = 'scram-sha-256'`);
        await c.query(`CREATE ROLE svc_scram_vector_probe PASSWORD 'pencil, und 1!'`);
        const stored = (await c.query<{ p: string }>(`SELECT rolpassword AS p FROM pg_authid WHERE rolname = 'svc_scram_vector_probe'`)).rows[0].p;
        const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored);
        expect(m, stored).not.toBeNull();
        const [, iterations, salt] = m ?? [];
        expect(await scramVerifier('pencil, und 1!', Buffer.from(salt, 'base64'), Number(iterations))).toBe(stored);
      } finally {
        await c.query('ROLLBACK');
      }
    });
  });
});

type LoggingPostgres = { dir: string; embedded: EmbeddedDatabase; logged(): Promise<string[]>; stop(): Promise<void> };

/** An embedded PostgreSQL of its own with log_statement = 'all', its log lines kept. */
async function loggingPostgres(): Promise<LoggingPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-role-passwords-'));
  const log: string[] = [];
  const embedded = await startEmbedded(dir, (line) => log.push(line));
  await withClient(embedded.url, async (c) => {
    await c.query(`ALTER SYSTEM SET log_statement = 'all'`);
    await c.query('SELECT pg_reload_conf()');
  });
  return {
    dir,
    embedded,
    // PostgreSQL writes a statement's line as it starts it: wait until a marker has come through.
    async logged() {
      const marker = `svc_log_marker_${log.length}_${Date.now()}`;
      await withClient(embedded.url, (c) => c.query(`SELECT '${marker}'`));
      await vi.waitFor(() => expect(log.join('\n')).toContain(marker), { timeout: 10_000 });
      return log;
    },
    async stop() {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe('on an embedded PostgreSQL that logs every statement', () => {
  let pgl: LoggingPostgres;
  let dir: string;
  let embedded: EmbeddedDatabase;
  beforeAll(async () => {
    pgl = await loggingPostgres();
    ({ dir, embedded } = pgl);
  });
  afterAll(async () => pgl?.stop());
  const logged = () => pgl.logged();

  let ownerUrl: string;
  it('the service owner gets a SCRAM secret, made twice (CREATE, then ALTER), its password in no statement', async () => {
    const sent = await recordingStatements(async () => {
      ownerUrl = await prepareServiceOwner(embedded.url, dir);
      await prepareServiceOwner(embedded.url, dir);
    });
    const password = (await readFile(join(dir, 'svc-password'), 'utf8')).trim();
    expect(password.length).toBeGreaterThan(8);
    expect(sent.filter((s) => s.includes('CREATE ROLE \\"svc\\"'))).toHaveLength(1);
    expect(sent.filter((s) => s.includes('ALTER ROLE \\"svc\\"'))).toHaveLength(1);
    const lines = await logged();
    expect(lines.join('\n')).toMatch(/statement: (CREATE|ALTER) ROLE "svc"/);
    for (const form of forms(password)) {
      expect(sent.filter((s) => s.includes(form))).toEqual([]);
      expect(lines.filter((l) => l.includes(form))).toEqual([]);
    }
    expect(await storedSecret(embedded.url, SERVICE_OWNER)).toMatch(new RegExp(`^SCRAM-SHA-256\\$${SCRAM_ITERATIONS}:`));
    expect(await withClient(ownerUrl, async (c) => (await c.query<{ u: string }>('SELECT current_user AS u')).rows[0].u)).toBe(SERVICE_OWNER);
  });

  it('the reader role gets a SCRAM secret, its password in no statement; it is set once, and again only when the password changes', async () => {
    const db = new Db(ownerUrl, 4);
    try {
      await migrate(db);
      const password = 'reader-password-one_AbC123';
      let user = '';
      const sent = await recordingStatements(async () => {
        user = (await serviceReaderLogin(db, password)).user;
      });
      expect(user).toMatch(/^svc_sql_reader_[0-9a-f]{8}$/);
      expect(sent.filter((s) => s.includes('ALTER ROLE'))).toHaveLength(1);
      expect(await storedSecret(embedded.url, user)).toMatch(new RegExp(`^SCRAM-SHA-256\\$${SCRAM_ITERATIONS}:`));

      // It logs in with the password; later statements do not set it again.
      const again = await recordingStatements(async () => {
        for (let i = 0; i < 2; i++) expect(await runAsServiceReader(db, password, 'SELECT current_user AS u')).toEqual([{ u: user }]);
      });
      expect(again.filter((s) => s.includes('ALTER ROLE'))).toEqual([]);

      // A changed password (a new key) fails the login once and is set once.
      const changed = 'reader-password-two_XyZ789';
      const reset = await recordingStatements(async () => {
        expect(await runAsServiceReader(db, changed, 'SELECT current_user AS u')).toEqual([{ u: user }]);
      });
      expect(reset.filter((s) => s.includes('ALTER ROLE'))).toHaveLength(1);

      const lines = await logged();
      expect(lines.join('\n')).toMatch(/statement: ALTER ROLE "svc_sql_reader_/);
      for (const form of [...forms(password), ...forms(changed)]) {
        expect([...sent, ...again, ...reset].filter((s) => s.includes(form))).toEqual([]);
        expect(lines.filter((l) => l.includes(form))).toEqual([]);
      }
    } finally {
      await db.close();
    }
  });
});

// compose.yaml's PostgreSQL runs the script on a new volume; psql is not in every test environment.
const psql = spawnSync('psql', ['--version']).status === 0;

describe.skipIf(!psql)("compose.yaml's init script (scripts/compose-postgres-init.sh)", () => {
  let pgl: LoggingPostgres;
  beforeAll(async () => {
    pgl = await loggingPostgres();
  });
  afterAll(async () => pgl?.stop());

  it('makes svc the owner with a SCRAM secret; the password is in no statement PostgreSQL logs', async () => {
    const password = 'compose-owner-password_Qw3';
    const url = new URL(pgl.embedded.url);
    // Detached: a session of its own, no terminal, so psql's \password reads the password from stdin.
    const script = spawn('sh', [join(import.meta.dirname, '../../../scripts/compose-postgres-init.sh')], {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH, PGHOST: url.hostname, PGPORT: url.port, PGPASSWORD: decodeURIComponent(url.password), POSTGRES_USER: 'postgres', POSTGRES_DB: 'postgres', SVC_DB_PASSWORD: password },
    });
    let stderr = '';
    script.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(script, 'exit');
    expect(code, stderr).toBe(0);
    expect(await storedSecret(pgl.embedded.url, SERVICE_OWNER)).toMatch(/^SCRAM-SHA-256\$\d+:/);
    const owner = new URL(pgl.embedded.url);
    owner.username = SERVICE_OWNER;
    owner.password = password;
    expect(await withClient(owner.toString(), async (c) => (await c.query<{ owner: string }>('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()')).rows[0].owner)).toBe(SERVICE_OWNER);
    const lines = await pgl.logged();
    for (const form of forms(password)) expect(lines.filter((l) => l.includes(form))).toEqual([]);
    expect(lines.join('\n')).toMatch(/statement: ALTER USER svc PASSWORD 'SCRAM-SHA-256/);
  });
});
