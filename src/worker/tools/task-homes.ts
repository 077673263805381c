import { closeSync, openSync, rmSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../log.ts';
import { removeTree } from './remove-tree.ts';

// A shell task's home is a directory in its worker process's own directory (ROOT_PREFIX…), which
// holds a Unix socket the process listens on (ALIVE) while it has homes there. A worker killed
// with tasks running (SIGKILL, a power cut) leaves its directory behind with whatever the tasks
// wrote; the next worker to start on the same temp directory finds it by that socket, which then
// refuses a connection, and removes it. Several workers may share a temp directory (containers
// sharing /tmp, in other pid namespaces): a socket tells a live owner from a dead one where a pid
// would not, and a live worker's homes are never touched.
const ROOT_PREFIX = 'svc-worker-';
const ALIVE = 'alive.sock';
// A directory without its socket may be a worker's that is just starting (made, not yet listening).
const UNBOUND_GRACE_MS = 60_000;
const PROBE_TIMEOUT_MS = 2_000;
// sun_path holds 108 bytes, its NUL included; a longer path is reached through /proc/self/fd.
const MAX_SOCKET_PATH_BYTES = 107;

type Root = { dir: string; server: Server };
// The process's directory, while homes are in it; the removal of the last one, which a new one waits for.
let open: { root: Promise<Root>; homes: number } | undefined;
let closed: Promise<void> = Promise.resolve();
let live: string | undefined;
let exitHooked = false;

export type TaskHome = { path: string; remove(): Promise<void> };

/**
 * A fresh private directory (mode 0700) for one task, in this process's directory under the OS
 * temp directory. `remove()` removes it, and the process's directory with the last home.
 */
export async function makeTaskHome(): Promise<TaskHome> {
  const lease = (open ??= { root: closed.then(openRoot), homes: 0 });
  lease.homes++;
  let path: string;
  try {
    path = await mkdtemp(join((await lease.root).dir, 'svc-task-'));
  } catch (error) {
    leave(lease);
    throw error;
  }
  let removed: Promise<void> | undefined;
  return { path, remove: () => (removed ??= removeTree(path).finally(() => leave(lease))) };
}

function leave(lease: NonNullable<typeof open>): void {
  if (--lease.homes > 0) return;
  if (open === lease) open = undefined;
  closed = lease.root.then(closeRoot, () => {});
}

async function openRoot(): Promise<Root> {
  const dir = await mkdtemp(join(tmpdir(), ROOT_PREFIX));
  try {
    // A root worker's task users must get through to their homes; no one may list them.
    await chmod(dir, 0o711);
    const server = createServer((socket) => socket.destroy());
    await viaSocketPath(dir, (path) => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    }));
    server.on('error', () => {});
    // Listening says the process is alive; it does not keep a process alive that has nothing else to do.
    server.unref();
    live = dir;
    if (!exitHooked) process.once('exit', removeAtExit);
    exitHooked = true;
    return { dir, server };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function closeRoot({ dir, server }: Root): Promise<void> {
  if (live === dir) live = undefined;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await removeTree(dir).catch(() => {});
}

// A worker that exits with homes left (a stop that did not wait for its tasks' processes) takes them along.
function removeAtExit(): void {
  if (live) rmSync(live, { recursive: true, force: true });
}

/** Runs `use` with a path of `dir`'s socket that fits in sun_path. */
async function viaSocketPath<T>(dir: string, use: (path: string) => Promise<T>): Promise<T> {
  const direct = join(dir, ALIVE);
  if (Buffer.byteLength(direct) <= MAX_SOCKET_PATH_BYTES) return use(direct);
  const fd = openSync(dir, 'r');
  try {
    return await use(`/proc/self/fd/${fd}/${ALIVE}`);
  } finally {
    closeSync(fd);
  }
}

let swept: Promise<void> | undefined;

/** sweepTaskHomes once per process (in-process pools share its temp directory); a failure is logged. */
export function sweepTaskHomesOnce(log: Logger): Promise<void> {
  swept ??= sweepTaskHomes(log).catch((err: unknown) => log.warn({ err: String(err) }, 'cannot look for the task homes of killed workers'));
  return swept;
}

/**
 * Removes the directories of dead workers in the temp directory (`under`): those whose socket
 * refuses a connection, or has been missing for over a minute. One line per directory removed.
 */
export async function sweepTaskHomes(log: Logger, under: string = tmpdir()): Promise<void> {
  const names = (await readdir(under)).filter((name) => name.startsWith(ROOT_PREFIX));
  await Promise.all(
    names.map(async (name) => {
      const dir = join(under, name);
      if (dir === live) return;
      const stat = await lstat(dir).catch(() => undefined);
      // Only a directory of this user's: another user's workers are theirs to clean up.
      if (!stat?.isDirectory() || stat.uid !== process.getuid?.()) return;
      const answer = await viaSocketPath(dir, probe).catch(() => 'unknown');
      const dead = answer === 'ECONNREFUSED' || (answer === 'ENOENT' && Date.now() - stat.mtimeMs > UNBOUND_GRACE_MS);
      if (!dead) return;
      try {
        await removeTree(dir);
        log.warn({ dir }, `removed ${dir}: the task homes of a worker that ended without removing them (killed, or its machine stopped)`);
      } catch (error) {
        log.warn({ dir, err: String(error) }, `cannot remove ${dir}, the task homes of a worker that ended without removing them`);
      }
    }),
  );
}

/** 'ok' when something accepts a connection on `path`, else the error's code ('timeout' when nothing answers). */
function probe(path: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.setTimeout(PROBE_TIMEOUT_MS, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('ok');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'unknown'));
  });
}
