import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.ts';

export type BenchDatabase = {
  /** URL of the database the service and the baselines use. */
  url: string;
  /** Where it came from: the embedded PostgreSQL of this run, or SVC_BENCH_DATABASE_URL. */
  source: 'embedded' | 'SVC_BENCH_DATABASE_URL';
  /** A data dir for the service (encryption key file etc.), removed at stop. */
  dataDir: string;
  version: string;
  settings: Record<string, string>;
  /** The embedded server's postmaster (for CPU accounting); null for an external server. */
  postmasterPid: number | null;
  stop(): Promise<void>;
};

const SETTINGS_SHOWN = ['fsync', 'synchronous_commit', 'wal_sync_method', 'shared_buffers', 'max_connections', 'commit_delay'];

async function describe(url: string): Promise<{ version: string; settings: Record<string, string> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const version = (await c.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
    const { rows } = await c.query<{ name: string; setting: string; unit: string | null }>(
      'SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1::text[])',
      [SETTINGS_SHOWN],
    );
    return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting])) };
  } finally {
    await c.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * One PostgreSQL for the whole run: a fresh database on SVC_BENCH_DATABASE_URL when set (dropped
 * at stop), else an embedded PostgreSQL in a temp data dir (removed at stop).
 */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as another user that must reach it
  const external = process.env.SVC_BENCH_DATABASE_URL;
  if (external) {
    const name = `svc_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = withDatabase(external, name);
    return {
      url,
      source: 'SVC_BENCH_DATABASE_URL',
      dataDir,
      postmasterPid: null,
      ...(await describe(url)),
      async stop() {
        const c = new pg.Client({ connectionString: external });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const embedded = await startEmbedded(join(dataDir, 'db'), process.env.SVC_BENCH_PG_LOG ? (l) => process.stderr.write(`PG: ${l}\n`) : undefined);
  const postmasterPid = Number((await readFile(join(dataDir, 'db', 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  return {
    postmasterPid: Number.isInteger(postmasterPid) && postmasterPid > 0 ? postmasterPid : null,
    url: embedded.url,
    source: 'embedded',
    dataDir,
    ...(await describe(embedded.url)),
    async stop() {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
