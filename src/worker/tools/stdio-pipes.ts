import { execFile } from 'node:child_process';
import { closeSync, constants, fchownSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { TASK_PATH } from './shell-argv.ts';

// Why FIFOs: spawn's 'pipe' stdio is a socketpair, and a socket cannot be opened again by path, so
// `echo oops > /dev/stderr` or `tee /dev/stdout` failed ("No such device or address"). A FIFO
// opened at both ends is a pipe(7), which can. Node cannot make one (no mkfifo): one mkfifo run
// makes a batch in a fresh directory of the worker's (mode 0700), the worker opens both ends of
// each and removes the directory at once. Nothing is left on disk, even when the worker is killed;
// each pipe serves one stream of one task. The worker's end is non-blocking (libuv wants it so)
// and opened first, so that the program's, blocking as a program expects its stdout to be, does
// not wait for a reader. A program's stdin, known whole beforehand, is a file (unlinked once open):
// a FIFO opened again (`cat /dev/stdin`) once the worker has written it all and closed its end
// would wait for a writer for ever.
const BATCH = 64;
type Ends = { ours: number; theirs: number };
const stock: Ends[] = [];
let making: Promise<void> | undefined;
const run = promisify(execFile);

function makePipes(): Promise<void> {
  making ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipes-'));
    try {
      const paths = Array.from({ length: BATCH }, (_, i) => join(dir, String(i)));
      await run('mkfifo', ['-m', '600', '--', ...paths], { env: { PATH: TASK_PATH } });
      for (const path of paths) {
        const ours = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
          stock.push({ ours, theirs: openSync(path, constants.O_WRONLY) });
        } catch (error) {
          closeSync(ours);
          throw error;
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })().finally(() => (making = undefined));
  return making;
}

async function takePipe(): Promise<Ends> {
  for (;;) {
    const ends = stock.pop();
    if (ends !== undefined) {
      // The next batch is made while this one lasts: a task rarely waits for mkfifo.
      if (stock.length < BATCH / 2) makePipes().catch(() => {});
      return ends;
    }
    await makePipes();
  }
}

// The program's stdin: a file it can read, not write (mode 0444, the worker's), unlinked once open.
async function inputFile(text: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stdin-'));
  try {
    const path = join(dir, 'stdin');
    await writeFile(path, text, { mode: 0o444, flag: 'wx' });
    return openSync(path, constants.O_RDONLY);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type StdioPipes = {
  /** The program's ends, for spawn's stdio 0 to 2 (stdin 'ignore', /dev/null, when it has none). */
  theirs: ['ignore' | number, number, number];
  stdout: Readable;
  stderr: Readable;
  /** Closes the worker's copies of the program's ends: once the program runs, or could not start. */
  release(): void;
};

/**
 * A program's stdio: stdout and stderr on pipes (pipe(7), which a program can open again as
 * /dev/stdout, /dev/stderr), the worker's ends as streams like spawn's 'pipe'; `stdin` as a file
 * (/dev/stdin opens it again from its start), or /dev/null. The program's ends belong to `owner`
 * when given (a root worker's task user).
 */
export async function stdioPipes(opts: { stdin?: string; owner?: number }): Promise<StdioPipes> {
  const ends = [await takePipe(), await takePipe()];
  try {
    // A root worker's task runs as a user of its own, and opens /dev/stdout again as that user.
    if (opts.owner !== undefined) for (const { theirs } of ends) fchownSync(theirs, opts.owner, opts.owner);
    const input = opts.stdin === undefined ? undefined : await inputFile(opts.stdin);
    const [out, err] = ends;
    const theirs = [input, out.theirs, err.theirs];
    let released = false;
    return {
      theirs: [input ?? 'ignore', out.theirs, err.theirs],
      stdout: new Socket({ fd: out.ours, readable: true, writable: false }),
      stderr: new Socket({ fd: err.ours, readable: true, writable: false }),
      release() {
        if (released) return;
        released = true;
        for (const fd of theirs) if (fd !== undefined) closeSync(fd);
      },
    };
  } catch (error) {
    for (const { ours, theirs } of ends) for (const fd of [ours, theirs]) closeSync(fd);
    throw error;
  }
}
