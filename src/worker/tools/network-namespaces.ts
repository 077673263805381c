import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { FENCE, PASTA_ARGS, TASK_PATH } from './shell-argv.ts';

// Why made ahead: pasta's start costs a task ~50 ms or more (docs/benchmarks.md), entering a
// namespace that exists a few ms. Each namespace is pasta around a holder process that only waits:
// it reads its stdin, a pipe whose other end only the worker holds, and exits at EOF (the
// worker's exit or death, even SIGKILL), and pasta quits with it. A pasta still starting when the
// worker dies ends too: its holder's `echo ready` meets a closed pipe. (Killing pasta on the
// worker's death, setpriv --pdeathsig, would not do: pasta killed before its namespace's first
// process ran leaves that process waiting for pasta's signal for ever.) A namespace serves one
// task at a time; sequential tasks share it (a task's processes die with its sandbox's pid
// namespace before the namespace is given back).

// A root worker runs pasta as a uid of its own (pasta refuses to run as root), as its tasks are.
const PASTA_UID_MIN = 2 ** 30;
const PASTA_UID_END = 2 ** 31;
// First FENCE (its rules for the machine's addresses, its arguments), then the wait.
const HOLDER = `${FENCE}\necho ready; read -r _`;
const START_TIMEOUT_MS = 10_000;

type Namespace = {
  pasta: ChildProcess;
  holder: number;
  /** Inodes of the holder's network and user namespaces, to recognise them when opened again. */
  net: number;
  user: number;
  /** The machine's addresses it was fenced off (hostAddresses, joined): one that no longer matches is made again. */
  fenced: string;
  dead: boolean;
};

/** A namespace lent to one task: descriptors of it for the task's nsenter, and the way back. */
export type NamespaceLease = {
  /** Open descriptors of the namespace's network and user namespace (the caller closes them or hands them on). */
  netFd: number;
  userFd: number;
  /** Gives the namespace back for the next task: once the task's processes are all gone. */
  release(): void;
};

/** pasta could not make a namespace: shell tasks with the `external` network cannot run now. */
export class NamespaceError extends Error {}

const free = new Map<string, Namespace[]>();
const making = new Map<string, Promise<Namespace>>();

/**
 * A network namespace that `pasta` (at that path) connects to the host's network as PASTA_ARGS
 * say, for one task: a free one (checked alive, its namespaces opened), else one made now; a
 * spare is made ahead in the background when none is left free. Rejects when pasta cannot run.
 */
export async function takeNamespace(pasta: string, ip: string): Promise<NamespaceLease> {
  const pool = free.get(pasta) ?? [];
  free.set(pasta, pool);
  for (;;) {
    // The machine's addresses now: one added since a namespace was made (a docker0 brought up,
    // an address from DHCP) would be open to its tasks, so that namespace is made again.
    const addresses = hostAddresses();
    let ns = pool.pop();
    if (!ns) ns = await makeOnce(pasta, ip, addresses);
    const fds = ns.dead || ns.fenced !== addresses.join(' ') ? undefined : openNamespace(ns);
    if (!fds) {
      retire(ns);
      continue;
    }
    if (pool.length === 0) makeOnce(pasta, ip, addresses).then((spare) => pool.push(spare), () => {});
    const lent = ns;
    let released = false;
    return {
      ...fds,
      release() {
        if (released) return;
        released = true;
        if (!lent.dead) pool.push(lent);
      },
    };
  }
}

// One start at a time per pasta: a burst of tasks waits for it rather than starting many.
function makeOnce(pasta: string, ip: string, addresses: readonly string[]): Promise<Namespace> {
  let pending = making.get(pasta);
  if (!pending) {
    pending = makeNamespace(pasta, ip, addresses).finally(() => making.delete(pasta));
    making.set(pasta, pending);
  }
  return pending;
}

// A namespace whose holder or pasta died: both are ended (the holder reads EOF), never lent again.
function retire(ns: Namespace): void {
  ns.dead = true;
  ns.pasta.stdin?.destroy();
  ns.pasta.kill('SIGKILL');
}

// The holder's namespaces, opened now and checked to be the ones it had when made: a holder that
// died (its pid maybe another process's by now) gives undefined, never another namespace.
function openNamespace(ns: Namespace): { netFd: number; userFd: number } | undefined {
  const opened: number[] = [];
  try {
    for (const [kind, ino] of [['net', ns.net], ['user', ns.user]] as const) {
      const fd = openSync(`/proc/${ns.holder}/ns/${kind}`, 'r');
      opened.push(fd);
      if (fstatSync(fd).ino !== ino) throw new Error('not the holder');
    }
    return { netFd: opened[0], userFd: opened[1] };
  } catch {
    for (const fd of opened) closeSync(fd);
    return undefined;
  }
}

function makeNamespace(pasta: string, ip: string, addresses: readonly string[]): Promise<Namespace> {
  const id = process.getuid?.() === 0 ? randomInt(PASTA_UID_MIN, PASTA_UID_END) : undefined;
  const child = spawn(pasta, [...PASTA_ARGS, '--', '/bin/sh', '-c', HOLDER, 'sh', ip, ...addresses, '--'], {
    cwd: '/',
    env: { PATH: TASK_PATH },
    uid: id,
    gid: id,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  child.stdin?.on('error', () => {});
  return new Promise<Namespace>((resolve, reject) => {
    let ns: Namespace | undefined;
    const timer = setTimeout(() => fail(new Error(`pasta did not start its namespace within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      // Its namespace's first process first: it would wait for pasta's signal for ever.
      if (child.pid !== undefined) for (const pid of childrenOf(child.pid)) killQuietly(pid);
      child.kill('SIGKILL');
      reject(new NamespaceError(`SVC_SHELL_NETWORK=external: cannot make a network namespace: ${error.message}`));
    };
    child.once('error', (error) => fail(error));
    child.once('exit', (code, signal) => {
      if (ns) retire(ns);
      else fail(new Error(`pasta exited (${signal ?? `code ${code}`}): ${stderr.replace(/Failed to send \d+ bytes to syslog\n?/g, '').trim() || 'no message'}`));
    });
    child.stdout?.once('data', () => {
      try {
        const pid = child.pid ?? 0;
        const holder = childrenOf(pid)[0];
        if (holder === undefined) throw new Error('pasta started no holder');
        const inode = (kind: string) => {
          const fd = openSync(`/proc/${holder}/ns/${kind}`, 'r');
          try {
            return fstatSync(fd).ino;
          } finally {
            closeSync(fd);
          }
        };
        ns = { pasta: child, holder, net: inode('net'), user: inode('user'), fenced: addresses.join(' '), dead: false };
        clearTimeout(timer);
        // Held for tasks to come, it must not keep the worker's event loop alive.
        child.unref();
        for (const stream of [child.stdin, child.stdout, child.stderr]) if (stream && 'unref' in stream && typeof stream.unref === 'function') stream.unref();
        resolve(ns);
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/**
 * This machine's own addresses, sorted: what FENCE keeps tasks off. All but 127.0.0.0/8 and ::1,
 * which a namespace has on a loopback of its own; another address on `lo` (an anycast or service
 * address) is the host's, and pasta would connect to it.
 */
export function hostAddresses(): string[] {
  const loopback = (address: string) => address === '::1' || /^127\./.test(address);
  const all = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address).filter((address) => !loopback(address)));
  return [...new Set(all)].sort();
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
