import { spawn } from 'node:child_process';

/** A running postmaster under its watchdog shell; `stop()` shuts it down (fast) and waits. */
export type PostgresProcess = {
  /** Pid of the watchdog shell: also the id of the process group PostgreSQL runs in. */
  readonly groupId: number;
  stop(): Promise<void>;
};

/** Longest wait for "ready to accept connections" after spawning. */
export const POSTGRES_READY_TIMEOUT_MS = 60_000;
/** Longest wait for a fast shutdown before PostgreSQL is told to quit at once. */
export const POSTGRES_STOP_TIMEOUT_MS = 60_000;
/** Longest wait for the exit after an immediate-shutdown request. */
export const POSTGRES_QUIT_TIMEOUT_MS = 5_000;

const READY_LINE = 'database system is ready to accept connections';
const LOG_TAIL_CHARS = 2_000;

// Run as `sh -c WATCHDOG svc-postgres <postgres> <args...>` in a new session (spawn detached):
// a terminal's Ctrl-C reaches our process group, not this one, so PostgreSQL stops only when we
// say so. We say so by closing the shell's stdin, and the kernel closes it for us when this
// process dies in any way (even SIGKILL), so a PostgreSQL is never left running without us.
// An asynchronous list reads /dev/null as stdin, hence the copy of the pipe on fd 3.
const WATCHDOG = [
  'exec 3<&0',
  '"$@" </dev/null 3<&- &',
  'pg=$!',
  '{ read -r _ <&3; kill -INT "$pg" 2>/dev/null; } &',
  'watch=$!',
  'wait "$pg"; status=$?',
  'kill "$watch" 2>/dev/null',
  'exit "$status"',
].join('\n');

/**
 * Spawns PostgreSQL (`binary` with `args`) in its own process group and resolves once it accepts
 * connections; rejects, having stopped it, if it exits first or `signal` aborts the start.
 */
export function spawnPostgres(opts: {
  binary: string;
  args: string[];
  /** Run as this user (PostgreSQL refuses to run as root). */
  user?: { uid: number; gid: number };
  log: (line: string) => void;
  signal?: AbortSignal;
}): Promise<PostgresProcess> {
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'svc-postgres', opts.binary, ...opts.args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    // Messages in English whatever the machine's locale: readiness is read from them.
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let tail = '';
  let checkReady = () => {};
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-LOG_TAIL_CHARS);
    for (const line of text.split('\n')) if (line.trim()) opts.log(line.trim());
    checkReady();
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  // Closing our end of its stdin is the stop request; a closed pipe must not crash us.
  child.stdin.on('error', () => {});

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      child.stdin.end();
      if (await settlesWithin(exited, POSTGRES_STOP_TIMEOUT_MS)) return;
      signalGroup(child.pid, 'SIGQUIT');
      await settlesWithin(exited, POSTGRES_QUIT_TIMEOUT_MS);
    })();
    return stopping;
  };

  return new Promise<PostgresProcess>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      void stop().then(() => reject(new Error(reason)));
    };
    const timer = setTimeout(() => fail(`PostgreSQL was not ready after ${POSTGRES_READY_TIMEOUT_MS} ms: ${tail.trim()}`), POSTGRES_READY_TIMEOUT_MS);
    const onAbort = () => fail('PostgreSQL start cancelled');
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => fail(`PostgreSQL could not be spawned: ${err.message}`));
    void exited.then(() => fail(`PostgreSQL exited before it was ready: ${tail.trim()}`));
    checkReady = () => {
      if (settled || !tail.includes(READY_LINE) || child.pid === undefined) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ groupId: child.pid, stop });
    };
  });
}

function settlesWithin(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]).finally(() => clearTimeout(timer));
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
